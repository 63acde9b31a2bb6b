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
#pragma once

#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

namespace rf::collector {

/// NVTX range style as written to the trace (values of rf::trace::NvtxRangeStyle).
enum class RangeStyle : uint8_t { kUnknown = 0, kPushPop = 1, kStartEnd = 2 };

/// Learns the style of NVTX ranges from start callbacks and marker records. Not thread-safe,
/// except on_push_callback, which may run on any thread at any time without a lock.
class NvtxStyleTracker {
 public:
  /// An nvtxRangeStart*/nvtxDomainRangeStartEx callback returned range id `id` (0: not reported).
  void on_start_callback(uint64_t id);
  /// An nvtxRangePush*/nvtxDomainRangePushEx callback arrived. Thread-safe and lock-free: after
  /// the first push, one relaxed load (PyTorch's emit_nvtx pushes a range per operator).
  void on_push_callback() noexcept {
    if (!push_seen_.load(std::memory_order_relaxed)) push_seen_.store(true, std::memory_order_release);
  }
  /// Style of the start marker record with id `id`; remembers it for the matching end marker.
  RangeStyle on_start_marker(uint64_t id);
  /// Style of the end marker record with id `id` (the style of its start; unknown if unseen).
  RangeStyle on_end_marker(uint64_t id);

 private:
  std::unordered_set<uint64_t> start_end_ids_;        // reported by start callbacks, not yet seen
  std::unordered_map<uint64_t, RangeStyle> open_;     // start markers seen, end marker not yet
  uint64_t start_callbacks_ = 0;
  std::atomic<bool> push_seen_{false};
  bool ids_confirmed_ = false;
};

}  // namespace rf::collector
