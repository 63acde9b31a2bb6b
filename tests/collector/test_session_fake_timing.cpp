// The collector session on the fake CUPTI (fake_cupti.h), timing mode and start-up: what reaches
// the trace from the launch callbacks and the activity records, profiling windows, and the one
// "rfprof:" line of each start-up failure (issue 6), with nothing left on disk.
#include <array>
#include <csignal>
#include <set>
#include <vector>

#include "fake_session.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

TEST_F(FakeSessionTest, TimingModeRecordsEachLaunchWithItsKernel) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    Launch a{ctx, "_Z4axpyfPfS_", {64, 2, 1}, {256, 1, 1}};
    a.duration_ns = 5000;
    Launch b{ctx, "_Z6reducePKfPf", {128, 1, 1}, {512, 1, 1}, 4096};
    b.duration_ns = 7000;
    b.through_runtime = false;  // a bare cuLaunchKernel: its record carries the driver call's id
    launch(a);
    launch(b);
    launch(a);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err, "");
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);
  EXPECT_FALSE(std::filesystem::exists(trace_.string() + ".part"));

  // Correlation ids: one per launch call, shared by a runtime call and the driver call it makes.
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(launches[0].correlation_id, 1u);
  EXPECT_EQ(launches[0].runtime_correlation_id, 1u);
  EXPECT_EQ(launches[1].correlation_id, 2u);
  EXPECT_EQ(launches[1].runtime_correlation_id, 0u);  // a bare cuLaunchKernel
  EXPECT_EQ(launches[2].correlation_id, 3u);
  EXPECT_EQ(launches[2].runtime_correlation_id, 3u);
  EXPECT_EQ(t.str(launches[0].kernel_name), "_Z4axpyfPfS_");
  EXPECT_EQ(t.str(launches[1].kernel_name), "_Z6reducePKfPf");
  EXPECT_EQ(launches[0].grid[0], 64);
  EXPECT_EQ(launches[0].grid[1], 2);
  EXPECT_EQ(launches[1].block[0], 512);
  EXPECT_EQ(launches[0].cbid, static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
  for (const auto& l : launches) {
    EXPECT_LE(l.api_start_ns, l.api_end_ns);
    EXPECT_EQ(l.window_id, 0u);
    EXPECT_NE(l.thread_id, 0u);
  }

  const auto kernels = t.all<trace::KernelActivity>();
  ASSERT_EQ(kernels.size(), 3u);
  std::set<uint32_t> kernel_ids;
  for (const auto& k : kernels) kernel_ids.insert(k.correlation_id);
  EXPECT_EQ(kernel_ids, (std::set<uint32_t>{1, 2, 3}));
  for (const auto& k : kernels) {
    if (k.correlation_id == 2) {
      EXPECT_EQ(k.end_ns - k.start_ns, 7000u);
      EXPECT_EQ(k.dynamic_shared_bytes, 4096u);
      EXPECT_EQ(t.str(k.demangled_name), "reduce(float const*, float*)");
    } else {
      EXPECT_EQ(k.end_ns - k.start_ns, 5000u);
      EXPECT_EQ(t.str(k.mangled_name), "_Z4axpyfPfS_");
    }
  }

  const auto devices = t.all<trace::DeviceInfo>();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(t.str(devices[0].chip), "GH100");
  EXPECT_EQ(devices[0].sm_count, 132u);
  const auto processes = t.all<trace::ProcessInfo>();
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(processes[0].mode, CollectionMode::kTiming);
  EXPECT_EQ(processes[0].cupti_version, static_cast<uint32_t>(CUPTI_API_VERSION));
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
  EXPECT_TRUE(t.all<trace::MetricConfig>().empty());
}

// Every driver launch call the session subscribes to, each with its own parameter struct (a
// cuLaunchKernelEx call's grid and block are in its CUlaunchConfig): PyTorch's kernels come through
// cuLaunchKernel, CUTLASS and FlashAttention through cuLaunchKernelEx, per-thread default stream
// builds through the _ptsz variants. (Counters mode: test_session_fake_counters.)
TEST_F(FakeSessionTest, EveryDriverLaunchCallIsRecordedWithItsGridAndBlock) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    launch_each_driver_call(create_context(1));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const std::vector<CUpti_CallbackId> cbids = {
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,           CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,         CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
      CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz};
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), cbids.size());
  for (size_t i = 0; i < cbids.size(); ++i) {
    const int32_t n = static_cast<int32_t>(i) + 1;
    EXPECT_EQ(launches[i].cbid, static_cast<uint32_t>(cbids[i])) << i;
    EXPECT_EQ(launches[i].domain, trace::ApiDomain::kDriver) << i;
    EXPECT_EQ(launches[i].runtime_correlation_id, launches[i].correlation_id) << i;
    EXPECT_EQ((std::array<int32_t, 3>{launches[i].grid[0], launches[i].grid[1], launches[i].grid[2]}),
              (std::array<int32_t, 3>{10 * n, n, 2}))
        << i;
    EXPECT_EQ((std::array<int32_t, 3>{launches[i].block[0], launches[i].block[1], launches[i].block[2]}),
              (std::array<int32_t, 3>{32 * n, 2, n}))
        << i;
  }
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), cbids.size());
}

TEST_F(FakeSessionTest, OnlyLaunchesBetweenProfilerStartAndStopAreRecorded) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.profile_from_start = false;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z6beforev"});
    profiler_start(ctx);
    launch({ctx, "_Z6insidev"});
    profiler_stop(ctx);
    launch({ctx, "_Z5afterv"});
    profiler_start(ctx);
    launch({ctx, "_Z6secondv"});
    profiler_stop(ctx);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(t.str(launches[0].kernel_name), "_Z6insidev");
  EXPECT_EQ(t.str(launches[1].kernel_name), "_Z6secondv");
  EXPECT_NE(launches[0].window_id, launches[1].window_id);
  const auto kernels = t.all<trace::KernelActivity>();
  ASSERT_EQ(kernels.size(), 2u);  // the kernels launched outside every window are left out
  for (const auto& k : kernels) EXPECT_NE(t.str(k.mangled_name), "_Z6beforev");

  // Each window opens at cudaProfilerStart's exit and closes at cudaProfilerStop's entry.
  const auto windows = t.all<trace::ProfilingWindow>();
  ASSERT_EQ(windows.size(), 4u);
  EXPECT_TRUE(windows[0].begin);
  EXPECT_FALSE(windows[1].begin);
  EXPECT_EQ(windows[0].window_id, launches[0].window_id);
  EXPECT_EQ(windows[1].window_id, launches[0].window_id);
  EXPECT_EQ(windows[2].window_id, launches[1].window_id);
  EXPECT_LE(windows[0].timestamp_ns, launches[0].api_start_ns);
  EXPECT_GE(windows[1].timestamp_ns, launches[0].api_end_ns);
}

TEST_F(FakeSessionTest, AFailedLaunchIsNotRecorded) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    Launch bad{ctx, "_Z3badv"};
    bad.result = CUDA_ERROR_INVALID_VALUE;
    launch(bad);
    launch({ctx, "_Z4goodv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(t.str(launches[0].kernel_name), "_Z4goodv");
}

TEST_F(FakeSessionTest, NvtxRangesBecomeEventsWithTheirStyle) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    nvtx_push("forward");
    launch({ctx, "_Z4convv"});
    nvtx_pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto events = t.all<trace::NvtxEvent>();
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, trace::NvtxEventKind::kStart);
  EXPECT_EQ(t.str(events[0].name), "forward");
  EXPECT_EQ(events[1].kind, trace::NvtxEventKind::kEnd);
  EXPECT_EQ(events[0].id, events[1].id);
  EXPECT_EQ(events[0].style, trace::NvtxRangeStyle::kPushPop);  // learnt from the push callback
}

TEST_F(FakeSessionTest, AnotherCuptiClientIsNamedOnceAndNoTraceIsLeft) {
  const Child c = run_child([&] {
    set_other_subscriber("Nsight Systems");
    if (collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    if (collector::session_running()) std::_Exit(4);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("Nsight Systems"), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(trace_));
  EXPECT_FALSE(std::filesystem::exists(trace_.string() + ".part"));
}

TEST_F(FakeSessionTest, NoDriverAsksWhetherOneIsInstalled) {
  const Child c = run_child([&] {
    fail("cuptiSubscribe_v2", CUPTI_ERROR_NOT_INITIALIZED);
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("is an NVIDIA driver installed"), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(trace_.string() + ".part"));
}

TEST_F(FakeSessionTest, AFailureAfterSubscribingUndoesTheSubscriptionAndTheActivityKinds) {
  const Child c = run_child([&] {
    fail("cuptiEnableCallback", CUPTI_ERROR_UNKNOWN);
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    // The guards gave everything back: another tool could attach now.
    std::fprintf(stderr, "subscriber=[%s] kernels=%d unsubscribes=%llu\n", subscriber_name().c_str(),
                 activity_enabled(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) ? 1 : 0,
                 static_cast<unsigned long long>(calls("cuptiUnsubscribe")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("subscriber=[] kernels=0 unsubscribes=1"), std::string::npos) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("cuptiEnableCallback"), std::string::npos) << c.err;
  EXPECT_FALSE(std::filesystem::exists(trace_.string() + ".part"));
}

TEST_F(FakeSessionTest, AnExistingTraceIsKeptWithoutForceOverwrite) {
  { std::ofstream(trace_) << "earlier results"; }
  const Child c = run_child([&] {
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    std::fprintf(stderr, "subscriber=[%s]\n", subscriber_name().c_str());
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find(trace_.string()), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("subscriber=[]"), std::string::npos) << c.err;
  std::ifstream in(trace_);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), "earlier results");
}

// The SIGKILL bound at the default flush interval (1 s, SessionOptions::flush_ms): launches and
// their kernel records 1.5 s old are in the .part, written by the session's own flush threads
// alone (the application never flushes, finishes or exits). With no timed flush they are not.
TEST_F(FakeSessionTest, RecordsOlderThanTheDefaultFlushIntervalSurviveASigkill) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.flush_ms = collector::SessionOptions{}.flush_ms;
    if (o.flush_ms != 1000) std::_Exit(4);  // the bound issue 6 names
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 3; ++i) launch({ctx, "_Z1kv"});
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    std::raise(SIGKILL);
  });
  ASSERT_NE(c.status, -1) << c.err;
  ASSERT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL) << c.err;
  const Trace t = read_trace(trace_.string() + ".part");
  EXPECT_TRUE(t.truncated);
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 3u);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);  // handed over by the periodic activity flush
  EXPECT_EQ(launch_names(t), (std::vector<std::string>(3, "_Z1kv")));
}

}  // namespace
}  // namespace rf::fake_cupti
