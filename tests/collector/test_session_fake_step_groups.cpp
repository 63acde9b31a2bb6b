// Replay across steps on the fake CUPTI (fake_cupti.h), the groups: which launches make a group's
// kernel sequence (only the step context's, only inside windows), CUPTI ending a group earlier
// than planned, more than one group, a group restarted because its decoded ranges do not match
// its launches (and stepping aside when that keeps happening), and a discarded timing window.
#include "fake_session.h"
#include "fake_steps.h"

namespace rf::fake_cupti {
namespace {

/// The trace's CollectorErrors of code `code`.
std::vector<trace::CollectorError> errors(const Trace& t, trace::ErrorCode code) {
  std::vector<trace::CollectorError> out;
  for (const auto& e : t.all<trace::CollectorError>())
    if (e.code == code) out.push_back(e);
  return out;
}

/// Expects one RangeCounters per id of `timing`, in order, with the values of `pass`'s launches.
void expect_counters(const Trace& t, size_t first, const std::vector<uint32_t>& timing,
                     const std::vector<uint32_t>& pass) {
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_GE(ranges.size(), first + timing.size());
  ASSERT_EQ(pass.size(), timing.size());
  for (size_t i = 0; i < timing.size(); ++i) {
    EXPECT_EQ(ranges[first + i].correlation_id, timing[i]) << i;
    EXPECT_EQ(ranges[first + i].values[0], value(pass[i], 0)) << i;
  }
}

TEST_F(FakeSessionTest, LaunchesOnAnotherContextTakeNoPartInTheSteps) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    CUcontext other = create_context(2);
    auto step_with_other = [&] {
      profiler_start(ctx);
      std::vector<uint32_t> ids{launch({ctx, "_Z1av", {64, 1, 1}})};
      launch({other, "_Z9elsewherev"});  // another context: no part of the step
      ids.push_back(launch({ctx, "_Z1bv", {128, 1, 1}}));
      ids.push_back(launch({ctx, "_Z1cv", {64, 1, 1}}));
      profiler_stop(ctx);
      return ids;
    };
    step_with_other();
    say("pass1", step_with_other());
    say("timing", step_with_other());
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty()) << t.str(t.all<trace::CollectorError>()[0].message);
  ASSERT_EQ(t.all<trace::RangeCounters>().size(), 3u);
  expect_counters(t, 0, said(c.err, "timing"), said(c.err, "pass1"));
}

TEST_F(FakeSessionTest, ALaunchBetweenWindowsTakesNoPartInTheSteps) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);
    launch({ctx, "_Z7betweenv"});  // after pass 0's window closed: no pass runs
    say("pass1", step(ctx));
    launch({ctx, "_Z7betweenv"});
    say("timing", step(ctx));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty()) << t.str(t.all<trace::CollectorError>()[0].message);
  ASSERT_EQ(t.all<trace::RangeCounters>().size(), 3u);
  expect_counters(t, 0, said(c.err, "timing"), said(c.err, "pass1"));
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 3u);  // the timing window's only
}

TEST_F(FakeSessionTest, CuptiSubmittingEveryPassEarlyEndsTheGroupThereAndSaysSo) {
  const Child c = run_child([&] {
    set_passes(1);  // CUPTI needs one pass where the host API planned 2
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    say("pass0", step(ctx));
    say("timing", step(ctx));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto notes = errors(t, trace::ErrorCode::kRangeLaunchMismatch);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].expected, 2u);  // planned passes
  EXPECT_EQ(notes[0].actual, 1u);    // pass windows run
  EXPECT_NE(t.str(notes[0].message)
                .find("cuptiRangeProfilerStop after pass window 1 (2 planned) reported passIndex 0, isAllPassSubmitted 1"),
            std::string::npos)
      << t.str(notes[0].message);
  ASSERT_EQ(t.all<trace::RangeCounters>().size(), 3u);
  expect_counters(t, 0, said(c.err, "timing"), said(c.err, "pass0"));
}

TEST_F(FakeSessionTest, EachGroupGivesItsTimingWindowItsOwnCounters) {
  const Child c = run_child([&] {
    auto o = step_options(trace_);
    o.replay_groups = 2;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);
    say("pass1", step(ctx));
    say("timing", step(ctx));
    step(ctx);
    say("again1", step(ctx));
    say("timing2", step(ctx));
    std::fprintf(stderr, "enables=%llu\n", static_cast<unsigned long long>(calls("cuptiRangeProfilerEnable")));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("enables=2\n"), std::string::npos) << c.err;  // each group on a fresh Range Profiler
  const Trace t = read_trace(trace_);
  EXPECT_TRUE(t.all<trace::CollectorError>().empty()) << t.str(t.all<trace::CollectorError>()[0].message);
  ASSERT_EQ(t.all<trace::RangeCounters>().size(), 6u);
  expect_counters(t, 0, said(c.err, "timing"), said(c.err, "pass1"));
  expect_counters(t, 3, said(c.err, "timing2"), said(c.err, "again1"));
}

// RFPROF_REPLAY_GROUPS=3 and the run ends inside the second group: the first group's counters
// are kept, and the second's loss is said once and recorded (it was dropped silently).
TEST_F(FakeSessionTest, ARunEndingInsideALaterGroupSaysThatGroupIsDropped) {
  for (const int windows_after_group : {0, 1, 2}) {
    std::filesystem::remove(trace_);
    const Child c = run_child([&] {
      auto o = step_options(trace_);
      o.replay_groups = 3;
      if (!collector::start_session(o)) std::_Exit(3);
      CUcontext ctx = create_context(1);
      for (int i = 0; i < 3 + windows_after_group; ++i) step(ctx);
    });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    const Trace t = read_trace(trace_);
    EXPECT_EQ(t.all<trace::RangeCounters>().size(), 3u) << windows_after_group;
    const auto dropped = errors_with(t, trace::ErrorCode::kCountersUnavailable);
    if (windows_after_group == 0) {  // the second group never began: nothing lost, nothing said
      EXPECT_EQ(rfprof_lines(c.err), 0u) << c.err;
      EXPECT_TRUE(dropped.empty());
      continue;
    }
    EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
    const std::string expected =
        windows_after_group == 1
            ? "rfprof: replay across steps: the run ended during group 2, after 1 of its 2 pass windows; "
              "that group's counters are dropped, the 1 complete group is in the trace"
            : "rfprof: replay across steps: the run ended during group 2, after 2 of its 2 pass windows (its "
              "counters decoded, its timing window not run); that group's counters are dropped, the 1 complete "
              "group is in the trace";
    EXPECT_NE(c.err.find(expected), std::string::npos) << c.err;
    ASSERT_EQ(dropped.size(), 1u);
    EXPECT_EQ(t.str(dropped[0].message), expected);
    EXPECT_EQ(dropped[0].actual, static_cast<uint64_t>(windows_after_group));
  }
}

/// A step whose pass window also runs a kernel rfprof never sees launched (CUPTI profiles it).
void step_with_unseen_kernel(CUcontext ctx) {
  profiler_start(ctx);
  launch({ctx, "_Z1av", {64, 1, 1}, {256, 1, 1}});
  launch({ctx, "_Z1bv", {128, 1, 1}, {256, 1, 1}});
  launch({ctx, "_Z1cv", {64, 1, 1}, {128, 1, 1}});
  Launch unseen{ctx, "_Z6unseenv"};
  unseen.silent = true;
  launch(unseen);
  profiler_stop(ctx);
}

TEST_F(FakeSessionTest, MoreRangesThanLaunchesRestartTheGroupOnAFreshRangeProfiler) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);
    step_with_unseen_kernel(ctx);  // the decoded image has 4 ranges for 3 launches
    step(ctx);
    say("pass1", step(ctx));
    say("timing", step(ctx));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto mismatches = errors(t, trace::ErrorCode::kRangeLaunchMismatch);
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0].expected, 3u);  // launches per window
  EXPECT_EQ(mismatches[0].actual, 4u);    // ranges decoded
  const std::string& m = t.str(mismatches[0].message);
  EXPECT_NE(m.find("4 ranges decoded for 3 launches per window (more ranges than launches"), std::string::npos) << m;
  EXPECT_NE(m.find("the group restarts at pass 0"), std::string::npos) << m;
  EXPECT_EQ(m.find("passes now start"), std::string::npos) << m;  // not one range short
  EXPECT_TRUE(errors(t, trace::ErrorCode::kCountersUnavailable).empty());
  ASSERT_EQ(t.all<trace::RangeCounters>().size(), 3u);
  expect_counters(t, 0, said(c.err, "timing"), said(c.err, "pass1"));
}

// A CUPTI whose user replay does not profile the launch in whose entry callback the pass started:
// every pass decodes one range short. After the first such group, passes start when the window
// opens (as RFPROF_STEP_PASS_START=window), and the next group's counters are whole.
TEST_F(FakeSessionTest, APassOneRangeShortMakesLaterPassesStartWhenTheWindowOpens) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    set_pass_start_in_a_launch_misses_it(true);
    CUcontext ctx = create_context(1);
    step(ctx);
    step(ctx);  // group 1 decodes 2 ranges for 3 launches
    step(ctx);  // pass 0 again, started when the window opened
    say("pass1", step(ctx));
    say("timing", step(ctx));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto mismatches = errors(t, trace::ErrorCode::kRangeLaunchMismatch);
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0].expected, 3u);
  EXPECT_EQ(mismatches[0].actual, 2u);
  const std::string& m = t.str(mismatches[0].message);
  EXPECT_NE(m.find("2 ranges decoded for 3 launches per window (fewer ranges than launches: 1 launches not profiled"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("; the group restarts at pass 0; passes now start when the window opens, as with "
                   "RFPROF_STEP_PASS_START=window"),
            std::string::npos)
      << m;
  ASSERT_EQ(t.all<trace::RangeCounters>().size(), 3u);
  expect_counters(t, 0, said(c.err, "timing"), said(c.err, "pass1"));
}

TEST_F(FakeSessionTest, GroupsThatKeepFailingMakeReplayAcrossStepsStepAside) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 4; ++i) {  // kMaxRestarts (3) restarts, then the fourth gives up
      step(ctx);
      step_with_unseen_kernel(ctx);
    }
    say("plain", step(ctx));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("replay across steps: 4 groups in a row could not be used; windows are recorded without counters"),
            std::string::npos)
      << c.err;
  const Trace t = read_trace(trace_);
  EXPECT_EQ(errors(t, trace::ErrorCode::kRangeLaunchMismatch).size(), 4u);
  EXPECT_EQ(errors(t, trace::ErrorCode::kCountersUnavailable).size(), 1u);
  const std::vector<uint32_t> plain = said(c.err, "plain");
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(launches[i].correlation_id, plain[i]);
  EXPECT_TRUE(t.all<trace::RangeCounters>().empty());
}

TEST_F(FakeSessionTest, ADiscardedTimingWindowIsNamedAndRunAgain) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    step(ctx);
    say("pass1", step(ctx));
    step(ctx, /*odd=*/true);  // the timing window differs: discarded, the counters wait
    say("timing", step(ctx));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto windows = t.all<trace::ProfilingWindow>();
  ASSERT_EQ(windows.size(), 4u);  // both timing windows are recorded
  const auto discarded = errors(t, trace::ErrorCode::kRangeLaunchMismatch);
  ASSERT_EQ(discarded.size(), 1u);
  EXPECT_EQ(discarded[0].window_id, windows[0].window_id);
  EXPECT_NE(windows[0].window_id, windows[2].window_id);
  EXPECT_NE(t.str(discarded[0].message).find("a timing window was discarded"), std::string::npos)
      << t.str(discarded[0].message);
  ASSERT_EQ(t.all<trace::RangeCounters>().size(), 3u);
  expect_counters(t, 0, said(c.err, "timing"), said(c.err, "pass1"));
  for (const auto& rc : t.all<trace::RangeCounters>()) EXPECT_EQ(rc.window_id, windows[2].window_id);
  // The group was collected, and the discarded window is said once at the end of the run.
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("rfprof: replay across steps discarded 1 window whose kernels differed from their "
                       "group's first window (the first: a timing window was discarded: its kernels differ"),
            std::string::npos)
      << c.err;
  EXPECT_NE(c.err.find("the counters of the 1 group collected come from windows that matched\n"), std::string::npos)
      << c.err;
}

// A run whose windows all matched says nothing at its end.
TEST_F(FakeSessionTest, AGroupWithoutDiscardedWindowsEndsWithoutALine) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 3; ++i) step(ctx);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 0u) << c.err;
  EXPECT_EQ(read_trace(trace_).all<trace::RangeCounters>().size(), 3u);
}

}  // namespace
}  // namespace rf::fake_cupti
