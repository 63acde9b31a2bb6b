// Device memory over time, from MemoryActivity records (RFPROF_MEMORY=1): the memory.csv
// timeline and the peak held while an NVTX range was open (ranges.csv, phases.csv).
//
// Definitions (docs/analyzer-outputs.md, "memory.csv"): "in use" is the sum over every device of the bytes
// allocated and not yet released, counting GPU-resident kinds only (device, array, device static,
// managed, managed static; pinned and pageable host memory are left out). A release takes back the
// bytes of the allocation at its (device, address) when that allocation was seen, else the
// release's own byte count (never below 0). Events are applied in timestamp order. With a caching
// allocator (PyTorch's) this is the memory it reserved from the driver.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "rfprof/trace/records.h"

namespace rf::analyzer {

/// One allocation or release, in timestamp order, with the memory in use after it.
struct MemoryPoint {
  trace::MemoryActivity event;
  uint64_t in_use_bytes = 0;  ///< GPU-resident bytes in use (all devices) after this event
};

/// The memory timeline of one process. add() in any order, finalize() once, then query.
/// Memory: O(events).
class MemoryTimeline {
 public:
  /// Adds one MemoryActivity record.
  void add(const trace::MemoryActivity& event) { pending_.push_back(event); }
  /// Sorts by timestamp (stable: trace order breaks ties) and computes the bytes in use.
  void finalize();

  /// True when the trace held memory records (RFPROF_MEMORY was on).
  bool empty() const noexcept { return points_.empty(); }
  /// The events in timestamp order with the memory in use after each. After finalize().
  const std::vector<MemoryPoint>& points() const noexcept { return points_; }
  /// Highest bytes in use over the whole trace (0 without events).
  uint64_t peak_bytes() const noexcept { return peak_; }
  /// Timestamp (ns) of the first event that reached peak_bytes(); 0 without events.
  uint64_t peak_timestamp_ns() const noexcept { return peak_at_; }
  /// Highest bytes in use at any moment of [start_ns, end_ns] (ns): the bytes in use at start_ns
  /// and after every event up to end_ns. nullopt without events or when end_ns < start_ns.
  /// O(log events).
  std::optional<uint64_t> peak_between(uint64_t start_ns, uint64_t end_ns) const;

 private:
  std::vector<trace::MemoryActivity> pending_;
  std::vector<MemoryPoint> points_;
  std::vector<uint64_t> tree_;  // segment tree of in_use_bytes maxima (bottom-up, size 2n)
  uint64_t peak_ = 0, peak_at_ = 0;
};

/// True for memory kinds that live on the GPU (device, array, device static, managed, managed
/// static).
bool gpu_resident(trace::MemoryKind kind) noexcept;
/// "allocation" / "release".
const char* operation_name(trace::MemoryOperation op) noexcept;
/// "device", "pinned", "managed", ... (CUPTI's memory kinds in lower case).
const char* memory_kind_name(trace::MemoryKind kind) noexcept;

/// Header of memory.csv: pid, timestamp_ns, device, operation, memory_kind, bytes, address,
/// in_use_bytes.
const std::vector<std::string>& memory_csv_header();
/// Writes the memory.csv rows of one process (no header).
void write_memory_rows(std::ostream& out, uint32_t pid, const MemoryTimeline& timeline);

}  // namespace rf::analyzer
