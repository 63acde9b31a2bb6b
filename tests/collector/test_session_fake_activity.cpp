// The collector session on the fake CUPTI (fake_cupti.h), its activity records: records CUPTI
// dropped, the kernel record kind, memory records, graph launches and their kernels, NVTX thread
// ids, and when each device's record is written and with which chip.
#include <csignal>

#include "fake_session.h"
#include "fake_steps.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

TEST_F(FakeSessionTest, RecordsCuptiDroppedAreSaidAndCountedInTheTraceEnd) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z1av"});
    drop_records(1);  // one record CUPTI had no buffer for
    launch({ctx, "_Z1bv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto dropped = errors_with(t, trace::ErrorCode::kDroppedRecords);
  ASSERT_EQ(dropped.size(), 1u);
  EXPECT_EQ(dropped[0].actual, 1u);
  EXPECT_NE(t.str(dropped[0].message).find("CUPTI dropped 1 activity records"), std::string::npos);
  const auto ends = t.all<trace::TraceEnd>();
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(ends[0].dropped_records, 1u);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 2u);
}

TEST_F(FakeSessionTest, SerialKernelRecordsAskForTheKernelKindAlone) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.kernel_records = collector::KernelRecords::kSerial;
    if (!collector::start_session(o)) std::_Exit(3);
    std::fprintf(stderr, "kernel=%d concurrent=%d\n", activity_enabled(CUPTI_ACTIVITY_KIND_KERNEL) ? 1 : 0,
                 activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? 1 : 0);
    launch({create_context(1), "_Z1av"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err, "kernel=1 concurrent=0\n");
  const Trace t = read_trace(trace_);
  ASSERT_EQ(t.all<trace::KernelActivity>().size(), 1u);
  EXPECT_EQ(t.str(t.all<trace::KernelActivity>()[0].mangled_name), "_Z1av");
}

// Replay across steps asks for the serialized KERNEL kind even when the options say concurrent:
// CONCURRENT_KERNEL instruments the kernels and user replay then counts no smsp__sass_* instruction.
TEST_F(FakeSessionTest, ReplayAcrossStepsAsksForSerializedKernelRecordsCountersMode) {
  const Child c = run_child([&] {
    auto o = step_options(trace_);
    o.kernel_records = collector::KernelRecords::kConcurrent;
    if (!collector::start_session(o)) std::_Exit(3);
    std::fprintf(stderr, "kernel=%d concurrent=%d\n", activity_enabled(CUPTI_ACTIVITY_KIND_KERNEL) ? 1 : 0,
                 activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? 1 : 0);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err.substr(0, c.err.find('\n') + 1), "kernel=1 concurrent=0\n") << c.err;
}

TEST_F(FakeSessionTest, MemoryRecordsOnlyWhenAskedAndOutsideWindowsToo) {
  const Child on = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.memory = true;
    o.profile_from_start = false;  // no window at all: memory is process-wide
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(2, 0);
    memory(ctx, true, 0x7f0000000000, 1 << 20);
    launch({ctx, "_Z1av"});
    memory(ctx, false, 0x7f0000000000, 1 << 20);
  });
  ASSERT_TRUE(on.exited_zero()) << on.err;
  Trace t = read_trace(trace_);
  EXPECT_TRUE(t.all<trace::KernelActivity>().empty());
  const auto mem = t.all<trace::MemoryActivity>();
  ASSERT_EQ(mem.size(), 2u);
  EXPECT_EQ(mem[0].operation, trace::MemoryOperation::kAllocation);
  EXPECT_EQ(mem[1].operation, trace::MemoryOperation::kRelease);
  EXPECT_EQ(mem[0].memory_kind, trace::MemoryKind::kDevice);
  EXPECT_EQ(mem[0].address, 0x7f0000000000u);
  EXPECT_EQ(mem[0].bytes, 1u << 20);
  EXPECT_EQ(mem[0].context_id, 2u);
  EXPECT_LT(mem[0].correlation_id, mem[1].correlation_id);

  std::filesystem::remove(trace_);
  const Child off = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    std::fprintf(stderr, "memory=%d\n", activity_enabled(CUPTI_ACTIVITY_KIND_MEMORY2) ? 1 : 0);
    CUcontext ctx = create_context(1);
    memory(ctx, true, 0x7f0000000000, 1 << 20);
    launch({ctx, "_Z1av"});
  });
  ASSERT_TRUE(off.exited_zero()) << off.err;
  EXPECT_EQ(off.err, "memory=0\n");
  t = read_trace(trace_);
  EXPECT_TRUE(t.all<trace::MemoryActivity>().empty());
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 1u);
}

TEST_F(FakeSessionTest, AGraphLaunchIsMarkedAndItsKernelsKeptButNotCuptisOwn) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    Launch g{create_context(1)};
    g.graph = true;
    // tools_memcmp: a kernel of CUPTI's own, seen under the graph launch's correlation id (names.h).
    g.graph_kernels = {"_Z5firstv", "tools_memcmp", "_Z6secondv"};
    launch(g);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_TRUE(launches[0].is_graph);
  EXPECT_EQ(launches[0].cbid, static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch));
  EXPECT_EQ(launches[0].kernel_name, 0u);
  EXPECT_EQ(launches[0].correlation_id, 1u);
  EXPECT_EQ(launches[0].runtime_correlation_id, 1u);
  const auto kernels = t.all<trace::KernelActivity>();
  ASSERT_EQ(kernels.size(), 2u);
  for (const auto& k : kernels) {
    EXPECT_EQ(k.correlation_id, 1u);  // the launch call's
    EXPECT_NE(t.str(k.mangled_name), "tools_memcmp");
  }
}

TEST_F(FakeSessionTest, NvtxEventsCarryTheThreadIdsOfTheLaunches) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    nvtx_push("step");
    launch({ctx, "_Z1av"});
    nvtx_pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto events = t.all<trace::NvtxEvent>();
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(events.size(), 2u);
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(events[0].thread_id, launches[0].thread_id);  // both the system's thread id
}

TEST_F(FakeSessionTest, EachDeviceRecordCarriesTheChipOfItsOwnDevice) {
  const Child c = run_child([&] {
    set_device_chip(1, "GB100");
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    launch({create_context(1, 0), "_Z1av"});
    launch({create_context(2, 1), "_Z1bv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  std::map<uint32_t, std::string> chips;
  for (const auto& d : t.all<trace::DeviceInfo>()) chips[d.device_id] = t.str(d.chip);
  EXPECT_EQ(chips, (std::map<uint32_t, std::string>{{0, "GH100"}, {1, "GB100"}}));
}

TEST_F(FakeSessionTest, ADeviceWhoseChipCannotBeAskedIsWrittenAtOnceWithoutIt) {
  const Child c = run_child([&] {
    fail("cuptiDeviceGetChipName", CUPTI_ERROR_UNKNOWN);
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 20;
    if (!collector::start_session(o)) std::_Exit(3);
    launch({create_context(1), "_Z1av"});
    launch({create_context(2), "_Z1bv"});
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // 20 flush intervals
    std::fprintf(stderr, "asked=%llu\n", static_cast<unsigned long long>(calls("cuptiDeviceGetChipName")));
    std::raise(SIGKILL);
  });
  ASSERT_NE(c.status, -1) << c.err;
  EXPECT_NE(c.err.find("asked=1\n"), std::string::npos) << c.err;  // once per device, failed or not
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  const Trace t = read_trace(trace_.string() + ".part");
  const auto devices = t.all<trace::DeviceInfo>();
  ASSERT_EQ(devices.size(), 1u);  // not held back for a chip that will never be known
  EXPECT_EQ(devices[0].chip, 0u);
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 2u);
}

TEST_F(FakeSessionTest, ADeviceRecordWaitsForItsChipAndIsWrittenWhenItIsLearnt) {
  const Child c = run_child([&] {
    fail("cuptiGetDeviceId", CUPTI_ERROR_INVALID_CONTEXT);  // the first context says no device
    auto o = options(CollectionMode::kTiming);
    o.flush_ms = 20;
    if (!collector::start_session(o)) std::_Exit(3);
    launch({create_context(1), "_Z1av"});
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // its DEVICE record arrives
    fail("cuptiGetDeviceId", CUPTI_SUCCESS);
    launch({create_context(2), "_Z1bv"});  // the same device: its chip is learnt now
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::raise(SIGKILL);
  });
  ASSERT_NE(c.status, -1) << c.err;
  const Trace t = read_trace(trace_.string() + ".part");
  const auto devices = t.all<trace::DeviceInfo>();
  ASSERT_EQ(devices.size(), 1u);  // written before the exit, with the chip
  EXPECT_EQ(t.str(devices[0].chip), "GH100");
}

TEST_F(FakeSessionTest, ADeviceRecordWhoseChipIsNeverLearntIsWrittenAtExit) {
  const Child c = run_child([&] {
    fail("cuptiGetDeviceId", CUPTI_ERROR_INVALID_CONTEXT);
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    launch({create_context(1), "_Z1av"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto devices = t.all<trace::DeviceInfo>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].chip, 0u);
  EXPECT_EQ(devices[0].sm_count, 132u);
}

}  // namespace
}  // namespace rf::fake_cupti
