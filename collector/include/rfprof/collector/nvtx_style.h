// Push/pop versus start/end style of NVTX ranges (pure logic, no CUPTI).
//
// CUPTI's marker activity records say "start" and "end" for both NVTX push/pop and start/end
// ranges. The NVTX callbacks (CUPTI_CB_DOMAIN_NVTX) do know the API: for nvtxRangeStart* and
// nvtxDomainRangeStartEx they report the returned range id. Callbacks run inside the NVTX call,
// before CUPTI can deliver the marker record, so when a start marker is converted:
//  - its id was reported by a start callback -> start/end;
//  - no push callback was seen yet -> unknown (no evidence that NVTX callbacks arrive at all);
//  - no start callback happened yet in the process -> push/pop (every range so far was pushed);
//  - start callbacks happened and at least one reported id matched a marker -> push/pop;
//  - otherwise (the ids never matched a marker: this CUPTI does not report them) -> unknown.
// An end marker takes the style of its start marker.
//
// Start callbacks run on the application's threads, markers are converted on CUPTI's activity
// thread: the reported ids wait in a fixed table (kIdSlots), written and taken without a lock and
// without allocation. An id whose marker never comes (CUPTI dropped it) stays until a later id
// needs its slot: memory is bounded whatever the run's length.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace rf::collector {

/// NVTX range style as written to the trace (values of rf::trace::NvtxRangeStyle).
enum class RangeStyle : uint8_t { kUnknown = 0, kPushPop = 1, kStartEnd = 2 };

/// Learns the style of NVTX ranges from start callbacks and marker records. The marker side
/// (on_start_marker, on_end_marker) is not thread-safe; on_push_callback and on_start_callback
/// may run on any thread at any time, without a lock and without allocating.
class NvtxStyleTracker {
 public:
  /// Reported ids waiting for their start marker: 2048 buckets of 8 (128 KiB; a 1 MiB activity
  /// buffer holds about 8,000 start markers). Consecutive ids (CUPTI counts them) spread evenly
  /// over the buckets, so about this many ranges can be started and not yet delivered as
  /// markers; past that (or past 8 ids in one bucket) the bucket's lowest id is forgotten: its
  /// range would be written as push/pop or unknown.
  static constexpr size_t kIdBuckets = 2048, kIdWays = 8, kIdSlots = kIdBuckets * kIdWays;

  NvtxStyleTracker();
  NvtxStyleTracker(const NvtxStyleTracker&) = delete;
  NvtxStyleTracker& operator=(const NvtxStyleTracker&) = delete;

  /// An nvtxRangeStart*/nvtxDomainRangeStartEx callback returned range id `id` (0: not reported).
  /// Thread-safe and lock-free: one atomic read, and one or two writes into the id's bucket.
  void on_start_callback(uint64_t id) noexcept;
  /// An nvtxRangePush*/nvtxDomainRangePushEx callback arrived. Thread-safe and lock-free: after
  /// the first push, one relaxed load (PyTorch's emit_nvtx pushes a range per operator).
  void on_push_callback() noexcept {
    if (!push_seen_.load(std::memory_order_relaxed)) push_seen_.store(true, std::memory_order_release);
  }
  /// Style of the start marker record with id `id`; remembers it for the matching end marker.
  RangeStyle on_start_marker(uint64_t id);
  /// Style of the end marker record with id `id` (the style of its start; unknown if unseen).
  RangeStyle on_end_marker(uint64_t id);

  /// Reported ids waiting for their start marker (for tests).
  size_t waiting_ids() const noexcept;

 private:
  /// Removes `id` from the table; true if it was there.
  bool take_id(uint64_t id) noexcept;

  // Ids reported by start callbacks, start marker not yet seen: 0 is a free slot.
  std::unique_ptr<std::array<std::atomic<uint64_t>, kIdSlots>> ids_;
  std::unordered_map<uint64_t, RangeStyle> open_;     // start markers seen, end marker not yet
  std::atomic<bool> start_seen_{false};
  std::atomic<bool> push_seen_{false};
  bool ids_confirmed_ = false;
};

}  // namespace rf::collector
