// Nsight Compute's CSV (`ncu --csv --page raw|details`) and its text output (without --csv)
// written from rfprof traces, so scripts written for ncu read rfprof's results unchanged
// (docs/ncu-flags.md, "CSV").
//   raw:     "ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",
//            "Block Size","Grid Size","Device","CC",<metric and attribute names, sorted>; then a
//            units row (11 empty cells, a unit per column); then one row per launch.
//   details: the same 11 identification columns, then "Section Name","Metric Name","Metric Unit",
//            "Metric Value": one row per launch and metric (and attribute asked for).
// Every field is double-quoted; numbers carry thousands separators ("10,240,000"); block and grid
// are "(x, y, z)". Units are base units (byte, ns, inst, block, ...), as `--print-units base`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <ostream>
#include <string_view>
#include <string>
#include <vector>

#include "rfprof/analyzer/rows.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/collector/launch_selection.h"

namespace rf::analyzer {

/// Which launches are printed (ncu's -k, -s, -c, applied in that order).
struct NcuFilter {
  /// Exact kernel name, compared as kernel_name_base says, or "regex:<ECMAScript regex>" searched
  /// in the demangled name.
  std::optional<std::string> kernel_name;
  /// What an exact kernel_name is compared with (ncu's --kernel-name-base): "function" (the
  /// collector's rule, collector::function_name_matches: the function name with or without its
  /// namespaces, or the whole demangled name), "demangled" (the whole demangled name) or "mangled"
  /// (the symbol). Others: as "function".
  std::string kernel_name_base = "function";
  /// How the "Kernel Name" field and the text's kernel line spell the kernel (ncu's
  /// --print-kernel-base): "demangled" (default), "function" (the function name without return
  /// type, namespaces, template arguments and parameters: "void at::native::k<4>(int)" -> "k") or
  /// "mangled" (the symbol; the demangled name when the trace has none). Not a filter: every
  /// launch the filter keeps is printed.
  std::string print_kernel_base = "demangled";
  uint64_t launch_skip = 0;              ///< matching launches skipped first
  std::optional<uint64_t> launch_count;  ///< matching launches printed at most
  /// ncu's --kernel-id (collector::KernelId's syntax; its NAME compared as kernel_name is). The
  /// writers throw collector::FilterError for a malformed one, before printing anything.
  std::optional<std::string> kernel_id;
  /// ncu's --filter-mode: what launch_skip/launch_count and the kernel id's invocation count
  /// separately (collector::LaunchSelection, as in the collector).
  collector::FilterMode filter_mode = collector::FilterMode::kGlobal;
  uint64_t launch_skip_before_match = 0;  ///< ncu's --launch-skip-before-match: launches skipped first
  std::vector<uint32_t> devices;          ///< ncu's --devices: only launches on these (empty: all)
  /// Metrics printed (`ncu -i REPORT --metrics a,b`); empty: every metric. A full name selects that
  /// metric; a base name without a rollup suffix (no '.', e.g. gpu__time_duration) selects every
  /// NAME.suffix (.sum, .avg, ...), as ncu's extra suffixes. The writers throw std::invalid_argument
  /// before printing anything when a name selects none of the traces' metrics.
  std::vector<std::string> metrics;
  /// ncu launch and device attributes (ncu_attributes() names) printed as rows after each launch's
  /// metrics on the details page and in text (a run's --metrics attribute names); the raw page
  /// prints every attribute as a column anyway. Attribute names in `metrics` count too. Names that
  /// are not attributes are ignored.
  std::vector<std::string> attributes;

  /// True when `metric` (a full metric name) is printed under `metrics`.
  bool prints_metric(std::string_view metric) const;
};

/// `value` as ncu prints it: integral values with thousands separators ("1,234,567"), others with
/// separators in the integer part and the shortest round-tripping fraction ("1,234.5"); NaN: "".
std::string ncu_number(double value);

/// A whole number as ncu prints it, exactly at any size ("18,446,744,073,709,551,615").
std::string ncu_whole_number(uint64_t value);

/// Unit of a metric as ncu prints it with --print-units base, from its name: the base metric's
/// ("byte", "ns", "inst", "sector", "cycle", "") and its rollup's suffix: "%" for ".pct*"
/// (".avg.pct_of_peak_sustained_elapsed"), "<unit>/second" for ".per_second" ("byte/second";
/// "1/second" without a unit), "<unit>/cycle" for ".per_cycle_active", ".per_cycle_elapsed" and
/// ".peak_sustained" ("inst/cycle"; cycles per cycle: "").
std::string ncu_unit(const std::string& metric);

/// One of the launch__* and device__attribute_* columns ncu's raw page prints for every launch
/// (collected without replay), that rfprof fills from its trace: the kernel's activity record
/// (grid, block, registers, shared memory, context, stream) and its device's record.
struct NcuAttribute {
  std::string name;  ///< as NVIDIA spells it, e.g. "launch__grid_size"
  std::string unit;  ///< ncu's unit with --print-units base: "", "block", "byte/block", "thread", ...
  /// The field as ncu prints it ("100,352", "NVIDIA H100 80GB HBM3"); "" when the trace lacks it.
  /// `device`: the launch's device record, nullptr when the trace has none.
  std::function<std::string(const KernelRow&, const DeviceRecord* device)> value;
};

/// The attributes rfprof prints, sorted by name: those its traces hold (not the memory clock and bus
/// width, which CUPTI's device record lacks; not the occupancy, cluster and driver-reserved
/// shared memory figures, which ncu computes). Checked against ncu 2025.3's raw page of the same
/// launches (tests/data/h100-2026-11-23), value for value: launch__grid_size = grid x*y*z,
/// launch__block_size = block x*y*z, launch__thread_count = their product.
const std::vector<NcuAttribute>& ncu_attributes();

/// True when `name` is the name of one of ncu_attributes().
bool is_ncu_attribute(std::string_view name);

/// Streams the traces (pass 1 and 2 of rfanalyze, in order) and writes the page ("raw" or
/// "details") to `out`, each trace's launches in launch order (by correlation id, through a window
/// of 4,096 launches: a launch whose records arrive later is printed where it arrives; -s and -c
/// count in that order). The raw page's columns after the 11 identification ones are the union of
/// the traces' metric lists and ncu_attributes(), sorted by name as ncu sorts them; a launch
/// without a value prints "". Throws trace::TraceError for
/// an unreadable trace, std::regex_error for a bad -k regex and std::invalid_argument for a bad
/// page or a filter.metrics name that selects none of the traces' metrics, all before printing
/// anything.
/// Returns the number of launches printed. A truncated trace (a killed process's) is printed as
/// far as it reads, with one line on `warnings` when given: "<prefix>TRACE is truncated at byte N
/// ...".
uint64_t write_ncu_csv(std::ostream& out, const std::vector<std::filesystem::path>& traces,
                       const std::string& page, const NcuFilter& filter, std::ostream* warnings = nullptr,
                       const std::string& warning_prefix = "rfprof: ");

/// The same launches as ncu prints them without --csv (its details page as text): a
/// "[PID] PROCESS@HOST" line when the process changes, then per launch
///   "  KERNEL (gx, gy, gz)x(bx, by, bz), Context C, Stream S, Device D, CC X.Y"
///   "    Section: Command line profiler metrics"
/// and a table of Metric Name (left-aligned), Metric Unit and Metric Value (right-aligned) between
/// rules of dashes. Units are base units, as `--print-units base`. A launch without a
/// gpu__time_duration metric (timing mode) shows its kernel's duration from the trace as
/// gpu__time_duration.sum in ns. Throws as write_ncu_csv; returns the number of launches printed.
uint64_t write_ncu_text(std::ostream& out, const std::vector<std::filesystem::path>& traces, const NcuFilter& filter,
                        std::ostream* warnings = nullptr, const std::string& warning_prefix = "rfprof: ");

/// ncu's `--print-summary per-kernel` as text: the launches write_ncu_text would print, grouped by
/// process and kernel line (name, grid, block, context, stream, device: launches that print the
/// same line), in order of first launch. Per group the kernel line gets ", Invocations N", and the
/// table has Metric Name, Metric Unit, Minimum, Maximum and Average (arithmetic mean over the
/// launches that have the metric). Memory: distinct kernel lines x metrics. Throws as
/// write_ncu_csv; returns the number of launches summarized.
uint64_t write_ncu_summary_text(std::ostream& out, const std::vector<std::filesystem::path>& traces,
                                const NcuFilter& filter, std::ostream* warnings = nullptr,
                                const std::string& warning_prefix = "rfprof: ");

}  // namespace rf::analyzer
