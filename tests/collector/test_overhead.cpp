// OverheadStats (overhead.h): per-phase totals of the collector's own cost, added by many threads,
// reported as changes (the ProfilerOverhead records the session writes every flush interval).
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rfprof/collector/overhead.h"

namespace rf::collector {
namespace {

constexpr size_t kPhases = static_cast<size_t>(OverheadPhase::kCount);

TEST(Overhead, EveryPhaseHasItsOwnDottedName) {
  std::set<std::string> names;
  const std::regex form("[a-z]+\\.[a-z_]+");
  for (size_t i = 0; i < kPhases; ++i) {
    std::string name(overhead_phase_name(static_cast<OverheadPhase>(i)));
    EXPECT_TRUE(std::regex_match(name, form)) << "phase " << i << ": '" << name << "'";
    names.insert(name);
  }
  EXPECT_EQ(names.size(), kPhases);
  EXPECT_EQ(overhead_phase_name(OverheadPhase::kCount), "");
  // Each name as docs/trace-format.md ("ProfilerOverhead") lists it, which rfanalyze prints.
  const std::pair<OverheadPhase, const char*> documented[] = {
      {OverheadPhase::kSessionStart, "session.start"},
      {OverheadPhase::kCountersSetup, "counters.setup"},
      {OverheadPhase::kProfilerInitialize, "counters.profiler_initialize"},
      {OverheadPhase::kCounterAvailability, "counters.counter_availability"},
      {OverheadPhase::kConfigImage, "counters.config_image"},
      {OverheadPhase::kEnable, "counters.enable"},
      {OverheadPhase::kImageSetup, "counters.image_setup"},
      {OverheadPhase::kStart, "counters.start"},
      {OverheadPhase::kStop, "counters.stop"},
      {OverheadPhase::kDecode, "counters.decode"},
      {OverheadPhase::kEvaluate, "counters.evaluate"},
      {OverheadPhase::kDisable, "counters.disable"},
      {OverheadPhase::kLaunchCounters, "launch.counters"},
      {OverheadPhase::kLaunchCallbacks, "launch.callbacks"},
      {OverheadPhase::kActivityBuffer, "activity.buffer"},
      {OverheadPhase::kActivityFlush, "activity.flush"},
      {OverheadPhase::kWriterFlush, "writer.flush"},
      {OverheadPhase::kFinish, "session.finish"},
  };
  EXPECT_EQ(std::size(documented), kPhases);
  for (const auto& [phase, name] : documented) EXPECT_EQ(overhead_phase_name(phase), name);
}

TEST(Overhead, ManyThreadsAddExactTotalsAndTheLongestRun) {
  OverheadStats stats;
  constexpr int kThreads = 8, kAdds = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAdds; ++i) {
        stats.add(OverheadPhase::kLaunchCallbacks, static_cast<uint64_t>(i % 100));
        if (i == kAdds / 2) stats.add(OverheadPhase::kDecode, 1000u * static_cast<uint64_t>(t + 1));
      }
    });
  for (auto& th : threads) th.join();
  const OverheadTotals cb = stats.totals(OverheadPhase::kLaunchCallbacks);
  EXPECT_EQ(cb.count, uint64_t{kThreads} * kAdds);
  // Each thread adds 0..99 two hundred times: 200 * 4950.
  EXPECT_EQ(cb.total_ns, uint64_t{kThreads} * 200u * 4950u);
  EXPECT_EQ(cb.max_ns, 99u);
  const OverheadTotals decode = stats.totals(OverheadPhase::kDecode);
  EXPECT_EQ(decode.count, uint64_t{kThreads});
  EXPECT_EQ(decode.total_ns, 1000u * 36u);  // 1000 * (1 + ... + 8)
  EXPECT_EQ(decode.max_ns, 8000u);
  EXPECT_EQ(stats.totals(OverheadPhase::kEnable), OverheadTotals{});
}

TEST(Overhead, ChangesReportOnlyPhasesThatGrewWithTheirTotalsSinceTheStart) {
  OverheadStats stats;
  EXPECT_TRUE(stats.changes().empty());
  stats.add(OverheadPhase::kEnable, 2300000000ull);
  stats.add(OverheadPhase::kSessionStart, 5000);
  auto first = stats.changes();
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].phase, OverheadPhase::kSessionStart);  // phase order
  EXPECT_EQ(first[0].totals, (OverheadTotals{1, 5000, 5000}));
  EXPECT_EQ(first[1].phase, OverheadPhase::kEnable);
  EXPECT_TRUE(stats.changes().empty());  // nothing grew

  stats.add(OverheadPhase::kEnable, 100);
  auto second = stats.changes();
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].phase, OverheadPhase::kEnable);
  EXPECT_EQ(second[0].totals, (OverheadTotals{2, 2300000100ull, 2300000000ull}));  // cumulative
  EXPECT_TRUE(stats.changes().empty());
  stats.add(OverheadPhase::kCount, 7);  // not a phase: ignored
  EXPECT_TRUE(stats.changes().empty());
}

TEST(Overhead, PeriodicChangesSkipAnIdleProcessWhoseOnlyWorkWasFlushing) {
  OverheadStats stats;
  stats.add(OverheadPhase::kWriterFlush, 10);
  stats.add(OverheadPhase::kActivityFlush, 20);
  EXPECT_TRUE(stats.changes(/*skip_if_only_flushes=*/true).empty());  // idle: no record
  stats.add(OverheadPhase::kWriterFlush, 30);
  stats.add(OverheadPhase::kActivityBuffer, 40);  // real work: everything that grew is reported
  auto busy = stats.changes(true);
  ASSERT_EQ(busy.size(), 3u);
  EXPECT_EQ(busy[0].phase, OverheadPhase::kActivityBuffer);
  EXPECT_EQ(busy[1].phase, OverheadPhase::kActivityFlush);
  EXPECT_EQ(busy[2].phase, OverheadPhase::kWriterFlush);
  EXPECT_EQ(busy[2].totals, (OverheadTotals{2, 40, 30}));
  stats.add(OverheadPhase::kWriterFlush, 5);
  EXPECT_TRUE(stats.changes(true).empty());
  auto at_exit = stats.changes();  // finish: whatever grew
  ASSERT_EQ(at_exit.size(), 1u);
  EXPECT_EQ(at_exit[0].totals.count, 3u);
}

TEST(Overhead, AScopedTimerAddsItsScopeAndANullOneNothing) {
  OverheadStats stats;
  {
    ScopedOverhead timed(stats, OverheadPhase::kWriterFlush);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  {
    ScopedOverhead not_sampled(nullptr, OverheadPhase::kActivityFlush);
  }
  const OverheadTotals t = stats.totals(OverheadPhase::kWriterFlush);
  EXPECT_EQ(t.count, 1u);
  EXPECT_GE(t.total_ns, 20000000u);
  EXPECT_LT(t.total_ns, 5000000000u);
  EXPECT_EQ(t.max_ns, t.total_ns);
  EXPECT_EQ(stats.totals(OverheadPhase::kActivityFlush).count, 0u);
}

TEST(Overhead, OneCallbackInSixtyFourIsSampledOnEachThread) {
  auto count_sampled = [](int calls) {
    int n = 0;
    for (int i = 0; i < calls; ++i) n += sample_this_callback() ? 1 : 0;
    return n;
  };
  int other = 0;
  std::thread([&] { other = count_sampled(1); }).join();
  EXPECT_EQ(other, 1);  // a thread's first callback is sampled
  int first = 0, rest = 0;
  std::thread([&] {
    first = count_sampled(1);
    rest = count_sampled(static_cast<int>(kCallbackSampleEvery) * 10 - 1);
  }).join();
  EXPECT_EQ(first, 1);
  EXPECT_EQ(rest, 9);  // calls 64, 128, ..., 576 of 640
}

}  // namespace
}  // namespace rf::collector
