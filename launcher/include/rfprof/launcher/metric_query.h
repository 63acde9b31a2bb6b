// ncu's metric queries, answered from CUPTI's profiler host API (no GPU needed with --chips):
//   rfprof --list-chips                                   the chips --chips takes
//   rfprof --query-metrics --chips gh100                  base metrics: name, type, unit, description
//   rfprof --query-metrics-mode suffix --metrics dram__bytes_read --chips gh100
//                                                         the full names a base metric has
//   rfprof --query-metrics                                the same for this machine's CUDA devices
// docs/ncu-flags.md, "Metric queries", says where the output differs from ncu's.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rf::collector {
class MetricHost;
}

namespace rf::launcher {

/// What one --query-metrics invocation lists.
struct MetricQuery {
  /// --query-metrics-mode: "base" (base names; with --metrics as "suffix"), "suffix" (the full
  /// names of the --metrics base names) or "all" (every base name with its full names).
  std::string mode = "base";
  std::vector<std::string> chips;    ///< --chips as typed ("gh100"); empty: this machine's devices
  std::vector<std::string> metrics;  ///< --metrics: base names, or full names (one row each)
  std::vector<uint32_t> devices;     ///< --devices without --chips: these ordinals only (empty: all)
  bool csv = false;                  ///< --csv: one table, a "1" column per chip, as ncu writes it
  bool quiet = false;                ///< --quiet: no "rfprof: note:" lines (errors are still written)
};

/// One listed metric.
struct MetricRow {
  std::string name;         ///< full or base metric name, e.g. "dram__bytes_read.sum"
  std::string type;         ///< "Counter", "Ratio" or "Throughput" (the base metric's kind)
  std::string unit;         ///< ncu's short unit, e.g. "byte", "byte/second", "%" (ncu_unit)
  std::string description;  ///< CUPTI's description; full names add what the suffix means
};

/// CUPTI's unit (cuptiProfilerHostGetMetricProperties' dim unit) as ncu prints it: each factor of
/// a product or quotient shortened (instruction -> inst, l2_sector and the other *_sector ->
/// sector, *_request -> request, *_cycle -> cycle, nanosecond -> nsecond, percent -> %, cta ->
/// block), and in a product a cycle factor dropped ("gpc_cyclewarp" -> "warp": warps summed over
/// cycles), as ncu 2024.1 prints GH100's units. Factors ncu leaves blank (l1tex_wavefront,
/// math_op, ...) are kept as CUPTI names them. E.g. "gpc_cycleinstruction/warp" -> "inst/warp".
std::string ncu_unit(std::string_view cupti_unit);

/// The unit of full metric `base + suffix` (ncu_unit's short names) for a base metric of kind
/// `type` ("Counter", "Ratio", "Throughput") whose unit CUPTI gives as `cupti_unit`: rates add
/// "/cycle" or "/second" ("byte/second"; a count summed over cycles, "gpc_cyclewarp", per cycle
/// is "warp"), percentages are "%"; the rollups, .peak_sustained_active and
/// .peak_sustained_elapsed keep the base unit. As ncu 2024.1 prints GH100's full names.
std::string suffix_unit(const std::string& type, std::string_view cupti_unit, std::string_view suffix);

/// What `suffix` (e.g. ".avg.pct_of_peak_sustained_elapsed") means, in words ("average over the
/// unit's instances, percent of the peak sustained rate over elapsed cycles"); "" when unknown.
std::string suffix_meaning(std::string_view suffix);

/// The rows `query` lists for one chip, in ncu's order: base names sorted; under a base name its
/// full names in CUPTI's order (.avg, .avg.peak_sustained, ...). A --metrics name that is neither a
/// base metric nor a full metric of this chip is appended to `unknown` instead. Throws
/// collector::HostApiError if CUPTI fails.
std::vector<MetricRow> metric_rows(const collector::MetricHost& host, const MetricQuery& query,
                                   std::vector<std::string>& unknown);

/// Writes one chip's table as ncu's text: `header` ("Chip gh100" or "Device NAME (GH100)"), then
/// columns Metric Name (as wide as the longest name, at least 75), Metric Type (15) and Metric
/// Unit (as wide as the longest unit, at least 15) and Metric Description (wrapped at 70 characters, continuation lines indented to its
/// column), separated by one space, framed by dashed lines. No trailing spaces.
void write_metric_table(std::ostream& out, const std::string& header, const std::vector<MetricRow>& rows);

/// Writes the tables of several chips as ncu's --csv: "Metric name","Metric type","Metric
/// unit","Metric description", then one column per chip (`labels`) holding "1" where that chip has
/// the metric; one row per name of any chip, sorted by name; every field quoted.
/// `per_chip[i]` are the rows of `labels[i]`; a name's type, unit and description come from the
/// first chip that has it.
void write_metric_csv(std::ostream& out, const std::vector<std::string>& labels,
                      const std::vector<std::vector<MetricRow>>& per_chip);

/// The chips --chips takes, as ncu's --list-chips prints them: lower case, sorted, ", " between.
std::string chip_list(const std::vector<std::string>& chips);

/// Runs `query`: resolves --chips case-insensitively against the host API's chips (or, without
/// --chips, asks the driver for this machine's devices, collector::local_devices), prints the
/// tables (or the CSV) to `out` and notes and errors to `err`. Returns 0; or 2 after one
/// "rfprof: ..." line, before anything is printed, for an unknown chip, no usable driver, no
/// device, or a --devices ordinal that is not a device; or 2 after the tables when a --metrics
/// name is a metric of none of the queried chips (one line per such name, then the closest names
/// on the first chip). Names only some chips lack get one note each.
int run_metric_query(const MetricQuery& query, std::ostream& out, std::ostream& err);

}  // namespace rf::launcher
