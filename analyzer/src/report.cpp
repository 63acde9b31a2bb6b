// Accumulation of a run's rows, sums, ceilings and above-roof launches (rfprof/analyzer/report.h).
#include "rfprof/analyzer/report.h"

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "rfprof/analyzer/csv.h"
#include "rfprof/analyzer/overhead.h"

namespace rf::analyzer {

Report::Report(CeilingSources sources, std::ostream* kernels_csv, std::ostream* counters_csv)
    : sources_(std::move(sources)), kernels_(kernels_csv), counters_(counters_csv) {
  if (sources_.forced) forced_ceilings_ = resolve_ceilings("", "", 0, sources_);
  if (kernels_) write_csv_row(*kernels_, kernels_csv_header());
  if (counters_) write_csv_row(*counters_, counters_csv_header());
}

void Report::begin_trace(const TraceContext& ctx) {
  current_devices_.clear();
  escaped_names_for_ = nullptr;  // the last trace's metric lists are gone; another may take their address
  current_totals_ = Aggregate{};
  current_launches_ = 0;
  current_path_ = ctx.path.string();
  current_has_memory_ = !ctx.memory.empty();
  call_sites_.begin_trace(!ctx.call_stacks.empty());
  ops_.begin_trace();
  const size_t trace_index = traces_.size();
  for (const auto& [id, dev] : ctx.devices) {
    DeviceSummary d;
    d.trace_index = trace_index;
    d.pid = ctx.pid();
    d.device = dev;
    d.ceilings = resolve_ceilings(dev.name, dev.chip, dev.info.global_memory_bandwidth_kbps, sources_);
    current_devices_[id] = devices_.size();
    devices_.push_back(std::move(d));
  }
}

void Report::add_launch(const LaunchOutput& launch) {
  const KernelRow& row = launch.row;
  const DeviceCeilings* ceilings = nullptr;
  int64_t device_index = -1;
  if (row.device)
    if (auto it = current_devices_.find(*row.device); it != current_devices_.end()) {
      ceilings = &devices_[it->second].ceilings;
      device_index = static_cast<int64_t>(it->second);
    }
  if (!ceilings && forced_ceilings_) ceilings = &*forced_ceilings_;  // no DeviceInfo, --device given
  std::optional<RoofCheck> roof;
  if (ceilings) roof = check_roof(row.metrics, row.duration_ns, *ceilings);
  if (kernels_) {
    row.csv_fields(roof ? &*roof : nullptr, kernel_fields_);
    write_csv_row(*kernels_, kernel_fields_);
  }
  const std::string_view bound = roof ? roof->bound() : "";
  size_t bound_index = 0;
  while (bound_index + 1 < kBoundNames.size() && bound != kBoundNames[bound_index]) ++bound_index;  // "" -> unknown
  const uint64_t ns = row.duration_ns.value_or(0);
  ++bound_shares_[bound_index].launches;
  bound_shares_[bound_index].duration_ns += ns;
  if (counters_ && launch.metric_names && launch.metric_values) {
    const auto& names = *launch.metric_names;
    const auto& values = *launch.metric_values;
    // One row per metric, "id,kernel,metric,value,pid,window" (the id, kernel, pid and window
    // fields built once), all written with one stream write.
    std::string& head = counter_head_;
    head.assign(std::to_string(row.id)).push_back(',');
    append_csv_field(head, row.kernel);
    head.push_back(',');
    std::string& tail = counter_tail_;
    tail.assign(",").append(std::to_string(row.pid)).push_back(',');
    if (row.window) tail.append(std::to_string(*row.window));
    if (escaped_names_for_ != &names || escaped_names_.size() != names.size()) {  // escaped once per list
      escaped_names_for_ = &names;
      escaped_names_.clear();
      for (const auto& name : names) {
        append_csv_field(escaped_names_.emplace_back(), name);
        escaped_names_.back().push_back(',');
      }
    }
    std::string& text = counter_rows_;
    text.clear();
    for (size_t i = 0; i < names.size(); ++i) {
      text.append(head);
      text.append(escaped_names_[i]);
      if (i < values.size()) append_number(text, values[i]);
      text.append(tail);
      text.push_back('\n');
    }
    counters_->write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  ++current_launches_;
  const LaunchTotals sums = LaunchTotals::of(row.metrics);
  totals_.add(row, sums);
  current_totals_.add(row, sums);
  if (launch.nvtx_path) ops_.add(row, *launch.nvtx_path);
  for (Aggregate* a : {&ranges_[row.nvtx], &phases_[row.phase]}) {
    a->add(row, sums);
    if (bound_index == 0) a->memory_bound_ns += ns;
    if (bound_index == 1) a->compute_bound_ns += ns;
  }
  call_sites_.add(row);
  if (current_has_memory_ && !row.nvtx.empty() && !path_phases_.contains(row.nvtx))
    path_phases_.emplace(row.nvtx, launch.path_phase ? *launch.path_phase : row.phase);  // a path's own phase

  kernel_groups_[KernelGroupKey{device_index, row.kernel, row.phase}].add(row, sums);
  if (row.metrics.uncounted_tensor_work()) {
    ++uncounted_tensor_.launches;
    uncounted_tensor_.gpu_time_ns += ns;
    uncounted_tensor_.kernel_ns[row.kernel] += ns;
  }
  if (!roof) {
    ++launches_without_ceilings_;
    return;
  }
  const RoofCheck& check = *roof;
  if (!check.above()) return;
  ++above_roof_count_;
  if (!check.only_measured_ceilings_exceeded) ++above_roof_errors_;
  if (above_roof_.size() >= kMaxAboveRoofListed) return;
  AboveRoof a;
  a.trace = current_path_;
  a.id = row.id;
  a.pid = row.pid;
  a.device = row.device;
  a.kernel = row.kernel;
  a.arithmetic_intensity = row.arithmetic_intensity();
  a.check = check;
  above_roof_.push_back(std::move(a));
}

void Report::end_trace(const TraceContext& ctx, const StreamStats& stats) {
  ops_.end_trace();
  TraceSummary t;
  t.path = ctx.path.string();
  t.pid = ctx.pid();
  t.hostname = ctx.hostname;
  t.process_name = ctx.process_name;
  t.command_line = ctx.command_line;
  t.rfprof_version = ctx.rfprof_version;
  t.mode = !ctx.process ? "unknown" : ctx.counters_mode() ? "counters" : "timing";
  const bool from_trace = ctx.version_major || ctx.version_minor;  // 0.0: an ncu CSV's import, no trace format
  if (from_trace) t.format_version = std::to_string(ctx.version_major) + "." + std::to_string(ctx.version_minor);
  t.truncated = ctx.truncated;
  t.truncated_at = ctx.truncated_at;
  t.records = ctx.records;
  if (ctx.process && from_trace) t.start_ns = ctx.process->start_ns;  // an import has no start time
  if (ctx.last_event_ns) t.last_event_ns = ctx.last_event_ns;
  if (ctx.end) t.dropped_records = ctx.end->dropped_records;
  t.launches = current_launches_;
  t.nvtx_ranges = ctx.nvtx.range_count();
  t.nvtx_unmatched_ends = ctx.nvtx.unmatched_ends();
  t.nvtx_duplicate_starts = ctx.nvtx.duplicate_starts();
  t.nvtx_backwards_ranges = ctx.nvtx.backwards_ranges();
  t.memory_events = ctx.memory.points().size();
  t.memory_peak_bytes = ctx.memory.peak_bytes();
  t.memory_peak_timestamp_ns = ctx.memory.peak_timestamp_ns();
  t.call_stacks = ctx.call_stacks.size();
  for (const auto& [id, list] : ctx.configs) t.metric_configs.push_back({id, list.names.size(), list.num_passes});
  t.overhead = ctx.overhead;
  t.traced_ns = ctx.traced_ns();
  t.stream = stats;
  call_sites_.end_trace(ctx.call_stacks);
  if (!ctx.memory.empty()) {
    // Each range occurrence: its own path (on its own thread, at its start, itself innermost, not
    // a range pushed inside it in the same nanosecond) and the peak in use while it was open; a
    // range never ended lasts to the last memory event; a zero-length one has no interval.
    const uint64_t last = ctx.memory.points().back().event.timestamp_ns;
    ctx.nvtx.for_each_range_path([&](const NvtxRange& r, uint32_t path_id) {
      const std::string& path = ctx.nvtx.path(path_id).joined;
      if (path.empty()) return;
      const uint64_t end = r.end_ns == UINT64_MAX ? std::max(last, r.start_ns) : r.end_ns;
      if (auto peak = ctx.memory.peak_between(r.start_ns, end)) {
        uint64_t& p = range_peaks_[path];
        p = std::max(p, *peak);
      }
    });
  }
  traces_.push_back(std::move(t));

  ProcessRow p;
  p.trace = ctx.path.string();
  p.pid = ctx.pid();
  p.hostname = ctx.hostname;
  p.batch_size = batch_size_of(ctx.command_line);
  p.label = trace_label(p.trace, p.batch_size);
  p.steps = step_ranges(ctx.nvtx);
  p.totals = current_totals_;
  processes_.push_back(std::move(p));
}

void Report::write_ops(std::ostream& ops_csv, std::ostream& layers_csv) const {
  OpBreakdown::write_csv(ops_csv, "op", ops_.by_op());
  OpBreakdown::write_csv(layers_csv, "layer", ops_.by_layer());
}

void Report::write_overhead(std::ostream& out) const {
  write_csv_row(out, overhead_csv_header());
  for (const auto& t : traces_) write_overhead_rows(out, t.path, t.pid, t.overhead, t.traced_ns);
}

void Report::write_processes(std::ostream& out) const {
  write_csv_row(out, processes_csv_header());
  for (const auto& p : processes_) write_csv_row(out, processes_csv_fields(p));
}

std::map<std::string, uint64_t> Report::phase_memory_peaks() const {
  std::map<std::string, uint64_t> out;
  for (const auto& [path, peak] : range_peaks_)
    if (auto it = path_phases_.find(path); it != path_phases_.end()) {
      uint64_t& p = out[it->second];
      p = std::max(p, peak);
    }
  return out;
}

void Report::write_aggregates(std::ostream& ranges_csv, std::ostream& phases_csv) const {
  auto write = [](std::ostream& out, const std::string& key_column,
                  const std::map<std::string, Aggregate>& rows, const std::map<std::string, uint64_t>& peaks) {
    write_csv_row(out, range_csv_header(key_column));
    for (const auto& [key, agg] : rows) {
      auto fields = agg.csv_fields(key);
      auto peak = peaks.find(key);
      fields.push_back(peak == peaks.end() ? std::string() : std::to_string(peak->second));
      fields.push_back(std::to_string(agg.memory_bound_ns));
      fields.push_back(std::to_string(agg.compute_bound_ns));
      write_csv_row(out, fields);
    }
  };
  write(ranges_csv, "nvtx", ranges_, range_peaks_);
  write(phases_csv, "phase", phases_, phase_memory_peaks());
}

void Report::write_call_sites(std::ostream& time_folded, std::ostream& flop_folded,
                              std::ostream& csv) const {
  call_sites_.write_folded_time(time_folded);
  call_sites_.write_folded_flop(flop_folded);
  call_sites_.write_csv(csv);
}

}  // namespace rf::analyzer
