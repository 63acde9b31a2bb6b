// report.html (self-contained, interactive Vega-Lite charts) and scaling.csv (one row per trace).
// Page data schema and the definitions of label, batch size and throughput: docs/analyzer-outputs.md,
// "report.html" and "scaling.csv".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "rfprof/analyzer/report.h"
#include "rfprof/analyzer/rows.h"
#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {

/// The files report.html inlines, compiled into rfanalyze (analyzer/report/, npm builds).
namespace assets {
std::string_view vega_js();        ///< Vega (analyzer/report/node_modules, minified)
std::string_view vega_lite_js();   ///< Vega-Lite
std::string_view vega_embed_js();  ///< vega-embed
std::string_view report_js();        ///< analyzer/report/report.js: builds the page from its data
std::string_view report_template();  ///< analyzer/report/report.html.in
}  // namespace assets

/// One row of scaling.csv: one trace of the run.
struct ScalingRow {
  std::string label;                     ///< trace_label (scaling.h), as in processes.csv
  std::string trace;                     ///< trace path
  std::optional<uint64_t> batch_size;    ///< from the command line (batch_size_of, scaling.h)
  /// steps whose kernels the trace holds: the step ranges (step_range_name of a launch's path)
  /// that enclose at least one launch's API call, each range instance once, so that ten ranges
  /// all named "iteration" are ten steps; else the command line's --iters N (iterations_of,
  /// scaling.h)
  std::optional<uint64_t> iterations;
  uint64_t launches = 0;
  uint64_t gpu_time_ns = 0;              ///< sum of kernel durations (ns)
  bool timed = false;                    ///< a launch had a duration (else gpu_time_ns is unknown: empty)
  std::optional<double> flop;            ///< FLOP of the launches with FLOP and DRAM bytes
  std::optional<double> flop_per_s;      ///< Aggregate::flop_per_s (FLOP/s)
  std::optional<double> arithmetic_intensity;  ///< FLOP/byte (DRAM)
  /// batch_size * iterations / (gpu_time_ns * 1e-9) (samples/s); absent unless all three known.
  std::optional<double> throughput_samples_per_s;
};

/// Header of scaling.csv, in column order.
const std::vector<std::string>& scaling_csv_header();

/// Collects what report.html and scaling.csv need beyond Report: sums per trace and per point
/// (trace, device, kernel, phase, NVTX path). Memory: number of distinct points, not launches.
class ReportPage {
 public:
  /// Starts the next trace (traces are numbered in the order they begin, as in Report).
  void begin_trace(const TraceContext& ctx);
  /// One joined launch of the current trace. Throws std::logic_error before any begin_trace.
  void add_launch(const KernelRow& row);

  /// One row per trace, in run order.
  std::vector<ScalingRow> scaling_rows() const;
  /// Writes scaling.csv (header included).
  void write_scaling_csv(std::ostream& out) const;
  /// The page's data (schema: docs/analyzer-outputs.md, "report.html"); `report` gives devices, ceilings
  /// and the per-range and per-phase sums, its summary() the "ops" section when present.
  nlohmann::ordered_json data(const Report& report) const;

  /// Kernel groups the page draws as they are; past it, points are summed over NVTX paths (one
  /// per trace, device, kernel and phase). A page of 5,000 points is about 2.5 MB; 150,000 (an
  /// emit_nvtx run, op ranges numbered) made 74 MB that the browser could not lay out.
  static constexpr size_t kMaxPoints = 5000;
  /// Rows of the NVTX range table: those with the most GPU time (ranges.csv has every range).
  static constexpr size_t kMaxRangeRows = 1000;

 private:
  struct PointKey {
    size_t trace = 0;
    std::optional<uint32_t> device;
    std::string kernel, phase, range;
  };
  /// A PointKey made of a launch's fields without copying them (lookups allocate nothing).
  struct PointKeyView {
    size_t trace = 0;
    std::optional<uint32_t> device;
    std::string_view kernel, phase, range;
  };
  /// Orders PointKey and PointKeyView alike (by trace, device, kernel, phase, range).
  struct PointLess {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return key(a) < key(b);
    }
    template <typename K>
    static auto key(const K& k) {
      return std::make_tuple(k.trace, k.device, std::string_view(k.kernel), std::string_view(k.phase),
                             std::string_view(k.range));
    }
  };
  struct TraceInfo {
    std::string path, command_line;
    Aggregate totals;
    /// The trace's step ranges (is_step_range_name; never ended: to UINT64_MAX), by name, each
    /// name's by start time, and whether a launch of the trace was attributed to each.
    struct StepRange {
      uint64_t start_ns = 0, end_ns = 0;
      bool has_launch = false;
    };
    std::map<std::string, std::vector<StepRange>, std::less<>> step_ranges;
    uint64_t steps_with_launches = 0;
    /// Names of the step ranges of launches without an API call time (an ncu CSV's), or with no
    /// range of that name open at their call: counted by name, as nothing tells their
    /// instances apart.
    std::set<std::string, std::less<>> untimed_steps;
  };
  /// Marks the step range instance of `t` named `step` that encloses `row`'s API call.
  static void count_step(TraceInfo& t, std::string_view step, const KernelRow& row);
  std::vector<TraceInfo> traces_;
  /// One point's launches: all of them, and those with total FLOP and a duration above 0 (the
  /// launches its FLOP/s is over, Aggregate::rate_flop), under which its roof is placed.
  struct Point {
    Aggregate all, rated;
    void merge(const Point& o) {
      all.merge(o.all);
      rated.merge(o.rated);
    }
  };
  std::map<PointKey, Point, PointLess> points_;
};

/// The component of an NVTX path ("step 5/forward/aten::conv2d") that names a training step: the
/// first one for which is_step_range_name (scaling.h) holds ("step 5", "Iteration", not
/// "stepper"); "" when none does. The same rule picks the steps processes.csv counts.
std::string_view step_range_name(std::string_view nvtx_path);

/// Writes the self-contained report.html for `data` (ReportPage::data): the template with the
/// Vega builds, the page script and the data inlined. The data is JSON with "<", ">" and "&"
/// written as \u escapes, so no string in it can close the <script> element. Throws
/// std::runtime_error when the embedded template lacks one of its markers.
void write_report_html(std::ostream& out, const nlohmann::ordered_json& data);

}  // namespace rf::analyzer
