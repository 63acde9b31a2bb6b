// The launch bookkeeping of the collector above the CUPTI seam (pure logic, thread-safe).
//
// A driver launch callback arrives twice on the launching thread: at API entry, LaunchLog::enter
// decides whether the launch is inside a profiling window and tells the kernel-record filter
// (CorrelationFilter); at API exit, the session fills a trace::LaunchApi (times, grid, block from
// CUPTI's parameter structs) and LaunchLog::exit gives it its index within the window and writes it.
// Windows open and close through the same object, under the same mutex, so a launch that saw
// window w at entry is written after the ProfilingWindow record that opened w. Many threads launch
// at once: every call may come from any thread (tests/collector/test_launch_stress.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>

#include "rfprof/collector/correlation_filter.h"
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
  std::function<void(const trace::Record&)> write;         ///< appends one record
  std::function<trace::StringId(std::string_view)> intern;  ///< string id (0 when writing failed)
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
  /// Launch API exit for a ticket from enter(). With `launch` (the launch succeeded), writes it:
  /// kernel_name = intern(`kernel_name`) (0 for ""), window_id = the ticket's window, and, unless
  /// `keep_index` (counters mode: the Range Profiler's index), launch_index = the next index of
  /// that window (dense: 0, 1, ... in order of exit, whatever windows open meanwhile). Every
  /// in-window ticket must reach exit() once (with nullopt when nothing is written).
  void exit(const LaunchTicket& ticket, std::optional<trace::LaunchApi> launch,
            std::string_view kernel_name = {}, bool keep_index = false);

  /// True when kernel records with this correlation id are kept (launched inside a window).
  bool kernel_kept(uint32_t correlation_id) const;

 private:
  /// Launches of one window: exits so far and entries not yet exited.
  struct WindowCount {
    uint64_t exited = 0;
    uint64_t in_flight = 0;
  };

  LaunchSink sink_;
  mutable std::mutex mutex_;
  WindowTracker windows_;
  CorrelationFilter filter_;
  std::map<uint32_t, WindowCount> counts_;  // open window and closed ones with launches in flight
  uint64_t skip_ = 0;                       // -s
  std::optional<uint64_t> count_;           // -c
  uint64_t selected_ = 0;                   // selected launches inside windows so far
};

}  // namespace rf::collector
