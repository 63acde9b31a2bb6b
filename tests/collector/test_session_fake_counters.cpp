// The collector session on the fake CUPTI (fake_cupti.h), counters mode with kernel replay: each
// decoded range reaches the launch that made it, images are decoded when full, at window ends,
// when a context goes and at exit; each refusal of the counters is one "rfprof:" line and the
// timings go on (issue 6); SIGTERM and SIGKILL leave the counters already decoded (issue 6).
#include <csignal>

#include <map>

#include "fake_session.h"
#include "rfprof/collector/host_metrics.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// `n` launches of kernels k0, k1, ... on `ctx`; their driver correlation ids.
std::vector<uint32_t> launches_on(CUcontext ctx, int n) {
  std::vector<uint32_t> ids;
  for (int i = 0; i < n; ++i) ids.push_back(launch({ctx, "_Z1kILi" + std::to_string(i) + "EEvv"}));
  return ids;
}

/// Expects every RangeCounters to hold the fake's values of the launch it names.
void expect_values_of_their_launch(const Trace& t) {
  for (const auto& rc : t.all<trace::RangeCounters>()) {
    ASSERT_EQ(rc.values.size(), collector::default_metrics().size());
    for (size_t m = 0; m < rc.values.size(); ++m)
      EXPECT_EQ(rc.values[m], value(rc.correlation_id, m)) << "range of launch " << rc.correlation_id;
  }
}

TEST_F(FakeSessionTest, EachRangeGoesToTheLaunchThatMadeIt) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    launches_on(create_context(1), 5);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err, "");
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);
  const auto configs = t.all<trace::MetricConfig>();
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(t.str(configs[0].chip), "GH100");
  EXPECT_EQ(configs[0].num_passes, 2u);  // the host API's count for the roofline set on GH100
  ASSERT_EQ(configs[0].metrics.size(), collector::default_metrics().size());
  for (size_t m = 0; m < configs[0].metrics.size(); ++m)
    EXPECT_EQ(t.str(configs[0].metrics[m]), collector::default_metrics()[m]);

  EXPECT_EQ(range_ids(t), launch_ids(t));
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{1, 2, 3, 4, 5}));
  expect_values_of_their_launch(t);
  const auto ranges = t.all<trace::RangeCounters>();
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(ranges[i].range_index, i);
    EXPECT_EQ(ranges[i].config_id, configs[0].config_id);
    EXPECT_EQ(t.str(ranges[i].range_name), std::to_string(i));  // auto range's names, as CUPTI's
  }
  const auto launches = t.all<trace::LaunchApi>();
  for (size_t i = 0; i < launches.size(); ++i) EXPECT_EQ(launches[i].launch_index, i);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 5u);
}

TEST_F(FakeSessionTest, AFullImageIsDecodedBeforeTheNextLaunch) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.max_ranges_per_image = 2;
    o.flush_ms = 60000;  // no decode from the flush thread: only full images and the exit
    if (!collector::start_session(o)) std::_Exit(3);
    launches_on(create_context(1), 5);
    std::fprintf(stderr, "decodes=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerDecodeData")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("decodes=2\n"), std::string::npos) << c.err;  // before launches 3 and 5
  const Trace t = read_trace(trace_);
  EXPECT_EQ(range_ids(t), launch_ids(t));
  ASSERT_EQ(range_ids(t).size(), 5u);
  expect_values_of_their_launch(t);
  std::vector<uint64_t> indices;
  for (const auto& rc : t.all<trace::RangeCounters>()) indices.push_back(rc.range_index);
  EXPECT_EQ(indices, (std::vector<uint64_t>{0, 1, 0, 1, 0}));
  // A launch's index is its range's index in its image, as the range that names it.
  std::vector<uint64_t> launch_indices;
  for (const auto& l : t.all<trace::LaunchApi>()) launch_indices.push_back(l.launch_index);
  EXPECT_EQ(launch_indices, indices);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty());
}

// Issue 8, "decode in large batches": with the default image of 2,000 ranges, 5,000 launches in
// one window are decoded twice while the application runs (a full image before launches 2,001 and
// 4,001) and once at exit: 3 decodes and 3 host evaluations of 2,000, 2,000 and 1,000 ranges,
// not one per launch.
TEST_F(FakeSessionTest, DefaultImagesDecodeTwoThousandLaunchesAtOnce) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 60000;  // no decode from the flush thread
    if (o.max_ranges_per_image != 2000) std::_Exit(6);  // the default this test is about
    if (!collector::start_session(o)) std::_Exit(3);
    launches_on(create_context(1), 5000);
    std::fprintf(stderr, "decodes=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerDecodeData")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("decodes=2\n"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(range_ids(t), launch_ids(t));
  ASSERT_EQ(range_ids(t).size(), 5000u);
  std::map<uint64_t, size_t> per_index;  // range_index restarts with each image
  for (const auto& rc : t.all<trace::RangeCounters>()) ++per_index[rc.range_index];
  EXPECT_EQ(per_index.size(), 2000u);
  EXPECT_EQ(per_index[0], 3u);     // three images
  EXPECT_EQ(per_index[999], 3u);
  EXPECT_EQ(per_index[1000], 2u);  // the last holds 1,000 ranges
  EXPECT_EQ(per_index[1999], 2u);
  expect_values_of_their_launch(t);
}

TEST_F(FakeSessionTest, EachWindowsRangesAreDecodedAtItsClose) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.profile_from_start = false;
    o.flush_ms = 60000;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    profiler_start(ctx);
    launches_on(ctx, 2);
    profiler_stop(ctx);
    std::fprintf(stderr, "decodes=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerDecodeData")));
    launch({ctx, "_Z7outsidev"});
    profiler_start(ctx);
    launch({ctx, "_Z5againv"});
    profiler_stop(ctx);
    std::fprintf(stderr, "starts=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerStart")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("decodes=1\n"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("starts=2\n"), std::string::npos) << c.err;  // none outside the windows
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(launches.size(), 3u);
  ASSERT_EQ(ranges.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ranges[i].correlation_id, launches[i].correlation_id);
    EXPECT_EQ(ranges[i].window_id, launches[i].window_id);
  }
  EXPECT_NE(ranges[0].window_id, ranges[2].window_id);
  expect_values_of_their_launch(t);
}

TEST_F(FakeSessionTest, AContextDestroyedKeepsItsCounters) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 60000;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launches_on(ctx, 3);
    destroy_context(ctx);
    std::fprintf(stderr, "decodes=%llu disables=%llu\n",
                 static_cast<unsigned long long>(calls("cuptiRangeProfilerDecodeData")),
                 static_cast<unsigned long long>(calls("cuptiRangeProfilerDisable")));
    CUcontext again = create_context(2);
    launches_on(again, 1);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("decodes=1 disables=1\n"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(range_ids(t), launch_ids(t));
  EXPECT_EQ(range_ids(t).size(), 4u);
  expect_values_of_their_launch(t);
}

TEST_F(FakeSessionTest, MoreRangesThanLaunchesAreReportedNotShifted) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launches_on(ctx, 2);
    Launch hidden{ctx, "_Z6hiddenv"};
    hidden.silent = true;
    launch(hidden);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto mismatches = errors_with(t, trace::ErrorCode::kRangeLaunchMismatch);
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0].expected, 2u);
  EXPECT_EQ(mismatches[0].actual, 3u);
  EXPECT_NE(t.str(mismatches[0].message).find("device 0 (GH100)"), std::string::npos);
  for (uint32_t id : range_ids(t)) EXPECT_EQ(id, 0u);  // unmapped, never given to the wrong launch
}

TEST_F(FakeSessionTest, CounterPermissionRefusedIsOneLineAndTimingsGoOn) {
  const Child c = run_child([&] {
    fail("cuptiProfilerInitialize", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launches_on(ctx, 3);
    launches_on(create_context(2), 1);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("ERR_NVGPUCTRPERM"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 4u);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 4u);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
  EXPECT_FALSE(errors_with(t, trace::ErrorCode::kCountersUnavailable).empty());
  const auto devices = t.all<trace::DeviceInfo>();
  ASSERT_EQ(devices.size(), 1u);  // written without a chip, not held back until exit
  EXPECT_EQ(devices[0].chip, 0u);
}

TEST_F(FakeSessionTest, CountersHeldByDcgmNameDcgmiAndTimingsGoOn) {
  const Child c = run_child([&] {
    fail("cuptiRangeProfilerEnable", CUPTI_ERROR_HARDWARE_BUSY);
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launches_on(ctx, 3);
    std::fprintf(stderr, "enables=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerEnable")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("dcgmi profile --pause"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("enables=1\n"), std::string::npos) << c.err;  // the context is not asked again
  const Trace t = read_trace(trace_);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 3u);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
}

// Each driver launch call (cuLaunchKernelEx, the _ptsz and cooperative ones) is profiled: its
// range goes to its own launch.
TEST_F(FakeSessionTest, EveryDriverLaunchCallGetsItsOwnRange) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
    launch_each_driver_call(create_context(1));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(launches.size(), 6u);
  ASSERT_EQ(ranges.size(), 6u);
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(ranges[i].correlation_id, launches[i].correlation_id) << i;
    EXPECT_EQ(ranges[i].values[0], value(launches[i].correlation_id, 0)) << i;
  }
}

TEST_F(FakeSessionTest, AnInvalidMetricIsNamedAndTimingsGoOn) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.metrics = {"dram__bytes_reed.sum"};
    if (!collector::start_session(o)) std::_Exit(3);
    launches_on(create_context(1), 2);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("dram__bytes_reed.sum"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("dram__bytes_read.sum"), std::string::npos) << c.err;  // the close name
  EXPECT_NE(c.err.find("check RFPROF_METRICS"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("device 0 (GH100)"), std::string::npos) << c.err;
  // The host API's own "rfprof: unknown metric ..." inside the line, without a second prefix.
  EXPECT_NE(c.err.find("rfprof: the metric list was rejected (device 0 (GH100): unknown metric "
                       "\"dram__bytes_reed.sum\" for GH100; did you mean: dram__bytes_read.sum, "),
            std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("); check RFPROF_METRICS; continuing with kernel timing only (no counters)\n"),
            std::string::npos)
      << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 2u);
  EXPECT_TRUE(t.all<trace::MetricConfig>().empty());
}

TEST_F(FakeSessionTest, ADecodeFailureLosesThatImageSaysSoAndStopsCountersThere) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.max_ranges_per_image = 2;
    o.flush_ms = 60000;
    if (!collector::start_session(o)) std::_Exit(3);
    fail("cuptiRangeProfilerDecodeData", CUPTI_ERROR_UNKNOWN);
    launches_on(create_context(1), 4);
    std::fprintf(stderr, "starts=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerStart")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("starts=1\n"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  const auto failed = errors_with(t, trace::ErrorCode::kDecodeFailed);
  ASSERT_EQ(failed.size(), 1u);
  EXPECT_EQ(failed[0].expected, 2u);  // the launches whose counters are lost
  EXPECT_NE(t.str(failed[0].message).find("counters stop on this context"), std::string::npos);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 4u);
  // Launches without counters take the next index of their window (launch_log.h), from 0.
  std::vector<uint64_t> launch_indices;
  for (const auto& l : t.all<trace::LaunchApi>()) launch_indices.push_back(l.launch_index);
  EXPECT_EQ(launch_indices, (std::vector<uint64_t>{0, 1, 0, 1}));
}

// Preparing the next image (image initialize, SetConfig) fails after an image was decoded and
// evaluated: that image's counters are written, not lost with the next one.
TEST_F(FakeSessionTest, ANextImageThatCannotBePreparedKeepsTheDecodedOne) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.max_ranges_per_image = 2;
    o.flush_ms = 60000;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launches_on(ctx, 2);
    fail("cuptiRangeProfilerSetConfig", CUPTI_ERROR_UNKNOWN);
    launches_on(ctx, 1);  // the image is full: decoded before this launch
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{1, 2}));
  const auto prepare = errors_with(t, trace::ErrorCode::kCuptiCall);
  ASSERT_EQ(prepare.size(), 1u);
  EXPECT_NE(t.str(prepare[0].message).find("preparing the next counter image of device 0 (GH100) failed"),
            std::string::npos);
  EXPECT_TRUE(errors_with(t, trace::ErrorCode::kDecodeFailed).empty());
}

// The same on rfprof's flush thread; the next launch in the window enables the Range Profiler again
// and gets its counters.
TEST_F(FakeSessionTest, AfterAFailedPreparationTheNextLaunchGetsCountersAgain) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    // The flush thread decodes every 250 ms: not between the two launches and the failure's
    // injection (at 20 ms a loaded machine decoded first, and the preparation never failed).
    o.flush_ms = 250;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launches_on(ctx, 2);
    fail("cuptiRangeProfilerCounterDataImageInitialize", CUPTI_ERROR_UNKNOWN);
    const uint64_t decodes = calls("cuptiRangeProfilerDecodeData");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (calls("cuptiRangeProfilerDecodeData") == decodes && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    fail("cuptiRangeProfilerCounterDataImageInitialize", CUPTI_SUCCESS);
    launches_on(ctx, 1);
    std::fprintf(stderr, "enables=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerEnable")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("enables=2\n"), std::string::npos) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(range_ids(t), (std::vector<uint32_t>{1, 2, 3}));
  EXPECT_EQ(errors_with(t, trace::ErrorCode::kCuptiCall).size(), 1u);
}

TEST_F(FakeSessionTest, SigtermFinishesTheTraceWithItsCountersThenEndsTheProcess) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 60000;  // only finishing decodes
    if (!collector::start_session(o)) std::_Exit(3);
    launches_on(create_context(1), 3);
    std::raise(SIGTERM);
    std::_Exit(5);  // not reached: SIGTERM's default action ends the process after the finish
  });
  ASSERT_NE(c.status, -1) << c.err;
  ASSERT_TRUE(WIFSIGNALED(c.status)) << c.err;
  EXPECT_EQ(WTERMSIG(c.status), SIGTERM);
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);
  EXPECT_FALSE(std::filesystem::exists(trace_.string() + ".part"));
  EXPECT_EQ(range_ids(t), launch_ids(t));
  EXPECT_EQ(range_ids(t).size(), 3u);
  expect_values_of_their_launch(t);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);
}

TEST_F(FakeSessionTest, SigkillAfterTheFlushIntervalKeepsTheCountersAlreadyTaken) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.flush_ms = 20;
    if (!collector::start_session(o)) std::_Exit(3);
    launches_on(create_context(1), 3);
    std::this_thread::sleep_for(std::chrono::milliseconds(400));  // 20 flush intervals
    std::raise(SIGKILL);
  });
  ASSERT_NE(c.status, -1) << c.err;
  ASSERT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL);
  const std::filesystem::path part = trace_.string() + ".part";
  ASSERT_TRUE(std::filesystem::exists(part));
  const Trace t = read_trace(part);
  EXPECT_TRUE(t.truncated);
  // The flush thread decoded the image no launch held, and wrote it out with the kernel records.
  EXPECT_EQ(range_ids(t), launch_ids(t));
  EXPECT_EQ(range_ids(t).size(), 3u);
  expect_values_of_their_launch(t);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);
}

}  // namespace
}  // namespace rf::fake_cupti
