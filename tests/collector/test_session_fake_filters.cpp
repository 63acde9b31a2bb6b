// The collector session on the fake CUPTI (fake_cupti.h) with ncu's launch filters: -k, -s/-c,
// --nvtx-include/exclude, --devices and --kernel-id. A launch a filter refuses is neither recorded
// nor profiled, and in counters mode no range of the Range Profiler's auto range is shifted onto
// the wrong launch by it.
#include "fake_session.h"
#include "rfprof/collector/host_metrics.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// gemm, relu, gemm, relu, gemm on `ctx`.
void five_launches(CUcontext ctx) {
  for (int i = 0; i < 5; ++i) launch({ctx, i % 2 ? "_Z4reluPf" : "_Z4gemmPKfS0_Pf"});
}

TEST_F(FakeSessionTest, AKernelNameFilterLeavesTheOthersOutAndShiftsNoRange) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.filter.kernel_name = "gemm";  // the function name (ncu's default --kernel-name-base)
    if (!collector::start_session(o)) std::_Exit(3);
    five_launches(create_context(1));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(launch_names(t), std::vector<std::string>(3, "_Z4gemmPKfS0_Pf"));
  expect_one_range_per_launch(t);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty());
}

TEST_F(FakeSessionTest, LaunchSkipAndCountSelectTheLaunchesBetween) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.launch_skip = 1;
    o.launch_count = 2;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    std::vector<uint32_t> ids;
    for (int i = 0; i < 5; ++i) ids.push_back(launch({ctx, "_Z1kv"}));
    std::fprintf(stderr, "second=%u third=%u\n", ids[1], ids[2]);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_NE(c.err.find("second=" + std::to_string(launches[0].correlation_id) +
                       " third=" + std::to_string(launches[1].correlation_id)),
            std::string::npos)
      << c.err;
  expect_one_range_per_launch(t);
}

TEST_F(FakeSessionTest, NvtxIncludeProfilesOnlyLaunchesInsideTheRange) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.filter.nvtx_include = {"forward/"};
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z6beforev"});
    nvtx_push("forward");
    launch({ctx, "_Z4convv"});
    nvtx_push("relu");
    launch({ctx, "_Z4reluv"});
    nvtx_pop();
    nvtx_pop();
    nvtx_push("backward");
    launch({ctx, "_Z8convgradv"});
    nvtx_pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(launch_names(t), (std::vector<std::string>{"_Z4convv", "_Z4reluv"}));
  expect_one_range_per_launch(t);
  EXPECT_EQ(t.all<trace::NvtxEvent>().size(), 6u);  // the ranges themselves are all recorded
}

TEST_F(FakeSessionTest, NvtxExcludeLeavesOutLaunchesInsideTheRange) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.filter.nvtx_exclude = {"optimizer/"};
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z4convv"});
    nvtx_push("optimizer");
    launch({ctx, "_Z4adamv"});
    nvtx_pop();
    launch({ctx, "_Z4lossv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(launch_names(t), (std::vector<std::string>{"_Z4convv", "_Z4lossv"}));
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 2u);
}

TEST_F(FakeSessionTest, DevicesProfilesOnlyListedDevicesAndSetsUpNoProfilerElsewhere) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.filter.devices = {1};
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext on0 = create_context(1, 0);
    CUcontext on1 = create_context(2, 1);
    launch({on0, "_Z2d0v"});
    launch({on1, "_Z2d1v"});
    launch({on0, "_Z2d0v"});
    std::fprintf(stderr, "supported=%llu enables=%llu\n",
                 static_cast<unsigned long long>(calls("cuptiProfilerDeviceSupported")),
                 static_cast<unsigned long long>(calls("cuptiRangeProfilerEnable")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("supported=1 enables=1\n"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(launch_names(t), (std::vector<std::string>{"_Z2d1v"}));
  expect_one_range_per_launch(t);
  for (const auto& k : t.all<trace::KernelActivity>()) EXPECT_EQ(k.device_id, 1u);
  EXPECT_EQ(t.all<trace::DeviceInfo>().size(), 2u);  // devices are described whatever the filter
}

TEST_F(FakeSessionTest, KernelIdSelectsTheNthInvocationOfAKernel) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.kernel_id = collector::KernelId::parse("::gemm:2");
    if (!collector::start_session(o)) std::_Exit(3);
    five_launches(create_context(1));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].correlation_id, 3u);  // gemm's second invocation: the third launch
  expect_one_range_per_launch(t);
}

// --kernel-id with a stream: the callback's stream (a cuLaunchKernelEx call's from its
// CUlaunchConfig, a _ptsz call's null stream the per-thread one) asked of CUPTI
// (cuptiGetStreamIdEx), the same id the kernel records carry.
TEST_F(FakeSessionTest, KernelIdSelectsLaunchesByTheirStream) {
  auto* s = reinterpret_cast<CUstream>(0x5100);  // stream id 0x510 = 1296 in the fake
  auto run = [&](const std::string& kernel_id) {
    return run_child([&] {
      auto o = options(CollectionMode::kCounters);
      o.kernel_id = collector::KernelId::parse(kernel_id);
      if (!collector::start_session(o)) std::_Exit(3);
      CUcontext ctx = create_context(1);
      Launch on_s{ctx, "_Z3onsv"};
      on_s.stream = s;
      launch(on_s);
      on_s.call = DriverCall::kLaunchKernelEx;
      on_s.kernel = "_Z5ex_onv";
      launch(on_s);
      launch({ctx, "_Z6legacyv"});  // the legacy default stream: 7
      Launch per_thread{ctx, "_Z4ptszv"};
      per_thread.call = DriverCall::kLaunchKernelPtsz;
      launch(per_thread);  // the per-thread default stream: 20
    });
  };
  const std::pair<std::string, std::vector<std::string>> cases[] = {
      {":1296::", {"_Z3onsv", "_Z5ex_onv"}}, {":7::", {"_Z6legacyv"}}, {":20::", {"_Z4ptszv"}}, {":8::", {}}};
  for (const auto& [kernel_id, names] : cases) {
    const Child c = run(kernel_id);
    ASSERT_TRUE(c.exited_zero()) << c.err;
    const Trace t = read_trace(trace_);
    EXPECT_EQ(launch_names(t), names) << kernel_id;
    expect_one_range_per_launch(t);
    for (const auto& k : t.all<trace::KernelActivity>())
      EXPECT_EQ(k.stream_id, static_cast<uint32_t>(std::stoul(kernel_id.substr(1)))) << kernel_id;
    std::filesystem::remove(trace_);
  }
}

}  // namespace
}  // namespace rf::fake_cupti
