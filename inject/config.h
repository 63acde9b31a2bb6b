// librfinject configuration: environment variables read once inside the profiled process.
// Every variable is documented in docs/inject-env.md; the launcher (rfprof) sets them.
#pragma once

#include "rfprof/collector/launch_filter.h"
#include "rfprof/collector/session.h"
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rfprof/trace/records.h"

namespace rf::inject {

/// A bad environment variable. what() names the variable, its value and what was expected, e.g.
/// `rfprof: RFPROF_FLUSH_MS="0": expected an integer number of milliseconds from 1 to 60000`.
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Looks up an environment variable: its value, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

/// The process environment (getenv).
EnvLookup process_environment();

/// Settings of one profiled process.
struct Config {
  std::string output_pattern = "rfprof_%p.rftrace";  ///< RFPROF_OUTPUT, before expansion
  std::vector<std::string> metrics;  ///< RFPROF_METRICS; empty: the collector's default_metrics()
  /// RFPROF_METRIC_SET: a named set planned per chip (rf::collector::metric_set_names()); "" when
  /// unset. "timing" also sets mode to timing (and takes no RFPROF_METRICS); another set is
  /// collected with RFPROF_METRICS besides, as ncu collects --set and --metrics together.
  std::string metric_set;
  bool profile_from_start = true;    ///< RFPROF_PROFILE_FROM_START
  trace::CollectionMode mode = trace::CollectionMode::kCounters;  ///< RFPROF_MODE
  bool force_overwrite = false;      ///< RFPROF_FORCE_OVERWRITE
  bool disable_profiler_start_stop = false;  ///< RFPROF_DISABLE_PROFILER_START_STOP (0 or 1)
  /// RFPROF_TARGET_PROCESSES: true for "all" (default), false for "application-only".
  bool all_processes = true;
  /// RFPROF_ROOT_PID: the process rfprof started; with application-only, others step aside.
  std::optional<uint32_t> root_pid;
  uint32_t flush_ms = 1000;          ///< RFPROF_FLUSH_MS: trace flush interval (ms), 1..60000
  /// RFPROF_MAX_RANGES (1..100000): kernels a counter image holds, per image under kernel replay
  /// (decoded when full) and per step under replay across steps (a longer step steps aside).
  uint32_t max_ranges = 2000;
  bool call_stacks = false;          ///< RFPROF_CALLSTACKS: native call stack of each launch
  bool memory = false;               ///< RFPROF_MEMORY: device memory allocations and releases
  /// RFPROF_KERNEL_RECORDS: concurrent (default) or serial; serial under replay across steps.
  collector::KernelRecords kernel_records = collector::KernelRecords::kConcurrent;
  /// RFPROF_KERNEL_NAME, RFPROF_KERNEL_NAME_BASE, RFPROF_NVTX_INCLUDE, RFPROF_NVTX_EXCLUDE
  /// (rules separated by ';'), checked by building a collector::LaunchFilter.
  collector::LaunchFilterOptions filter;
  uint64_t launch_skip = 0;                 ///< RFPROF_LAUNCH_SKIP
  std::optional<uint64_t> launch_count;     ///< RFPROF_LAUNCH_COUNT (>= 1)
  /// RFPROF_FILTER_MODE (global, per-gpu, per-launch-config): what -s/-c count separately.
  collector::FilterMode filter_mode = collector::FilterMode::kGlobal;
  std::optional<collector::KernelId> kernel_id;  ///< RFPROF_KERNEL_ID (ncu's --kernel-id syntax)
  uint64_t launch_skip_before_match = 0;         ///< RFPROF_LAUNCH_SKIP_BEFORE_MATCH
  /// RFPROF_REPLAY=step: replay across steps (one pass per profiling window, user replay) instead
  /// of kernel replay ("kernel", the default). Needs counters mode, RFPROF_PROFILE_FROM_START=off
  /// and no launch filter.
  bool replay_across_steps = false;
  uint32_t replay_groups = 1;               ///< RFPROF_REPLAY_GROUPS (1..1000): groups to collect
  /// RFPROF_REPLAY_RANGE: with RFPROF_REPLAY=step, the NVTX range that is one step (its name, or
  /// "regex:EXPR"); its push/pop or start/end are the windows instead of cudaProfilerStart/Stop.
  std::string replay_range;
  /// RFPROF_STEP_PASS_START (launch|window, with RFPROF_REPLAY=step): where each pass starts.
  collector::StepPassStart step_pass_start = collector::StepPassStart::kFirstLaunch;
  /// RFPROF_TRACE_LIST (set by rfprof): a file to which each process appends the absolute path of
  /// the trace it writes, so that rfprof --csv prints exactly this run's traces. "" when unset.
  std::string trace_list;
};

/// RFPROF_METRICS's list: comma-separated names, trimmed, duplicates dropped, in order. Throws
/// ConfigError (naming RFPROF_METRICS) for an empty item.
std::vector<std::string> parse_metric_list(const std::string& value);

/// Reads every RFPROF_* variable through `env`. Unset or empty variables keep their defaults.
/// Throws ConfigError on the first bad value (RFPROF_OUTPUT is only checked by
/// expand_output_pattern, which needs the process identity).
Config read_config(const EnvLookup& env);

/// What the placeholders of RFPROF_OUTPUT expand to.
struct PatternContext {
  uint32_t pid = 0;       ///< %p
  std::string hostname;   ///< %h
  EnvLookup env;          ///< %q{VAR}
  /// Whether a path exists (for %i); defaults to std::filesystem::exists when empty.
  std::function<bool(const std::filesystem::path&)> exists;
};

/// Expands an output pattern (ncu's -o syntax): %p process id, %h host name, %q{VAR} value of
/// environment variable VAR, %i the smallest positive integer for which neither the file nor its
/// ".part" exists yet (every %i of a pattern gets the same number), %% a literal %.
/// Throws ConfigError (naming RFPROF_OUTPUT, the pattern and the problem) for an empty pattern, an
/// unknown placeholder, a lone trailing %, %q without {VAR}, an unset VAR, or a %i pattern whose
/// indexes 1 to 1000000 are all taken.
std::filesystem::path expand_output_pattern(std::string_view pattern, const PatternContext& context);

/// The pattern a process of an rfprof run expands: `pattern` itself for the process rfprof started
/// (`root_pid`, RFPROF_ROOT_PID; also when unset) and for a pattern that already differs per
/// process (%p, %i or %q{VAR} in it); otherwise `pattern` with ".%p" before its ".rftrace"
/// ("rep.rftrace" -> "rep.%p.rftrace"), so that the other CUDA processes of the run (torchrun
/// workers, a child that execs) write traces of their own where ncu writes one report for all,
/// instead of refusing or overwriting the first one's. Never throws.
std::string per_process_pattern(std::string_view pattern, uint32_t pid, std::optional<uint32_t> root_pid);

/// Whether `pattern` holds the %i placeholder (not "%%i"). Never throws.
bool has_index_placeholder(std::string_view pattern) noexcept;

/// The name to try after `taken` (SessionOptions::output_in_use), for the `attempt`-th time (1,
/// 2, ...). With %i in `pattern`: the pattern expanded again (the other process's trace or .part
/// now takes its index), whether `live` or not. Otherwise, only when `live` (a live process
/// writes `taken`): `taken` with ".PID" (attempt 1) or ".PID-N" (attempt N) before its ".rftrace"
/// ("r.rftrace" -> "r.4242.rftrace"); when not live, an empty path (a fixed name that exists is
/// refused, as without this). The pid form also when %i gives `taken` again. Empty path when no
/// name can be built (the session then gives up). Never throws.
std::filesystem::path output_after_in_use(std::string_view pattern, const PatternContext& context,
                                          const std::filesystem::path& taken, uint32_t attempt, bool live) noexcept;

/// The collector session's options for `config`, writing the trace to `output` (RFPROF_OUTPUT
/// after per_process_pattern and expand_output_pattern): every Config field the session takes,
/// copied (RFPROF_MAX_RANGES as max_ranges_per_image). Never throws but std::bad_alloc.
collector::SessionOptions session_options(const Config& config, std::filesystem::path output);

/// True when process `pid` is to be profiled under `config`: always with
/// RFPROF_TARGET_PROCESSES=all (the default) or without RFPROF_ROOT_PID; with application-only,
/// only the process rfprof started (RFPROF_ROOT_PID), as ncu's --target-processes. Never throws.
bool profiles_process(const Config& config, uint32_t pid) noexcept;

/// Appends `trace` (made absolute) and a newline to the file `list`, created if needed, in one
/// O_APPEND write. Returns false, with errno saying why, and changes nothing else, when it cannot:
/// `list` must be a regular file (a pipe nobody reads fails at once with ENXIO instead of blocking;
/// a pipe with a reader or a device gives EINVAL). Never throws.
bool append_trace_list(const std::filesystem::path& list, const std::filesystem::path& trace) noexcept;

}  // namespace rf::inject
