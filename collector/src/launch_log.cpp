// LaunchLog: windows, kernel-record filter and per-window launch indices under one mutex.
#include "rfprof/collector/launch_log.h"

namespace rf::collector {

LaunchLog::LaunchLog(bool profile_from_start, LaunchSink sink)
    : sink_(std::move(sink)), windows_(profile_from_start) {}

std::optional<uint32_t> LaunchLog::process_start(uint64_t timestamp_ns) {
  std::lock_guard lock(mutex_);
  auto w = windows_.process_start();
  if (w) {
    counts_[*w] = {};
    sink_.write(trace::ProfilingWindow{*w, true, timestamp_ns, 0});
  }
  return w;
}

std::optional<uint32_t> LaunchLog::open_window(uint64_t timestamp_ns, uint32_t cbid) {
  std::lock_guard lock(mutex_);
  auto w = windows_.open();
  if (w) {
    counts_[*w] = {};
    sink_.write(trace::ProfilingWindow{*w, true, timestamp_ns, cbid});
  }
  return w;
}

std::optional<uint32_t> LaunchLog::close_window() {
  std::lock_guard lock(mutex_);
  auto w = windows_.close();
  if (w) {
    auto it = counts_.find(*w);
    if (it != counts_.end() && it->second.in_flight == 0) counts_.erase(it);
  }
  return w;
}

std::optional<uint32_t> LaunchLog::current_window() const {
  std::lock_guard lock(mutex_);
  return windows_.current();
}

void LaunchLog::set_launch_range(uint64_t skip, std::optional<uint64_t> count) {
  std::lock_guard lock(mutex_);
  skip_ = skip;
  count_ = count;
}

LaunchTicket LaunchLog::enter(uint32_t correlation_id, uint32_t runtime_correlation_id, bool selected) {
  std::lock_guard lock(mutex_);
  auto w = windows_.current();
  if (w && selected && (skip_ > 0 || count_)) {
    const uint64_t ordinal = selected_++;
    selected = ordinal >= skip_ && (!count_ || ordinal - skip_ < *count_);
  }
  if (!w || !selected) {
    filter_.reject(runtime_correlation_id);
    filter_.reject(correlation_id);
    return {};
  }
  filter_.accept(runtime_correlation_id);
  filter_.accept(correlation_id);
  ++counts_[*w].in_flight;
  return {true, *w};
}

void LaunchLog::exit(const LaunchTicket& ticket, std::optional<trace::LaunchApi> launch,
                     std::string_view kernel_name, bool keep_index) {
  if (!ticket.in_window) return;
  if (launch) {
    launch->window_id = ticket.window;
    launch->kernel_name = kernel_name.empty() ? 0 : sink_.intern(kernel_name);
  }
  {
    std::lock_guard lock(mutex_);
    auto it = counts_.find(ticket.window);
    if (it == counts_.end()) return;  // not from enter()
    WindowCount& c = it->second;
    if (launch && !keep_index) launch->launch_index = c.exited++;
    if (c.in_flight > 0) --c.in_flight;
    if (windows_.current() != ticket.window && c.in_flight == 0) counts_.erase(it);  // closed, done
  }
  if (launch) sink_.write(*launch);
}

bool LaunchLog::kernel_kept(uint32_t correlation_id) const {
  std::lock_guard lock(mutex_);
  return filter_.contains(correlation_id);
}

}  // namespace rf::collector
