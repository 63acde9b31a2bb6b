// The CUPTI Range Profiler of one CUDA context, driven in auto range mode with kernel replay
// (default) or user replay (replay across steps: one pass per profiling window, step_replay.h).
//
// Life of a context (docs/collector.md, "Range Profiler"):
//   prepare (constructor, at context creation or first launch): cuptiProfilerInitialize (once per
//     process), cuptiProfilerDeviceSupported, counter availability, config image and pass count
//     from MetricHost for the device's chip. Nothing is enabled yet.
//   start (first launch inside a window): cuptiRangeProfilerEnable (first time),
//     GetCounterDataSize, CounterDataImageInitialize, SetConfig{AutoRange, KernelReplay}, Start.
//     CUPTI then replays every kernel launched on the context inside its launch call, one range
//     per kernel, until Stop.
//   stop_and_decode (image full, graph launch, window close, context destroy, exit): Stop,
//     DecodeData, evaluation of every range with MetricHost, then the image is re-initialized.
// Not thread-safe: the session holds mutex() around every call and across each launch.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "guards.h"
#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/launch_map.h"

namespace rf::collector {

/// Evaluated ranges of one decoded counter image.
struct DecodedImage {
  std::vector<RangeValues> ranges;  ///< in range order
  uint64_t dropped_ranges = 0;      ///< cuptiRangeProfilerDecodeData numOfRangeDropped
  bool all_passes_submitted = true; ///< cuptiRangeProfilerStop isAllPassSubmitted
  /// Why the next image could not be prepared after this one was decoded ("" when it was): the
  /// ranges above are good, the Range Profiler was disabled, and the next start() enables it again.
  std::string prepare_error;
};

/// How the Range Profiler gets every pass of a configuration with several passes.
enum class ReplayMode {
  kKernel,  ///< CUPTI replays each kernel inside its launch, saving and restoring memory
  kStep,    ///< user replay: each profiling window runs one pass (replay across steps)
};

/// The Range Profiler of one CUDA context (cuptiRangeProfiler*, auto range): enable, counter
/// image, SetConfig, Start/Stop, decode and evaluation through MetricHost. Not thread-safe:
/// callers hold mutex() (the session serializes a context's launches with it).
class ContextProfiler {
 public:
  /// Prepares counters for `ctx` on CUDA device `device_id` whose chip is `chip` (e.g. "GH100").
  /// `max_ranges`: kernels per image (kKernel) or per window (kStep).
  /// Throws CuptiError (device unsupported: CUPTI_ERROR_NOT_SUPPORTED, counter availability
  /// refused, ...), MetricError (metrics invalid for the chip) or HostApiError.
  ContextProfiler(CUcontext ctx, uint32_t device_id, std::string chip,
                  std::vector<std::string> metrics, size_t max_ranges,
                  ReplayMode replay = ReplayMode::kKernel);
  ~ContextProfiler();
  ContextProfiler(const ContextProfiler&) = delete;
  ContextProfiler& operator=(const ContextProfiler&) = delete;

  /// Enables the range profiler (first call), initializes the counter image and starts
  /// collecting ranges for window `window_id`. Throws CuptiError.
  void start(uint32_t window_id);
  /// True between start() and stop_and_decode().
  bool started() const noexcept { return started_; }
  /// Window of the ranges being collected (valid while started()).
  uint32_t window_id() const noexcept { return window_id_; }
  /// When start() last started an image (steady clock, ns).
  uint64_t started_at_ns() const noexcept { return started_at_ns_; }

  /// Stops collecting, decodes and evaluates every range, and (with `prepare_next`) re-initializes
  /// the image so that start() can be called again; without it (the last image: exit, context
  /// destruction) the caller disables the profiler next. Throws CuptiError or HostApiError; the
  /// profiler is then stopped.
  DecodedImage stop_and_decode(bool prepare_next = true);
  /// kStep: ends the current pass (cuptiRangeProfilerStop) without decoding. Returns
  /// isAllPassSubmitted: true after the configuration's last pass. Throws CuptiError; started()
  /// is false then too, and disable() tries Stop again before it disables.
  bool stop_pass();
  /// The passIndex cuptiRangeProfilerStop reported last (0 before any Stop): with
  /// isAllPassSubmitted, what CUPTI thinks of the passes, for messages when it disagrees with
  /// num_passes().
  size_t last_stop_pass_index() const noexcept { return last_stop_pass_index_; }
  /// Decodes and evaluates the image (kStep: after its last pass). With `prepare_next`, then
  /// re-initializes the image and sets the configuration again for the next start() (kKernel; when
  /// that fails the decoded ranges are still returned, with prepare_error);
  /// without it the caller disables the profiler (kStep, as NVIDIA's range_profiling sample ends
  /// a user-replay session: decode once, then disable). Throws CuptiError or HostApiError. A group
  /// abandoned midway is dropped with disable(); the next start() enables the Range Profiler again.
  DecodedImage decode_passes(bool prepare_next = true);
  /// Disables the range profiler of the context (before the context is destroyed, or at exit).
  void disable() noexcept;
  /// Counters failed on this context (start or decode): disable(), and start() never runs again
  /// for this object, whichever thread still holds it (call with mutex() held).
  void stop_for_good() noexcept {
    disable();
    stopped_for_good_ = true;
  }
  /// True after stop_for_good(): the launch path must not start an image (read with mutex() held).
  bool stopped_for_good() const noexcept { return stopped_for_good_; }
  /// The context is being destroyed and its destruction could not take mutex() in time
  /// (Session::drop_context): from now on no CUPTI call is made on this object, whichever thread
  /// holds it (start() does nothing, no next image is prepared, disable() forgets the Range
  /// Profiler object instead of disabling it). Any thread, without mutex().
  void abandon() noexcept { abandoned_.store(true, std::memory_order_release); }
  bool abandoned() const noexcept { return abandoned_.load(std::memory_order_acquire); }
  ReplayMode replay() const noexcept { return replay_; }

  CUcontext context() const noexcept { return ctx_; }
  uint32_t device_id() const noexcept { return device_id_; }
  const std::string& chip() const noexcept { return chip_; }
  const std::vector<std::string>& metrics() const noexcept { return metrics_; }
  size_t num_passes() const noexcept { return num_passes_; }
  size_t max_ranges() const noexcept { return max_ranges_; }
  /// Id of the MetricConfig record that describes this profiler's metrics (set by the session).
  uint32_t config_id() const noexcept { return config_id_; }
  void set_config_id(uint32_t id) noexcept { config_id_ = id; }

  /// Launches of the current image, in launch order (range i = launch i).
  LaunchRangeMap& launches() noexcept { return launches_; }
  /// Serializes launches on this context from API entry to exit (so that launch order is range
  /// order) and every other call on this object.
  std::timed_mutex& mutex() noexcept { return mutex_; }

 private:
  void initialize_image();
  void set_config();

  CUcontext ctx_;
  uint32_t device_id_;
  std::string chip_;
  std::vector<std::string> metrics_;
  std::vector<const char*> metric_ptrs_;
  size_t max_ranges_;
  ReplayMode replay_;
  std::unique_ptr<MetricHost> host_;
  std::vector<uint8_t> config_image_;
  size_t num_passes_ = 0;
  RangeProfilerGuard profiler_;
  std::vector<uint8_t> counter_data_;
  bool started_ = false;
  /// cuptiRangeProfilerStop failed: CUPTI may still have the pass started, so disable() calls Stop
  /// again before Disable (started_ is false: no launch is counted in that pass).
  bool stop_failed_ = false;
  uint32_t window_id_ = 0;
  uint64_t started_at_ns_ = 0;
  size_t last_stop_pass_index_ = 0;
  uint32_t config_id_ = 0;
  LaunchRangeMap launches_;
  std::timed_mutex mutex_;
  bool stopped_for_good_ = false;
  std::atomic<bool> abandoned_{false};
};

/// cuptiProfilerInitialize, once per process (later calls return the first result). Throws
/// CuptiError when it failed.
void initialize_profiler_once();

/// cuptiDeviceGetChipName for CUDA device `device_id` (needs initialize_profiler_once). Throws
/// CuptiError.
std::string device_chip_name(uint32_t device_id);

}  // namespace rf::collector
