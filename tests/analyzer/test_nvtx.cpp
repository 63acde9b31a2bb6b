// NVTX attribution: own-thread nesting, the autograd-thread fallback, start/end ranges.
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <string>

#include "rfprof/analyzer/nvtx_attribution.h"

namespace rf::analyzer {
namespace {

using trace::NvtxEvent;
using trace::NvtxEventKind;

NvtxEvent ev(uint64_t id, NvtxEventKind kind, uint64_t thread, uint64_t t) {
  NvtxEvent e;
  e.id = id;
  e.kind = kind;
  e.thread_id = thread;
  e.timestamp_ns = t;
  return e;
}

struct Index {
  NvtxIndex nvtx;
  void range(uint64_t id, uint64_t thread, uint64_t start, uint64_t end, const std::string& name) {
    nvtx.add(ev(id, NvtxEventKind::kStart, thread, start), name);
    nvtx.add(ev(id, NvtxEventKind::kEnd, thread, end), "");
  }
  std::string at(uint64_t thread, uint64_t t) const { return nvtx.path(nvtx.attribute(thread, t)).joined; }
  /// The path of a launch API call by `thread` from t0 to t1.
  std::string call(uint64_t thread, uint64_t t0, uint64_t t1) const {
    return nvtx.path(nvtx.attribute(thread, t0, t1)).joined;
  }
};

TEST(NvtxAttribution, NestedRangesOnTheLaunchingThread) {
  Index x;
  x.range(1, 7, 0, 100, "step");
  x.range(2, 7, 10, 50, "forward");
  x.range(3, 7, 20, 30, "aten::mm");
  x.nvtx.finalize();
  EXPECT_EQ(x.at(7, 25), "step/forward/aten::mm");
  EXPECT_EQ(x.at(7, 20), "step/forward/aten::mm");  // start is inclusive
  EXPECT_EQ(x.at(7, 30), "step/forward");           // end is exclusive
  EXPECT_EQ(x.at(7, 60), "step");
  EXPECT_EQ(x.at(7, 100), "");
  EXPECT_EQ(x.nvtx.attribute(7, 100), NvtxIndex::kNoPath);
  const RangePath& p = x.nvtx.path(x.nvtx.attribute(7, 25));
  EXPECT_EQ(p.names, (std::vector<std::string>{"step", "forward", "aten::mm"}));
}

TEST(NvtxAttribution, AutogradThreadTakesTheRangeOpenOnAnotherThread) {
  Index x;
  x.range(1, /*main*/ 100, 1000, 2000, "backward");
  x.nvtx.finalize();
  // The autograd thread 200 pushes nothing: its launch belongs to the main thread's "backward".
  EXPECT_EQ(x.at(200, 1500), "backward");
  EXPECT_EQ(x.at(200, 2500), "");
}

TEST(NvtxAttribution, InnermostRangeOnOwnThreadWins) {
  Index x;
  x.range(1, 100, 1000, 2000, "backward");
  x.range(2, 200, 1400, 1600, "MulBackward0");
  x.range(3, 200, 1700, 1800, "optimizer");
  x.nvtx.finalize();
  EXPECT_EQ(x.at(200, 1500), "MulBackward0");  // own thread has a range: no fallback
  EXPECT_EQ(x.at(200, 1650), "backward");      // own thread has none open now
  EXPECT_EQ(x.at(200, 1750), "optimizer");
}

TEST(NvtxAttribution, FallbackPicksTheThreadWhoseInnermostRangeStartedLast) {
  Index x;
  x.range(1, 100, 0, 1000, "train");
  x.range(2, 100, 500, 900, "backward");
  x.range(3, 300, 100, 1000, "dataloader");
  x.range(4, 400, 600, 700, "late");
  x.nvtx.finalize();
  EXPECT_EQ(x.at(200, 550), "train/backward");  // started at 500 > 100
  EXPECT_EQ(x.at(200, 650), "late");            // started at 600
  EXPECT_EQ(x.at(200, 950), "dataloader");      // train (0) vs dataloader (100): later wins
  EXPECT_EQ(x.at(100, 950), "train");           // own thread first
}

/// A start/end range (nvtxRangeStartA/End: NVTX's process range) from `start` on thread
/// `starter` to `end` on thread `ender`.
void process_range(NvtxIndex& nvtx, uint64_t id, uint64_t starter, uint64_t start, uint64_t ender, uint64_t end,
                   const std::string& name) {
  NvtxEvent s = ev(id, NvtxEventKind::kStart, starter, start);
  s.style = trace::NvtxRangeStyle::kStartEnd;
  NvtxEvent e = ev(id, NvtxEventKind::kEnd, ender, end);
  e.style = trace::NvtxRangeStyle::kStartEnd;
  nvtx.add(s, name);
  nvtx.add(e, "");
}

TEST(NvtxAttribution, AStartEndRangeIsOpenOnEveryThread) {
  Index x;
  process_range(x.nvtx, 9, /*starter*/ 1, 10, /*ender*/ 2, 50, "epoch");
  x.range(1, 3, 20, 40, "aten::add_");  // another thread's own push/pop range
  x.nvtx.finalize();
  EXPECT_EQ(x.at(1, 15), "epoch");
  EXPECT_EQ(x.at(2, 45), "epoch");
  EXPECT_EQ(x.at(3, 30), "epoch/aten::add_");  // it was "aten::add_": the starter's range only
  EXPECT_EQ(x.at(4, 45), "epoch");              // a thread with no range of its own
  EXPECT_EQ(x.at(3, 50), "");
  EXPECT_EQ(x.nvtx.range_count(), 2u);
}

TEST(NvtxAttribution, ProcessRangesComeBeforeThreadRanges) {
  Index x;
  x.range(1, 7, 0, 100, "step");
  process_range(x.nvtx, 2, 7, 50, 7, 90, "optimizer");  // started inside "step", on its thread
  x.range(3, /*main*/ 100, 200, 400, "backward");
  process_range(x.nvtx, 4, 100, 150, 100, 500, "epoch 3");
  x.nvtx.finalize();
  EXPECT_EQ(x.at(7, 60), "optimizer/step");
  // The autograd thread 200 pushes nothing: the main thread's "backward", under the process range.
  EXPECT_EQ(x.call(200, 250, 260), "epoch 3/backward");
  EXPECT_EQ(x.call(200, 450, 460), "epoch 3");
  // Each range's own path, as ranges.csv keys memory peaks: the same order.
  std::map<std::string, std::string> own;
  x.nvtx.for_each_range_path([&](const NvtxRange& r, uint32_t path) { own[std::string(r.name)] = x.nvtx.path(path).joined; });
  EXPECT_EQ(own["step"], "step");
  EXPECT_EQ(own["optimizer"], "optimizer");
  EXPECT_EQ(own["backward"], "epoch 3/backward");
  EXPECT_EQ(own["epoch 3"], "epoch 3");
}

TEST(NvtxAttribution, OverlappingStartEndRangesAreOrderedByStart) {
  Index x;
  x.range(1, 5, 0, 60, "A");
  x.range(2, 5, 40, 100, "B");  // not nested: A ends inside B
  x.nvtx.finalize();
  EXPECT_EQ(x.at(5, 50), "A/B");
  EXPECT_EQ(x.at(5, 70), "B");
}

TEST(NvtxAttribution, OverlappingProcessRangesOfTwoThreadsAreOrderedByStart) {
  Index x;
  process_range(x.nvtx, 1, 5, 0, 5, 60, "A");
  process_range(x.nvtx, 2, 6, 40, 6, 100, "B");
  x.range(3, 6, 45, 55, "inner");
  x.nvtx.finalize();
  EXPECT_EQ(x.at(5, 50), "A/B/inner");  // no range of its own: thread 6's (rule 2), under A and B
  EXPECT_EQ(x.at(6, 50), "A/B/inner");
  EXPECT_EQ(x.at(7, 70), "B");
}

// Eight threads marking their batches with start/end ranges that overlap each other's (a server
// marking each request): as the oldest open range ends, every prefix of the process ranges' path
// changes. Interning each prefix took d^2/2 names a transition, and a valid 49 MB trace was
// refused as past the path budget; now at most one path a transition.
TEST(NvtxAttribution, OverlappingProcessRangesOfManyThreadsInternOnePathATransition) {
  NvtxIndex nvtx;
  constexpr uint64_t kThreads = 8, kPerThread = 1000;
  uint64_t id = 1;
  for (uint64_t i = 0; i < kPerThread; ++i)
    for (uint64_t k = 0; k < kThreads; ++k, ++id)
      process_range(nvtx, id, 100 + k, i * 80 + k * 10, 100 + k, i * 80 + k * 10 + 75,
                    "t" + std::to_string(k) + " batch " + std::to_string(i));
  nvtx.finalize();
  EXPECT_LE(nvtx.path_count(), 2 * kThreads * kPerThread + 1);
  EXPECT_EQ(nvtx.path(nvtx.attribute(999, 80 * 500 + 72)).names.size(), 8u);  // all eight open
}

TEST(NvtxAttribution, EventsInAnyFileOrder) {
  Index x;
  x.nvtx.add(ev(2, NvtxEventKind::kEnd, 5, 50), "");  // the end is read before its start
  x.nvtx.add(ev(1, NvtxEventKind::kStart, 5, 0), "outer");
  x.nvtx.add(ev(2, NvtxEventKind::kStart, 5, 10), "inner");
  x.nvtx.add(ev(3, NvtxEventKind::kEnd, 5, 70), "");  // never started
  x.nvtx.add(ev(4, NvtxEventKind::kInstant, 5, 20), "mark");
  x.nvtx.finalize();
  EXPECT_EQ(x.at(5, 20), "outer/inner");
  EXPECT_EQ(x.at(5, 1000000), "outer");  // never ended: open to the end of the trace
  EXPECT_EQ(x.nvtx.unmatched_ends(), 1u);
  EXPECT_EQ(x.nvtx.range_count(), 2u);
}

TEST(NvtxAttribution, NoRangesAnywhere) {
  NvtxIndex nvtx;
  nvtx.finalize();
  EXPECT_EQ(nvtx.attribute(1, 1), NvtxIndex::kNoPath);
  EXPECT_EQ(nvtx.path(NvtxIndex::kNoPath).joined, "");
  EXPECT_TRUE(nvtx.path(NvtxIndex::kNoPath).names.empty());
}

TEST(NvtxAttribution, RepeatedPathsShareOneId) {
  Index x;
  for (uint64_t i = 0; i < 1000; ++i) x.range(i + 1, 5, i * 10, i * 10 + 5, "forward");
  x.nvtx.finalize();
  EXPECT_EQ(x.nvtx.attribute(5, 12), x.nvtx.attribute(5, 9992));
  EXPECT_EQ(x.nvtx.path_count(), 2u);  // "" and "forward"
  EXPECT_EQ(x.at(5, 7), "");
}

TEST(NvtxAttribution, OtherThreadsRangeMustContainTheWholeCall) {
  Index x;
  x.range(1, 100, 1000, 2000, "backward");
  x.nvtx.finalize();
  EXPECT_EQ(x.call(200, 1500, 1600), "backward");
  EXPECT_EQ(x.call(200, 1000, 1999), "backward");
  EXPECT_EQ(x.call(200, 1990, 2010), "");  // the call outlives the range: not inside it
  EXPECT_EQ(x.call(200, 900, 1010), "");   // began before the range
  EXPECT_EQ(x.call(200, 1500, 1400), "backward");  // an end before the start counts as the start
}

TEST(NvtxAttribution, RaceWithTheEndOfAnInnerRangeKeepsTheOuterOne) {
  Index x;
  x.range(1, 100, 0, 10000, "step 3");
  x.range(2, 100, 1000, 2000, "backward");
  x.range(3, 100, 2000, 3000, "optimizer");
  x.nvtx.finalize();
  // A launch by another thread spanning the switch from backward to optimizer: only "step 3" was
  // open through the whole call.
  EXPECT_EQ(x.call(200, 1990, 2010), "step 3");
  EXPECT_EQ(x.call(200, 1500, 1600), "step 3/backward");
  EXPECT_EQ(x.call(200, 2500, 2600), "step 3/optimizer");
}

TEST(NvtxAttribution, AThreadWhoseInnermostRangeSpansTheCallBeatsAChangingOne) {
  Index x;
  x.range(1, 100, 0, 10000, "train");
  x.range(2, 100, 1000, 2000, "backward");  // thread 100 changes at 2000, during the call
  x.range(3, 300, 500, 5000, "dataloader"); // thread 300 holds one range through it
  x.nvtx.finalize();
  EXPECT_EQ(x.call(200, 1990, 2010), "dataloader");
  EXPECT_EQ(x.call(200, 1500, 1600), "train/backward");  // started last (1000 > 500)
}

TEST(NvtxAttribution, LatestStartedAmongContainingRangesWins) {
  Index x;
  x.range(1, 100, 1000, 9000, "backward");
  x.range(2, 300, 3000, 4000, "allreduce");
  x.nvtx.finalize();
  EXPECT_EQ(x.call(200, 3100, 3200), "allreduce");  // both contain the call; allreduce started last
  EXPECT_EQ(x.call(200, 3900, 4100), "backward");   // allreduce ends during the call
}

TEST(NvtxAttribution, AZeroLengthRangeChangesNothingVisible) {
  Index x;
  x.range(1, 100, 100, 10000, "outer_b");
  x.range(2, 100, 150, 150, "mark");  // pushed and popped at one time stamp, during the call
  x.range(3, 300, 50, 10000, "outer_c");
  x.nvtx.finalize();
  // Thread 100's visible ranges do not change during the call: its range, started last, wins.
  EXPECT_EQ(x.call(200, 120, 200), "outer_b");
}

// Many zero-length ranges (a push and pop within one clock tick) among others: each is closed at
// its own time stamp, whatever order the sort of more than 16 events leaves its start and end in.
TEST(NvtxAttribution, ZeroLengthRangesAmongManyEventsNeverStayOpen) {
  Index x;
  uint64_t id = 1;
  for (uint64_t t = 1000; t < 1000 + 40 * 100; t += 100) {
    x.range(id++, 100, t, t, "tick");           // zero length
    x.range(id++, 100, t + 10, t + 60, "op");   // an ordinary range after it
  }
  x.nvtx.finalize();
  for (uint64_t t = 1000; t < 1000 + 40 * 100; t += 100) {
    EXPECT_EQ(x.at(100, t + 5), "") << t;     // between the tick and the op: nothing open
    EXPECT_EQ(x.at(100, t + 30), "op") << t;  // not "tick/op"
    EXPECT_EQ(x.at(100, t + 80), "") << t;
  }
}

// A call spanning a change on the thread holding the ranges keeps the ranges that stayed open
// through it, as range instances (found by a review, 2026-11-29): "step 3" pushed in the same
// nanosecond as "backward" (training_traces.h's shape) was never open alone, and the call got no
// range; two "epoch" ranges, one ending where the next starts, were taken for one that stayed open.
TEST(NvtxAttribution, ACallSpanningAChangeKeepsTheRangeInstancesThatStayedOpen) {
  Index x;
  x.range(1, 100, 1000, 3000, "step 3");
  x.range(2, 100, 1000, 2000, "backward");  // pushed with "step 3"
  x.range(3, 100, 2000, 3000, "optimizer");
  x.range(4, 100, 5000, 6000, "epoch");
  x.range(5, 100, 6000, 7000, "epoch");      // another range of the same name
  x.range(6, 100, 8000, 9500, "outer");
  x.range(7, 100, 8500, 9000, "inner");
  x.range(8, 100, 9000, 9200, "inner");      // the same path, another inner instance
  x.nvtx.finalize();
  EXPECT_EQ(x.call(200, 1990, 2010), "step 3");
  EXPECT_EQ(x.call(200, 1500, 1600), "step 3/backward");  // nothing changed during the call
  EXPECT_EQ(x.call(200, 5990, 6010), "");                 // no epoch stayed open
  EXPECT_EQ(x.call(200, 5500, 5600), "epoch");
  EXPECT_EQ(x.call(200, 8990, 9010), "outer");            // the path is the same, not the inner range
}

TEST(NvtxAttribution, OfThreadsWhoseRangesChangeTheLowestThreadIdGivesTheCommonPrefix) {
  Index x;
  x.range(1, 100, 0, 10000, "train");
  x.range(2, 100, 1000, 2000, "backward");  // ends during the call
  x.range(3, 300, 0, 10000, "loader");
  x.range(4, 300, 1500, 2500, "batch");     // starts during the call
  x.nvtx.finalize();
  EXPECT_EQ(x.call(200, 1200, 2200), "train");
}

TEST(NvtxAttribution, ARangeEndingBeforeItStartsIsCountedAndDropped) {
  Index x;
  x.range(1, 100, 5000, 4000, "backwards");
  x.range(2, 100, 6000, 7000, "fine");
  x.nvtx.finalize();
  EXPECT_EQ(x.nvtx.backwards_ranges(), 1u);
  EXPECT_EQ(x.nvtx.range_count(), 1u);
  EXPECT_EQ(x.at(100, 4500), "");
  EXPECT_EQ(x.at(100, 6500), "fine");
  Index zero;  // a range ending where it starts is not backwards
  zero.range(1, 100, 5000, 5000, "instant");
  zero.nvtx.finalize();
  EXPECT_EQ(zero.nvtx.backwards_ranges(), 0u);
  EXPECT_EQ(zero.nvtx.range_count(), 1u);
}

TEST(NvtxAttribution, ASecondStartOfAnOpenIdIsCountedAndDropped) {
  Index x;
  x.nvtx.add(ev(1, NvtxEventKind::kStart, 7, 0), "first");
  x.nvtx.add(ev(1, NvtxEventKind::kStart, 7, 10), "second");
  x.nvtx.add(ev(1, NvtxEventKind::kEnd, 7, 100), "");
  x.nvtx.finalize();
  EXPECT_EQ(x.nvtx.duplicate_starts(), 1u);
  EXPECT_EQ(x.at(7, 50), "first");
}

// ranges() lists a thread's ranges in the order they started in the trace, whatever the order
// they ended in; a range never ended is open up to the last nanosecond.
TEST(NvtxAttribution, RangesInStartOrderAndNeverEndedOnesStayOpen) {
  Index x;
  x.nvtx.add(ev(1, NvtxEventKind::kStart, 7, 0), "outer");
  x.nvtx.add(ev(2, NvtxEventKind::kStart, 7, 10), "inner");
  x.nvtx.add(ev(2, NvtxEventKind::kEnd, 7, 20), "");
  x.nvtx.add(ev(1, NvtxEventKind::kEnd, 7, 30), "");
  x.nvtx.add(ev(3, NvtxEventKind::kStart, 8, 0), "open");
  x.nvtx.finalize();
  const auto ranges = x.nvtx.ranges();
  ASSERT_EQ(ranges.size(), 3u);
  EXPECT_EQ(ranges[0].name, "outer");
  EXPECT_EQ(ranges[1].name, "inner");
  EXPECT_EQ(x.at(8, std::numeric_limits<uint64_t>::max()), "open");
}

// Among other threads' ranges that span a call, the innermost one that started last wins, the
// lowest thread id on a tie; a range that ends where the next one of the same name starts is
// still another range (it started later).
TEST(NvtxAttribution, StartedLastAcrossThreadsEvenUnderTheSameName) {
  Index tie;
  tie.range(1, 8, 10, 100, "on_8");
  tie.range(2, 9, 10, 100, "on_9");
  tie.nvtx.finalize();
  EXPECT_EQ(tie.call(20, 50, 60), "on_8");
  Index same;
  same.range(1, 7, 0, 50, "a");
  same.range(2, 7, 50, 100, "a");
  same.range(3, 8, 20, 200, "b");
  same.nvtx.finalize();
  EXPECT_EQ(same.call(9, 60, 70), "a");  // the second "a" started at 50, after "b" at 20
}

// A call whose end time stamp lies before its start (a hostile trace) is a call at its start.
TEST(NvtxAttribution, ACallEndingBeforeItStartsIsACallAtItsStart) {
  Index x;
  x.range(1, 8, 0, 100, "outer");
  x.range(2, 8, 40, 60, "inner");
  x.nvtx.finalize();
  EXPECT_EQ(x.call(9, 50, 30), "outer/inner");
}

// Many ranges opened at one time stamp nest in trace order, the first outermost.
TEST(NvtxAttribution, RangesOpenedTogetherNestInTraceOrder) {
  Index x;
  std::string want;
  for (uint64_t i = 0; i < 40; ++i) {
    x.range(i + 1, 7, 1000, 2000 - i, "r" + std::to_string(i));
    want += (i ? "/r" : "r") + std::to_string(i);
  }
  x.nvtx.finalize();
  EXPECT_EQ(x.at(7, 1500), want);
}

}  // namespace
}  // namespace rf::analyzer
