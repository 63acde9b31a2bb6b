// The two passes over one trace. Pass 1 (read_context) keeps what is small and needed to
// interpret launches: the process, devices, metric lists, every NVTX range, memory event and call
// stack (memory: the number of ranges, memory events and distinct stacks). Pass 2 (stream_launches) streams launches, kernels and counters through the
// LaunchJoiner and hands each joined launch to a sink as a KernelRow; its memory is bounded by the
// joiner's buffer (rfprof/analyzer/join.h), not by the number of launches.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rfprof/analyzer/callsites.h"
#include "rfprof/analyzer/flops.h"
#include "rfprof/analyzer/join.h"
#include "rfprof/analyzer/memory.h"
#include "rfprof/analyzer/nvtx_attribution.h"
#include "rfprof/analyzer/phases.h"
#include "rfprof/analyzer/rows.h"
#include "rfprof/trace/records.h"

namespace rf::analyzer {

/// A DeviceInfo record with its strings resolved.
struct DeviceRecord {
  trace::DeviceInfo info;
  std::string name;  ///< e.g. "NVIDIA H100 80GB HBM3"
  std::string chip;  ///< e.g. "GH100"
};

/// A MetricConfig with its metric names resolved, and where the formulas' metrics sit in it.
struct MetricList {
  std::vector<std::string> names;
  MetricLayout layout;
  uint32_t num_passes = 0;  ///< passes the collector's Range Profiler needed for these metrics
};

/// The collector's own cost in one phase (the last ProfilerOverhead record of the phase; format 1.2).
struct OverheadPhaseTotals {
  uint64_t count = 0;     ///< times the phase ran
  uint64_t total_ns = 0;  ///< summed wall-clock time (ns)
  uint64_t max_ns = 0;    ///< longest single run (ns)
};

/// What pass 1 learns about one trace.
struct TraceContext {
  std::filesystem::path path;
  std::optional<trace::ProcessInfo> process;  ///< absent if the trace holds no ProcessInfo
  std::string hostname, process_name, command_line, rfprof_version;
  uint16_t version_major = 0, version_minor = 0;
  std::map<uint32_t, DeviceRecord> devices;   ///< by device id
  std::map<uint32_t, MetricList> configs;     ///< by config id
  NvtxIndex nvtx;                             ///< finalized
  MemoryTimeline memory;                      ///< finalized; empty without MemoryActivity records
  CallStackMap call_stacks;                   ///< CallStack records (empty: none recorded)
  bool truncated = false;
  uint64_t truncated_at = 0;                  ///< byte offset where the readable part stops
  uint64_t records = 0;                       ///< records read (strings included)
  /// Latest time stamp of the application's recorded events (ns, CUPTI clock: Unix epoch ns on
  /// Linux): launch call ends, kernel ends, NVTX events, profiling window changes, memory events;
  /// 0 without any. For a killed process's trace it says how far the readable part reaches.
  uint64_t last_event_ns = 0;
  std::optional<trace::TraceEnd> end;         ///< absent for a truncated trace
  /// ProfilerOverhead by phase name ("counters.enable", ...), the last record of each; empty for
  /// traces older than format 1.2. Memory: distinct phase names (strings of the trace).
  std::map<std::string, OverheadPhaseTotals> overhead;

  /// Wall time the trace covers (ns): ProcessInfo start to TraceEnd; nullopt without either.
  std::optional<uint64_t> traced_ns() const noexcept {
    if (!process || !end || end->timestamp_ns < process->start_ns) return std::nullopt;
    return end->timestamp_ns - process->start_ns;
  }

  uint32_t pid() const noexcept { return process ? process->pid : 0; }
  bool counters_mode() const noexcept {
    return process && process->mode == trace::CollectionMode::kCounters;
  }
};

/// What pass 1 checks of a trace's records.
enum class RecordChecks {
  /// Launch, kernel and counter records are framed but not decoded (only the end time stamp of
  /// launches and kernels is read, trace::peek_end_ns): a corrupt one that pass 1 does not meet
  /// as the first error is found by pass 2, which decodes every record.
  kSkimLaunches,
  /// Every record decoded and checked: for callers that print rows during pass 2 and promise to
  /// throw before printing anything (ncu_csv.h).
  kEveryRecord,
};

/// Pass 1. Throws trace::TraceError for an unreadable or corrupt trace, at the first bad byte of
/// the file whichever `checks` (with kSkimLaunches, an error met after a skimmed record is
/// reported from a second read that decodes every record, up to the first error).
TraceContext read_context(const std::filesystem::path& path, RecordChecks checks = RecordChecks::kSkimLaunches);

/// The trace's ProcessInfo when one of its first 64 records (strings not counted) is one, as the
/// collector writes it first; nullopt otherwise, or when the file cannot be read (read_context
/// reports that). Reads at most a chunk or two: trace.json's time axis starts at the earliest
/// process start before any trace is read whole, and `rfprof -i NAME` checks the pid in a
/// NAME.PID.rftrace.
std::optional<trace::ProcessInfo> first_process_info(const std::filesystem::path& path) noexcept;

/// The earliest NVTX range start of the trace (ns, CUPTI clock), read from its NVTX records alone
/// (every other record is framed, not decoded); nullopt without any, or when the file cannot be
/// read. A corrupt trace gives the earliest start before the corruption (read_context reports it).
/// rfanalyze reads it for each trace of a run of two or more before writing trace.json, whose time
/// axis starts at the earliest process start or NVTX range start of them all.
std::optional<uint64_t> earliest_nvtx_start(const std::filesystem::path& path) noexcept;

/// CollectorError records of one trace with the same code and message.
struct CollectorErrorRecord {
  trace::ErrorCode code = trace::ErrorCode::kUnknown;
  std::string message;
  uint64_t count = 0;              ///< records with this code and message
  uint32_t first_window_id = 0;    ///< window of the first of them
  uint64_t first_expected = 0;     ///< its `expected` (e.g. launches seen)
  uint64_t first_actual = 0;       ///< its `actual` (e.g. ranges decoded)
};

/// A joined launch handed to the sink of pass 2: its row, and its raw counter values with their
/// metric names (both empty without counters).
struct LaunchOutput {
  KernelRow row;
  const std::vector<std::string>* metric_names = nullptr;  ///< nullptr without counters
  const std::vector<double>* metric_values = nullptr;
  const std::vector<std::string>* nvtx_path = nullptr;     ///< range names, outermost first (nullptr: none)
  /// The phase of the path's own names (row.phase may come from the ranges around the launch on
  /// other threads instead): what a path's memory peak counts for (phases.csv). Null: row.phase.
  const std::string* path_phase = nullptr;
};

/// What pass 2 counted besides the rows.
struct StreamStats {
  JoinStats join;
  std::vector<CollectorErrorRecord> errors;  ///< grouped, in order of first appearance
  uint64_t counters_without_config = 0;      ///< RangeCounters whose MetricConfig is missing
  uint64_t negative_durations = 0;           ///< kernels with end < start (duration left empty)
  /// Rows whose duration is gpu__time_duration.sum, measured during a profiler pass, because
  /// their kernel record had no time stamps (kernel replay) or ended at or before its start.
  uint64_t durations_from_gpu_time = 0;
  /// Rows whose duration is gpu__time_duration.sum because no kernel record came at all (a trace
  /// cut before its activity buffer was written, dropped records): under replay across steps
  /// the duration of an instrumented pass, not the timing window's run.
  uint64_t durations_from_gpu_time_without_kernel = 0;
};

/// Pass 2: streams `ctx.path` again and calls `sink` once per joined launch, in join order.
/// The phase of each row comes from `phases` applied to its NVTX path. Throws trace::TraceError.
StreamStats stream_launches(const TraceContext& ctx, const PhaseMap& phases,
                            const std::function<void(const LaunchOutput&)>& sink);

}  // namespace rf::analyzer
