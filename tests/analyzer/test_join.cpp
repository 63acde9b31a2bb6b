// The per-launch join: records in adversarial orders, windows, graphs, leftovers, buffer bound.
#include <gtest/gtest.h>

#include <vector>

#include "rfprof/analyzer/join.h"

namespace rf::analyzer {
namespace {

using trace::KernelActivity;
using trace::LaunchApi;
using trace::RangeCounters;

LaunchApi launch(uint32_t driver, uint32_t runtime = 0, uint32_t window = 0, bool graph = false) {
  LaunchApi l;
  l.correlation_id = driver;
  l.runtime_correlation_id = runtime;
  l.window_id = window;
  l.is_graph = graph;
  l.thread_id = 77;
  return l;
}

KernelActivity kernel(uint32_t corr, uint64_t start = 100, uint64_t end = 200) {
  KernelActivity k;
  k.correlation_id = corr;
  k.start_ns = start;
  k.end_ns = end;
  return k;
}

RangeCounters counters(uint32_t corr, double value, uint32_t window = 0) {
  RangeCounters rc;
  rc.config_id = 1;
  rc.window_id = window;
  rc.correlation_id = corr;
  rc.values = {value};
  return rc;
}

struct Collected {
  std::vector<JoinedLaunch> rows;
  LaunchJoiner::Sink sink() {
    return [this](JoinedLaunch&& j) { rows.push_back(std::move(j)); };
  }
};

TEST(Join, CountersModeWaitsForAllThree) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_launch(launch(10));
  j.add_kernel(kernel(10));
  EXPECT_TRUE(out.rows.empty());  // counters still awaited
  j.add_counters(counters(10, 5.0));
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].id, 10u);
  ASSERT_TRUE(out.rows[0].launch && out.rows[0].kernel && out.rows[0].counters);
  EXPECT_EQ(out.rows[0].counters->values, std::vector<double>{5.0});
  EXPECT_EQ(j.pending(), 0u);
}

// A driver correlation id used again while its first launch waits (ids wrap after 2^32 calls; the
// first launch's kernel record was dropped): the first launch's runtime id no longer names a
// pending launch. Its kernel then threw out of entries_.at() (rfanalyze exit 3, no outputs), or,
// in the other order, was joined to the second launch.
TEST(Join, ADriverIdUsedAgainLeavesNoStaleRuntimeAlias) {
  for (const bool old_kernel_first : {false, true}) {
    Collected out;
    LaunchJoiner j(false, out.sink());
    j.add_launch(launch(5, 100));
    j.add_launch(launch(5, 200));  // the first is emitted without its kernel
    ASSERT_EQ(out.rows.size(), 1u);
    EXPECT_EQ(out.rows[0].launch->runtime_correlation_id, 100u);
    if (old_kernel_first) j.add_kernel(kernel(100, 1, 2));
    j.add_kernel(kernel(200, 3, 4));
    if (!old_kernel_first) j.add_kernel(kernel(100, 1, 2));
    j.finish();
    ASSERT_EQ(out.rows.size(), 3u) << old_kernel_first;
    size_t joined = 0, orphan = 0;
    for (const auto& r : out.rows) {
      if (r.launch && r.kernel) {
        ++joined;
        EXPECT_EQ(r.launch->runtime_correlation_id, 200u);
        EXPECT_EQ(r.kernel->correlation_id, 200u);
      }
      if (!r.launch && r.kernel) {
        ++orphan;
        EXPECT_EQ(r.kernel->correlation_id, 100u);
      }
    }
    EXPECT_EQ(joined, 1u);
    EXPECT_EQ(orphan, 1u);
  }
}

// Counters refused at setup leave a counters-mode trace whose window closes only at exit: every
// launch waited for counters until finish() (3 M launches held 1 GB). Past max_waiting launches
// waiting, the earliest is emitted as it is, counted; the rest still join in full.
TEST(Join, WaitingLaunchesAreBounded) {
  Collected out;
  LaunchJoiner j(true, out.sink(), 100);
  for (uint32_t d = 1; d <= 1000; ++d) {
    j.add_launch(launch(d, 50000 + d));
    j.add_kernel(kernel(50000 + d));
    EXPECT_LE(j.pending(), 101u) << d;
  }
  EXPECT_EQ(out.rows.size(), 900u);
  EXPECT_EQ(j.stats().given_up, 900u);
  for (size_t i = 0; i < out.rows.size(); ++i) {  // the earliest first, each with its kernel
    ASSERT_EQ(out.rows[i].launch->correlation_id, i + 1);
    ASSERT_TRUE(out.rows[i].kernel);
    EXPECT_EQ(out.rows[i].kernel->correlation_id, 50000 + i + 1);
  }
  j.add_counters(counters(1000, 7.0));  // the latest still gets its counters
  ASSERT_EQ(out.rows.size(), 901u);
  EXPECT_EQ(out.rows.back().launch->correlation_id, 1000u);
  ASSERT_TRUE(out.rows.back().counters);
  j.finish();
  EXPECT_EQ(out.rows.size(), 1000u);
  EXPECT_EQ(j.stats().without_counters, 999u);
}

// Under the cap, a reused driver id's launch is as old as its own arrival, not its id's first:
// with 5, 6, 5 (the first 5 emitted as replaced) and 7 waiting past a cap of 2, 6 goes first.
TEST(Join, TheCapCountsAReusedIdFromItsNewLaunch) {
  Collected out;
  LaunchJoiner j(true, out.sink(), 2);
  j.add_launch(launch(5, 105));
  j.add_launch(launch(6, 106));
  j.add_launch(launch(5, 205));  // the first 5 is emitted, replaced
  ASSERT_EQ(out.rows.size(), 1u);
  j.add_launch(launch(7, 107));  // three wait: the earliest, 6, is given up
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[1].launch->correlation_id, 6u);
  EXPECT_EQ(j.stats().given_up, 1u);
}

TEST(Join, CountersBeforeKernelsBeforeLaunches) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_counters(counters(11, 1.0));
  j.add_counters(counters(12, 2.0));
  j.add_kernel(kernel(12, 300, 400));
  j.add_kernel(kernel(11, 100, 200));
  EXPECT_TRUE(out.rows.empty());
  EXPECT_EQ(j.pending(), 4u);
  j.add_launch(launch(12));
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].id, 12u);
  EXPECT_EQ(out.rows[0].kernel->start_ns, 300u);
  EXPECT_EQ(out.rows[0].counters->values, std::vector<double>{2.0});
  j.add_launch(launch(11));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[1].id, 11u);
  EXPECT_EQ(out.rows[1].counters->values, std::vector<double>{1.0});
  EXPECT_EQ(j.pending(), 0u);
}

TEST(Join, KernelCarryingTheRuntimeIdJoinsTheDriverLaunch) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_kernel(kernel(500));  // runtime correlation id, before the launch
  j.add_launch(launch(501, 500));
  j.add_counters(counters(501, 3.0));  // counters carry the driver id
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].id, 500u);  // the row is known by the kernel's id
  EXPECT_EQ(out.rows[0].launch->correlation_id, 501u);
  EXPECT_EQ(out.rows[0].counters->values, std::vector<double>{3.0});

  j.add_launch(launch(601, 600));
  j.add_kernel(kernel(600));  // runtime id, after the launch
  j.add_counters(counters(601, 4.0));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[1].launch->correlation_id, 601u);
  EXPECT_EQ(j.pending(), 0u);
}

TEST(Join, TimingModeEmitsWithoutCounters) {
  Collected out;
  LaunchJoiner j(false, out.sink());
  j.add_kernel(kernel(20));
  j.add_launch(launch(20));
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_FALSE(out.rows[0].counters.has_value());
  EXPECT_EQ(j.stats().without_counters, 0u);
}

TEST(Join, WindowCloseReleasesLaunchesWaitingForCounters) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_launch(launch(30, 0, 1));
  j.add_kernel(kernel(30));
  j.add_launch(launch(31, 0, 1));  // its kernel comes after the close
  j.add_launch(launch(40, 0, 2));
  j.add_kernel(kernel(40));
  j.close_window(1);
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].id, 30u);
  EXPECT_FALSE(out.rows[0].counters.has_value());
  j.add_kernel(kernel(31));  // window 1 is closed: no more waiting
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[1].id, 31u);
  EXPECT_EQ(j.pending(), 1u);  // launch 40 (window 2 still open) waits
  EXPECT_EQ(j.stats().without_counters, 2u);
}

TEST(Join, UnmappedAndDuplicateCountersAreCountedNotJoined) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_counters(counters(0, 9.0));
  j.add_launch(launch(50));
  j.add_counters(counters(50, 1.0));
  j.add_counters(counters(50, 2.0));
  j.add_kernel(kernel(50));
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].counters->values, std::vector<double>{1.0});
  EXPECT_EQ(j.stats().unmapped_counters, 1u);
  EXPECT_EQ(j.stats().duplicate_counters, 1u);
}

TEST(Join, GraphLaunchGivesOneRowPerKernel) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_kernel(kernel(70, 1, 2));  // runtime id of the graph launch, before it
  j.add_launch(launch(71, 70, 0, /*graph=*/true));
  j.add_kernel(kernel(70, 3, 4));
  j.add_kernel(kernel(70, 5, 6));
  ASSERT_EQ(out.rows.size(), 3u);  // graphs never wait for counters
  for (const auto& r : out.rows) {
    ASSERT_TRUE(r.launch.has_value());
    EXPECT_TRUE(r.launch->is_graph);
    EXPECT_EQ(r.id, 70u);
  }
  j.finish();
  EXPECT_EQ(out.rows.size(), 3u);
  EXPECT_EQ(j.stats().without_counters, 0u) << "a graph's kernels are never profiled: not a row that lacks counters";
}

TEST(Join, FinishEmitsLeftoversInIdOrder) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_counters(counters(93, 1.0));  // counters only
  j.add_kernel(kernel(92));           // kernel only
  j.add_launch(launch(91));           // launch only
  j.add_launch(launch(90));
  j.add_kernel(kernel(90));           // waits for counters that never come
  j.add_launch(launch(94, 0, 0, true));  // graph launch without kernels
  EXPECT_TRUE(out.rows.empty());
  j.finish();
  ASSERT_EQ(out.rows.size(), 5u);
  EXPECT_EQ(out.rows[0].id, 90u);
  EXPECT_TRUE(out.rows[0].kernel && !out.rows[0].counters);
  EXPECT_EQ(out.rows[1].id, 91u);
  EXPECT_TRUE(out.rows[1].launch && !out.rows[1].kernel);
  EXPECT_EQ(out.rows[2].id, 94u);
  EXPECT_TRUE(out.rows[2].launch->is_graph);
  EXPECT_EQ(out.rows[3].id, 92u);
  EXPECT_TRUE(out.rows[3].kernel && !out.rows[3].launch);
  EXPECT_EQ(out.rows[4].id, 93u);
  EXPECT_TRUE(out.rows[4].counters && !out.rows[4].kernel && !out.rows[4].launch);
  EXPECT_EQ(j.pending(), 0u);
  EXPECT_EQ(j.stats().without_kernel, 3u);
  EXPECT_EQ(j.stats().without_launch, 2u);
}

TEST(Join, CountersOfAKnownGraphLaunchAreCountedNotJoined) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_launch(launch(80, 0, 0, /*graph=*/true));
  j.add_kernel(kernel(80));
  j.add_counters(counters(80, 7.0));  // after the graph launch: no kernel row can take them
  j.finish();
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_FALSE(out.rows[0].counters.has_value());
  EXPECT_EQ(j.stats().graph_counters, 1u);
  EXPECT_EQ(j.stats().without_launch, 0u);  // no counters-only row at the end
}

TEST(Join, ASecondLaunchWithTheSameIdKeepsTheFirstAsARow) {
  Collected out;
  LaunchJoiner j(false, out.sink());
  LaunchApi first = launch(85);
  first.thread_id = 1;
  LaunchApi second = launch(85);
  second.thread_id = 2;
  j.add_launch(first);
  j.add_launch(second);  // a hostile or wrapped-around id: the first is emitted, not lost
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].launch->thread_id, 1u);
  EXPECT_FALSE(out.rows[0].kernel.has_value());
  j.add_kernel(kernel(85));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[1].launch->thread_id, 2u);
  EXPECT_TRUE(out.rows[1].kernel.has_value());
}

TEST(Join, TwoKernelsOfAWaitingLaunchGiveTwoRows) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_launch(launch(86));
  j.add_kernel(kernel(86, 100, 200));
  j.add_kernel(kernel(86, 300, 400));  // the launch still waits for counters
  j.add_counters(counters(86, 1.0));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[0].kernel->start_ns, 300u);  // the extra one, at once
  EXPECT_EQ(out.rows[1].kernel->start_ns, 100u);  // the first, with the counters
  for (const auto& r : out.rows) EXPECT_TRUE(r.launch.has_value());
  EXPECT_TRUE(out.rows[1].counters.has_value());
}

TEST(Join, TwoKernelsBeforeTheirLaunchGiveTwoRows) {
  // The activity buffer came before the launch record: both kernels wait, and the launch takes
  // the first (with the counters) and gives the second a row of its own at once.
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_kernel(kernel(88, 100, 200));
  j.add_kernel(kernel(88, 300, 400));
  EXPECT_TRUE(out.rows.empty());
  j.add_launch(launch(88));
  ASSERT_EQ(out.rows.size(), 1u);
  EXPECT_EQ(out.rows[0].kernel->start_ns, 300u);
  EXPECT_EQ(out.rows[0].launch->correlation_id, 88u);
  EXPECT_FALSE(out.rows[0].counters.has_value());
  j.add_counters(counters(88, 3.0));
  ASSERT_EQ(out.rows.size(), 2u);
  EXPECT_EQ(out.rows[1].kernel->start_ns, 100u);
  EXPECT_TRUE(out.rows[1].counters.has_value());
}

TEST(Join, AKernelWithoutLaunchStillTakesItsCountersAtFinish) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  j.add_kernel(kernel(87));
  j.add_counters(counters(87, 2.0));  // its launch record was lost (a killed run)
  j.finish();
  ASSERT_EQ(out.rows.size(), 1u);
  ASSERT_TRUE(out.rows[0].kernel && out.rows[0].counters);
  EXPECT_EQ(out.rows[0].counters->values, std::vector<double>{2.0});
  EXPECT_EQ(j.stats().without_launch, 1u);
}

TEST(Join, WindowCloseEmitsItsLaunchesInIdOrder) {
  Collected out;
  LaunchJoiner j(true, out.sink());
  for (uint32_t id : {103u, 101u, 104u, 102u}) {
    j.add_launch(launch(id, 0, 1));
    j.add_kernel(kernel(id));
  }
  j.close_window(1);
  ASSERT_EQ(out.rows.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out.rows[i].id, 101u + i);
}

TEST(Join, BufferStaysBoundedOverManyLaunches) {
  Collected out;
  size_t rows = 0;
  LaunchJoiner j(true, [&](JoinedLaunch&&) { ++rows; });
  // Realistic lag: counters of an image of 100 launches arrive after all its launches, kernels
  // arrive 10 launches late.
  constexpr uint32_t kImage = 100, kLag = 10, kLaunches = 100000;
  for (uint32_t i = 1; i <= kLaunches; ++i) {
    j.add_launch(launch(i));
    if (i > kLag) j.add_kernel(kernel(i - kLag));
    if (i % kImage == 0)
      for (uint32_t c = i - kImage + 1; c <= i; ++c) j.add_counters(counters(c, 1.0));
  }
  for (uint32_t i = kLaunches - kLag + 1; i <= kLaunches; ++i) j.add_kernel(kernel(i));
  j.finish();
  EXPECT_EQ(rows, kLaunches);
  EXPECT_LE(j.stats().max_pending, kImage + kLag);
  EXPECT_EQ(j.stats().without_counters, 0u);
}

}  // namespace
}  // namespace rf::analyzer
