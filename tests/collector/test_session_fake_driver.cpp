// The collector session on the fake CUPTI (fake_cupti.h) with the fake driver loaded
// (fake_libcuda.cpp): what the session asks the driver for itself. The device record's memory
// clock and bus width, launches into a stream being captured into a CUDA graph, NVTX ranges as
// the steps of replay across steps (RFPROF_REPLAY_RANGE, opened on the thread's current context),
// and the Range Profiler driven with its context current from any thread.
#include <dlfcn.h>

#include <cstdlib>
#include <functional>
#include <utility>

#include "fake_session.h"
#include "fake_steps.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// Loads the fake driver in the child, or ends the child with status 4.
void with_fake_driver() {
  if (!load_fake_driver(RF_FAKE_LIBCUDA)) std::_Exit(4);
}

TEST_F(FakeDriverTest, TheDeviceRecordHasTheDriversMemoryClockAndBusWidth) {
  const Child c = run_child([&] {
    with_fake_driver();
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    launch({create_context(1), "_Z1kv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto devices = t.all<trace::DeviceInfo>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].memory_clock_khz, 2619000u);
  EXPECT_EQ(devices[0].memory_bus_width_bits, 5120u);
  ASSERT_EQ(t.all<trace::ProcessInfo>().size(), 1u);
  EXPECT_EQ(t.all<trace::ProcessInfo>()[0].driver_version, 13000u);
}

TEST_F(FakeDriverTest, WithoutADriverTheDeviceRecordSaysNothingOfTheMemory) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    launch({create_context(1), "_Z1kv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  ASSERT_EQ(t.all<trace::DeviceInfo>().size(), 1u);
  EXPECT_EQ(t.all<trace::DeviceInfo>()[0].memory_clock_khz, 0u);
  EXPECT_EQ(t.all<trace::ProcessInfo>()[0].driver_version, 0u);
}

// The stream each driver call launches into, for the capture check: a cuLaunchKernelEx call's is in
// its CUlaunchConfig, and a _ptsz call's default stream (null) is the per-thread stream.
TEST_F(FakeDriverTest, TheCaptureCheckAsksForTheStreamOfEachDriverCall) {
  const Child c = run_child([&] {
    with_fake_driver();
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    auto* captured = reinterpret_cast<CUstream>(0x5100);
    set_capturing_stream(captured);
    Launch ex{ctx, "_Z2exv"};
    ex.call = DriverCall::kLaunchKernelEx;
    ex.stream = captured;
    launch(ex);  // captured
    ex.stream = nullptr;
    ex.kernel = "_Z5ex_okv";
    launch(ex);  // the legacy default stream: runs
    set_capturing_stream(CU_STREAM_PER_THREAD);  // a thread capturing its per-thread default stream
    for (DriverCall call : {DriverCall::kLaunchKernelPtsz, DriverCall::kLaunchKernelExPtsz,
                            DriverCall::kCooperativePtsz}) {
      Launch p{ctx, "_Z4ptszv"};
      p.call = call;
      launch(p);  // null stream of a _ptsz call: the per-thread stream, captured
    }
    Launch legacy{ctx, "_Z6legacyv"};
    legacy.call = DriverCall::kCooperative;
    launch(legacy);  // null stream of a call that is not _ptsz: the legacy stream, not captured
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(launch_names(t), (std::vector<std::string>{"_Z5ex_okv", "_Z6legacyv"}));
  expect_one_range_per_launch(t);
}

TEST_F(FakeDriverTest, ALaunchIntoACapturingStreamIsNeitherRecordedNorProfiled) {
  const Child c = run_child([&] {
    with_fake_driver();
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    auto* captured = reinterpret_cast<CUstream>(0x5100);
    set_capturing_stream(captured);
    launch({ctx, "_Z1av"});
    Launch into_graph{ctx, "_Z8capturedv"};
    into_graph.stream = captured;
    launch(into_graph);
    launch({ctx, "_Z1bv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  std::vector<std::string> names;
  for (const auto& l : t.all<trace::LaunchApi>()) names.push_back(t.str(l.kernel_name));
  EXPECT_EQ(names, (std::vector<std::string>{"_Z1av", "_Z1bv"}));
  // The captured launch ran no kernel, so it made no range: counted as a launch, it would have
  // left one range short of the launches and no range mapped.
  expect_one_range_per_launch(t);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty());
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 2u);
}

/// One training step delimited by the NVTX range "step" on `ctx`: kernels a, b.
std::vector<uint32_t> nvtx_step(CUcontext ctx) {
  nvtx_push("step");
  std::vector<uint32_t> ids{launch({ctx, "_Z1av", {64, 1, 1}}), launch({ctx, "_Z1bv", {32, 1, 1}})};
  nvtx_pop();
  return ids;
}

TEST_F(FakeDriverTest, NvtxRangesAreTheStepsOfReplayAcrossSteps) {
  const Child c = run_child([&] {
    with_fake_driver();
    collector::SessionOptions o = nvtx_step_options(trace_);
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z4initv"});  // before the first step: no window
    nvtx_step(ctx);
    const auto pass1 = nvtx_step(ctx);
    const auto timing = nvtx_step(ctx);
    std::fprintf(stderr, "pass1=%u,%u timing=%u,%u\n", pass1[0], pass1[1], timing[0], timing[1]);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  unsigned p0 = 0, p1 = 0, t0 = 0, t1 = 0;
  const size_t at = c.err.find("pass1=");
  ASSERT_NE(at, std::string::npos) << c.err;
  ASSERT_EQ(std::sscanf(c.err.c_str() + at, "pass1=%u,%u timing=%u,%u", &p0, &p1, &t0, &t1), 4);
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].correlation_id, t0);
  EXPECT_EQ(launches[1].correlation_id, t1);
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].correlation_id, t0);
  EXPECT_EQ(ranges[1].correlation_id, t1);
  EXPECT_EQ(ranges[0].values[0], value(p0, 0));
  EXPECT_EQ(ranges[1].values[0], value(p1, 0));
  EXPECT_TRUE(t.all<trace::CollectorError>().empty());
}

// NVTX keeps a push/pop stack per domain: ranges of another domain (a library's) opened before
// the step and closed inside it, or opened inside and closed after it, neither close the step's
// window early nor keep it open past the step's own pop. Before the fix one depth per thread for
// all domains closed each window after its first kernel.
TEST_F(FakeDriverTest, ARangeOfAnotherDomainDoesNotMoveTheStepWindow) {
  const Child c = run_child([&] {
    with_fake_driver();
    if (!collector::start_session(nvtx_step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    nvtxDomainHandle_t lib = nvtx_domain_create("lib");
    std::vector<uint32_t> timing;
    for (int i = 0; i < 3; ++i) {
      nvtx_domain_push(lib, "prefetch");  // another domain's range opened before the step...
      nvtx_push("step");
      const uint32_t a = launch({ctx, "_Z1av", {64, 1, 1}, {256, 1, 1}});
      nvtx_domain_pop(lib);               // ...and closed inside it
      nvtx_domain_push(lib, "io");        // one opened inside the step...
      const uint32_t b = launch({ctx, "_Z1bv", {128, 1, 1}, {256, 1, 1}});
      nvtx_pop();                         // (the step ends)
      launch({ctx, "_Z4evalv"});          // outside every step
      nvtx_domain_pop(lib);               // ...and closed after it
      timing = {a, b};
    }
    std::fprintf(stderr, "timing=%u,%u\n", timing[0], timing[1]);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  unsigned t0 = 0, t1 = 0;
  const size_t at = c.err.find("timing=");
  ASSERT_NE(at, std::string::npos) << c.err;
  ASSERT_EQ(std::sscanf(c.err.c_str() + at, "timing=%u,%u", &t0, &t1), 2);
  const Trace t = read_trace(trace_);
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 2u) << c.err;
  EXPECT_EQ(ranges[0].correlation_id, t0);
  EXPECT_EQ(ranges[1].correlation_id, t1);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty());
}

TEST_F(FakeDriverTest, NvtxStepsOnAThreadWithoutAContextSaySo) {
  const Child c = run_child([&] {
    with_fake_driver();
    collector::SessionOptions o = nvtx_step_options(trace_);
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    set_current_context(nullptr);  // this thread has none current
    nvtx_push("step");
    nvtx_pop();
    launch({ctx, "_Z7betweenv"});  // between the windows: not recorded
    set_current_context(nullptr);
    nvtx_push("step");
    nvtx_pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("none on a thread with a CUDA context current"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_TRUE(t.all<trace::LaunchApi>().empty());
  const auto windows = t.all<trace::ProfilingWindow>();  // each recorded as an ordinary window
  ASSERT_EQ(windows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(windows[i].begin, i % 2 == 0) << i;
}

TEST_F(FakeDriverTest, StartEndNvtxRangesAreStepsToo) {
  const Child c = run_child([&] {
    with_fake_driver();
    collector::SessionOptions o = nvtx_step_options(trace_);
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    std::vector<uint32_t> ids;
    for (int i = 0; i < 3; ++i) {
      const uint64_t id = nvtx_start("step");
      ids.push_back(launch({ctx, "_Z1av", {64, 1, 1}}));
      nvtx_end(id);
    }
    std::fprintf(stderr, "pass1=%u timing=%u\n", ids[1], ids[2]);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  unsigned p1 = 0, t0 = 0;
  const size_t at = c.err.find("pass1=");
  ASSERT_NE(at, std::string::npos) << c.err;
  ASSERT_EQ(std::sscanf(c.err.c_str() + at, "pass1=%u timing=%u", &p1, &t0), 2);
  const Trace t = read_trace(trace_);
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].correlation_id, t0);
  EXPECT_EQ(ranges[0].values[0], value(p1, 0));
}

TEST_F(FakeDriverTest, WindowsFromAThreadWithoutTheContextDriveThePassesWithItCurrentAndLeaveNone) {
  const Child c = run_child([&] {
    with_fake_driver();
    auto o = options(CollectionMode::kCounters);
    o.profile_from_start = false;
    o.replay_across_steps = true;
    o.step_pass_start = collector::StepPassStart::kWindowOpen;  // Start when the window opens
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 3; ++i) {
      set_current_context(nullptr);  // cudaProfilerStart/Stop from a thread without the context
      profiler_start(ctx);
      launch({ctx, "_Z1av"});
      set_current_context(nullptr);
      profiler_stop(ctx);
    }
    std::fprintf(stderr, "off_context=%llu current=%s\n", static_cast<unsigned long long>(calls_off_context()),
                 current_context() ? "set" : "none");
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("off_context=0 current=none\n"), std::string::npos) << c.err;
  EXPECT_EQ(read_trace(trace_).all<trace::RangeCounters>().size(), 1u);
}

TEST_F(FakeDriverTest, ADriverLoadedAfterTheSessionStartsIsFound) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    with_fake_driver();  // the application loads CUDA after the injection
    launch({create_context(1), "_Z1kv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const auto devices = read_trace(trace_).all<trace::DeviceInfo>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].memory_clock_khz, 2619000u);
}

/// The memory clock and bus width of the device record of device `device`, after `setup`.
std::pair<uint32_t, uint32_t> device_memory(const std::filesystem::path& trace, uint32_t device,
                                            const std::function<void()>& setup) {
  std::filesystem::remove(trace);
  collector::SessionOptions o;
  o.output = trace;
  o.mode = CollectionMode::kTiming;
  o.flush_ms = 20;
  const Child c = run_child([&] {
    with_fake_driver();
    setup();
    if (!collector::start_session(o)) std::_Exit(3);
    launch({create_context(1, device), "_Z1kv"});
  });
  EXPECT_TRUE(c.exited_zero()) << c.err;
  const auto devices = read_trace(trace).all<trace::DeviceInfo>();
  if (devices.size() != 1) return {~0u, ~0u};
  return {devices[0].memory_clock_khz, devices[0].memory_bus_width_bits};
}

TEST_F(FakeDriverTest, ADeviceTheDriverDoesNotKnowGetsNoMemoryClock) {
  EXPECT_EQ(device_memory(trace_, 9, [] {}), std::make_pair(0u, 0u));  // cuDeviceGet refuses ordinal 9
}

TEST_F(FakeDriverTest, ANegativeOrRefusedDeviceAttributeIsZero) {
  EXPECT_EQ(device_memory(trace_, 0, [] { set_device_attribute(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, -1); }),
            std::make_pair(0u, 5120u));
  EXPECT_EQ(device_memory(trace_, 0, [] { fail_driver("cuDeviceGetAttribute", CUDA_ERROR_INVALID_VALUE); }),
            std::make_pair(0u, 0u));
}

TEST_F(FakeDriverTest, ALaunchWhoseCaptureStateCannotBeAskedIsRecorded) {
  const Child c = run_child([&] {
    with_fake_driver();
    fail_driver("cuStreamIsCapturing", CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    launch({create_context(1), "_Z1kv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(read_trace(trace_).all<trace::LaunchApi>().size(), 1u);
}

TEST_F(FakeDriverTest, AFailedPushLeavesTheApplicationsContextsAlone) {
  const Child c = run_child([&] {
    with_fake_driver();
    auto o = options(CollectionMode::kCounters);
    o.profile_from_start = false;
    o.flush_ms = 100000;  // the window's end decodes, on this thread
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext one = create_context(1);
    CUcontext two = create_context(2);
    profiler_start(one);
    launch({one, "_Z1av"});
    push_context(two);  // the application's own push
    fail_driver("cuCtxPushCurrent", CUDA_ERROR_INVALID_CONTEXT);  // the session's push fails
    profiler_stop(one);  // decodes context one's image: its push fails, so it pops nothing
    std::fprintf(stderr, "still_pushed=%d\n", current_context() == two ? 1 : 0);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("still_pushed=1\n"), std::string::npos) << c.err;
}

/// At exit, after the session's own exit handler: what the fake saw of the current context.
void report_contexts_at_exit() {
  std::fprintf(stderr, "off_context=%llu pushes=%llu\n", static_cast<unsigned long long>(calls_off_context()),
               static_cast<unsigned long long>(context_pushes()));
}

TEST_F(FakeDriverTest, TheRangeProfilerIsDrivenWithItsContextCurrentFromAnyThread) {
  const Child c = run_child([&] {
    with_fake_driver();
    std::atexit(report_contexts_at_exit);  // registered first: runs after the session's finish
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 20;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext one = create_context(1);
    launch({one, "_Z1av"});
    CUcontext two = create_context(2);
    launch({two, "_Z1bv"});
    set_current_context(nullptr);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the flush thread decodes both
    launch({one, "_Z1cv"});
    set_current_context(two);  // the exit decodes context one's image with two current
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("off_context=0 "), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(t.all<trace::RangeCounters>().size(), 3u);
  for (const auto& rc : t.all<trace::RangeCounters>()) EXPECT_EQ(rc.values[0], value(rc.correlation_id, 0));
}

// A device CUPTI refuses while the driver says it is shared through MPS: the one line names MPS
// and how to stop it; the timings go on. (CUPTI's own support flags do not report MPS.)
TEST_F(FakeDriverTest, CountersRefusedOnAnMpsDeviceNameMpsAndTimingsGoOn) {
  const Child c = run_child([&] {
    with_fake_driver();
    set_device_attribute(CU_DEVICE_ATTRIBUTE_MPS_ENABLED, 1);
    fail("cuptiRangeProfilerEnable", CUPTI_ERROR_NOT_SUPPORTED);
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z1av"});
    launch({ctx, "_Z1bv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("not supported on this device or configuration (cuptiRangeProfiler start on device 0 "
                       "(GH100): cuptiRangeProfilerEnable failed: CUPTI_ERROR_NOT_SUPPORTED"),
            std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("this device is shared through MPS: profile with the MPS control daemon stopped"),
            std::string::npos)
      << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 2u);
  EXPECT_EQ(errors_with(t, trace::ErrorCode::kCountersUnavailable).size(), 1u);
}

// The same refusal without MPS, and CUPTI's MIG refusal: neither line speaks of MPS; the MIG one
// says which compute instances CUPTI profiles.
TEST_F(FakeDriverTest, CountersRefusedWithoutMpsOrOnAMigInstanceSayWhatToChange) {
  for (CUptiResult refusal : {CUPTI_ERROR_NOT_SUPPORTED, CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED}) {
    const Child c = run_child([&] {
      with_fake_driver();
      fail("cuptiRangeProfilerEnable", refusal);
      if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
      launch({create_context(1), "_Z1av"});
    });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
    EXPECT_EQ(c.err.find("MPS"), std::string::npos) << c.err;
    if (refusal == CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED)
      EXPECT_NE(c.err.find("not available on this MIG compute instance"), std::string::npos) << c.err;
    else
      EXPECT_NE(c.err.find("they need a Volta or newer GPU"), std::string::npos) << c.err;
    EXPECT_EQ(read_trace(trace_).all<trace::KernelActivity>().size(), 1u);
    std::filesystem::remove(trace_);
  }
}

}  // namespace
}  // namespace rf::fake_cupti
