// WindowTracker: profiling windows from profile-from-start and cu(da)ProfilerStart/Stop.
#include "rfprof/collector/window.h"

namespace rf::collector {

WindowTracker::WindowTracker(bool profile_from_start) noexcept
    : profile_from_start_(profile_from_start), next_id_(profile_from_start ? 0 : 1) {}

std::optional<uint32_t> WindowTracker::process_start() noexcept {
  if (started_) return std::nullopt;
  started_ = true;
  if (!profile_from_start_) return std::nullopt;
  return open();
}

std::optional<uint32_t> WindowTracker::open() noexcept {
  if (open_) return std::nullopt;
  open_ = true;
  current_ = next_id_++;
  ++opened_;
  return current_;
}

std::optional<uint32_t> WindowTracker::close() noexcept {
  if (!open_) return std::nullopt;
  open_ = false;
  return current_;
}

std::optional<uint32_t> WindowTracker::current() const noexcept {
  if (!open_) return std::nullopt;
  return current_;
}

}  // namespace rf::collector
