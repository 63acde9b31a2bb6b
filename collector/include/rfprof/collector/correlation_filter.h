// Which kernel activity records belong to a profiling window (pure logic, no CUPTI).
//
// Kernel records arrive in activity buffers long after their launch, carrying only the launch's
// correlation id. The launch callbacks decide at API entry whether a launch is inside a window and
// tell this filter (accept or reject); the buffer callback keeps a kernel record only if its
// correlation id was accepted. CUPTI hands out correlation ids from one increasing counter, so
// accepted ids are stored as closed intervals: an accept extends the last interval as long as no
// reject came in between and no rejected id lies in the gap (threads reach the callbacks in another
// order than they got their ids). Memory is one interval per window transition, not one entry per launch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rf::collector {

/// Set of accepted correlation ids, stored as sorted disjoint intervals. Not thread-safe.
class CorrelationFilter {
 public:
  /// Intervals reserved up front (512 bytes): a launching thread whose decision ring is full
  /// applies it to this filter itself (correlation_log.h), and a new interval must then not
  /// allocate on the launch path. Each window change starts at most one interval.
  static constexpr size_t kReservedIntervals = 64;
  CorrelationFilter() { ranges_.reserve(kReservedIntervals); }
  /// `id` was launched inside a window: kernel records with this id are kept.
  void accept(uint32_t id);
  /// `id` was launched outside every window: kernel records with this id are dropped. Also stops
  /// the last interval from growing over ids seen after this one.
  void reject(uint32_t id);
  /// True if kernel records with correlation id `id` are kept. Id 0 is never kept.
  bool contains(uint32_t id) const noexcept;
  /// Number of stored intervals (memory use; for tests and diagnostics).
  size_t intervals() const noexcept { return ranges_.size(); }

 private:
  struct Range {
    uint32_t lo;
    uint32_t hi;
  };
  std::vector<Range> ranges_;  // sorted by lo, disjoint
  bool last_open_ = false;     // ranges_.back() may grow: no reject since it was last extended
  uint32_t highest_rejected_ = 0;  // it never grows over a rejected id
};

}  // namespace rf::collector
