// The collector session on the fake CUPTI (fake_cupti.h), replay across steps (RFPROF_REPLAY=step,
// issue 8): one user-replay pass per cudaProfilerStart/Stop window, then one timing window,
// recorded without instrumentation, that gets the group's counters; a window whose kernels differ
// from the first one's is discarded with a message; a refusal steps aside to plain windows.
#include "fake_session.h"
#include "fake_steps.h"
#include "rfprof/collector/host_metrics.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

TEST_F(FakeSessionTest, TwoPassWindowsThenTheTimingWindowGetsTheCounters) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    say("pass0", step(ctx));
    say("pass1", step(ctx));
    say("timing", step(ctx));
    say("after", step(ctx));
    std::fprintf(stderr, "starts=%llu decodes=%llu\n",
                 static_cast<unsigned long long>(calls("cuptiRangeProfilerStart")),
                 static_cast<unsigned long long>(calls("cuptiRangeProfilerDecodeData")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("starts=2 decodes=1\n"), std::string::npos) << c.err;  // one Start per pass window
  const std::vector<uint32_t> pass1 = said(c.err, "pass1"), timing = said(c.err, "timing");
  ASSERT_EQ(timing.size(), 3u) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty()) << t.str(t.all<trace::CollectorError>()[0].message);

  // Only the timing window is recorded: its launches, its kernel durations, its window records.
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(launches[i].correlation_id, timing[i]);
  // The durations are the timing window's (run without instrumentation): its kernel records, by
  // correlation id, and none of the pass windows'.
  const auto kernels = t.all<trace::KernelActivity>();
  ASSERT_EQ(kernels.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(kernels[i].correlation_id, timing[i]);
  const auto windows = t.all<trace::ProfilingWindow>();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0].window_id, launches[0].window_id);

  // Its launches get the counters the passes decoded, range by range.
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ranges[i].correlation_id, timing[i]);
    EXPECT_EQ(ranges[i].window_id, launches[0].window_id);
    EXPECT_EQ(ranges[i].range_index, i);
    ASSERT_EQ(ranges[i].values.size(), collector::default_metrics().size());
    EXPECT_EQ(ranges[i].values[0], value(pass1[i], 0));  // the fake's last pass made these
  }
  ASSERT_EQ(t.all<trace::MetricConfig>().size(), 1u);
  EXPECT_EQ(ranges[0].config_id, t.all<trace::MetricConfig>()[0].config_id);
}

TEST_F(FakeSessionTest, StartingEachPassWhenItsWindowOpensGivesTheSameCounters) {
  const Child c = run_child([&] {
    auto o = step_options(trace_);
    o.step_pass_start = collector::StepPassStart::kWindowOpen;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);
    say("pass1", step(ctx));
    say("timing", step(ctx));
    std::fprintf(stderr, "starts=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerStart")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("starts=2\n"), std::string::npos) << c.err;
  const std::vector<uint32_t> pass1 = said(c.err, "pass1"), timing = said(c.err, "timing");
  const Trace t = read_trace(trace_);
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ranges[i].correlation_id, timing[i]);
    EXPECT_EQ(ranges[i].values[1], value(pass1[i], 1));
  }
}

TEST_F(FakeSessionTest, AWindowWithOtherKernelsIsDiscardedAndItsGroupRestarts) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);
    step(ctx, /*odd=*/true);  // pass 1 differs from pass 0: discarded, the group restarts at pass 0
    step(ctx);
    say("pass1", step(ctx));
    say("timing", step(ctx));
    std::fprintf(stderr, "starts=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerStart")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("starts=4\n"), std::string::npos) << c.err;
  const std::vector<uint32_t> pass1 = said(c.err, "pass1"), timing = said(c.err, "timing");
  const Trace t = read_trace(trace_);
  std::vector<std::string> messages;
  for (const auto& e : t.all<trace::CollectorError>())
    if (e.code == trace::ErrorCode::kRangeLaunchMismatch) messages.push_back(t.str(e.message));
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_NE(messages[0].find("pass 1 window was discarded"), std::string::npos) << messages[0];
  EXPECT_NE(messages[0].find("_Z5otherv"), std::string::npos) << messages[0];
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ranges[i].correlation_id, timing[i]);
    EXPECT_EQ(ranges[i].values[0], value(pass1[i], 0));  // from the restarted group's last pass
  }
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 3u);  // only the timing window is recorded
}

TEST_F(FakeSessionTest, ARunEndingBeforeTheGroupIsCompleteSaysWhyOnce) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    step(create_context(1));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("replay across steps collected no counters: a group needs 2 windows"), std::string::npos)
      << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
  EXPECT_TRUE(t.all<trace::LaunchApi>().empty());  // a pass window records nothing
  EXPECT_EQ(t.all<trace::CollectorError>().size(), 1u);
}

TEST_F(FakeSessionTest, NoWindowAtAllNamesCudaProfilerStart) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    launch({create_context(1), "_Z1av"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("the application never called cudaProfilerStart"), std::string::npos) << c.err;
}

TEST_F(FakeSessionTest, ARefusedPassStepsAsideToPlainWindowsWithOneLine) {
  const Child c = run_child([&] {
    fail("cuptiRangeProfilerStart", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);                 // the pass cannot start: replay across steps steps aside
    say("plain", step(ctx));   // recorded as an ordinary window
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("ERR_NVGPUCTRPERM"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("replay across steps"), std::string::npos) << c.err;
  const std::vector<uint32_t> plain = said(c.err, "plain");
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(launches[i].correlation_id, plain[i]);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
}

TEST_F(FakeSessionTest, APassMoreThanPlannedIsRunWhenCuptiAsksAndSaidInTheTrace) {
  const Child c = run_child([&] {
    set_passes(3);  // CUPTI wants one more pass than the host API planned (2)
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);
    step(ctx);
    say("pass2", step(ctx));  // isAllPassSubmitted only now
    say("timing", step(ctx));
    std::fprintf(stderr, "decodes=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerDecodeData")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("decodes=1\n"), std::string::npos) << c.err;
  const std::vector<uint32_t> pass2 = said(c.err, "pass2"), timing = said(c.err, "timing");
  const Trace t = read_trace(trace_);
  const auto errors = t.all<trace::CollectorError>();
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].expected, 2u);  // planned passes
  EXPECT_EQ(errors[0].actual, 2u);    // said after the second pass window, as CUPTI asked for more
  EXPECT_NE(t.str(errors[0].message).find("running pass window 3"), std::string::npos) << t.str(errors[0].message);
  EXPECT_NE(t.str(errors[0].message).find("passIndex 1, isAllPassSubmitted 0"), std::string::npos)
      << t.str(errors[0].message);
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(ranges[i].correlation_id, timing[i]);
    EXPECT_EQ(ranges[i].values[0], value(pass2[i], 0));
  }
}

}  // namespace
}  // namespace rf::fake_cupti
