// The launch bookkeeping of the collector above the CUPTI seam (pure logic, thread-safe).
//
// A driver launch callback arrives twice on the launching thread: at API entry, LaunchLog::enter
// decides whether the launch is inside a profiling window and tells the kernel-record filter
// (CorrelationLog); at API exit, the session fills a trace::LaunchApi (times, grid, block from
// CUPTI's parameter structs) and LaunchLog::exit gives it its index within the window and writes it.
// The launch path takes no lock shared between threads and allocates nothing (after a thread's
// first launch): the window state is one atomic word, a window's launch index one atomic counter,
// the filter's decisions go to the thread's own ring and the record to the thread's writer buffer
// (trace::Writer::append_buffered). Windows open and close under a mutex the launch path does not
// take; a window's ProfilingWindow record is written before the window is published, so a launch
// that saw window w at entry is written after the record that opened w. Many threads launch at
// once: every call may come from any thread (tests/collector/test_launch_stress.cpp).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>

#include "rfprof/collector/correlation_log.h"
#include "rfprof/collector/window.h"
#include "rfprof/trace/records.h"

namespace rf::collector {

/// What LaunchLog::enter decided for one launch; kept by the launching thread until its exit.
struct LaunchTicket {
  bool in_window = false;  ///< the launch is inside a window: its LaunchApi is written
  uint32_t window = 0;     ///< that window's id (meaningful when in_window)
};

/// Where LaunchLog writes: the session's writer with its error handling (never throws).
struct LaunchSink {
  std::function<void(const trace::Record&)> write;         ///< appends one record (windows)
  std::function<trace::StringId(std::string_view)> intern;  ///< string id (0 when writing failed)
  /// Appends a launch from the launching thread (trace::Writer::append_buffered); empty: write.
  std::function<void(const trace::Record&)> write_launch = nullptr;
};

/// Windows, the kernel-record filter and the per-window launch index of one process.
class LaunchLog {
 public:
  /// `profile_from_start`: window 0 opens at process_start(). `sink` receives every record.
  LaunchLog(bool profile_from_start, LaunchSink sink);

  /// Process start: opens window 0 when profile-from-start is on and writes its ProfilingWindow.
  std::optional<uint32_t> process_start(uint64_t timestamp_ns);
  /// cu(da)ProfilerStart (on API exit): opens a window when none is open and writes its record
  /// (under the lock, so no launch of the window can be written before it). nullopt: ignored.
  std::optional<uint32_t> open_window(uint64_t timestamp_ns, uint32_t cbid);
  /// cu(da)ProfilerStop (on API entry) or exit: closes the open window and returns its id; the
  /// caller writes the closing record (after decoding counters). nullopt: no window was open.
  std::optional<uint32_t> close_window();
  /// Id of the open window, or nullopt.
  std::optional<uint32_t> current_window() const;

  /// ncu's -s/-c: of the selected launches inside windows, skip the first `skip`, then record at
  /// most `count` (nullopt: no limit); later launches are treated as outside every window.
  void set_launch_range(uint64_t skip, std::optional<uint64_t> count);

  /// Launch API entry: inside a window or not; the filter accepts or rejects both ids (0 = none).
  /// `selected` false (the kernel name or NVTX filter refused it, launch_filter.h) or a launch
  /// outside the -s/-c range is treated as a launch outside every window: nothing is recorded.
  LaunchTicket enter(uint32_t correlation_id, uint32_t runtime_correlation_id, bool selected = true);
  /// As enter(), with the selection decided by `admit()` (a bool(): LaunchSelection::admit, for
  /// --kernel-id, --filter-mode or --launch-skip-before-match), called once and only when a window
  /// is open, so that those counts see the launches inside windows alone. set_launch_range's
  /// -s/-c is not applied: LaunchSelection counts them. Allocates what `admit` allocates.
  template <typename Admit>
  LaunchTicket enter_admitted(uint32_t correlation_id, uint32_t runtime_correlation_id, Admit&& admit) {
    const uint64_t s = state_.load(std::memory_order_acquire);
    const bool in_window = (s & kOpenBit) != 0 && admit();
    filter_.record(correlation_id, runtime_correlation_id, in_window);
    if (!in_window) return {};
    return {true, static_cast<uint32_t>(s)};
  }
  /// Launch API exit for a ticket from enter(). With `launch` (the launch succeeded), writes it
  /// (sink write_launch): kernel_name = intern(`kernel_name`) (0 for ""), window_id = the ticket's
  /// window, and, unless `keep_index` (counters mode: the Range Profiler's index), launch_index =
  /// the next index of that window (dense: 0, 1, ... in order of exit, whatever windows open
  /// meanwhile). A ticket not from enter(), or one still in flight after kWindowSlots more windows
  /// opened, writes nothing. Every in-window ticket reaches exit() once (nullopt: nothing written).
  void exit(const LaunchTicket& ticket, std::optional<trace::LaunchApi> launch,
            std::string_view kernel_name = {}, bool keep_index = false);

  /// True when kernel records with this correlation id are kept (launched inside a window).
  /// Applies the launching threads' waiting decisions first (CorrelationLog::contains).
  bool kernel_kept(uint32_t correlation_id) const;

  /// Windows whose launch counters live at once: a launch may stay in flight (entry to exit)
  /// while this many windows open after its own.
  static constexpr uint32_t kWindowSlots = 64;

 private:
  static constexpr uint64_t kOpenBit = uint64_t{1} << 32;
  static constexpr uint64_t kNoLimit = ~uint64_t{0};
  static constexpr uint32_t kNoWindow = ~uint32_t{0};
  /// The launch counter of window `window` (slot window % kWindowSlots).
  struct WindowSlot {
    std::atomic<uint32_t> window{kNoWindow};
    std::atomic<uint64_t> exited{0};  // launches of the window written so far: the next index
  };
  /// Under window_mutex_: resets w's slot, writes its opening record, then publishes it.
  void publish_open_locked(uint32_t w, uint64_t timestamp_ns, uint32_t cbid);

  LaunchSink sink_;
  std::mutex window_mutex_;           // open/close/process_start; never taken by enter/exit
  WindowTracker windows_;             // (window_mutex_)
  std::atomic<uint64_t> state_{0};    // kOpenBit | id of the open window; id alone once closed
  std::array<WindowSlot, kWindowSlots> slots_;
  mutable CorrelationLog filter_;
  std::atomic<uint64_t> skip_{0};         // -s
  std::atomic<uint64_t> count_{kNoLimit};  // -c
  std::atomic<uint64_t> selected_{0};     // selected launches inside windows so far
};

}  // namespace rf::collector
