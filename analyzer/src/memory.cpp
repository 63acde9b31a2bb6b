// Device memory timeline and peaks (rfprof/analyzer/memory.h).
#include "rfprof/analyzer/memory.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <utility>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {

bool gpu_resident(trace::MemoryKind kind) noexcept {
  switch (kind) {
    case trace::MemoryKind::kDevice:
    case trace::MemoryKind::kArray:
    case trace::MemoryKind::kDeviceStatic:
    case trace::MemoryKind::kManaged:
    case trace::MemoryKind::kManagedStatic:
      return true;
    default:
      return false;
  }
}

const char* operation_name(trace::MemoryOperation op) noexcept {
  return op == trace::MemoryOperation::kAllocation ? "allocation" : "release";
}

const char* memory_kind_name(trace::MemoryKind kind) noexcept {
  switch (kind) {
    case trace::MemoryKind::kPageable: return "pageable";
    case trace::MemoryKind::kPinned: return "pinned";
    case trace::MemoryKind::kDevice: return "device";
    case trace::MemoryKind::kArray: return "array";
    case trace::MemoryKind::kManaged: return "managed";
    case trace::MemoryKind::kDeviceStatic: return "device_static";
    case trace::MemoryKind::kManagedStatic: return "managed_static";
    case trace::MemoryKind::kUnknown: break;
  }
  return "unknown";
}

void MemoryTimeline::finalize() {
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const auto& a, const auto& b) { return a.timestamp_ns < b.timestamp_ns; });
  std::map<std::pair<uint32_t, uint64_t>, uint64_t> live;  // (device, address) -> bytes
  uint64_t in_use = 0;
  points_.clear();
  points_.reserve(pending_.size());
  for (const auto& e : pending_) {
    if (gpu_resident(e.memory_kind)) {
      const auto key = std::make_pair(e.device_id, e.address);
      if (e.operation == trace::MemoryOperation::kAllocation) {
        in_use += e.bytes;
        live[key] += e.bytes;
      } else {
        uint64_t bytes = e.bytes;
        if (auto it = live.find(key); it != live.end()) {
          bytes = it->second;
          live.erase(it);
        }
        in_use -= std::min(in_use, bytes);
      }
    }
    points_.push_back({e, in_use});
    if (in_use > peak_) {
      peak_ = in_use;
      peak_at_ = e.timestamp_ns;
    }
  }
  pending_.clear();
  pending_.shrink_to_fit();
  const size_t n = points_.size();
  tree_.assign(2 * n, 0);
  for (size_t i = 0; i < n; ++i) tree_[n + i] = points_[i].in_use_bytes;
  for (size_t i = n; i-- > 1;) tree_[i] = std::max(tree_[2 * i], tree_[2 * i + 1]);
}

std::optional<uint64_t> MemoryTimeline::peak_between(uint64_t start_ns, uint64_t end_ns) const {
  if (points_.empty() || end_ns < start_ns) return std::nullopt;
  auto by_time = [](const MemoryPoint& p, uint64_t t) { return p.event.timestamp_ns <= t; };
  // First event after start_ns, and one past the last event at or before end_ns.
  const auto first = std::partition_point(points_.begin(), points_.end(),
                                          [&](const MemoryPoint& p) { return by_time(p, start_ns); });
  const auto last = std::partition_point(points_.begin(), points_.end(),
                                         [&](const MemoryPoint& p) { return by_time(p, end_ns); });
  uint64_t best = first == points_.begin() ? 0 : std::prev(first)->in_use_bytes;  // at start_ns
  const size_t n = points_.size();
  size_t lo = static_cast<size_t>(first - points_.begin()) + n;
  size_t hi = static_cast<size_t>(last - points_.begin()) + n;  // [lo, hi)
  while (lo < hi) {
    if (lo & 1) best = std::max(best, tree_[lo++]);
    if (hi & 1) best = std::max(best, tree_[--hi]);
    lo /= 2;
    hi /= 2;
  }
  return best;
}

const std::vector<std::string>& memory_csv_header() {
  static const std::vector<std::string> h = {"pid",         "timestamp_ns", "device",  "operation",
                                             "memory_kind", "bytes",        "address", "in_use_bytes"};
  return h;
}

void write_memory_rows(std::ostream& out, uint32_t pid, const MemoryTimeline& timeline) {
  for (const auto& p : timeline.points()) {
    const auto& e = p.event;
    char address[24];
    std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(e.address));
    write_csv_row(out, {std::to_string(pid), std::to_string(e.timestamp_ns), std::to_string(e.device_id),
                        operation_name(e.operation), memory_kind_name(e.memory_kind),
                        std::to_string(e.bytes), address, std::to_string(p.in_use_bytes)});
  }
}

}  // namespace rf::analyzer
