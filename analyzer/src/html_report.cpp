// report.html and scaling.csv (rfprof/analyzer/html_report.h).
#include "rfprof/analyzer/html_report.h"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "rfprof/analyzer/csv.h"
#include "rfprof/analyzer/roof.h"
#include "rfprof/analyzer/roofline_charts.h"
#include "rfprof/analyzer/scaling.h"
#include "rfprof/analyzer/svg_roofline.h"
#include "rfprof/analyzer/terminal_summary.h"

namespace rf::analyzer {
namespace {

using json = nlohmann::ordered_json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

/// FLOP and DRAM bytes of the launches that have both (those arithmetic intensity is over).
std::optional<double> counted_flop(const Aggregate& a) {
  return a.counted_launches ? std::optional<double>(a.ai_flop) : std::nullopt;
}
std::optional<double> counted_bytes(const Aggregate& a) {
  return a.counted_launches ? std::optional<double>(a.ai_bytes) : std::nullopt;
}

/// The page's sums of one key: launches, GPU time (ns; null when no launch had a duration, as in
/// summary.json), FLOP, DRAM bytes, FLOP/byte, FLOP/s, and
/// the FLOP and time FLOP/s is over (rate_flop, rate_ns: the launches with FLOP and a duration,
/// Aggregate::flop_per_s), so that sums of keys (the top-kernels table) give the same FLOP/s.
json sums(const Aggregate& a) {
  return {{"launches", a.launches},
          {"duration_ns", a.timed_launches ? json(a.duration_ns) : json(nullptr)},
          {"flop", opt(counted_flop(a))},
          {"dram_bytes", opt(counted_bytes(a))},
          {"arithmetic_intensity", opt(a.arithmetic_intensity())},
          {"flop_per_s", opt(a.flop_per_s())},
          {"rate_flop", a.rate_ns > 0 ? json(a.rate_flop) : json(nullptr)},
          {"rate_ns", a.rate_ns}};
}

/// The summed counters of `a` as one launch's (FLOP per precision, DRAM bytes), for check_roof.
LaunchMetrics summed_metrics(const Aggregate& a) {
  LaunchMetrics m;
  m.fp64_flop = a.fp64_flop.value();
  m.fp32_flop = a.fp32_flop.value();
  m.fp16_flop = a.fp16_flop.value();
  m.dram_read_bytes = a.dram_read_bytes.value();
  m.dram_write_bytes = a.dram_write_bytes.value();
  for (size_t i = 0; i < kTensorPrecisions; ++i) {
    m.tensor_dense[i] = a.tensor_dense[i].value();
    m.tensor_sparse[i] = a.tensor_sparse[i].value();
  }
  return m;
}

/// Replaces the one occurrence of `marker` in `text`. Throws when it is not there.
void splice(std::string& text, std::string_view marker, std::string_view with) {
  auto pos = text.find(marker);
  if (pos == std::string::npos)
    throw std::runtime_error("report.html template lacks its marker " + std::string(marker));
  text.replace(pos, marker.size(), with);
}

}  // namespace

const std::vector<std::string>& scaling_csv_header() {
  static const std::vector<std::string> h = {
      "label", "trace", "batch_size", "iterations", "launches", "gpu_time_ns", "flop",
      "flop_per_s", "arithmetic_intensity", "throughput_samples_per_s"};
  return h;
}

void ReportPage::begin_trace(const TraceContext& ctx) {
  TraceInfo t;
  t.path = ctx.path.string();
  t.command_line = ctx.command_line;
  ctx.nvtx.for_each_range([&t](const NvtxRange& r) {
    if (!is_step_range_name(r.name)) return;
    auto it = t.step_ranges.find(r.name);
    if (it == t.step_ranges.end()) it = t.step_ranges.emplace(std::string(r.name), std::vector<TraceInfo::StepRange>{}).first;
    it->second.push_back({r.start_ns, r.end_ns, false});
  });
  for (auto& [name, ranges] : t.step_ranges)
    std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.start_ns < b.start_ns; });
  traces_.push_back(std::move(t));
}

void ReportPage::count_step(TraceInfo& t, std::string_view step, const KernelRow& row) {
  if (!row.launch_start_ns) {
    if (t.untimed_steps.find(step) == t.untimed_steps.end()) t.untimed_steps.emplace(step);
    return;
  }
  // The latest-started range of that name open at the launch call, on any thread (a launch by
  // PyTorch's autograd thread takes the main thread's step): the one attribution chose unless
  // two threads hold step ranges of one name at once. Ranges of one name seldom nest: the few
  // latest started before the call are looked at, no more.
  const uint64_t at = *row.launch_start_ns;
  if (auto named = t.step_ranges.find(step); named != t.step_ranges.end()) {
    auto& ranges = named->second;
    auto it = std::upper_bound(ranges.begin(), ranges.end(), at,
                               [](uint64_t v, const TraceInfo::StepRange& r) { return v < r.start_ns; });
    for (int looked = 0; it != ranges.begin() && looked < 8; ++looked) {
      --it;
      if (it->end_ns > at) {
        if (!it->has_launch) ++t.steps_with_launches;
        it->has_launch = true;
        return;
      }
    }
  }
  // On another thread's range that did not enclose the call (rule 3's prefix): by name.
  if (t.untimed_steps.find(step) == t.untimed_steps.end()) t.untimed_steps.emplace(step);
}

std::string_view step_range_name(std::string_view path) {
  while (!path.empty()) {
    const size_t slash = path.find('/');
    const std::string_view part = path.substr(0, slash);
    if (is_step_range_name(part)) return part;
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return {};
}

void ReportPage::add_launch(const KernelRow& row) {
  if (traces_.empty()) throw std::logic_error("ReportPage::add_launch before begin_trace");
  const LaunchTotals sums = LaunchTotals::of(row.metrics);
  traces_.back().totals.add(row, sums);
  if (const std::string_view step = step_range_name(row.nvtx); !step.empty()) count_step(traces_.back(), step, row);
  const PointKeyView key{traces_.size() - 1, row.device, row.kernel, row.phase, row.nvtx};
  auto it = points_.find(key);
  if (it == points_.end())
    it = points_.emplace(PointKey{key.trace, key.device, row.kernel, row.phase, row.nvtx}, Point{}).first;
  it->second.all.add(row, sums);
  if (sums.flop && row.duration_ns && *row.duration_ns > 0) it->second.rated.add(row, sums);
}

std::vector<ScalingRow> ReportPage::scaling_rows() const {
  std::vector<ScalingRow> rows;
  for (const auto& t : traces_) {
    ScalingRow r;
    r.trace = t.path;
    r.batch_size = batch_size_of(t.command_line);
    // The steps whose kernels the trace holds; the command line's count only when the trace has
    // no step ranges (it counts every step of the run, profiled or not).
    const uint64_t steps = t.steps_with_launches + t.untimed_steps.size();
    r.iterations = steps == 0 ? iterations_of(t.command_line) : std::optional<uint64_t>(steps);
    r.label = trace_label(t.path, r.batch_size);
    r.launches = t.totals.launches;
    r.gpu_time_ns = t.totals.duration_ns;
    r.timed = t.totals.timed_launches > 0;
    r.flop = counted_flop(t.totals);
    r.flop_per_s = t.totals.flop_per_s();
    r.arithmetic_intensity = t.totals.arithmetic_intensity();
    if (r.batch_size && r.iterations && r.gpu_time_ns > 0)
      r.throughput_samples_per_s = static_cast<double>(*r.batch_size) * static_cast<double>(*r.iterations) *
                                   1e9 / static_cast<double>(r.gpu_time_ns);
    rows.push_back(std::move(r));
  }
  return rows;
}

void ReportPage::write_scaling_csv(std::ostream& out) const {
  write_csv_row(out, scaling_csv_header());
  auto u = [](const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : std::string(); };
  for (const auto& r : scaling_rows())
    write_csv_row(out, {r.label, r.trace, u(r.batch_size), u(r.iterations), std::to_string(r.launches),
                        r.timed ? std::to_string(r.gpu_time_ns) : std::string(), format_optional(r.flop),
                        format_optional(r.flop_per_s), format_optional(r.arithmetic_intensity),
                        format_optional(r.throughput_samples_per_s)});
}

json ReportPage::data(const Report& report) const {
  const json summary = report.summary();
  json traces = json::array();
  for (const auto& r : scaling_rows())
    traces.push_back({{"label", r.label},
                      {"path", r.trace},
                      {"batch_size", r.batch_size ? json(*r.batch_size) : json(nullptr)},
                      {"iterations", r.iterations ? json(*r.iterations) : json(nullptr)},
                      {"launches", r.launches},
                      {"duration_ns", r.timed ? json(r.gpu_time_ns) : json(nullptr)},
                      {"flop", opt(r.flop)},
                      {"flop_per_s", opt(r.flop_per_s)},
                      {"arithmetic_intensity", opt(r.arithmetic_intensity)},
                      {"throughput_samples_per_s", opt(r.throughput_samples_per_s)}});

  // Ceilings come from summary.json's device objects, so every ceiling it reports is drawn:
  // keys ending in "_flop_per_s" are compute roofs, "_bytes_per_s" bandwidth roofs (an INT8
  // "_op_per_s" peak counts integer operations, not FLOP, and is left out of a FLOP/s chart).
  json devices = json::array();
  const auto& ds = report.devices();
  for (size_t i = 0; i < ds.size(); ++i) {
    json roofs = json::array();
    if (i < summary["devices"].size())
      for (const auto& [key, c] : summary["devices"][i]["ceilings"].items()) {
        if (!c.is_object() || !c.contains("value") || !c["value"].is_number()) continue;
        const bool compute = key.ends_with("_flop_per_s");
        const bool bandwidth = key.ends_with("_bytes_per_s");
        if (!compute && !bandwidth) continue;
        roofs.push_back({{"name", key},
                         {"kind", compute ? "compute" : "bandwidth"},
                         {"value", c["value"]},
                         {"source", c.value("source", json(nullptr))}});
      }
    devices.push_back({{"trace_index", ds[i].trace_index},
                       {"device_id", ds[i].device.info.device_id},
                       {"name", ds[i].device.name},
                       {"roofs", roofs}});
  }

  // More kernel groups than the page can draw (emit_nvtx names each op range with its sequence
  // number, so each launch may have an NVTX path of its own): the points are summed over NVTX
  // paths, one per (trace, device, kernel, phase), range null.
  const bool merge_ranges = points_.size() > kMaxPoints;
  std::map<PointKey, Point, PointLess> merged;
  if (merge_ranges)
    for (const auto& [k, point] : points_) merged[PointKey{k.trace, k.device, k.kernel, k.phase, {}}].merge(point);
  const auto& drawn = merge_ranges ? merged : points_;

  // Phase colours: roofline.svg's (group_colour, palette in name order), over the phases of the
  // points drawn, as roofline.svg's are: a phase whose kernels have no counters takes no colour.
  // The other phases (in the legend and the phase select only) take the palette's next colours.
  std::set<std::string> plotted_phases, other_phases;
  for (const auto& [k, point] : drawn) (drawn_on_roofline(point.all) ? plotted_phases : other_phases).insert(k.phase);
  std::vector<std::string> phase_names(plotted_phases.begin(), plotted_phases.end()), seen;
  for (const auto& name : other_phases)
    if (!plotted_phases.contains(name)) phase_names.push_back(name);
  json phase_colours = json::object();
  for (const auto& name : phase_names) phase_colours[name] = group_colour(name, seen);

  json points = json::array();
  for (const auto& [k, point] : drawn) {
    const Aggregate& a = point.all;
    int64_t device_index = -1;
    if (k.device)
      for (size_t i = 0; i < ds.size(); ++i)
        if (ds[i].trace_index == k.trace && ds[i].device.info.device_id == *k.device)
          device_index = static_cast<int64_t>(i);
    json p = {{"trace_index", k.trace},
              {"device_index", device_index},
              {"kernel", k.kernel},
              {"phase", k.phase},
              {"range", merge_ranges ? json(nullptr) : json(k.range)}};
    p.update(sums(a));
    // Where the point sits under its device's roof (roof.h): the bound, and achieved over
    // attainable FLOP/s, of the launches its FLOP/s is over (FLOP and a duration: rate_ns), so
    // that a launch with FLOP but no duration adds no FLOP to another launch's time.
    p["bound"] = nullptr;
    p["roof_fraction"] = nullptr;
    if (device_index >= 0 && point.rated.rate_ns > 0) {
      const RoofCheck roof =
          check_roof(summed_metrics(point.rated), point.rated.rate_ns, ds[static_cast<size_t>(device_index)].ceilings);
      if (*roof.bound()) p["bound"] = roof.bound();
      if (auto f = roof.roof_fraction()) p["roof_fraction"] = *f;
    }
    if (std::string short_name = fold_kernel_name(k.kernel); short_name != k.kernel)
      p["kernel_short"] = std::move(short_name);  // only when folded: names can be long
    points.push_back(std::move(p));
  }

  auto peak_of = [](const std::map<std::string, uint64_t>& peaks, const std::string& key) {
    auto it = peaks.find(key);
    return it == peaks.end() ? json(nullptr) : json(it->second);
  };
  // The ranges table: the kMaxRangeRows ranges with the most GPU time (ties: by name), in name
  // order; ranges.csv has every one.
  std::vector<const std::pair<const std::string, Aggregate>*> shown;
  for (const auto& entry : report.ranges()) shown.push_back(&entry);
  const uint64_t ranges_not_shown = shown.size() > kMaxRangeRows ? shown.size() - kMaxRangeRows : 0;
  if (ranges_not_shown) {
    std::stable_sort(shown.begin(), shown.end(),
                     [](const auto* a, const auto* b) { return a->second.duration_ns > b->second.duration_ns; });
    shown.resize(kMaxRangeRows);
    std::sort(shown.begin(), shown.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  }
  json ranges = json::array();
  for (const auto* entry : shown) {
    const auto& [key, a] = *entry;
    json r = {{"range", key}};
    r.update(sums(a));
    r["peak_memory_bytes"] = peak_of(report.range_memory_peaks(), key);
    ranges.push_back(std::move(r));
  }
  json phases = json::array();
  const auto phase_peaks = report.phase_memory_peaks();
  for (const auto& [key, a] : report.phases()) {
    json r = {{"phase", key}};
    r.update(sums(a));
    r["peak_memory_bytes"] = peak_of(phase_peaks, key);
    phases.push_back(std::move(r));
  }
  json totals = sums(report.totals());
  json by_bound = json::object();
  for (size_t i = 0; i < report.bound_shares().size(); ++i)
    by_bound[Report::kBoundNames[i]] = {{"launches", report.bound_shares()[i].launches},
                                {"duration_ns", report.bound_shares()[i].duration_ns}};
  totals["by_bound"] = by_bound;
  return {{"tool", summary.value("tool", "rfanalyze")},
          {"version", summary.value("version", "")},
          {"traces", traces},
          {"devices", devices},
          {"points", points},
          {"points_merged_over_ranges", merge_ranges ? json(points_.size()) : json(nullptr)},
          {"ranges", ranges},
          {"ranges_not_shown", ranges_not_shown},
          {"phases", phases},
          {"phase_colours", phase_colours},
          {"totals", totals},
          {"above_roof_count", report.above_roof_count()},
          {"uncounted_tensor_work", report.uncounted_tensor_work_json()},
          {"ops", summary.contains("ops") ? summary["ops"] : json(nullptr)}};
}

void write_report_html(std::ostream& out, const nlohmann::ordered_json& data) {
  // JSON text whose "<", ">" and "&" (only ever inside strings) are \u escapes: it cannot end
  // the <script> element that holds it, and JSON.parse reads it back unchanged.
  std::string payload;
  for (char c : data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) {
    switch (c) {
      case '<': payload += "\\u003c"; break;
      case '>': payload += "\\u003e"; break;
      case '&': payload += "\\u0026"; break;
      default: payload += c;
    }
  }
  std::string page(assets::report_template());
  std::string libs;
  for (auto js : {assets::vega_js(), assets::vega_lite_js(), assets::vega_embed_js()}) {
    libs += "<script>";
    libs += js;
    libs += "</script>\n";
  }
  splice(page, "@RF_LIBS@", libs);
  splice(page, "@RF_APP@", assets::report_js());
  splice(page, "@RF_DATA@", payload);  // last: kernel names in it may contain anything
  out << page;
}

}  // namespace rf::analyzer
