// The collector session on the fake CUPTI (fake_cupti.h), counters mode beyond
// test_session_fake_counters.cpp: launches a filter refuses and graph launches keep every range on
// its own launch, image sizes, a refused start, a decode failure on the flush thread, a destroyed
// context's successor, the exit's order and its disabling of every Range Profiler, metric sets,
// unsupported devices.
#include <algorithm>
#include <cstdlib>

#include "fake_session.h"
#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/metric_sets.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

unsigned long long n(const char* function) { return static_cast<unsigned long long>(calls(function)); }

TEST_F(FakeSessionTest, LaunchesAKernelFilterRefusesShiftNoRange) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.filter.kernel_name = "keep";
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (const char* k : {"_Z4keepv", "_Z4skipv", "_Z4keepv", "_Z4skipv", "_Z4skipv", "_Z4keepv"}) launch({ctx, k});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(launch_ids(t), (std::vector<uint32_t>{1, 3, 6}));
  EXPECT_EQ(range_ids(t), launch_ids(t));  // the refused kernels ran with the profiler stopped
  EXPECT_TRUE(errors_with(t, trace::ErrorCode::kRangeLaunchMismatch).empty());
}

TEST_F(FakeSessionTest, AGraphLaunchGetsAnImageOfItsOwn) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z6beforev"});
    Launch g{ctx};
    g.graph = true;
    g.graph_kernels = {"_Z1xv", "_Z1yv"};
    launch(g);
    launch({ctx, "_Z5afterv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  // The graph's two ranges cannot be told apart: left unmapped, and only they.
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{1, 0, 0, 3}));
  const auto mismatches = errors_with(t, trace::ErrorCode::kRangeLaunchMismatch);
  ASSERT_EQ(mismatches.size(), 1u);
}

TEST_F(FakeSessionTest, AnImageHoldsAllTheRangesItWasSizedFor) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.max_ranges_per_image = 24;
    o.flush_ms = 60000;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 24; ++i) launch({ctx, "_Z1kv"});
    std::fprintf(stderr, "decodes=%llu\n", n("cuptiRangeProfilerDecodeData"));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("decodes=0\n"), std::string::npos) << c.err;  // one image, decoded at exit
  const Trace t = read_trace(trace_);
  ASSERT_EQ(range_ids(t).size(), 24u);
  EXPECT_EQ(range_ids(t), launch_ids(t));
  EXPECT_TRUE(t.all<trace::CollectorError>().empty());
}

TEST_F(FakeSessionTest, ZeroRangesPerImageMeansOne) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.max_ranges_per_image = 0;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 3; ++i) launch({ctx, "_Z1kv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{1, 2, 3}));
  for (const auto& rc : t.all<trace::RangeCounters>()) EXPECT_EQ(rc.range_index, 0u);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty());
}

TEST_F(FakeSessionTest, ARefusedStartIsOneLineAndDisablesThatContextsProfiler) {
  const Child c = run_child([&] {
    fail("cuptiRangeProfilerStart", CUPTI_ERROR_HARDWARE_BUSY);
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 3; ++i) launch({ctx, "_Z1kv"});
    std::fprintf(stderr, "starts=%llu enables=%llu disables=%llu\n", n("cuptiRangeProfilerStart"),
                 n("cuptiRangeProfilerEnable"), n("cuptiRangeProfilerDisable"));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("dcgmi profile --pause"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("starts=1 enables=1 disables=1\n"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
}

TEST_F(FakeSessionTest, ADecodeFailureOnTheFlushThreadLosesOnlyThatImage) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    // Launches back to back are younger than that, even on a loaded machine: no decode at their
    // entry (at 50 ms a CI run under load decoded at the second launch's entry instead).
    o.flush_ms = 250;
    if (!collector::start_session(o)) std::_Exit(3);
    fail("cuptiRangeProfilerDecodeData", CUPTI_ERROR_UNKNOWN);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z1av"});
    launch({ctx, "_Z1av"});
    std::this_thread::sleep_for(std::chrono::milliseconds(900));  // the flush thread fails to decode
    launch({ctx, "_Z1bv"});
    launch({ctx, "_Z1bv"});
    std::this_thread::sleep_for(std::chrono::milliseconds(900));  // and does not try again
    fail("cuptiRangeProfilerDecodeData", CUPTI_SUCCESS);
    std::fprintf(stderr, "enables=%llu\n", n("cuptiRangeProfilerEnable"));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("enables=2\n"), std::string::npos) << c.err;  // enabled afresh after the failure
  const Trace t = read_trace(trace_);
  const auto failed = errors_with(t, trace::ErrorCode::kDecodeFailed);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].expected, 2u);
  EXPECT_NE(t.str(failed[0].message).find("flush thread"), std::string::npos) << t.str(failed[0].message);
  const auto launches = launch_ids(t);
  ASSERT_EQ(launches.size(), 4u);
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{launches[2], launches[3]}));  // decoded at exit
}

TEST_F(FakeSessionTest, AContextDestroyedAfterADecodeFailureLeavesItsHandleToTheNext) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 60000;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z1av"});
    fail("cuptiRangeProfilerDecodeData", CUPTI_ERROR_UNKNOWN);
    destroy_context(ctx);
    fail("cuptiRangeProfilerDecodeData", CUPTI_SUCCESS);
    CUcontext again = create_context(1);  // the driver gives the same handle again
    if (again != ctx) std::_Exit(4);
    launch({again, "_Z1bv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(errors_with(t, trace::ErrorCode::kDecodeFailed).size(), 1u);
  const auto launches = launch_ids(t);
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{launches[1]}));
}

TEST_F(FakeSessionTest, TheExitWritesWindowZerosCountersBeforeItsEndAndDisablesEveryProfiler) {
  const Child c = run_child([&] {
    // Registered before the session's own exit handler, so it runs after it.
    std::atexit([] {
      std::fprintf(stderr, "enables=%llu disables=%llu\n", n("cuptiRangeProfilerEnable"),
                   n("cuptiRangeProfilerDisable"));
    });
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 60000;
    if (!collector::start_session(o)) std::_Exit(3);
    launch({create_context(1), "_Z1av"});
    launch({create_context(2), "_Z1bv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("enables=2 disables=2\n"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  size_t last_range = 0, window_end = 0;
  for (size_t i = 0; i < t.records.size(); ++i) {
    if (std::holds_alternative<trace::RangeCounters>(t.records[i])) last_range = i;
    if (const auto* w = std::get_if<trace::ProfilingWindow>(&t.records[i]); w && !w->begin) window_end = i;
  }
  EXPECT_EQ(range_ids(t).size(), 2u);
  ASSERT_NE(window_end, 0u);  // window 0 is closed by the exit
  EXPECT_GT(window_end, last_range);
}

TEST_F(FakeSessionTest, AMetricSetIsPlannedForTheDevicesChip) {
  const std::vector<std::string> planned =
      collector::plan_metric_set(collector::MetricHost("GH100"), "roofline-tensor").metrics;
  ASSERT_NE(planned, collector::default_metrics());
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.metric_set = "roofline-tensor";
    if (!collector::start_session(o)) std::_Exit(3);
    launch({create_context(1), "_Z1av"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto configs = t.all<trace::MetricConfig>();
  ASSERT_EQ(configs.size(), 1u);
  std::vector<std::string> names;
  for (auto id : configs[0].metrics) names.push_back(t.str(id));
  EXPECT_EQ(names, planned);
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].values.size(), planned.size());
}

// ncu's --section with --metrics collects both: the set planned for the chip, then the listed
// metrics it lacks (one already in the set is not collected twice).
TEST_F(FakeSessionTest, MetricsGivenWithASetAreCollectedBesidesIt) {
  std::vector<std::string> expected = collector::plan_metric_set(collector::MetricHost("GH100"), "roofline").metrics;
  ASSERT_NE(std::find(expected.begin(), expected.end(), "dram__bytes_read.sum"), expected.end());
  ASSERT_EQ(std::find(expected.begin(), expected.end(), "sm__cycles_elapsed.avg"), expected.end());
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.metric_set = "roofline";
    o.metrics = {"sm__cycles_elapsed.avg", "dram__bytes_read.sum"};
    if (!collector::start_session(o)) std::_Exit(3);
    launch({create_context(1), "_Z1av"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  expected.push_back("sm__cycles_elapsed.avg");
  const Trace t = read_trace(trace_);
  const auto configs = t.all<trace::MetricConfig>();
  ASSERT_EQ(configs.size(), 1u);
  std::vector<std::string> names;
  for (auto id : configs[0].metrics) names.push_back(t.str(id));
  EXPECT_EQ(names, expected);
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_EQ(ranges[0].values.size(), expected.size());
}

TEST_F(FakeSessionTest, AnUnsupportedDeviceIsNamedWithWhyAndTheOthersKeepTheirCounters) {
  const Child c = run_child([&] {
    set_support(1, "vGpu", CUPTI_PROFILER_CONFIGURATION_DISABLED);
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext on0 = create_context(1, 0), on1 = create_context(2, 1);
    launch({on0, "_Z1av"});
    launch({on1, "_Z1bv"});
    launch({on0, "_Z1cv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("device 1 not supported: vGPU (disabled)"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  const auto launches = launch_ids(t);
  ASSERT_EQ(launches.size(), 3u);
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{launches[0], launches[2]}));
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);
}

TEST_F(FakeSessionTest, CountersRefusedAreSaidWhenTheContextIsCreated) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.metrics = {"dram__bytes_reed.sum"};
    if (!collector::start_session(o)) std::_Exit(3);
    (void)create_context(1);
    std::fprintf(stderr, "created\n");  // no launch: the line came from the context's set-up
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_LT(c.err.find("rfprof:"), c.err.find("created\n")) << c.err;
}

}  // namespace
}  // namespace rf::fake_cupti
