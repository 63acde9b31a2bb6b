// ncu CSV pages from rfprof traces (rfprof/analyzer/ncu_csv.h).
#include "rfprof/analyzer/ncu_csv.h"

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

#include "rfprof/analyzer/csv.h"
#include "rfprof/analyzer/phases.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/collector/kernel_names.h"
#include "rfprof/collector/regex_subject.h"

namespace rf::analyzer {
namespace {

/// The section ncu names metrics given with --metrics under.
constexpr const char* kNcuSection = "Command line profiler metrics";
constexpr const char* kGpuTimeDuration = "gpu__time_duration";

std::string dim3(const std::optional<std::array<int32_t, 3>>& d) {
  if (!d) return "";
  return "(" + std::to_string((*d)[0]) + ", " + std::to_string((*d)[1]) + ", " + std::to_string((*d)[2]) + ")";
}

/// `text` with a comma between every three digits of its integer part, counted from the right:
/// the digits of [first, last) of `text` (its sign and fraction, outside, are copied as they are).
std::string with_separators(std::string_view text, size_t first, size_t last) {
  std::string out;
  out.reserve(text.size() + (last - first) / 3);
  out.append(text.substr(0, first));
  for (size_t i = first; i < last; ++i) {
    out.push_back(text[i]);
    if ((last - 1 - i) % 3 == 0 && i + 1 < last) out.push_back(',');
  }
  out.append(text.substr(last));
  return out;
}

/// Whether exact -k `wanted` names the launch `r` under filter.kernel_name_base (ncu's
/// --kernel-name-base): the symbol, the demangled name, or (default) the function name rule, or
/// the symbol itself (what the collector compares for a symbol libstdc++ cannot demangle, whose
/// demangled name the analyzer reads with LLVM's demangler).
bool exact_name_matches(const KernelRow& r, const NcuFilter& filter, const std::string& wanted) {
  if (filter.kernel_name_base == "mangled") return r.mangled == wanted;
  if (filter.kernel_name_base == "demangled") return r.kernel == wanted;
  return collector::function_name_matches(r.kernel, wanted) || (!r.mangled.empty() && r.mangled == wanted);
}

/// Whether -k regex `re` names the launch `r` under filter.kernel_name_base, as the collector
/// decides (collector::regex_names_kernel); base mangled without a symbol: the demangled name.
bool regex_names(const KernelRow& r, const NcuFilter& filter, const std::regex& re) {
  const bool no_symbol = filter.kernel_name_base == "mangled" && r.mangled.empty();
  return collector::regex_names_kernel(re, no_symbol ? "demangled" : filter.kernel_name_base, r.kernel, r.mangled);
}

/// The kernel as filter.print_kernel_base spells it (ncu's --print-kernel-base).
std::string printed_name(const KernelRow& r, const NcuFilter& filter) {
  if (filter.print_kernel_base == "mangled") return r.mangled.empty() ? r.kernel : std::string(r.mangled);
  if (filter.print_kernel_base == "function") return collector::bare_function_name(r.kernel);
  return r.kernel;
}

/// ncu's details page ends each row with "Rule Name", "Rule Type", "Rule Description",
/// "Estimated Speedup Type" and "Estimated Speedup" (empty on metric rows).
constexpr size_t kRuleColumns = 5;

/// The duration text output shows for a launch without a gpu__time_duration metric (timing mode).
const std::string kTextDuration = std::string(kGpuTimeDuration) + ".sum";

}  // namespace

bool NcuFilter::prints_metric(std::string_view metric) const {
  if (metrics.empty()) return true;
  return std::any_of(metrics.begin(), metrics.end(), [&](const std::string& m) {
    if (metric == m) return true;
    return m.find('.') == std::string::npos && metric.size() > m.size() && metric.substr(0, m.size()) == m &&
           metric[m.size()] == '.';
  });
}

std::string ncu_number(double value) {
  std::string s;
  append_number(s, value);  // shortest round trip, integers as integers; "" for NaN and infinities
  if (s.find_first_of("eE") != std::string::npos) return s;
  const size_t first = !s.empty() && s[0] == '-' ? 1 : 0;  // the sign is not a digit to group
  const size_t dot = s.find('.');
  return with_separators(s, first, dot == std::string::npos ? s.size() : dot);
}

std::string ncu_whole_number(uint64_t value) {
  const std::string digits = std::to_string(value);
  return with_separators(digits, 0, digits.size());
}

std::string ncu_unit(const std::string& m) {
  const std::string base = m.substr(0, m.find('.'));
  auto has = [&](const char* x) { return base.find(x) != std::string::npos; };
  std::string unit;
  if (has("__time_duration")) unit = "ns";  // ncu 2025.3 (CUDA 13), seen on an H100; older ncu: "nsecond"
  else if (has("bytes")) unit = "byte";
  else if (has("sectors")) unit = "sector";
  else if (has("inst_executed")) unit = "inst";
  else if (has("cycles")) unit = "cycle";
  // The rollup's rate or percentage, as ncu prints them: ".sum.per_second" -> "byte/second",
  // ".per_cycle_*" and ".peak_sustained" -> "inst/cycle" (cycles per cycle: ""), ".pct*" -> "%";
  // ".peak_sustained_active/_elapsed" keep the unit. A base unit not known here gives "" (unknown),
  // never "1/cycle": ncu's own unit may not be a rate at all (sm__warps_active.avg.per_cycle_active
  // is "warp", a count summed over cycles; the launcher's suffix_unit knows that from the host API).
  std::string_view rest = std::string_view(m).substr(base.size());
  for (std::string_view rollup : {".sum", ".avg", ".min", ".max"})
    if (rest.substr(0, rollup.size()) == rollup && (rest.size() == rollup.size() || rest[rollup.size()] == '.'))
      rest.remove_prefix(rollup.size());
  auto per = [&unit](const std::string& denominator) {
    return unit.empty() || unit == denominator ? std::string() : unit + "/" + denominator;
  };
  if (rest.substr(0, 4) == ".pct") return "%";
  if (rest.size() >= 11 && rest.substr(rest.size() - 11) == ".per_second") return per("second");
  if (rest == ".peak_sustained" || rest.substr(0, 10) == ".per_cycle") return per("cycle");
  return unit;
}

namespace {

/// One printed launch: ncu's 11 identification fields (ID ... CC) and its metric values in the
/// metric list's order.
struct PrintedLaunch {
  std::vector<std::string> ident;
  std::vector<std::pair<std::string, double>> values;
  const KernelRow* row = nullptr;
  const DeviceRecord* device = nullptr;  ///< the launch's device record (nullptr: none in the trace)
};

/// Throws std::invalid_argument when a name of filter.metrics selects none of `available` (the
/// traces' metrics and what a page adds) and is not an attribute (every page prints those).
void check_selected_metrics(const NcuFilter& filter, const std::vector<std::string>& available,
                            const std::vector<std::filesystem::path>& traces) {
  for (const std::string& m : filter.metrics) {
    NcuFilter one;
    one.metrics = {m};
    if (is_ncu_attribute(m) ||
        std::any_of(available.begin(), available.end(), [&](const std::string& a) { return one.prints_metric(a); }))
      continue;
    constexpr size_t kNamed = 12;  // a one-line message: the first names, then how many more
    std::string held;
    for (size_t i = 0; i < available.size() && i < kNamed; ++i) held += (i ? ", " : "") + available[i];
    if (available.size() > kNamed) held += " and " + std::to_string(available.size() - kNamed) + " more";
    const std::string where = traces.size() == 1 ? traces.front().string() : std::to_string(traces.size()) + " traces";
    throw std::invalid_argument("--metrics " + m + ": no such metric in " + where + " (" +
                                (held.empty() ? std::string("it holds no metrics: a timing-mode trace")
                                              : "it holds: " + held) +
                                ")");
  }
}

/// The traces to print, after pass 1: their contexts and the metric columns filter.metrics selects.
struct PrintedTraces {
  std::vector<TraceContext> contexts;
  std::vector<std::string> columns;  ///< in order of first appearance
  std::optional<std::regex> kernel_regex;  ///< -k regex:EXPR, compiled
  std::optional<collector::KernelId> kernel_id;  ///< --kernel-id, parsed
  std::optional<std::regex> kernel_id_regex;     ///< its NAME when "regex:EXPR", compiled
};

/// Pass 1 of every trace (each truncated one said once on `warnings`) and the metric names in order
/// of first use that filter.metrics selects. `also_available`: names a page shows beyond the
/// traces' metric lists (text: the duration), for the check of filter.metrics. Throws as
/// write_ncu_csv, before anything is printed.
PrintedTraces read_printed_traces(const std::vector<std::filesystem::path>& traces, const NcuFilter& filter,
                                  std::ostream* warnings, const std::string& warning_prefix,
                                  const std::vector<std::string>& also_available = {}) {
  PrintedTraces out;
  if (filter.kernel_name && filter.kernel_name->rfind("regex:", 0) == 0)
    out.kernel_regex.emplace(filter.kernel_name->substr(6), std::regex::ECMAScript);  // throws std::regex_error
  if (filter.kernel_id) {
    out.kernel_id = collector::KernelId::parse(*filter.kernel_id);  // throws collector::FilterError
    if (out.kernel_id->kernel_name.rfind("regex:", 0) == 0)
      out.kernel_id_regex.emplace(out.kernel_id->kernel_name.substr(6), std::regex::ECMAScript);
  }
  std::vector<std::string>& columns = out.columns;
  for (const auto& t : traces) {
    out.contexts.push_back(read_context(t, RecordChecks::kEveryRecord));  // errors before printing
    if (out.contexts.back().truncated && warnings)
      *warnings << warning_prefix << t.string() << " is truncated at byte " << out.contexts.back().truncated_at
                << " (its process was killed?); printing the launches before it\n";
    for (const auto& [id, cfg] : out.contexts.back().configs)
      for (const auto& name : cfg.names)
        if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
  }
  std::vector<std::string> available = columns;
  for (const auto& a : also_available)
    if (std::find(available.begin(), available.end(), a) == available.end()) available.push_back(a);
  check_selected_metrics(filter, available, traces);
  std::erase_if(columns, [&](const std::string& c) { return !filter.prints_metric(c); });
  return out;
}

/// A launch held back to be printed in launch order: its row, with the symbol and the metric
/// values it points to while pass 2 hands it over copied.
struct HeldLaunch {
  KernelRow row;        ///< row.mangled points to `mangled` once the launch is in its window
  std::string mangled;
  /// (metric name, value), filter applied; the names are the trace's metric lists (pass 1's
  /// TraceContext::configs), which outlive the trace's printing.
  std::vector<std::pair<const std::string*, double>> values;

  /// Bytes this launch holds: what the window's byte budget counts.
  size_t bytes() const {
    return sizeof(HeldLaunch) + row.kernel.size() + mangled.size() + row.nvtx.size() + row.phase.size() +
           values.size() * sizeof(values[0]);
  }
};

/// Pass 2 of the traces with ncu's -k, -s, -c applied: `print` per launch kept, with only the
/// metrics filter.metrics selects, in launch order (CUPTI's correlation ids, which increase with
/// each launch, as ncu's IDs do). Pass 2 gives launches in the order their records complete, which
/// another thread's batched records can delay (ncu-flags.md, "Launch order"): each trace's
/// launches pass through a window of kLaunchOrderWindow launches (and at most kLaunchOrderBytes:
/// a trace's names have no length limit) sorted by correlation id; one delayed by more is printed
/// where it arrives. Memory: the window. Returns the number printed.
/// Throws trace::TraceError for a trace that became unreadable since pass 1.
uint64_t for_each_printed_launch(const PrintedTraces& traces, const NcuFilter& filter,
                                 const std::function<void(const PrintedLaunch&)>& print) {
  constexpr size_t kLaunchOrderWindow = 4096;
  constexpr size_t kLaunchOrderBytes = size_t{64} << 20;
  uint64_t printed = 0;
  const PhaseMap phases = PhaseMap::defaults();
  // -s/-c, --kernel-id, --filter-mode and --launch-skip-before-match count as the collector counts
  // in one process, here over every trace printed (as ncu counts over one report). A CUDA graph
  // launch is one launch with no kernel name to the collector; here each of its kernels is a row.
  collector::LaunchSelection selection({filter.filter_mode, traces.kernel_id, filter.launch_skip_before_match,
                                        filter.launch_skip, filter.launch_count});
  // Whether `name` (-k's syntax) names the launch: a regex searched, or an exact name under the base.
  auto names = [&](const KernelRow& r, const std::string& name, const std::optional<std::regex>& re) {
    if (re) return regex_names(r, filter, *re);
    return name.empty() || exact_name_matches(r, filter, name);
  };
  for (const auto& ctx : traces.contexts) {
    auto handle = [&](HeldLaunch& h) {
      const KernelRow& r = h.row;
      const bool on_listed_device = filter.devices.empty() || !r.device ||
                                    std::find(filter.devices.begin(), filter.devices.end(), *r.device) !=
                                        filter.devices.end();
      const bool filtered_in =
          on_listed_device && (!filter.kernel_name || names(r, *filter.kernel_name, traces.kernel_regex));
      collector::CountedLaunch id;
      id.context_id = r.context.value_or(0);
      id.stream_id = r.stream.value_or(0);
      id.device = r.device;
      id.kernel = r.mangled.empty() ? std::string_view(r.kernel) : r.mangled;
      if (r.grid) id.grid = *r.grid;
      if (r.block) id.block = *r.block;
      id.shared_bytes = r.shared_bytes.value_or(0);
      if (traces.kernel_id) id.kernel_id_name_matches = names(r, traces.kernel_id->kernel_name, traces.kernel_id_regex);
      if (!selection.admit(id, filtered_in)) return;
      std::string cc;
      PrintedLaunch p;
      if (r.device)
        if (auto d = ctx.devices.find(*r.device); d != ctx.devices.end()) {
          cc = std::to_string(d->second.info.cc_major) + "." + std::to_string(d->second.info.cc_minor);
          p.device = &d->second;
        }
      p.row = &r;
      p.ident = {std::to_string(printed), std::to_string(ctx.pid()), ctx.process_name,
                 ctx.hostname, printed_name(r, filter), r.context ? std::to_string(*r.context) : "",
                 r.stream ? std::to_string(*r.stream) : "", dim3(r.block), dim3(r.grid),
                 r.device ? std::to_string(*r.device) : "", cc};
      p.values.reserve(h.values.size());
      for (const auto& [name, v] : h.values) p.values.emplace_back(*name, v);
      print(p);
      ++printed;
    };
    // Keyed by (correlation id, arrival): a graph launch's kernels share its correlation id.
    std::map<std::pair<uint32_t, uint64_t>, HeldLaunch> window;
    uint64_t arrival = 0;
    size_t held_bytes = 0;
    stream_launches(ctx, phases, [&](const LaunchOutput& l) {
      HeldLaunch h;
      h.row = l.row;
      h.mangled = std::string(l.row.mangled);  // l.row.mangled points into pass 2's string table
      if (l.metric_names && l.metric_values)
        for (size_t i = 0; i < l.metric_names->size() && i < l.metric_values->size(); ++i)
          if (filter.prints_metric((*l.metric_names)[i]))
            h.values.emplace_back(&(*l.metric_names)[i], (*l.metric_values)[i]);
      HeldLaunch& held = window.emplace(std::make_pair(l.row.id, arrival++), std::move(h)).first->second;
      held.row.mangled = held.mangled;  // the map's node does not move
      held_bytes += held.bytes();
      while (!window.empty() && (window.size() > kLaunchOrderWindow || held_bytes > kLaunchOrderBytes)) {
        held_bytes -= window.begin()->second.bytes();
        handle(window.begin()->second);
        window.erase(window.begin());
      }
    });
    for (auto& [key, h] : window) handle(h);
  }
  return printed;
}

/// Index of each identification field in PrintedLaunch::ident.
enum Ident { kId, kPid, kProcess, kHost, kKernel, kContext, kStream, kBlock, kGrid, kDevice, kCc };

/// The attributes the details and text pages print as metric rows after a launch's metrics, in
/// ncu_attributes() order: those in filter.attributes, and those filter.metrics names.
std::vector<const NcuAttribute*> attribute_rows(const NcuFilter& filter) {
  std::vector<const NcuAttribute*> rows;
  for (const auto& a : ncu_attributes())
    if (std::find(filter.attributes.begin(), filter.attributes.end(), a.name) != filter.attributes.end() ||
        std::find(filter.metrics.begin(), filter.metrics.end(), a.name) != filter.metrics.end())
      rows.push_back(&a);
  return rows;
}

}  // namespace

uint64_t write_ncu_csv(std::ostream& out, const std::vector<std::filesystem::path>& traces,
                       const std::string& page, const NcuFilter& filter, std::ostream* warnings,
                       const std::string& warning_prefix) {
  if (page != "raw" && page != "details")
    throw std::invalid_argument("--page " + page + ": expected raw or details");
  const std::vector<std::string> ident = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                                          "Stream", "Block Size", "Grid Size", "Device", "CC"};
  auto write_row = [&](const std::vector<std::string>& fields) { write_ncu_csv_row(out, fields); };
  const PrintedTraces printed = read_printed_traces(traces, filter, warnings, warning_prefix);
  // The raw page also shows ncu's launch and device attributes, which every launch has, as columns;
  // the details page those asked for, as rows.
  const std::vector<const NcuAttribute*> detail_attributes = page == "raw" ? std::vector<const NcuAttribute*>{}
                                                                         : attribute_rows(filter);
  // Raw columns: (name, attribute or nullptr for a metric), sorted by name as ncu sorts them.
  std::vector<std::pair<std::string, const NcuAttribute*>> columns;
  for (const auto& c : printed.columns) columns.emplace_back(c, nullptr);
  if (page == "raw")
    for (const auto& a : ncu_attributes())
      if (filter.prints_metric(a.name) &&
          std::none_of(columns.begin(), columns.end(), [&](const auto& c) { return c.first == a.name; }))
        columns.emplace_back(a.name, &a);
  std::sort(columns.begin(), columns.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> h = ident;
  if (page == "raw") {
    for (const auto& c : columns) h.push_back(c.first);
    write_row(h);
    std::vector<std::string> units(ident.size(), "");
    for (const auto& [name, attribute] : columns) units.push_back(attribute ? attribute->unit : ncu_unit(name));
    write_row(units);
  } else {
    // ncu's rule columns follow (its rule rows fill them; rfprof runs no rules): left empty, so
    // that a script reading ncu's 20 columns reads these pages too.
    for (const char* c : {"Section Name", "Metric Name", "Metric Unit", "Metric Value", "Rule Name", "Rule Type",
                          "Rule Description", "Estimated Speedup Type", "Estimated Speedup"})
      h.push_back(c);
    write_row(h);
  }
  return for_each_printed_launch(printed, filter, [&](const PrintedLaunch& p) {
    if (page == "raw") {
      std::vector<std::string> row = p.ident;
      for (const auto& [name, attribute] : columns) {
        if (attribute) {
          row.push_back(attribute->value(*p.row, p.device));
          continue;
        }
        const std::string& c = name;  // (clang: a lambda cannot capture a structured binding)
        auto it = std::find_if(p.values.begin(), p.values.end(), [&](const auto& v) { return v.first == c; });
        row.push_back(it == p.values.end() ? "" : ncu_number(it->second));
      }
      write_row(row);
      return;
    }
    for (const auto& [name, v] : p.values) {
      std::vector<std::string> row = p.ident;
      for (const std::string& f : {std::string(kNcuSection), name, ncu_unit(name), ncu_number(v)}) row.push_back(f);
      row.resize(row.size() + kRuleColumns);
      write_row(row);
    }
    for (const NcuAttribute* a : detail_attributes) {
      std::vector<std::string> row = p.ident;
      for (const std::string& f : {std::string(kNcuSection), a->name, a->unit, a->value(*p.row, p.device)})
        row.push_back(f);
      row.resize(row.size() + kRuleColumns);
      write_row(row);
    }
  });
}

namespace {

/// A table of ncu's text output: `header` and `rows` of equal size, column 0 left-aligned and the
/// others right-aligned, between rules of dashes, indented by 4.
void write_table(std::ostream& out, const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> w(header.size());
  for (size_t c = 0; c < header.size(); ++c) w[c] = header[c].size();
  for (const auto& r : rows)
    for (size_t c = 0; c < w.size() && c < r.size(); ++c) w[c] = std::max(w[c], r[c].size());
  std::string rule = "   ";
  for (size_t width : w) rule += " " + std::string(width, '-');
  auto line = [&](const std::vector<std::string>& r) {
    out << "   ";
    for (size_t c = 0; c < w.size(); ++c) {
      const std::string& cell = c < r.size() ? r[c] : std::string();
      const std::string pad(w[c] - cell.size(), ' ');
      out << " " << (c == 0 ? cell + pad : pad + cell);
    }
    out << "\n";
  };
  out << rule << "\n";
  line(header);
  out << rule << "\n";
  for (const auto& r : rows) line(r);
  out << rule << "\n";
}

/// The launch's metrics as (name, value), with its kernel's duration from the trace as
/// gpu__time_duration.sum when no gpu__time_duration metric was collected (timing mode) and
/// `filter` prints it.
std::vector<std::pair<std::string, double>> text_values(const PrintedLaunch& p, const NcuFilter& filter) {
  std::vector<std::pair<std::string, double>> v = p.values;
  const bool has_duration = std::any_of(v.begin(), v.end(), [](const auto& x) { return x.first.rfind(kGpuTimeDuration, 0) == 0; });
  if (!has_duration && p.row->duration_ns && filter.prints_metric(kTextDuration))
    v.emplace_back(kTextDuration, static_cast<double>(*p.row->duration_ns));
  return v;
}

/// "[PID] PROCESS@HOST" and "  KERNEL (grid)x(block), Context C, Stream S, Device D, CC X.Y".
std::string process_line(const PrintedLaunch& p) {
  const auto& f = p.ident;
  return "[" + f[kPid] + "] " + f[kProcess] + "@" + f[kHost];
}
std::string kernel_line(const PrintedLaunch& p) {
  const auto& f = p.ident;
  return "  " + f[kKernel] + " " + f[kGrid] + "x" + f[kBlock] + ", Context " + f[kContext] + ", Stream " +
         f[kStream] + ", Device " + f[kDevice] + ", CC " + f[kCc];
}

}  // namespace

uint64_t write_ncu_text(std::ostream& out, const std::vector<std::filesystem::path>& traces, const NcuFilter& filter,
                        std::ostream* warnings, const std::string& warning_prefix) {
  const PrintedTraces printed = read_printed_traces(traces, filter, warnings, warning_prefix, {kTextDuration});
  const std::vector<const NcuAttribute*> attributes = attribute_rows(filter);
  std::string process;  // the process line of the launches printed last
  return for_each_printed_launch(
      printed, filter,
      [&](const PrintedLaunch& p) {
        if (const std::string proc = process_line(p); proc != process) {
          out << proc << "\n";
          process = proc;
        }
        out << kernel_line(p) << "\n    Section: " << kNcuSection << "\n";
        std::vector<std::vector<std::string>> rows;
        for (const auto& [name, v] : text_values(p, filter))
          rows.push_back({name, ncu_unit(name), std::isfinite(v) ? ncu_number(v) : "n/a"});  // ncu's n/a
        for (const NcuAttribute* a : attributes) rows.push_back({a->name, a->unit, a->value(*p.row, p.device)});
        write_table(out, {"Metric Name", "Metric Unit", "Metric Value"}, rows);
        out << "\n";
      });
}

uint64_t write_ncu_summary_text(std::ostream& out, const std::vector<std::filesystem::path>& traces,
                                const NcuFilter& filter, std::ostream* warnings, const std::string& warning_prefix) {
  /// One kernel line's launches: per metric, in order of first appearance, min, max, sum, count.
  struct Stat {
    double min = 0, max = 0, sum = 0;
    uint64_t n = 0;
  };
  struct Group {
    std::string process, kernel;
    uint64_t invocations = 0;
    std::vector<std::pair<std::string, Stat>> metrics;
  };
  std::vector<Group> groups;  // in order of first launch; memory: distinct kernel lines x metrics
  std::map<std::string, size_t> index;
  const uint64_t printed = for_each_printed_launch(
      read_printed_traces(traces, filter, warnings, warning_prefix, {kTextDuration}), filter,
      [&](const PrintedLaunch& p) {
        const std::string proc = process_line(p), kernel = kernel_line(p);
        auto [it, added] = index.try_emplace(proc + "\n" + kernel, groups.size());
        if (added) groups.push_back({proc, kernel, 0, {}});
        Group& g = groups[it->second];
        ++g.invocations;
        for (const auto& value : text_values(p, filter)) {
          const std::string& name = value.first;  // (clang: a lambda cannot capture a structured binding)
          const double v = value.second;
          if (!std::isfinite(v)) continue;
          auto m = std::find_if(g.metrics.begin(), g.metrics.end(), [&](const auto& x) { return x.first == name; });
          if (m == g.metrics.end()) {
            g.metrics.emplace_back(name, Stat{v, v, 0, 0});
            m = g.metrics.end() - 1;
          }
          Stat& s = m->second;
          s.min = std::min(s.min, v);
          s.max = std::max(s.max, v);
          s.sum += v;
          ++s.n;
        }
      });
  std::string process;
  for (const Group& g : groups) {
    if (g.process != process) {
      out << g.process << "\n";
      process = g.process;
    }
    out << g.kernel << ", Invocations " << g.invocations << "\n    Section: " << kNcuSection << "\n";
    std::vector<std::vector<std::string>> rows;
    for (const auto& [name, s] : g.metrics)
      rows.push_back({name, ncu_unit(name), ncu_number(s.min), ncu_number(s.max),
                      ncu_number(s.sum / static_cast<double>(s.n))});
    write_table(out, {"Metric Name", "Metric Unit", "Minimum", "Maximum", "Average"}, rows);
    out << "\n";
  }
  return printed;
}

}  // namespace rf::analyzer
