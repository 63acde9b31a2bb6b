// CorrelationLog: per-thread decision rings applied to one CorrelationFilter by the asking side.
#include "rfprof/collector/correlation_log.h"

namespace rf::collector {

void CorrelationLog::record(uint32_t id, uint32_t runtime_id, bool accepted) {
  Ring& r = rings_.local();
  const uint64_t tail = r.tail.load(std::memory_order_relaxed);
  if (tail - r.head.load(std::memory_order_acquire) == kRingEntries) {
    std::lock_guard lock(apply_mutex_);  // full: the asking side fell behind; apply it here
    apply_locked(r);
  }
  r.entries[tail % kRingEntries] = Decision{id, runtime_id, accepted};
  r.tail.store(tail + 1, std::memory_order_release);
}

void CorrelationLog::apply_locked(Ring& r) {
  const uint64_t head = r.head.load(std::memory_order_relaxed);
  const uint64_t tail = r.tail.load(std::memory_order_acquire);
  for (uint64_t i = head; i < tail; ++i) {
    const Decision& d = r.entries[i % kRingEntries];
    // The runtime id first, as the launch came: runtime API entry, then the driver launch.
    if (d.accepted) {
      filter_.accept(d.runtime_id);
      filter_.accept(d.id);
    } else {
      filter_.reject(d.runtime_id);
      filter_.reject(d.id);
    }
  }
  r.head.store(tail, std::memory_order_release);
}

void CorrelationLog::apply_all_locked() {
  rings_.for_each([this](Ring& r) { apply_locked(r); });
}

bool CorrelationLog::contains(uint32_t id) {
  std::lock_guard lock(apply_mutex_);
  apply_all_locked();
  return filter_.contains(id);
}

size_t CorrelationLog::intervals() {
  std::lock_guard lock(apply_mutex_);
  apply_all_locked();
  return filter_.intervals();
}

}  // namespace rf::collector
