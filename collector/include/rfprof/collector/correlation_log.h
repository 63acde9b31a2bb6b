// The kernel-record filter fed by many launching threads without a lock they share (pure logic).
//
// Every launch's API entry decides whether its kernels are kept (CorrelationFilter); the
// activity buffer callback asks later, for each kernel record. Here each launching thread writes
// its decisions into a ring of its own (single producer, single consumer: one release store per
// launch, no lock, no allocation), and the asking side applies every ring to the
// CorrelationFilter before it answers. A kernel record is handed over only after its launch's
// entry callback returned, so its decision is always in a ring (or applied) when it is asked for.
// The filter is correct whatever order the rings are applied in (correlation_filter.h).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "rfprof/collector/correlation_filter.h"
#include "rfprof/trace/per_thread.h"

namespace rf::collector {

/// Accept/reject decisions of many threads, answered for kernel records. Thread-safe.
class CorrelationLog {
 public:
  /// Decisions a thread may have waiting before it applies them itself (one lock then).
  static constexpr size_t kRingEntries = 4096;

  /// Launching thread: kernels with correlation id `id` or `runtime_id` (0: none) are kept when
  /// `accepted`, dropped otherwise. No lock shared with other threads and no allocation, except
  /// on the thread's first call (its ring is registered: a lock and one allocation of ~48 KiB)
  /// and when its ring is full (the asking side fell kRingEntries behind: this thread applies
  /// its ring under the asking side's lock).
  void record(uint32_t id, uint32_t runtime_id, bool accepted);
  /// True if kernel records with correlation id `id` are kept. Applies every waiting decision
  /// first (under a lock the launching threads do not take). Id 0 is never kept.
  bool contains(uint32_t id);
  /// Intervals the filter stores (memory use; for tests and diagnostics), after applying.
  size_t intervals();

 private:
  struct Decision {
    uint32_t id = 0;
    uint32_t runtime_id = 0;
    bool accepted = false;
  };
  /// One thread's decisions: entries [head, tail) wait; the thread writes tail, the asking side head.
  struct Ring {
    std::atomic<uint64_t> head{0};
    std::atomic<uint64_t> tail{0};
    std::array<Decision, kRingEntries> entries;
  };
  /// Applies `r`'s waiting decisions to filter_; caller holds apply_mutex_.
  void apply_locked(Ring& r);
  /// Applies every ring; caller holds apply_mutex_.
  void apply_all_locked();

  std::mutex apply_mutex_;       // the asking side (the rings are walked without a lock)
  CorrelationFilter filter_;     // (apply_mutex_)
  trace::PerThread<Ring> rings_;
};

}  // namespace rf::collector
