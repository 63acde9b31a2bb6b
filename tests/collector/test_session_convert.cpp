// Activity record conversion: constructed CUPTI records -> trace records, field by field.
#include <gtest/gtest.h>

#include <map>

#include "convert.h"

namespace rf::collector {
namespace {

struct Table {
  std::map<std::string, trace::StringId> ids;
  trace::StringId intern(std::string_view s) {
    auto [it, inserted] = ids.emplace(std::string(s), static_cast<trace::StringId>(ids.size() + 1));
    return it->second;
  }
  std::string name(trace::StringId id) const {
    for (const auto& [k, v] : ids)
      if (v == id) return k;
    return "<none>";
  }
};

TEST(ConvertKernel, CopiesEveryField) {
  Table t;
  KernelNameCache names([&](std::string_view s) { return t.intern(s); });
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.correlationId = 77;
  k.deviceId = 1;
  k.contextId = 2;
  k.streamId = 13;
  k.start = 1000;
  k.end = 2500;
  k.gridX = 196;
  k.gridY = 2;
  k.gridZ = 3;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 4;
  k.dynamicSharedMemory = 4096;
  k.staticSharedMemory = 512;
  k.registersPerThread = 32;
  k.name = "_Z5saxpyifPfS_";
  k.graphId = 5;
  k.graphNodeId = 123456789012ull;
  trace::KernelActivity r = convert_kernel(k, names);
  EXPECT_EQ(r.correlation_id, 77u);
  EXPECT_EQ(r.device_id, 1u);
  EXPECT_EQ(r.context_id, 2u);
  EXPECT_EQ(r.stream_id, 13u);
  EXPECT_EQ(r.start_ns, 1000u);
  EXPECT_EQ(r.end_ns, 2500u);
  EXPECT_EQ(r.grid[0], 196);
  EXPECT_EQ(r.grid[1], 2);
  EXPECT_EQ(r.grid[2], 3);
  EXPECT_EQ(r.block[0], 256);
  EXPECT_EQ(r.block[1], 1);
  EXPECT_EQ(r.block[2], 4);
  EXPECT_EQ(r.dynamic_shared_bytes, 4096u);
  EXPECT_EQ(r.static_shared_bytes, 512u);
  EXPECT_EQ(r.registers_per_thread, 32u);
  EXPECT_EQ(t.name(r.mangled_name), "_Z5saxpyifPfS_");
  EXPECT_EQ(t.name(r.demangled_name), "saxpy(int, float, float*, float*)");
  EXPECT_EQ(r.graph_id, 5u);
  EXPECT_EQ(r.graph_node_id, 123456789012ull);
}

TEST(ConvertKernel, NegativeSharedMemoryBecomesZeroAndNullNameNoString) {
  Table t;
  KernelNameCache names([&](std::string_view s) { return t.intern(s); });
  CUpti_ActivityKernel10 k{};
  k.dynamicSharedMemory = -1;
  k.staticSharedMemory = -1;
  k.name = nullptr;
  trace::KernelActivity r = convert_kernel(k, names);
  EXPECT_EQ(r.dynamic_shared_bytes, 0u);
  EXPECT_EQ(r.static_shared_bytes, 0u);
  EXPECT_EQ(r.mangled_name, 0u);
  EXPECT_EQ(r.demangled_name, 0u);
}

CUpti_ActivityMarker2 marker(uint32_t flags, uint32_t id, const char* name, const char* domain) {
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = static_cast<CUpti_ActivityFlag>(flags);
  m.timestamp = 5000 + id;
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = 10;
  m.objectId.pt.threadId = 4321;
  m.name = name;
  m.domain = domain;
  return m;
}

TEST(ConvertMarker, StartEndAndInstantMarkers) {
  Table t;
  NvtxStyleTracker styles;
  styles.on_push_callback();
  InternFn intern = [&](std::string_view s) { return t.intern(s); };

  auto start = convert_marker(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 3, "forward", nullptr), styles, intern);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->kind, trace::NvtxEventKind::kStart);
  EXPECT_EQ(start->id, 3u);
  EXPECT_EQ(start->timestamp_ns, 5003u);
  EXPECT_EQ(start->thread_id, 4321u);
  EXPECT_EQ(start->domain, 0u);
  EXPECT_EQ(t.name(start->name), "forward");
  EXPECT_EQ(start->style, trace::NvtxRangeStyle::kPushPop);

  auto end = convert_marker(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 3, nullptr, nullptr), styles, intern);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->kind, trace::NvtxEventKind::kEnd);
  EXPECT_EQ(end->name, 0u);
  EXPECT_EQ(end->style, trace::NvtxRangeStyle::kPushPop);

  auto mark = convert_marker(marker(CUPTI_ACTIVITY_FLAG_MARKER_INSTANTANEOUS, 9, "tick", "my.domain"),
                             styles, intern);
  ASSERT_TRUE(mark.has_value());
  EXPECT_EQ(mark->kind, trace::NvtxEventKind::kInstant);
  EXPECT_EQ(mark->id, 9u);
  EXPECT_EQ(t.name(mark->domain), "my.domain");
  EXPECT_EQ(t.name(mark->name), "tick");
}

// An end marker names no range in the trace, even when CUPTI fills its name; and it takes its
// start's style: a start/end range ends as start/end.
TEST(ConvertMarker, AnEndMarkerHasNoNameAndItsStartsStyle) {
  Table t;
  NvtxStyleTracker styles;
  styles.on_push_callback();
  InternFn intern = [&](std::string_view s) { return t.intern(s); };
  styles.on_start_callback(5);  // nvtxRangeStart returned 5
  auto start = convert_marker(marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 5, "epoch", nullptr), styles, intern);
  ASSERT_TRUE(start.has_value());
  EXPECT_EQ(start->style, trace::NvtxRangeStyle::kStartEnd);
  auto end = convert_marker(marker(CUPTI_ACTIVITY_FLAG_MARKER_END, 5, "epoch", nullptr), styles, intern);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->name, 0u);
  EXPECT_EQ(end->style, trace::NvtxRangeStyle::kStartEnd);
}

TEST(ConvertMarker, SyncMarkersAreSkippedAndNonThreadObjectsHaveNoThread) {
  Table t;
  NvtxStyleTracker styles;
  InternFn intern = [&](std::string_view s) { return t.intern(s); };
  EXPECT_FALSE(convert_marker(marker(CUPTI_ACTIVITY_FLAG_MARKER_SYNC_ACQUIRE, 1, "m", nullptr), styles, intern)
                   .has_value());
  auto m = marker(CUPTI_ACTIVITY_FLAG_MARKER_START, 2, "x", nullptr);
  m.objectKind = CUPTI_ACTIVITY_OBJECT_PROCESS;
  auto ev = convert_marker(m, styles, intern);
  ASSERT_TRUE(ev.has_value());
  EXPECT_EQ(ev->thread_id, 0u);
}

TEST(ConvertDevice, CopiesIdentityAndChip) {
  Table t;
  InternFn intern = [&](std::string_view s) { return t.intern(s); };
  CUpti_ActivityDevice5 d{};
  d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
  d.id = 3;
  d.name = "NVIDIA H100 80GB HBM3";
  d.computeCapabilityMajor = 9;
  d.computeCapabilityMinor = 0;
  d.numMultiprocessors = 132;
  d.coreClockRate = 1980000;
  d.globalMemorySize = 85520809984ull;
  d.globalMemoryBandwidth = 3352320000ull;
  d.l2CacheSize = 52428800;
  for (int i = 0; i < 16; ++i) d.uuid.bytes[i] = static_cast<char>(i + 1);
  trace::DeviceInfo r = convert_device(d, "GH100", intern);
  EXPECT_EQ(r.device_id, 3u);
  EXPECT_EQ(t.name(r.name), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.name(r.chip), "GH100");
  EXPECT_EQ(r.cc_major, 9u);
  EXPECT_EQ(r.cc_minor, 0u);
  EXPECT_EQ(r.sm_count, 132u);
  EXPECT_EQ(r.core_clock_khz, 1980000u);
  EXPECT_EQ(r.global_memory_bytes, 85520809984ull);
  EXPECT_EQ(r.global_memory_bandwidth_kbps, 3352320000ull);
  EXPECT_EQ(r.l2_cache_bytes, 52428800u);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(r.uuid[i], i + 1);
  EXPECT_EQ(convert_device(d, "", intern).chip, 0u);
  d.name = nullptr;  // no name: no string, as for the chip
  const size_t strings = t.ids.size();
  EXPECT_EQ(convert_device(d, "GH100", intern).name, 0u);
  EXPECT_EQ(t.ids.size(), strings);
}

TEST(ConvertMemory, AllocationAndReleaseKeepEveryField) {
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = 812;
  m.address = 0x7f1234560000ull;
  m.bytes = 20971520;
  m.timestamp = 1700000123456ull;
  m.deviceId = 1;
  m.contextId = 3;
  m.streamId = 14;
  auto r = convert_memory(m);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->operation, trace::MemoryOperation::kAllocation);
  EXPECT_EQ(r->memory_kind, trace::MemoryKind::kDevice);
  EXPECT_EQ(r->correlation_id, 812u);
  EXPECT_EQ(r->address, 0x7f1234560000ull);
  EXPECT_EQ(r->bytes, 20971520u);
  EXPECT_EQ(r->timestamp_ns, 1700000123456ull);
  EXPECT_EQ(r->device_id, 1u);
  EXPECT_EQ(r->context_id, 3u);
  EXPECT_EQ(r->stream_id, 14u);
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  r = convert_memory(m);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->operation, trace::MemoryOperation::kRelease);
  EXPECT_EQ(r->memory_kind, trace::MemoryKind::kManaged);
}

TEST(ConvertMemory, InvalidOperationIsSkippedAndUnknownKindsAreUnknown) {
  CUpti_ActivityMemory4 m{};
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_INVALID;
  EXPECT_FALSE(convert_memory(m).has_value());
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  m.memoryKind = static_cast<CUpti_ActivityMemoryKind>(42);
  auto r = convert_memory(m);
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->memory_kind, trace::MemoryKind::kUnknown);
}

TEST(ConvertMemory, EachCuptiMemoryKindKeepsItsName) {
  const std::pair<CUpti_ActivityMemoryKind, trace::MemoryKind> kinds[] = {
      {CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN, trace::MemoryKind::kUnknown},
      {CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE, trace::MemoryKind::kPageable},
      {CUPTI_ACTIVITY_MEMORY_KIND_PINNED, trace::MemoryKind::kPinned},
      {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE, trace::MemoryKind::kDevice},
      {CUPTI_ACTIVITY_MEMORY_KIND_ARRAY, trace::MemoryKind::kArray},
      {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED, trace::MemoryKind::kManaged},
      {CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC, trace::MemoryKind::kDeviceStatic},
      {CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC, trace::MemoryKind::kManagedStatic},
      {static_cast<CUpti_ActivityMemoryKind>(CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC + 1),
       trace::MemoryKind::kUnknown},  // a kind newer than the trace format
  };
  CUpti_ActivityMemory4 m{};
  m.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  for (const auto& [cupti, expected] : kinds) {
    m.memoryKind = cupti;
    auto r = convert_memory(m);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->memory_kind, expected) << "CUPTI memory kind " << static_cast<int>(cupti);
  }
}

}  // namespace
}  // namespace rf::collector
