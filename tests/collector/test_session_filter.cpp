// CorrelationFilter: which kernel records belong to a window, in memory per window transition.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <vector>

#include "rfprof/collector/correlation_filter.h"

namespace rf::collector {
namespace {

TEST(CorrelationFilter, AcceptsGrowOneIntervalOverIdsBetweenLaunches) {
  CorrelationFilter f;
  f.accept(10);
  f.accept(12);
  f.accept(20);
  EXPECT_EQ(f.intervals(), 1u);
  EXPECT_TRUE(f.contains(10));
  EXPECT_TRUE(f.contains(15));  // e.g. a kernel of an API the callbacks do not hook
  EXPECT_TRUE(f.contains(20));
  EXPECT_FALSE(f.contains(9));
  EXPECT_FALSE(f.contains(21));
}

TEST(CorrelationFilter, RejectStopsTheIntervalFromGrowingOverIt) {
  CorrelationFilter f;
  f.accept(10);
  f.reject(11);  // window closed
  f.reject(13);
  f.accept(14);  // window reopened
  EXPECT_TRUE(f.contains(10));
  EXPECT_FALSE(f.contains(11));
  EXPECT_FALSE(f.contains(12));
  EXPECT_FALSE(f.contains(13));
  EXPECT_TRUE(f.contains(14));
  EXPECT_EQ(f.intervals(), 2u);
}

TEST(CorrelationFilter, OutOfOrderAcceptDoesNotSwallowTheGap) {
  CorrelationFilter f;
  f.accept(20);
  f.accept(5);  // another thread got its id earlier but reported later
  EXPECT_TRUE(f.contains(5));
  EXPECT_TRUE(f.contains(20));
  EXPECT_FALSE(f.contains(10));
  f.accept(25);  // the newest interval still grows
  EXPECT_TRUE(f.contains(22));
  EXPECT_FALSE(f.contains(6));
}

TEST(CorrelationFilter, RejectInsideAnAcceptedIntervalSplitsIt) {
  CorrelationFilter f;
  f.accept(10);
  f.accept(20);
  f.reject(15);  // a launch outside the window that reported late
  EXPECT_FALSE(f.contains(15));
  EXPECT_TRUE(f.contains(14));
  EXPECT_TRUE(f.contains(16));
  EXPECT_EQ(f.intervals(), 2u);
  f.reject(10);
  f.reject(20);
  EXPECT_FALSE(f.contains(10));
  EXPECT_FALSE(f.contains(20));
  EXPECT_TRUE(f.contains(11));
  EXPECT_TRUE(f.contains(19));
}

TEST(CorrelationFilter, AcceptDoesNotGrowOverAnIdRejectedEarlier) {
  // Threads reach the launch callback in another order than CUPTI gave them their ids: id 11 is
  // rejected before the window opens, then ids 10 and 12 (their threads were slower) are accepted.
  // Growing [10,10] to [10,12] would keep the kernel of 11, launched outside the window (found by
  // test_launch_stress).
  CorrelationFilter f;
  f.reject(11);
  f.accept(10);
  f.accept(12);
  EXPECT_TRUE(f.contains(10));
  EXPECT_FALSE(f.contains(11));
  EXPECT_TRUE(f.contains(12));
  f.accept(13);  // past every rejected id: the last interval grows again
  f.accept(20);
  EXPECT_TRUE(f.contains(13));
  EXPECT_TRUE(f.contains(17));
  EXPECT_EQ(f.intervals(), 2u);
}

TEST(CorrelationFilter, AcceptsInOrderBelowAHigherRejectedIdStillMakeOneInterval) {
  // Id 20 was rejected first (its thread reached the callback early, outside the window); the
  // window's ids 15, 16, ... then arrive in order: one interval, not one per launch.
  CorrelationFilter f;
  f.accept(10);
  f.reject(20);
  for (uint32_t id = 15; id <= 19; ++id) f.accept(id);
  EXPECT_EQ(f.intervals(), 2u);
  for (uint32_t id = 15; id <= 19; ++id) EXPECT_TRUE(f.contains(id)) << id;
  EXPECT_FALSE(f.contains(14));
  EXPECT_FALSE(f.contains(20));
}

TEST(CorrelationFilter, AcceptingAnIdAgainChangesNothing) {
  // A runtime call's id arrives with each of its driver launches: accepted again, later.
  CorrelationFilter f;
  f.accept(5);
  f.accept(6);
  f.reject(8);
  f.accept(12);
  f.accept(5);
  f.accept(6);
  EXPECT_EQ(f.intervals(), 2u);
  EXPECT_TRUE(f.contains(5));
  EXPECT_TRUE(f.contains(6));
  EXPECT_FALSE(f.contains(7));
  EXPECT_TRUE(f.contains(12));
}

TEST(CorrelationFilter, IdZeroIsNeverKept) {
  CorrelationFilter f;
  f.accept(0);
  EXPECT_FALSE(f.contains(0));
  EXPECT_EQ(f.intervals(), 0u);
  f.accept(1);
  f.reject(0);
  f.accept(3);
  EXPECT_FALSE(f.contains(0));
}

TEST(CorrelationFilter, MemoryIsPerWindowNotPerLaunch) {
  CorrelationFilter f;
  uint32_t id = 1;
  for (int window = 0; window < 50; ++window) {
    for (int i = 0; i < 1000; ++i) f.accept(id++);  // inside a window
    for (int i = 0; i < 1000; ++i) f.reject(id++);  // between windows
  }
  EXPECT_EQ(f.intervals(), 50u);
  EXPECT_TRUE(f.contains(1));
  EXPECT_TRUE(f.contains(1000));
  EXPECT_FALSE(f.contains(1001));
  EXPECT_TRUE(f.contains(2001));
}

// Threads reach the callbacks in another order than they got their correlation ids: each launch's
// id is decided once, in any order near its neighbours'. Whatever the order, every decided id is
// kept exactly when it was accepted, at every step (ids never decided, other API calls, may fall
// inside an interval: they have no kernel records).
TEST(CorrelationFilter, EveryDecidedIdIsKeptExactlyWhenAcceptedInAnyOrder) {
  std::mt19937 rng(20261124);
  for (int run = 0; run < 2000; ++run) {
    std::vector<uint32_t> ids(1 + rng() % 40);
    std::iota(ids.begin(), ids.end(), 1u);
    std::shuffle(ids.begin(), ids.end(), rng);
    ids.resize(1 + rng() % ids.size());  // gaps: ids of other API calls
    if (run % 2) {                         // mostly increasing, as one counter hands them out
      std::sort(ids.begin(), ids.end());
      for (size_t i = 0; i + 1 < ids.size(); ++i)
        if (rng() % 3 == 0) std::swap(ids[i], ids[i + 1]);
    }
    CorrelationFilter f;
    std::map<uint32_t, bool> decided;
    for (uint32_t id : ids) {
      const bool accept = rng() % 5 < 3;
      accept ? f.accept(id) : f.reject(id);
      decided[id] = accept;
      for (const auto& [d, accepted] : decided)
        ASSERT_EQ(f.contains(d), accepted) << "run " << run << ", id " << d << " after deciding " << id;
    }
  }
}

}  // namespace
}  // namespace rf::collector
