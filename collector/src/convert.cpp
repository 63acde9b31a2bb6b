// CUPTI activity records -> trace records. Field meanings: cupti_activity.h.
#include "convert.h"

#include <cstring>

namespace rf::collector {
namespace {

uint32_t non_negative(int32_t v) { return v < 0 ? 0u : static_cast<uint32_t>(v); }

}  // namespace

trace::KernelActivity convert_kernel(const CUpti_ActivityKernel10& k, KernelNameCache& names) {
  trace::KernelActivity out;
  out.correlation_id = k.correlationId;
  out.device_id = k.deviceId;
  out.context_id = k.contextId;
  out.stream_id = k.streamId;
  out.start_ns = k.start;
  out.end_ns = k.end;
  out.grid[0] = k.gridX;
  out.grid[1] = k.gridY;
  out.grid[2] = k.gridZ;
  out.block[0] = k.blockX;
  out.block[1] = k.blockY;
  out.block[2] = k.blockZ;
  out.dynamic_shared_bytes = non_negative(k.dynamicSharedMemory);
  out.static_shared_bytes = non_negative(k.staticSharedMemory);
  out.registers_per_thread = k.registersPerThread;
  auto [mangled, demangled] = names.ids(k.name ? std::string_view(k.name) : std::string_view());
  out.mangled_name = mangled;
  out.demangled_name = demangled;
  out.graph_id = k.graphId;
  out.graph_node_id = k.graphNodeId;
  return out;
}

std::optional<trace::NvtxEvent> convert_marker(const CUpti_ActivityMarker2& m,
                                               NvtxStyleTracker& styles, const InternFn& intern) {
  trace::NvtxEvent out;
  const auto flags = static_cast<uint32_t>(m.flags);
  RangeStyle style = RangeStyle::kUnknown;
  if (flags & CUPTI_ACTIVITY_FLAG_MARKER_START) {
    out.kind = trace::NvtxEventKind::kStart;
    style = styles.on_start_marker(m.id);
  } else if (flags & CUPTI_ACTIVITY_FLAG_MARKER_END) {
    out.kind = trace::NvtxEventKind::kEnd;
    style = styles.on_end_marker(m.id);
  } else if (flags & CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS) {
    out.kind = trace::NvtxEventKind::kInstant;
  } else {
    return std::nullopt;
  }
  out.id = m.id;
  out.style = static_cast<trace::NvtxRangeStyle>(style);
  out.timestamp_ns = m.timestamp;
  out.thread_id = m.objectKind == CUPTI_ACTIVITY_OBJECT_THREAD ? m.objectId.pt.threadId : 0;
  out.domain = m.domain ? intern(m.domain) : 0;
  out.name = (out.kind != trace::NvtxEventKind::kEnd && m.name) ? intern(m.name) : 0;
  return out;
}

trace::DeviceInfo convert_device(const CUpti_ActivityDevice5& d, std::string_view chip,
                                 const InternFn& intern) {
  trace::DeviceInfo out;
  out.device_id = d.id;
  out.name = d.name ? intern(d.name) : 0;
  out.chip = chip.empty() ? 0 : intern(chip);
  static_assert(sizeof(out.uuid) == sizeof(d.uuid.bytes));
  std::memcpy(out.uuid, d.uuid.bytes, sizeof(out.uuid));
  out.cc_major = d.computeCapabilityMajor;
  out.cc_minor = d.computeCapabilityMinor;
  out.sm_count = d.numMultiprocessors;
  out.core_clock_khz = d.coreClockRate;
  out.memory_clock_khz = 0;        // not in CUpti_ActivityDevice5: the session asks the driver
  out.memory_bus_width_bits = 0;   // not in CUpti_ActivityDevice5
  out.global_memory_bytes = d.globalMemorySize;
  out.global_memory_bandwidth_kbps = d.globalMemoryBandwidth;
  out.l2_cache_bytes = d.l2CacheSize;
  return out;
}

std::optional<trace::MemoryActivity> convert_memory(const CUpti_ActivityMemory4& m) {
  trace::MemoryActivity r;
  switch (m.memoryOperationType) {
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION:
      r.operation = trace::MemoryOperation::kAllocation;
      break;
    case CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE:
      r.operation = trace::MemoryOperation::kRelease;
      break;
    default:
      return std::nullopt;
  }
  const auto kind = static_cast<uint32_t>(m.memoryKind);
  r.memory_kind = kind <= static_cast<uint32_t>(trace::MemoryKind::kManagedStatic)
                      ? static_cast<trace::MemoryKind>(kind)
                      : trace::MemoryKind::kUnknown;
  r.device_id = m.deviceId;
  r.context_id = m.contextId;
  r.stream_id = m.streamId;
  r.correlation_id = m.correlationId;
  r.address = m.address;
  r.bytes = m.bytes;
  r.timestamp_ns = m.timestamp;
  return r;
}

}  // namespace rf::collector
