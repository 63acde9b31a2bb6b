// CorrelationLog: per-thread decision rings applied to one CorrelationFilter by the asking side.
#include "rfprof/collector/correlation_log.h"

namespace rf::collector {
namespace {

std::atomic<uint64_t> g_next_instance{1};

/// The ring of the CorrelationLog this thread used last (one per process in the collector).
struct RingCache {
  uint64_t instance = 0;
  void* ring = nullptr;
};
thread_local RingCache t_ring;

}  // namespace

CorrelationLog::CorrelationLog() : instance_(g_next_instance.fetch_add(1, std::memory_order_relaxed)) {}

CorrelationLog::Ring& CorrelationLog::ring() {
  if (t_ring.instance == instance_) return *static_cast<Ring*>(t_ring.ring);
  std::lock_guard registry(registry_mutex_);
  const std::thread::id self = std::this_thread::get_id();
  Ring* found = nullptr;
  for (auto& r : rings_)
    if (r->thread == self) found = r.get();  // a finished thread's ring, reused by its id
  if (!found) {
    auto r = std::make_unique<Ring>();
    r->thread = self;
    found = r.get();
    rings_.push_back(std::move(r));
  }
  t_ring = {instance_, found};
  return *found;
}

void CorrelationLog::record(uint32_t id, uint32_t runtime_id, bool accepted) {
  Ring& r = ring();
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
  std::lock_guard registry(registry_mutex_);
  for (auto& r : rings_) apply_locked(*r);
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
