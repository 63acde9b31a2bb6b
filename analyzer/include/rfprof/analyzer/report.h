// Accumulates the outputs of a run over one or more traces: kernels.csv and counters.csv rows
// (streamed), ranges.csv and phases.csv sums, ceilings per device, above-roof launches and the
// facts summary.json reports.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "rfprof/analyzer/callsites.h"
#include "rfprof/analyzer/ceilings.h"
#include "rfprof/analyzer/ops.h"
#include "rfprof/analyzer/roof.h"
#include "rfprof/analyzer/scaling.h"
#include "rfprof/analyzer/rows.h"
#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {

/// At most this many above-roof launches are listed in summary.json (all are counted).
inline constexpr size_t kMaxAboveRoofListed = 1000;

/// At most this many kernel names are listed in summary.json's uncounted_tensor_work.
inline constexpr size_t kUncountedTensorKernelsListed = 3;
/// What summary.json's uncounted_tensor_work (and the warning and report.html's note made from it)
/// tells the user to do.
inline constexpr std::string_view kUncountedTensorHint =
    "collect the roofline-tensor set (rfprof --set roofline-tensor, RFPROF_METRIC_SET=roofline-tensor) to count "
    "tensor-core FLOP";

/// The launches that ran tensor-core instructions their metric list does not count as FLOP
/// (LaunchMetrics::uncounted_tensor_work: sm__inst_executed_pipe_tensor.sum > 0, no
/// sm__ops_path_tensor_* metric), as in summary.json's uncounted_tensor_work.
struct UncountedTensorWork {
  uint64_t launches = 0;
  uint64_t gpu_time_ns = 0;                   ///< their kernel durations (ns); a launch without one adds 0
  std::map<std::string, uint64_t> kernel_ns;  ///< GPU time (ns) per kernel name among them
};

/// A launch whose point lies above its roof (roof.h): a measurement or formula error.
struct AboveRoof {
  std::string trace;
  uint32_t id = 0;
  uint32_t pid = 0;
  std::optional<uint32_t> device;
  std::string kernel;
  std::optional<double> arithmetic_intensity;  ///< FLOP/byte
  RoofCheck check;
};

/// One MetricConfig record of a trace: how many metrics it held and how many passes (kernel
/// replays, or training steps under replay across steps) the Range Profiler needed for them.
struct MetricConfigSummary {
  uint32_t config_id = 0;
  uint64_t metrics = 0;
  uint32_t passes = 0;
};

/// What summary.json says about one trace.
struct TraceSummary {
  std::string path;
  uint32_t pid = 0;
  std::string hostname, process_name, command_line, rfprof_version, mode;
  std::string format_version;  ///< "1.2"; "" for an ncu CSV's import (no trace format)
  bool truncated = false;
  uint64_t truncated_at = 0;
  uint64_t records = 0;
  /// ProcessInfo start_ns (injection time, CUPTI clock); nullopt: none, or an ncu CSV's import.
  std::optional<uint64_t> start_ns;
  std::optional<uint64_t> last_event_ns;    ///< TraceContext::last_event_ns (nullopt: none)
  std::optional<uint64_t> dropped_records;  ///< from TraceEnd
  uint64_t launches = 0;                    ///< kernels.csv rows from this trace
  uint64_t nvtx_ranges = 0;
  uint64_t nvtx_unmatched_ends = 0;       ///< NvtxIndex::unmatched_ends(): kEnd without kStart
  uint64_t nvtx_duplicate_starts = 0;     ///< NvtxIndex::duplicate_starts(): dropped
  uint64_t nvtx_backwards_ranges = 0;     ///< NvtxIndex::backwards_ranges(): end before start, dropped
  uint64_t memory_events = 0;               ///< MemoryActivity records
  uint64_t memory_peak_bytes = 0;           ///< MemoryTimeline::peak_bytes()
  uint64_t memory_peak_timestamp_ns = 0;
  uint64_t call_stacks = 0;                 ///< CallStack records
  std::vector<MetricConfigSummary> metric_configs;  ///< by config id
  std::map<std::string, OverheadPhaseTotals> overhead;  ///< TraceContext::overhead
  std::optional<uint64_t> traced_ns;        ///< TraceContext::traced_ns()
  StreamStats stream;
};

/// One device of one trace and the ceilings used for it.
struct DeviceSummary {
  size_t trace_index = 0;
  uint32_t pid = 0;
  DeviceRecord device;
  DeviceCeilings ceilings;
};

/// Key of a kernel group: the launches of one kernel name in one phase on one device of the run.
/// These are the points of a per-kernel roofline (memory: number of distinct keys).
struct KernelGroupKey {
  /// Index into Report::devices() of the launch's device; -1 when its device is unknown.
  int64_t device_index = -1;
  std::string kernel;  ///< demangled name
  std::string phase;
  auto operator<=>(const KernelGroupKey&) const = default;
};

/// The accumulated run. Rows go to `kernels_csv` and `counters_csv` as they arrive (headers are
/// written by the constructor); everything else is kept for write_aggregates() and summary().
class Report {
 public:
  Report(CeilingSources sources, std::ostream& kernels_csv, std::ostream& counters_csv)
      : Report(std::move(sources), &kernels_csv, &counters_csv) {}
  /// As above; a null stream is an output not written (rfanalyze --skip): its rows are not even
  /// formatted, which is most of a launch's cost (bench/README.md). Every sum is the same.
  Report(CeilingSources sources, std::ostream* kernels_csv, std::ostream* counters_csv);

  /// Starts a trace: records its devices and resolves their ceilings.
  void begin_trace(const TraceContext& ctx);
  /// One joined launch of the current trace: writes its rows, adds it to the sums, checks its roof
  /// against the ceilings of its device (or the --device entry when the trace has no DeviceInfo
  /// for it; without either, the launch counts in launches_without_ceilings).
  void add_launch(const LaunchOutput& launch);
  /// Ends the current trace with what pass 2 counted.
  void end_trace(const TraceContext& ctx, const StreamStats& stats);

  /// Writes ranges.csv (by NVTX path) and phases.csv (by phase), headers included, sorted by key.
  /// peak_memory_bytes is the highest GPU memory in use while a range with that path was open
  /// (memory.h), the highest of its paths for a phase; empty without memory records or for
  /// launches outside every range. memory_bound_ns and compute_bound_ns (the last two) are the
  /// GPU time of its launches by kernels.csv's `bound`.
  void write_aggregates(std::ostream& ranges_csv, std::ostream& phases_csv) const;
  /// callsites_time.folded, callsites_flop.folded and callsites.csv (callsites.h).
  void write_call_sites(std::ostream& time_folded, std::ostream& flop_folded, std::ostream& csv) const;
  const CallSites& call_sites() const noexcept { return call_sites_; }
  /// Peak GPU memory in use (bytes) by NVTX range path, over every trace with memory records.
  const std::map<std::string, uint64_t>& range_memory_peaks() const noexcept { return range_peaks_; }
  /// Peak GPU memory in use (bytes) by phase: the highest of the phase's range paths.
  std::map<std::string, uint64_t> phase_memory_peaks() const;
  /// ops.csv and layers.csv (emit_nvtx breakdown, ops.h), headers included.
  void write_ops(std::ostream& ops_csv, std::ostream& layers_csv) const;
  const OpBreakdown& ops() const noexcept { return ops_; }
  /// processes.csv: one row per trace (header included), in trace order.
  void write_processes(std::ostream& processes_csv) const;
  /// profiler_overhead.csv (overhead.h): the collector's cost per phase of every trace, header
  /// included, in trace order.
  void write_overhead(std::ostream& overhead_csv) const;
  /// The per-trace rows of processes.csv.
  const std::vector<ProcessRow>& processes() const noexcept { return processes_; }
  /// summary.json (structure: docs/analyzer-outputs.md), keys in a fixed, readable order.
  nlohmann::ordered_json summary() const;
  /// summary.json's uncounted_tensor_work: null when no launch has uncounted tensor work, else
  /// {launches, gpu_time_ns (ns), share_of_gpu_time (of all launches' GPU time, totals.duration_ns;
  /// null when that is 0 or unknown), kernels (at most kUncountedTensorKernelsListed names, most GPU
  /// time first, ties in name order), hint (kUncountedTensorHint)}.
  nlohmann::ordered_json uncounted_tensor_work_json() const;
  const UncountedTensorWork& uncounted_tensor_work() const noexcept { return uncounted_tensor_; }

  /// Launches and their GPU time (ns) by the roof that bounds them (RoofCheck::bound()).
  struct BoundShare {
    uint64_t launches = 0;
    uint64_t duration_ns = 0;
  };
  /// By bound: [i] for kBoundNames[i]: "memory", "compute", "unknown" (RoofCheck::bound() empty:
  /// a ceiling missing, no counters, or no FLOP without tensor-core FLOP measured).
  static constexpr std::array<const char*, 3> kBoundNames = {"memory", "compute", "unknown"};
  const std::array<BoundShare, 3>& bound_shares() const noexcept { return bound_shares_; }

  uint64_t above_roof_count() const noexcept { return above_roof_count_; }
  /// Launches above their roof with severity "error" (RoofCheck::severity).
  uint64_t above_roof_errors() const noexcept { return above_roof_errors_; }
  const Aggregate& totals() const noexcept { return totals_; }
  const std::vector<AboveRoof>& above_roof() const noexcept { return above_roof_; }
  const std::vector<TraceSummary>& traces() const noexcept { return traces_; }
  const std::vector<DeviceSummary>& devices() const noexcept { return devices_; }
  /// Sums per kernel group (KernelGroupKey), sorted by key.
  const std::map<KernelGroupKey, Aggregate>& kernel_groups() const noexcept { return kernel_groups_; }
  /// Sums per NVTX range path ("" for launches outside every range).
  const std::map<std::string, Aggregate>& ranges() const noexcept { return ranges_; }
  /// Sums per phase.
  const std::map<std::string, Aggregate>& phases() const noexcept { return phases_; }

 private:
  CeilingSources sources_;
  std::ostream* kernels_;   // null: kernels.csv not written
  std::ostream* counters_;  // null: counters.csv not written
  std::vector<std::string> kernel_fields_;  // a launch's kernels.csv fields, memory reused per launch
  std::string counter_head_;  // a launch's "id,kernel," in counters.csv, memory reused per launch
  std::string counter_rows_;  // a launch's counters.csv rows, memory reused per launch
  std::string counter_tail_;  // a launch's ",pid,window" in counters.csv, memory reused per launch
  /// The names of the metric list at escaped_names_for_ (a LaunchOutput::metric_names of the
  /// current trace), each escaped for counters.csv and followed by its comma: escaped again when
  /// a launch has another list (or a trace begins), not per launch.
  const std::vector<std::string>* escaped_names_for_ = nullptr;
  std::vector<std::string> escaped_names_;
  std::vector<TraceSummary> traces_;
  std::vector<DeviceSummary> devices_;
  std::map<uint32_t, size_t> current_devices_;  // device id -> index in devices_ (current trace)
  std::optional<DeviceCeilings> forced_ceilings_;  // --device, for launches on unrecorded devices
  std::map<std::string, Aggregate> ranges_;
  std::map<std::string, Aggregate> phases_;
  std::map<KernelGroupKey, Aggregate> kernel_groups_;
  std::vector<ProcessRow> processes_;
  OpBreakdown ops_;
  CallSites call_sites_;
  std::map<std::string, uint64_t> range_peaks_;  // by NVTX path
  std::map<std::string, std::string> path_phases_;  // NVTX path -> phase (traces with memory records)
  bool current_has_memory_ = false;
  Aggregate current_totals_;
  Aggregate totals_;
  std::string current_path_;
  uint64_t current_launches_ = 0;
  uint64_t launches_without_ceilings_ = 0;
  std::array<BoundShare, 3> bound_shares_{};
  uint64_t above_roof_count_ = 0;
  uint64_t above_roof_errors_ = 0;
  std::vector<AboveRoof> above_roof_;
  UncountedTensorWork uncounted_tensor_;
};

}  // namespace rf::analyzer
