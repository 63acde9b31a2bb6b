// Replay across steps, the session's side (step_replay_collector.h): what the session does with
// the Range Profiler and the trace at each window, and which launch each decoded range goes to.
#include "rfprof/collector/step_replay_collector.h"

#include <gtest/gtest.h>

namespace rf::collector {
namespace {

LaunchIdentity k(std::string_view name, int32_t gx = 1024) { return {name, {gx, 1, 1}, {256, 1, 1}}; }

const std::vector<LaunchIdentity> kStep = {k("conv"), k("relu"), k("gemm", 64)};

/// Runs one window launching `seq` with correlation ids first_id, first_id + 1, ...
StepWindowClosed window(StepReplayCollector& c, const std::vector<LaunchIdentity>& seq, uint32_t first_id,
                        WindowRole* role = nullptr) {
  WindowRole r = c.open_window();
  if (role) *role = r;
  for (size_t i = 0; i < seq.size(); ++i) c.on_launch(seq[i], first_id + static_cast<uint32_t>(i));
  return c.close_window();
}

std::vector<RangeValues> ranges(size_t n, double base) {
  std::vector<RangeValues> out;
  for (size_t i = 0; i < n; ++i) out.push_back({std::to_string(i), {base + static_cast<double>(i)}});
  return out;
}

TEST(StepReplayCollector, CountersOfTheLastPassGoToTheTimingWindowsLaunches) {
  StepReplayCollector c(2, 1);
  WindowRole role;
  StepWindowClosed w0 = window(c, kStep, 100, &role);  // pass 0: correlation ids 100..102
  EXPECT_EQ(role.kind, WindowRole::kPass);
  EXPECT_TRUE(w0.stop_pass);
  EXPECT_FALSE(w0.decode);
  StepWindowClosed w1 = window(c, kStep, 200, &role);  // pass 1
  EXPECT_EQ(role.pass, 1u);
  EXPECT_TRUE(w1.stop_pass);
  ASSERT_TRUE(w1.decode);
  EXPECT_EQ(c.counters_decoded(ranges(3, 10.0), true), "");
  EXPECT_TRUE(c.counters_pending());
  StepWindowClosed w2 = window(c, kStep, 300, &role);  // timing window
  EXPECT_EQ(role.kind, WindowRole::kTiming);
  EXPECT_FALSE(w2.stop_pass);
  EXPECT_EQ(w2.verdict.kind, WindowVerdict::kGroupTimed);
  ASSERT_EQ(w2.counters.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(w2.counters[i].range_index, i);
    EXPECT_EQ(w2.counters[i].correlation_id, 300 + i);  // the recorded launches, not the passes'
    EXPECT_EQ(w2.counters[i].range.values, std::vector<double>{10.0 + i});
  }
  EXPECT_FALSE(c.counters_pending());
  window(c, kStep, 400, &role);
  EXPECT_EQ(role.kind, WindowRole::kDone);
}

TEST(StepReplayCollector, MismatchedPassResetsTheProfilerAndTheGroupRestarts) {
  StepReplayCollector c(2, 1);
  window(c, kStep, 100);
  StepWindowClosed w = window(c, {k("conv"), k("relu")}, 200);  // one launch short
  EXPECT_EQ(w.verdict.kind, WindowVerdict::kDiscarded);
  EXPECT_TRUE(w.stop_pass);
  EXPECT_TRUE(w.reset_profiler);
  EXPECT_FALSE(w.decode);
  EXPECT_NE(w.verdict.message.find("2 launches, expected 3"), std::string::npos) << w.verdict.message;
  WindowRole role;
  window(c, kStep, 300, &role);
  EXPECT_EQ(role.kind, WindowRole::kPass);
  EXPECT_EQ(role.pass, 0u);
}

TEST(StepReplayCollector, DecodedRangeCountMustMatchTheLaunches) {
  StepReplayCollector c(1, 1);
  StepWindowClosed w = window(c, kStep, 100);
  ASSERT_TRUE(w.decode);
  std::string why = c.counters_decoded(ranges(5, 0.0), true);  // e.g. a graph launched 3 kernels
  EXPECT_NE(why.find("5 ranges decoded for 3 launches"), std::string::npos) << why;
  EXPECT_FALSE(c.counters_pending());
  WindowRole role;
  StepWindowClosed again = window(c, kStep, 200, &role);
  EXPECT_EQ(role.kind, WindowRole::kPass);  // not the timing window: the group starts over
  EXPECT_TRUE(again.decode);
  EXPECT_EQ(c.replay().discarded(), 1u);
}

// On a first GPU run these must be told apart from the message alone: fewer ranges (a pass that
// missed its first kernel, or kernels from a thread CUPTI does not follow), more ranges, ranges
// CUPTI dropped.
TEST(StepReplayCollector, TheRangeCountMessageTellsTheCausesApart) {
  StepReplayCollector c(1, 1);
  c.open_window();
  c.on_launch(kStep[0], 1, /*thread=*/11);
  c.on_launch(kStep[1], 2, /*thread=*/22);  // e.g. PyTorch's autograd thread
  c.on_launch(kStep[2], 3, /*thread=*/22);
  ASSERT_TRUE(c.close_window(true).decode);
  std::string fewer = c.counters_decoded(ranges(1, 0.0), true, /*dropped_ranges=*/0);
  EXPECT_NE(fewer.find("1 ranges decoded for 3 launches per window (fewer ranges than launches: 2 launches not "
                       "profiled; 2 of the last pass window's launches came from other threads than its first "
                       "launch)"),
            std::string::npos)
      << fewer;
  EXPECT_EQ(fewer.find("dropped"), std::string::npos) << fewer;
  EXPECT_NE(fewer.find("the group restarts at pass 0"), std::string::npos) << fewer;

  ASSERT_TRUE(window(c, kStep, 10).decode);  // one thread (0) only
  std::string more = c.counters_decoded(ranges(4, 0.0), true, /*dropped_ranges=*/7);
  EXPECT_NE(more.find("4 ranges decoded for 3 launches per window (more ranges than launches"), std::string::npos)
      << more;
  EXPECT_NE(more.find("; CUPTI dropped 7 ranges"), std::string::npos) << more;
}

// The thread count in the range-count message is the last pass window's own: a window whose
// launches all come from one thread (whichever) reports none from other threads, whatever the
// windows before it saw.
TEST(StepReplayCollector, OtherThreadLaunchesAreCountedInEachWindowOnItsOwn) {
  StepReplayCollector c(2, 1);
  c.open_window();  // pass 0: two of its launches from another thread
  c.on_launch(kStep[0], 1, /*thread=*/11);
  c.on_launch(kStep[1], 2, /*thread=*/22);
  c.on_launch(kStep[2], 3, /*thread=*/22);
  ASSERT_EQ(c.close_window(false).verdict.kind, WindowVerdict::kKept);
  c.open_window();  // pass 1: every launch from thread 33
  for (uint32_t i = 0; i < kStep.size(); ++i) c.on_launch(kStep[i], 10 + i, /*thread=*/33);
  ASSERT_TRUE(c.close_window(true).decode);
  const std::string why = c.counters_decoded(ranges(2, 0.0), true);
  EXPECT_NE(why.find("; 0 of the last pass window's launches came from other threads"), std::string::npos) << why;
}

TEST(StepReplayCollector, TheDiscardedLineCountsWindowsAndGroupsAndQuotesTheFirst) {
  EXPECT_EQ(step_discarded_line(1, 1, "a pass 1 window was discarded: X"),
            "rfprof: replay across steps discarded 1 window whose kernels differed from their group's first "
            "window (the first: a pass 1 window was discarded: X); the counters of the 1 group collected come "
            "from windows that matched");
  const std::string many = step_discarded_line(3, 2, "Y");
  EXPECT_NE(many.find("discarded 3 windows whose"), std::string::npos) << many;
  EXPECT_NE(many.find("of the 2 groups collected"), std::string::npos) << many;
}

TEST(StepReplayCollector, TheEndOfRunLineCountsOneWindowAndOneNvtxCall) {
  StepEndState one_window;
  one_window.windows_opened = 1;  // a driver-only cuProfilerStart: one callback
  EXPECT_NE(step_no_counters_line(one_window).find("windows opened, but none on a thread with a CUDA context"),
            std::string::npos)
      << step_no_counters_line(one_window);
  StepEndState one_call;
  one_call.replay_range = "step";
  one_call.nvtx_calls_seen = 1;
  EXPECT_NE(step_no_counters_line(one_call).find("(1 NVTX push/start calls seen, none matching it)"),
            std::string::npos)
      << step_no_counters_line(one_call);
  // A run too short for a group, with NVTX-range windows: it asks for more of those ranges.
  StepEndState short_nvtx;
  short_nvtx.windows_opened = 3;
  short_nvtx.replay_range = "regex:^step";
  short_nvtx.group = StepEndState::Group{4, 0};
  const std::string line = step_no_counters_line(short_nvtx);
  EXPECT_NE(line.find("run more profiled steps, one NVTX range \"regex:^step\" each"), std::string::npos) << line;
  EXPECT_EQ(line.find("cudaProfilerStart"), std::string::npos) << line;
}

TEST(StepReplayCollector, TheEndOfRunLineNamesWhatWasMissing) {
  StepEndState none;
  EXPECT_EQ(step_no_counters_line(none),
            "rfprof: replay across steps collected no counters: no window opened; each is one "
            "cudaProfilerStart/Stop window (the application never called cudaProfilerStart; RFPROF_REPLAY_RANGE "
            "names an NVTX range to use instead)");
  StepEndState nvtx;
  nvtx.replay_range = "regex:^step";
  EXPECT_NE(step_no_counters_line(nvtx).find("one NVTX range \"regex:^step\" (no NVTX call reached rfprof: "
                                             "NVTX_INJECTION64_PATH must name librfinject.so"),
            std::string::npos)
      << step_no_counters_line(nvtx);
  nvtx.nvtx_calls_seen = 42;
  EXPECT_NE(step_no_counters_line(nvtx).find("(42 NVTX push/start calls seen, none matching it)"), std::string::npos)
      << step_no_counters_line(nvtx);
  StepEndState no_context;
  no_context.windows_opened = 4;
  EXPECT_NE(step_no_counters_line(no_context).find("windows opened, but none on a thread with a CUDA context"),
            std::string::npos);
  StepEndState short_run;
  short_run.windows_opened = 4;
  short_run.group = StepEndState::Group{2, 1};
  EXPECT_NE(step_no_counters_line(short_run).find("a group needs 2 windows (one per pass) and then one timing "
                                                  "window"),
            std::string::npos);
  EXPECT_NE(step_no_counters_line(short_run).find("(windows discarded: 1); run more profiled steps, one "
                                                  "cudaProfilerStart/Stop window each"),
            std::string::npos)
      << step_no_counters_line(short_run);
}

TEST(StepReplayCollector, PassesNotAllSubmittedRestartTheGroup) {
  StepReplayCollector c(1, 1);
  window(c, kStep, 100);
  std::string why = c.counters_decoded(ranges(3, 0.0), false);
  EXPECT_NE(why.find("not all passes were submitted"), std::string::npos) << why;
  EXPECT_FALSE(c.counters_pending());
}

// The session gives each pass window Stop's isAllPassSubmitted: the decode follows CUPTI.
TEST(StepReplayCollector, DecodeFollowsCuptisAllPassesSubmitted) {
  StepReplayCollector c(1, 1);  // the host API planned 1 pass
  c.open_window();
  for (const auto& l : kStep) c.on_launch(l, 1);
  StepWindowClosed w = c.close_window(false);  // CUPTI: more passes to submit
  EXPECT_FALSE(w.decode);
  EXPECT_EQ(w.verdict.kind, WindowVerdict::kKept);
  EXPECT_NE(w.verdict.passes_note.find("more passes than the 1 planned"), std::string::npos) << w.verdict.passes_note;
  WindowRole role = c.open_window();
  EXPECT_EQ(role.kind, WindowRole::kPass);
  EXPECT_EQ(role.pass, 1u);
  for (const auto& l : kStep) c.on_launch(l, 2);
  w = c.close_window(true);
  EXPECT_TRUE(w.decode);
  EXPECT_EQ(c.counters_decoded(ranges(3, 0.0), true), "");
  EXPECT_EQ(window(c, kStep, 300, &role).verdict.kind, WindowVerdict::kGroupTimed);
  EXPECT_EQ(role.kind, WindowRole::kTiming);
  // A timing window ignores the argument (no pass ran in it).
  StepReplayCollector t(1, 1);
  window(t, kStep, 1);
  ASSERT_EQ(t.counters_decoded(ranges(3, 0.0), true), "");
  t.open_window();
  for (const auto& l : kStep) t.on_launch(l, 9);
  EXPECT_EQ(t.close_window(false).verdict.kind, WindowVerdict::kGroupTimed);
}

TEST(StepReplayCollector, MismatchedTimingWindowKeepsTheCountersForTheNextOne) {
  StepReplayCollector c(1, 1);
  window(c, kStep, 100);
  ASSERT_EQ(c.counters_decoded(ranges(3, 1.0), true), "");
  StepWindowClosed bad = window(c, {k("conv"), k("relu"), k("gemm", 65)}, 200);
  EXPECT_EQ(bad.verdict.kind, WindowVerdict::kDiscarded);
  EXPECT_FALSE(bad.stop_pass);
  EXPECT_FALSE(bad.reset_profiler);
  EXPECT_TRUE(bad.counters.empty());
  EXPECT_TRUE(c.counters_pending());
  StepWindowClosed good = window(c, kStep, 300);
  ASSERT_EQ(good.counters.size(), 3u);
  EXPECT_EQ(good.counters[2].correlation_id, 302u);
}

// Timing windows that always differ from the passes (something the instrumentation changes)
// would keep the counters waiting until the run ends: after kMaxRestarts reruns it gives up,
// naming the last difference.
TEST(StepReplayCollector, TimingWindowsThatAlwaysDifferEndInAGiveUp) {
  StepReplayCollector c(1, 1);
  window(c, kStep, 100);
  ASSERT_EQ(c.counters_decoded(ranges(3, 1.0), true), "");
  const std::vector<LaunchIdentity> other = {k("conv"), k("relu"), k("gemm", 65)};
  for (uint32_t i = 0; i < StepReplayCollector::kMaxRestarts; ++i) {
    StepWindowClosed w = window(c, other, 200 + 10 * i);
    EXPECT_EQ(w.verdict.kind, WindowVerdict::kDiscarded);
    EXPECT_TRUE(w.give_up.empty()) << i;
  }
  StepWindowClosed last = window(c, other, 300);
  EXPECT_NE(last.give_up.find("4 timing windows in a row launched other kernels than the group's passes (last: "),
            std::string::npos)
      << last.give_up;
  EXPECT_NE(last.give_up.find("gemm"), std::string::npos) << last.give_up;
  // Group restarts before the group's decode are not timing reruns: three unusable decodes, a
  // good one, then one differing timing window is rerun, not given up on.
  StepReplayCollector g(1, 1);
  for (int i = 0; i < 3; ++i) {
    window(g, kStep, 100);
    ASSERT_NE(g.counters_decoded(ranges(2, 0.0), true), "");
  }
  window(g, kStep, 100);
  ASSERT_EQ(g.counters_decoded(ranges(3, 1.0), true), "");
  EXPECT_TRUE(window(g, other, 200).give_up.empty());
  EXPECT_EQ(window(g, kStep, 300).counters.size(), 3u);
  // One that matches in between starts the count again.
  StepReplayCollector d(1, 1);
  window(d, kStep, 100);
  ASSERT_EQ(d.counters_decoded(ranges(3, 1.0), true), "");
  for (uint32_t i = 0; i < StepReplayCollector::kMaxRestarts; ++i) window(d, other, 200);
  EXPECT_EQ(window(d, kStep, 300).counters.size(), 3u);
}

// A runtime cudaProfilerStart also makes a driver cuProfilerStart: two callbacks, one window.
TEST(StepReplayCollector, OpeningTwiceIsOneWindow) {
  StepReplayCollector c(2, 1);
  EXPECT_EQ(c.open_window().kind, WindowRole::kPass);
  EXPECT_EQ(c.open_window().pass, 0u);
  for (size_t i = 0; i < kStep.size(); ++i) c.on_launch(kStep[i], 10 + static_cast<uint32_t>(i));
  StepWindowClosed w = c.close_window();
  EXPECT_EQ(w.verdict.kind, WindowVerdict::kKept);
  EXPECT_EQ(c.close_window().verdict.kind, WindowVerdict::kIgnored);  // the second stop callback
  EXPECT_EQ(c.replay().discarded(), 0u);
  EXPECT_EQ(c.open_window().pass, 1u);
}

// A first window that cannot be a group's reference (a CUDA graph launch, more kernels than a pass
// holds) is discarded and the next window tried as pass 0: a warm-up step (cuDNN's autotuning) is
// often the larger one. It gave up the whole run; only kMaxRestarts + 1 such windows in a row do.
TEST(StepReplayCollector, GivesUpOnGraphsAndOnStepsLargerThanAPass) {
  StepReplayCollector graphs(2, 1);
  StepWindowClosed w;
  for (uint32_t i = 0; i <= StepReplayCollector::kMaxRestarts; ++i) {
    w = window(graphs, {k("conv"), {kGraphLaunchName, {}, {}}}, 1 + 10 * i);
    EXPECT_EQ(w.verdict.kind, WindowVerdict::kDiscarded) << i;
    EXPECT_TRUE(w.reset_profiler) << i;
    EXPECT_NE(w.verdict.message.find("CUDA graph"), std::string::npos) << w.verdict.message;
    EXPECT_EQ(w.give_up.empty(), i < StepReplayCollector::kMaxRestarts) << i;
  }
  EXPECT_NE(w.give_up.find("CUDA graph"), std::string::npos) << w.give_up;
  EXPECT_NE(w.give_up.find("(4 windows in a row)"), std::string::npos) << w.give_up;
  StepReplayCollector small(2, 1, /*max_ranges=*/2);
  w = window(small, {kStep[0], kStep[1], kStep[2], kStep[0]}, 1);  // a warm-up step of 4 kernels
  EXPECT_EQ(w.verdict.kind, WindowVerdict::kDiscarded);
  EXPECT_EQ(w.give_up, "");
  EXPECT_NE(w.verdict.message.find("4 kernels, more than the 2 ranges"), std::string::npos) << w.verdict.message;
  EXPECT_EQ(small.open_window().pass, 0u);  // the next window starts the group
  small.on_launch(kStep[0], 20);
  small.on_launch(kStep[1], 21);
  EXPECT_EQ(small.close_window().verdict.kind, WindowVerdict::kKept);
  StepReplayCollector fits(2, 1, 3);
  EXPECT_EQ(window(fits, kStep, 1).give_up, "");
}

TEST(StepReplayCollector, GivesUpAfterRepeatedRestarts) {
  StepReplayCollector c(2, 1);
  std::string give_up;
  int windows = 0;
  // Every second window launches another kernel: each group restarts at its pass 1.
  while (give_up.empty() && windows < 20) {
    window(c, kStep, 1);
    give_up = window(c, {k("conv"), k("gelu"), k("gemm", 64)}, 10).give_up;
    windows += 2;
  }
  EXPECT_EQ(windows, 2 * static_cast<int>(StepReplayCollector::kMaxRestarts + 1));
  EXPECT_NE(give_up.find("launched other kernels"), std::string::npos) << give_up;
  // Unusable decodes count too.
  StepReplayCollector d(1, 1);
  for (uint32_t i = 0; i <= StepReplayCollector::kMaxRestarts; ++i) {
    EXPECT_EQ(d.give_up_reason(), "");
    window(d, kStep, 1);
    EXPECT_NE(d.counters_decoded(ranges(1, 0.0), true), "");
  }
  EXPECT_NE(d.give_up_reason(), "");
}

TEST(StepReplayCollector, AGroupThatEndsStartsTheRestartCountAgain) {
  StepReplayCollector c(2, 2);  // two groups
  const std::vector<LaunchIdentity> other = {k("conv"), k("gelu"), k("gemm", 64)};
  for (uint32_t i = 0; i < StepReplayCollector::kMaxRestarts; ++i) {  // as many restarts as allowed
    window(c, kStep, 1);
    EXPECT_EQ(window(c, other, 10).give_up, "") << "restart " << i + 1;
  }
  window(c, kStep, 100);
  ASSERT_TRUE(window(c, kStep, 200).decode);
  ASSERT_EQ(c.counters_decoded(ranges(3, 0.0), true), "");
  ASSERT_EQ(window(c, kStep, 300).verdict.kind, WindowVerdict::kGroupTimed);
  EXPECT_EQ(c.give_up_reason(), "");
  // The next group's restarts are counted from zero: one more is no reason to give up.
  WindowRole role;
  window(c, kStep, 400, &role);
  ASSERT_EQ(role.kind, WindowRole::kPass);
  const StepWindowClosed w = window(c, other, 500);
  EXPECT_EQ(w.verdict.kind, WindowVerdict::kDiscarded);
  EXPECT_EQ(w.give_up, "");
}

TEST(StepReplayCollector, LaunchesOutsideWindowsAndCloseWithoutOpenAreIgnored) {
  StepReplayCollector c(1, 1);
  c.on_launch(k("conv"), 1);
  EXPECT_EQ(c.close_window().verdict.kind, WindowVerdict::kIgnored);
  EXPECT_EQ(c.current().kind, WindowRole::kDone);
  c.open_window();
  EXPECT_EQ(c.current().kind, WindowRole::kPass);
}

}  // namespace
}  // namespace rf::collector

namespace rf::collector {
namespace {

/// A complete group of kStep (2 passes) up to its decode; returns what counters_decoded said and
/// the timing window's counters (by range index) when it kept them.
std::pair<std::string, std::vector<StepRangeCounters>> decode_names(const std::vector<std::string>& names) {
  StepReplayCollector c(2, 1);
  window(c, kStep, 100);
  window(c, kStep, 200);
  std::vector<RangeValues> decoded;
  for (size_t i = 0; i < names.size(); ++i) decoded.push_back({names[i], {static_cast<double>(i)}});
  std::string why = c.counters_decoded(std::move(decoded), true);
  if (!why.empty()) return {why, {}};
  return {"", window(c, kStep, 300).counters};
}

// A window that never closes (cudaProfilerStart without Stop, a step range that is the whole run)
// keeps no more than a pass can hold plus one launch, and says how many it launched.
TEST(StepReplayCollector, AWindowKeepsAtMostOneLaunchMoreThanAPassHolds) {
  StepReplayCollector c(2, 1, /*max_ranges=*/4);
  c.open_window();
  for (uint32_t i = 0; i < 100000; ++i) c.on_launch(k("k" + std::to_string(i % 7)), i);
  const StepWindowClosed w = c.close_window();
  EXPECT_EQ(w.verdict.kind, WindowVerdict::kDiscarded);  // discarded; the next window is tried
  EXPECT_EQ(w.verdict.message, "a window launches 100000 kernels, more than the 4 ranges a pass holds (raise RFPROF_MAX_RANGES)");
  EXPECT_EQ(w.give_up, "");
  EXPECT_EQ(c.replay().reference().size(), 0u);  // what it kept is dropped with it
  // Later windows: one longer than a pass is discarded however long it is.
  StepReplayCollector d(2, 1, 4);
  window(d, kStep, 100);
  d.open_window();
  for (uint32_t i = 0; i < 100000; ++i) d.on_launch(kStep[i % 3], i);
  EXPECT_EQ(d.close_window().verdict.kind, WindowVerdict::kDiscarded);
}

// A first window that launched nothing started no group: it is discarded without counting as a
// restart, so any number of them never makes the collector give up.
TEST(StepReplayCollector, EmptyFirstWindowsAreNotRestarts) {
  StepReplayCollector c(2, 1);
  for (uint32_t i = 0; i < 3 * StepReplayCollector::kMaxRestarts; ++i) {
    const StepWindowClosed w = window(c, {}, 0);
    EXPECT_EQ(w.verdict.kind, WindowVerdict::kDiscarded);
    EXPECT_EQ(w.give_up, "");
  }
  EXPECT_EQ(c.give_up_reason(), "");
  window(c, kStep, 100);
  EXPECT_TRUE(window(c, kStep, 200).decode);
}

TEST(StepReplayCollector, RangesGoToLaunchesByTheIndexesInTheirNames) {
  // In order from 0 (the H100's auto range): range i is launch i.
  auto [why, counters] = decode_names({"0", "1", "2"});
  ASSERT_EQ(why, "");
  ASSERT_EQ(counters.size(), 3u);
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(counters[i].range_index, i);
    EXPECT_EQ(counters[i].correlation_id, 300 + i);
    EXPECT_EQ(counters[i].range.range_name, std::to_string(i));
  }
  // Decoded in another order, or numbered on from an earlier pass: put back in launch order.
  std::tie(why, counters) = decode_names({"388", "387", "389"});
  ASSERT_EQ(why, "");
  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[0].range.range_name, "387");
  EXPECT_EQ(counters[0].range.values, std::vector<double>{1.0});  // decoded second
  EXPECT_EQ(counters[0].correlation_id, 300u);
  EXPECT_EQ(counters[1].range.range_name, "388");
  EXPECT_EQ(counters[2].range.range_name, "389");
}

TEST(StepReplayCollector, RangeNamesThatAreNotLaunchIndexesRestartTheGroup) {
  const std::string restart = "; the group restarts at pass 0";
  EXPECT_EQ(decode_names({"0", "1", "gemm"}).first,
            "range 2 is named \"gemm\", not by its launch's index" + restart);
  EXPECT_EQ(decode_names({"0", "", "2"}).first, "range 1 is named \"\", not by its launch's index" + restart);
  EXPECT_EQ(decode_names({"0", "1", "1"}).first,
            "the ranges are not named by 3 consecutive launch indexes (range 2 is \"1\")" + restart);
  EXPECT_EQ(decode_names({"0", "1", "3"}).first,
            "the ranges are not named by 3 consecutive launch indexes (range 2 is \"3\")" + restart);
  EXPECT_EQ(decode_names({"0", "1", "2x"}).first, "range 2 is named \"2x\", not by its launch's index" + restart);
}

}  // namespace
}  // namespace rf::collector
