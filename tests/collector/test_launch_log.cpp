// LaunchLog (launch_log.h): windows, the kernel-record filter and launch indices, one thread at a
// time; tests/collector/test_launch_stress.cpp runs it from many threads at once.
#include <gtest/gtest.h>

#include <vector>

#include "rfprof/collector/launch_log.h"

namespace rf::collector {
namespace {

/// Records what LaunchLog writes, with strings numbered in order of first use.
struct Recorded {
  std::vector<trace::Record> records;
  std::vector<std::string> strings;
  LaunchSink sink() {
    return {[this](const trace::Record& r) { records.push_back(r); },
            [this](std::string_view s) {
              strings.emplace_back(s);
              return static_cast<trace::StringId>(strings.size());
            }};
  }
  std::vector<trace::LaunchApi> launches() const {
    std::vector<trace::LaunchApi> out;
    for (const auto& r : records)
      if (auto* l = std::get_if<trace::LaunchApi>(&r)) out.push_back(*l);
    return out;
  }
};

TEST(LaunchLog, LaunchesInsideAWindowAreWrittenAndKeptOutsideNeither) {
  Recorded rec;
  LaunchLog log(false, rec.sink());
  EXPECT_FALSE(log.process_start(1).has_value());
  LaunchTicket outside = log.enter(5, 4);
  EXPECT_FALSE(outside.in_window);
  log.exit(outside, trace::LaunchApi{}, "k");
  ASSERT_EQ(log.open_window(2, 7), std::optional<uint32_t>(1));
  LaunchTicket inside = log.enter(9, 8);
  EXPECT_TRUE(inside.in_window);
  EXPECT_EQ(inside.window, 1u);
  trace::LaunchApi l;
  l.correlation_id = 9;
  log.exit(inside, l, "kern");
  EXPECT_EQ(log.close_window(), std::optional<uint32_t>(1));

  auto launches = rec.launches();
  ASSERT_EQ(launches.size(), 1u);
  EXPECT_EQ(launches[0].correlation_id, 9u);
  EXPECT_EQ(launches[0].window_id, 1u);
  EXPECT_EQ(launches[0].launch_index, 0u);
  ASSERT_EQ(launches[0].kernel_name, 1u);
  EXPECT_EQ(rec.strings[0], "kern");
  EXPECT_FALSE(log.kernel_kept(4));
  EXPECT_FALSE(log.kernel_kept(5));
  EXPECT_TRUE(log.kernel_kept(8));
  EXPECT_TRUE(log.kernel_kept(9));
  // The open record precedes the launch; the close record is the caller's.
  ASSERT_EQ(rec.records.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<trace::ProfilingWindow>(rec.records[0]));
  EXPECT_TRUE(std::get<trace::ProfilingWindow>(rec.records[0]).begin);
  EXPECT_EQ(std::get<trace::ProfilingWindow>(rec.records[0]).cbid, 7u);
}

TEST(LaunchLog, ALaunchInFlightAcrossAWindowChangeKeepsItsWindowAndIndex) {
  // Thread A enters in window 1; window 1 closes and window 2 opens before A's exit. A belongs to
  // window 1 (index 1 there), window 2's launches are numbered 0, 1. (With one counter reset at
  // every open, A took the next index of window 2's count and window 2 was numbered 0, 2: found by
  // test_launch_stress.)
  Recorded rec;
  LaunchLog log(true, rec.sink());
  ASSERT_EQ(log.process_start(1), std::optional<uint32_t>(0));
  log.exit(log.enter(1, 0), trace::LaunchApi{});  // window 0, index 0
  ASSERT_EQ(log.close_window(), std::optional<uint32_t>(0));
  ASSERT_EQ(log.open_window(2, 0), std::optional<uint32_t>(1));
  log.exit(log.enter(2, 0), trace::LaunchApi{});  // window 1, index 0
  LaunchTicket a = log.enter(3, 0);
  ASSERT_EQ(log.close_window(), std::optional<uint32_t>(1));
  ASSERT_EQ(log.open_window(3, 0), std::optional<uint32_t>(2));
  LaunchTicket b = log.enter(4, 0);
  log.exit(b, trace::LaunchApi{});
  log.exit(a, trace::LaunchApi{});
  log.exit(log.enter(5, 0), trace::LaunchApi{});

  auto launches = rec.launches();
  ASSERT_EQ(launches.size(), 5u);
  std::vector<std::pair<uint32_t, uint64_t>> got;
  for (const auto& l : launches) got.emplace_back(l.window_id, l.launch_index);
  EXPECT_EQ(got, (std::vector<std::pair<uint32_t, uint64_t>>{{0, 0}, {1, 0}, {2, 0}, {1, 1}, {2, 1}}));
}

TEST(LaunchLog, FailedLaunchesTakeNoIndexAndCountersModeKeepsItsOwn) {
  Recorded rec;
  LaunchLog log(true, rec.sink());
  log.process_start(1);
  log.exit(log.enter(1, 0), std::nullopt);  // the launch failed: nothing written
  trace::LaunchApi counted;
  counted.launch_index = 41;  // the Range Profiler's range index
  log.exit(log.enter(2, 0), counted, "", /*keep_index=*/true);
  log.exit(log.enter(3, 0), trace::LaunchApi{});
  auto launches = rec.launches();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].launch_index, 41u);
  EXPECT_EQ(launches[0].kernel_name, 0u);  // "" (graph launch): no string
  EXPECT_EQ(launches[1].launch_index, 0u);
  EXPECT_TRUE(rec.strings.empty());
}

TEST(LaunchLog, SkipAndCountApplyToSelectedLaunchesInsideWindows) {
  Recorded rec;
  LaunchLog log(false, rec.sink());
  log.set_launch_range(2, 3);  // ncu -s 2 -c 3
  uint32_t corr = 100;
  auto launch = [&](bool selected) {
    const uint32_t c = ++corr;
    LaunchTicket t = log.enter(c, 0, selected);
    trace::LaunchApi l;
    l.correlation_id = c;
    log.exit(t, l, "k");
    return t.in_window;
  };
  EXPECT_FALSE(launch(true));   // outside every window: not counted
  ASSERT_TRUE(log.open_window(1, 0).has_value());
  EXPECT_FALSE(launch(true));   // selected #0: skipped
  EXPECT_FALSE(launch(false));  // refused by the filters: not counted
  EXPECT_FALSE(launch(true));   // #1: skipped
  EXPECT_TRUE(launch(true));    // #2
  EXPECT_TRUE(launch(false) == false);
  EXPECT_TRUE(launch(true));    // #3
  log.close_window();
  EXPECT_FALSE(launch(true));   // between windows: not counted
  ASSERT_TRUE(log.open_window(2, 0).has_value());
  EXPECT_TRUE(launch(true));    // #4: the third and last
  EXPECT_FALSE(launch(true));   // #5: past the count
  std::vector<uint32_t> recorded;
  for (const auto& l : rec.launches()) recorded.push_back(l.correlation_id);
  EXPECT_EQ(recorded, (std::vector<uint32_t>{105, 107, 109}));
  EXPECT_FALSE(log.kernel_kept(102));  // skipped launches' kernels are not kept either
  EXPECT_TRUE(log.kernel_kept(105));
  EXPECT_FALSE(log.kernel_kept(110));
}

}  // namespace
}  // namespace rf::collector
