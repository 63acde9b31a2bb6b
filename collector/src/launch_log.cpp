// LaunchLog: windows, kernel-record filter and per-window launch indices; the launch path
// (enter/exit) is atomics and per-thread buffers only (launch_log.h).
#include "rfprof/collector/launch_log.h"

namespace rf::collector {

LaunchLog::LaunchLog(bool profile_from_start, LaunchSink sink)
    : sink_(std::move(sink)), windows_(profile_from_start) {
  if (!sink_.write_launch) sink_.write_launch = sink_.write;
}

void LaunchLog::publish_open_locked(uint32_t w, uint64_t timestamp_ns, uint32_t cbid) {
  WindowSlot& slot = slots_[w % kWindowSlots];
  slot.exited.store(0, std::memory_order_relaxed);
  slot.window.store(w, std::memory_order_release);
  sink_.write(trace::ProfilingWindow{w, true, timestamp_ns, cbid});
  state_.store(kOpenBit | w, std::memory_order_release);  // launches see w only from here on
}

std::optional<uint32_t> LaunchLog::process_start(uint64_t timestamp_ns) {
  std::lock_guard lock(window_mutex_);
  auto w = windows_.process_start();
  if (w) publish_open_locked(*w, timestamp_ns, 0);
  return w;
}

std::optional<uint32_t> LaunchLog::open_window(uint64_t timestamp_ns, uint32_t cbid) {
  std::lock_guard lock(window_mutex_);
  auto w = windows_.open();
  if (w) publish_open_locked(*w, timestamp_ns, cbid);
  return w;
}

std::optional<uint32_t> LaunchLog::close_window() {
  std::lock_guard lock(window_mutex_);
  auto w = windows_.close();
  if (w) state_.store(*w, std::memory_order_release);
  return w;
}

std::optional<uint32_t> LaunchLog::current_window() const {
  const uint64_t s = state_.load(std::memory_order_acquire);
  if (!(s & kOpenBit)) return std::nullopt;
  return static_cast<uint32_t>(s);
}

void LaunchLog::set_launch_range(uint64_t skip, std::optional<uint64_t> count) {
  skip_.store(skip, std::memory_order_relaxed);
  count_.store(count.value_or(kNoLimit), std::memory_order_relaxed);
}

LaunchTicket LaunchLog::enter(uint32_t correlation_id, uint32_t runtime_correlation_id, bool selected) {
  const uint64_t s = state_.load(std::memory_order_acquire);
  const bool open = (s & kOpenBit) != 0;
  if (open && selected) {
    const uint64_t skip = skip_.load(std::memory_order_relaxed);
    const uint64_t count = count_.load(std::memory_order_relaxed);
    if (skip > 0 || count != kNoLimit) {
      const uint64_t ordinal = selected_.fetch_add(1, std::memory_order_relaxed);
      selected = ordinal >= skip && ordinal - skip < count;
    }
  }
  const bool in_window = open && selected;
  filter_.record(correlation_id, runtime_correlation_id, in_window);
  if (!in_window) return {};
  return {true, static_cast<uint32_t>(s)};
}

void LaunchLog::exit(const LaunchTicket& ticket, std::optional<trace::LaunchApi> launch,
                     std::string_view kernel_name, bool keep_index) {
  if (!ticket.in_window || !launch) return;
  WindowSlot& slot = slots_[ticket.window % kWindowSlots];
  if (slot.window.load(std::memory_order_acquire) != ticket.window) return;  // not from enter()
  launch->window_id = ticket.window;
  launch->kernel_name = kernel_name.empty() ? 0 : sink_.intern(kernel_name);
  if (!keep_index) launch->launch_index = slot.exited.fetch_add(1, std::memory_order_relaxed);
  sink_.write_launch(*launch);
}

bool LaunchLog::kernel_kept(uint32_t correlation_id) const { return filter_.contains(correlation_id); }

}  // namespace rf::collector
