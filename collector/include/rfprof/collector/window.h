// Profiling windows (pure logic, no CUPTI): which launches the collector records.
//
// A window opens at process start when profile-from-start is on (window id 0), and at every
// cudaProfilerStart / cuProfilerStart while no window is open; it closes at cudaProfilerStop /
// cuProfilerStop and at process exit. A start while a window is open and a stop while none is
// open are ignored (cudaProfilerStart calls cuProfilerStart internally, so every runtime call
// arrives twice). Window ids increase by one per opened window; with profile-from-start off the
// first window is 1, so id 0 always means "the profile-from-start window". Outside windows nothing
// is collected: no launches, no kernels, no counters (NVTX markers are kept for attribution).
#pragma once

#include <cstdint>
#include <optional>

namespace rf::collector {

/// The window state machine of one process. Not thread-safe; the session serializes calls.
class WindowTracker {
 public:
  /// `profile_from_start`: RFPROF_PROFILE_FROM_START (ncu's --profile-from-start).
  explicit WindowTracker(bool profile_from_start) noexcept;

  /// Process start: opens window 0 if profile-from-start is on. Returns the opened window's id, or
  /// nullopt (profile-from-start off, or already called).
  std::optional<uint32_t> process_start() noexcept;
  /// cudaProfilerStart / cuProfilerStart. Returns the id of the opened window, or nullopt when a
  /// window is already open (nested or duplicate start: ignored).
  std::optional<uint32_t> open() noexcept;
  /// cudaProfilerStop / cuProfilerStop / process exit. Returns the id of the closed window, or
  /// nullopt when none is open (ignored).
  std::optional<uint32_t> close() noexcept;

  /// True while a window is open.
  bool is_open() const noexcept { return open_; }
  /// Id of the open window, or nullopt when none is open.
  std::optional<uint32_t> current() const noexcept;
  /// Number of windows opened so far.
  uint32_t windows_opened() const noexcept { return opened_; }

 private:
  bool profile_from_start_;
  bool started_ = false;
  bool open_ = false;
  uint32_t current_ = 0;
  uint32_t next_id_;
  uint32_t opened_ = 0;
};

}  // namespace rf::collector
