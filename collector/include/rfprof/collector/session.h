// The collector of one profiled process: the entry points librfinject calls. How it works:
// docs/collector.md. This header includes no CUPTI header.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "rfprof/collector/launch_filter.h"
#include "rfprof/collector/launch_selection.h"
#include "rfprof/trace/records.h"

namespace rf::collector {

/// Which CUPTI activity kind records the kernels (RFPROF_KERNEL_RECORDS). An experiment knob for
/// the cost of kernel replay (validation/README.md): CUPTI's documentation (its "Overhead"
/// section) says concurrent kernel tracing instruments the kernel code to time it, while KERNEL
/// serializes kernels; kernel replay serializes kernels anyway. Whether this costs time under
/// replay is the hypothesis the A/B run checks. Both kinds give the same record
/// (CUpti_ActivityKernel10).
/// Replay across steps always uses kSerial: with CONCURRENT_KERNEL on, the Range Profiler's user
/// replay counts no smsp__sass_* instruction (validation/h200-2026-11-30/step-replay-sass.md).
enum class KernelRecords {
  kConcurrent,  ///< CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (default)
  kSerial,      ///< CUPTI_ACTIVITY_KIND_KERNEL: kernels serialized
};

/// Where replay across steps starts each pass (RFPROF_STEP_PASS_START). Both are CUPTI call
/// orders with a precedent: NVIDIA's profiling_injection sample (old profiler API) enables
/// profiling in the entry callback of the launch it counts; its range_profiling sample calls
/// cuptiRangeProfilerStart before the launches. Which one CUDA 13's user replay needs is what a GPU
/// run tells (a pass that misses its first kernel decodes one range fewer than the launches).
enum class StepPassStart {
  kFirstLaunch,  ///< in the entry callback of the window's first launch (default)
  kWindowOpen,   ///< when the window opens, the step context pushed on the opening thread
};

/// Settings of the collector of one process (librfinject fills them from RFPROF_* variables).
struct SessionOptions {
  std::filesystem::path output;       ///< final trace path (placeholders already expanded)
  /// Range Profiler metrics; empty: default_metrics(), unless `metric_set` is given. With a
  /// metric set, these are collected besides the set's (ncu collects --set/--section and --metrics
  /// together).
  std::vector<std::string> metrics;
  /// A named metric set (metric_set_names.h) planned per device chip; "" for none.
  std::string metric_set;
  bool profile_from_start = true;     ///< open window 0 at process start
  trace::CollectionMode mode = trace::CollectionMode::kCounters;  ///< kTiming: no Range Profiler
  bool force_overwrite = false;       ///< replace an existing trace (and a stale .part)
  /// Ignore cu(da)ProfilerStart/Stop (ncu's --disable-profiler-start-stop): their callbacks are
  /// not subscribed, so only the profile-from-start window exists.
  bool disable_profiler_start_stop = false;
  uint32_t flush_ms = 1000;           ///< write buffered records at least this often (ms)
  uint32_t max_ranges_per_image = 2000;  ///< counter image capacity; decoded when full
  /// Record the native call stack of each launch (libunwind; RFPROF_CALLSTACKS): LaunchApi
  /// stack ids, and CallStack records symbolized when the trace is finished.
  bool call_stacks = false;
  /// Record device memory allocations and releases (CUPTI_ACTIVITY_KIND_MEMORY2; RFPROF_MEMORY).
  bool memory = false;
  /// Which activity kind records kernels (RFPROF_KERNEL_RECORDS).
  KernelRecords kernel_records = KernelRecords::kConcurrent;
  /// Kernel name and NVTX filters (ncu's -k, --kernel-name-base, --nvtx-include/exclude): a launch
  /// they refuse is neither recorded nor replayed (launch_filter.h).
  LaunchFilterOptions filter;
  uint64_t launch_skip = 0;                ///< ncu's -s: selected launches skipped first
  std::optional<uint64_t> launch_count;    ///< ncu's -c: selected launches recorded at most
  /// ncu's --filter-mode, --kernel-id and --launch-skip-before-match (launch_selection.h). With
  /// any of them set, LaunchSelection decides each in-window launch and counts -s/-c itself.
  FilterMode filter_mode = FilterMode::kGlobal;
  std::optional<KernelId> kernel_id;
  uint64_t launch_skip_before_match = 0;
  /// Replay across steps (RFPROF_REPLAY=step, step_replay_collector.h): each cudaProfilerStart/Stop
  /// window runs one pass of the Range Profiler's user replay; after the last pass one window is
  /// recorded without instrumentation and gets the counters. Counters mode only.
  bool replay_across_steps = false;
  uint32_t replay_groups = 1;  ///< groups (passes + timing window) to collect
  /// With replay_across_steps: the NVTX range that is one step (exact name or "regex:EXPR",
  /// step_range_windows.h) delimits the windows instead of cudaProfilerStart/Stop. "": unused.
  std::string replay_range;
  StepPassStart step_pass_start = StepPassStart::kFirstLaunch;  ///< with replay_across_steps
  /// Another name for the trace when the one chosen is taken: `live`, a live process is writing it
  /// (its `.part` is locked: trace::TraceInUseError); otherwise it exists without force_overwrite
  /// (the trace, or a killed run's `.part`: trace::TraceExistsError). Called with that name and the
  /// attempt (1 to 100); returns the next name to try, or an empty path to give up (the start then
  /// fails with the writer's message). Unset: give up at once.
  std::function<std::filesystem::path(const std::filesystem::path& taken, uint32_t attempt, bool live)> output_in_use;
};

/// Starts collecting in this process: subscribes to CUPTI callbacks, enables activity records,
/// creates `<output>.part`, registers the exit and fork handlers and the flush thread.
/// Returns true when collecting. Otherwise prints exactly one "rfprof:" line to stderr (another
/// CUPTI client attached, no CUDA driver, trace not writable, ...) and returns false; the process
/// is left untouched. Never throws. Only the first call does anything; later calls return its result.
bool start_session(const SessionOptions& options) noexcept;

/// The trace the running session writes: SessionOptions::output, or the name output_in_use gave
/// when that one was in use. Empty when no session runs. Never throws.
std::filesystem::path session_output() noexcept;

/// True while a session started by start_session is collecting (false in a forked child).
bool session_running() noexcept;

/// Hands NVTX's injection initialization to CUPTI (cuptiNvtxInitialize2) so NVTX ranges become
/// marker activity records. `nvtx_get_export_table` is the NvtxGetExportTableFunc_t that NVTX
/// passed to InitializeInjectionNvtx2. Forwards only while a session is running, i.e. after CUPTI
/// has been initialized by start_session: CUPTI 13.0 GA crashes when NVTX reaches it before CUPTI
/// is initialized (NVIDIA/NVTX issue 125, fixed in CUDA 13.0 Update 1).
/// Returns 1 when CUPTI accepted the injection, 0 otherwise (NVTX then stays a no-op). Never throws.
int forward_nvtx_injection(const void* nvtx_get_export_table) noexcept;

}  // namespace rf::collector
