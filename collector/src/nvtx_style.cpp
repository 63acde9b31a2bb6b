// NvtxStyleTracker: push/pop versus start/end NVTX ranges (rules in nvtx_style.h).
#include "rfprof/collector/nvtx_style.h"

#include <cstddef>

namespace rf::collector {

void NvtxStyleTracker::on_start_callback(uint64_t id) {
  ++start_callbacks_;
  if (id == 0) return;
  // Ids that never match a marker (a CUPTI that reports other ids) must not grow without bound.
  constexpr size_t kMaxUnconfirmed = 4096;
  if (!ids_confirmed_ && start_end_ids_.size() >= kMaxUnconfirmed) start_end_ids_.clear();
  start_end_ids_.insert(id);
}

RangeStyle NvtxStyleTracker::on_start_marker(uint64_t id) {
  RangeStyle style;
  if (auto it = start_end_ids_.find(id); it != start_end_ids_.end()) {
    start_end_ids_.erase(it);
    ids_confirmed_ = true;
    style = RangeStyle::kStartEnd;
  } else if (push_seen_.load(std::memory_order_acquire) && (start_callbacks_ == 0 || ids_confirmed_)) {
    style = RangeStyle::kPushPop;
  } else {
    style = RangeStyle::kUnknown;
  }
  open_[id] = style;
  return style;
}

RangeStyle NvtxStyleTracker::on_end_marker(uint64_t id) {
  auto it = open_.find(id);
  if (it == open_.end()) return RangeStyle::kUnknown;
  RangeStyle style = it->second;
  open_.erase(it);
  return style;
}

}  // namespace rf::collector
