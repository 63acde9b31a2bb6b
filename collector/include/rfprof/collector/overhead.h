// The collector's own cost, per phase: what rfprof adds to the profiled process, measured by the
// collector itself and written to the trace as ProfilerOverhead records (format 1.2), so that every
// run says where its overhead went (start-up, counters set-up, decode, kernel replay inside launch
// calls, activity buffers, writing). Pure logic, thread-safe, no allocation.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string_view>
#include <vector>

namespace rf::collector {

/// What the collector spends time on. Phase names (overhead_phase_name) are the trace's and
/// rfanalyze's; docs/trace-format.md lists them. Some phases contain others (noted below).
enum class OverheadPhase : uint8_t {
  kSessionStart,         ///< "session.start": subscribe, enable activity and callbacks, create the trace
  kCountersSetup,        ///< "counters.setup": a context's Range Profiler set-up (contains the next three)
  kProfilerInitialize,   ///< "counters.profiler_initialize": cuptiProfilerInitialize (once per process)
  kCounterAvailability,  ///< "counters.counter_availability": cuptiProfilerGetCounterAvailability
  kConfigImage,          ///< "counters.config_image": host API: metric validation, config image, passes
  kEnable,               ///< "counters.enable": cuptiRangeProfilerEnable
  kImageSetup,           ///< "counters.image_setup": counter data size, image initialization, SetConfig
  kStart,                ///< "counters.start": cuptiRangeProfilerStart (one per image or pass)
  kStop,                 ///< "counters.stop": cuptiRangeProfilerStop
  kDecode,               ///< "counters.decode": cuptiRangeProfilerDecodeData of an image
  kEvaluate,             ///< "counters.evaluate": host API evaluation of an image's ranges
  kDisable,              ///< "counters.disable": cuptiRangeProfilerDisable
  /// "launch.counters": the driver's launch call with the Range Profiler started on its context,
  /// from the end of the entry callback (after its set-up, decode, enable and start) to the exit
  /// callback. Under kernel replay the call is synchronous: the kernel's passes, including its own
  /// run, and the memory save/restore happen inside it, so this is where kernel replay's cost shows.
  kLaunchCounters,
  /// "launch.callbacks": rfprof's own work in a launch's entry and exit callbacks, each timed
  /// separately, one callback in kCallbackSampleEvery per thread (count = callbacks timed).
  kLaunchCallbacks,
  kActivityBuffer,       ///< "activity.buffer": reading, converting and writing one activity buffer
  kActivityFlush,        ///< "activity.flush": cuptiActivityFlushAll(0) on the flush thread
  kWriterFlush,          ///< "writer.flush": the flush thread writing buffered records to the file
  kFinish,               ///< "session.finish": process exit, up to the trace's end record
  kCount
};

/// One callback in this many is timed for OverheadPhase::kLaunchCallbacks (per thread).
inline constexpr uint32_t kCallbackSampleEvery = 64;

/// The trace's name of `phase`, e.g. "counters.enable". "" for kCount.
std::string_view overhead_phase_name(OverheadPhase phase) noexcept;

/// Totals of one phase: how often it ran and how long (wall clock, steady clock, ns).
struct OverheadTotals {
  uint64_t count = 0;
  uint64_t total_ns = 0;
  uint64_t max_ns = 0;
  bool operator==(const OverheadTotals&) const = default;
};

/// A phase whose totals changed since the last snapshot (OverheadStats::changes).
struct OverheadChange {
  OverheadPhase phase = OverheadPhase::kCount;
  OverheadTotals totals;
};

/// Per-phase totals, added to by any thread, lock-free. A run's time is added before its count
/// (release), so a reader that sees a count sees that run's time; it may also see time whose
/// count is not visible yet, which the next snapshot completes.
class OverheadStats {
 public:
  /// Adds one run of `phase` that took `ns` nanoseconds. Lock-free, no allocation.
  void add(OverheadPhase phase, uint64_t ns) noexcept;
  /// The totals of `phase` now.
  OverheadTotals totals(OverheadPhase phase) const noexcept;
  /// Phases whose count grew since the previous call, with their totals now, in phase order.
  /// With `skip_if_only_flushes`, nothing (and nothing marked reported) when only the periodic
  /// flush phases (writer.flush, activity.flush) grew: an idle process adds no records.
  /// Call from one thread at a time (the collector's flush thread, then finish).
  std::vector<OverheadChange> changes(bool skip_if_only_flushes = false);

 private:
  struct Slot {
    std::atomic<uint64_t> count{0};
    std::atomic<uint64_t> total_ns{0};
    std::atomic<uint64_t> max_ns{0};
  };
  std::array<Slot, static_cast<size_t>(OverheadPhase::kCount)> slots_{};
  std::array<uint64_t, static_cast<size_t>(OverheadPhase::kCount)> reported_count_{};
};

/// The process's totals: what the Session writes to the trace.
OverheadStats& process_overhead() noexcept;

/// Times a scope as one run of a phase (steady clock). With `stats` null it does nothing, so a
/// sampled timer costs one branch when not sampled.
class ScopedOverhead {
 public:
  ScopedOverhead(OverheadStats* stats, OverheadPhase phase) noexcept
      : stats_(stats), phase_(phase), start_(stats ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{}) {}
  ScopedOverhead(OverheadStats& stats, OverheadPhase phase) noexcept : ScopedOverhead(&stats, phase) {}
  ~ScopedOverhead() {
    if (stats_)
      stats_->add(phase_, static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                    std::chrono::steady_clock::now() - start_)
                                                    .count()));
  }
  ScopedOverhead(const ScopedOverhead&) = delete;
  ScopedOverhead& operator=(const ScopedOverhead&) = delete;

 private:
  OverheadStats* stats_;
  OverheadPhase phase_;
  std::chrono::steady_clock::time_point start_;
};

/// True for one call in kCallbackSampleEvery on the calling thread (the first call included).
bool sample_this_callback() noexcept;

}  // namespace rf::collector
