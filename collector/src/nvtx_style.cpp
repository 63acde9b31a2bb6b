// NvtxStyleTracker: push/pop versus start/end NVTX ranges (rules in nvtx_style.h).
#include "rfprof/collector/nvtx_style.h"

#include <bit>
#include <cstddef>

namespace rf::collector {
namespace {

/// The first slot of range id `id`'s bucket (Fibonacci hashing: consecutive ids, as CUPTI hands
/// them out, fall in different buckets until every bucket has one).
size_t bucket_of(uint64_t id) noexcept {
  constexpr int kBits = std::countr_zero(NvtxStyleTracker::kIdBuckets);
  static_assert((size_t{1} << kBits) == NvtxStyleTracker::kIdBuckets);
  return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> (64 - kBits)) * NvtxStyleTracker::kIdWays;
}

}  // namespace

NvtxStyleTracker::NvtxStyleTracker() : ids_(std::make_unique<std::array<std::atomic<uint64_t>, kIdSlots>>()) {}

void NvtxStyleTracker::on_start_callback(uint64_t id) noexcept {
  if (!start_seen_.load(std::memory_order_relaxed)) start_seen_.store(true, std::memory_order_release);
  if (id == 0) return;
  // A free slot of the id's bucket; none free: the slot of the bucket's lowest id (the oldest:
  // CUPTI counts them up), most likely one whose marker was dropped. Ids are distinct: no other
  // thread writes this one.
  std::atomic<uint64_t>* bucket = &(*ids_)[bucket_of(id)];
  for (int attempt = 0; attempt < 4; ++attempt) {
    size_t oldest = 0;
    uint64_t lowest = ~uint64_t{0};
    for (size_t i = 0; i < kIdWays; ++i) {
      uint64_t seen = bucket[i].load(std::memory_order_relaxed);
      if (seen == 0 &&
          bucket[i].compare_exchange_strong(seen, id, std::memory_order_release, std::memory_order_relaxed))
        return;
      if (seen != 0 && seen < lowest) {
        lowest = seen;
        oldest = i;
      }
    }
    if (bucket[oldest].compare_exchange_strong(lowest, id, std::memory_order_release, std::memory_order_relaxed))
      return;
  }
  bucket[id % kIdWays].store(id, std::memory_order_release);  // other threads keep filling the bucket
}

bool NvtxStyleTracker::take_id(uint64_t id) noexcept {
  if (id == 0) return false;
  std::atomic<uint64_t>* bucket = &(*ids_)[bucket_of(id)];
  for (size_t i = 0; i < kIdWays; ++i) {
    if (bucket[i].load(std::memory_order_acquire) != id) continue;
    uint64_t expected = id;  // fails only if a start callback took the slot meanwhile: leave it
    bucket[i].compare_exchange_strong(expected, 0, std::memory_order_relaxed);
    return true;
  }
  return false;
}

size_t NvtxStyleTracker::waiting_ids() const noexcept {
  size_t n = 0;
  for (const auto& slot : *ids_) n += slot.load(std::memory_order_relaxed) != 0;
  return n;
}

RangeStyle NvtxStyleTracker::on_start_marker(uint64_t id) {
  RangeStyle style;
  if (take_id(id)) {
    ids_confirmed_ = true;
    style = RangeStyle::kStartEnd;
  } else if (push_seen_.load(std::memory_order_acquire) &&
             (!start_seen_.load(std::memory_order_acquire) || ids_confirmed_)) {
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
