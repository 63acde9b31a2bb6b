// LaunchLog (launch_log.h): windows, the kernel-record filter and launch indices, one thread at a
// time; tests/collector/test_launch_stress.cpp runs it from many threads at once.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <tuple>
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

TEST(LaunchLog, WindowRecordsCarryTheirTimeInNanosecondsAndLaunchesGoThroughTheThreadsWrite) {
  // Windows are written through write (the shared stream), launches through write_launch (the
  // launching thread's buffer, trace::Writer::append_buffered).
  std::vector<trace::Record> shared, buffered;
  LaunchSink sink{[&](const trace::Record& r) { shared.push_back(r); }, [](std::string_view) { return 1u; },
                  [&](const trace::Record& r) { buffered.push_back(r); }};
  LaunchLog log(false, sink);
  constexpr uint64_t kOpenedAt = 1700000000123456789ull;  // a CUPTI timestamp, in ns
  ASSERT_TRUE(log.open_window(kOpenedAt, 7).has_value());
  log.exit(log.enter(1, 0), trace::LaunchApi{}, "k");
  ASSERT_EQ(shared.size(), 1u);
  const auto* w = std::get_if<trace::ProfilingWindow>(&shared[0]);
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->timestamp_ns, kOpenedAt);
  ASSERT_EQ(buffered.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<trace::LaunchApi>(buffered[0]));
  LaunchLog from_start(true, sink);
  ASSERT_TRUE(from_start.process_start(kOpenedAt + 5).has_value());
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_EQ(std::get<trace::ProfilingWindow>(shared[1]).timestamp_ns, kOpenedAt + 5);
}

// A launch may stay in flight (entry to exit) while several short windows open after its own,
// one per training step with few launches: it is still written, in its window, with its index.
TEST(LaunchLog, ALaunchInFlightWhileDozensOfWindowsOpenIsStillWritten) {
  Recorded rec;
  LaunchLog log(false, rec.sink());
  ASSERT_EQ(log.open_window(1, 0), std::optional<uint32_t>(1));
  log.exit(log.enter(1, 0), trace::LaunchApi{});
  const LaunchTicket slow = log.enter(2, 0);
  ASSERT_EQ(log.close_window(), std::optional<uint32_t>(1));
  uint32_t corr = 10;
  for (uint32_t w = 2; w <= 33; ++w) {
    ASSERT_EQ(log.open_window(w, 0), std::optional<uint32_t>(w));
    log.exit(log.enter(++corr, 0), trace::LaunchApi{});
    ASSERT_EQ(log.close_window(), std::optional<uint32_t>(w));
  }
  trace::LaunchApi l;
  l.correlation_id = 2;
  log.exit(slow, l);
  auto launches = rec.launches();
  ASSERT_EQ(launches.size(), 34u);
  EXPECT_EQ(launches.back().correlation_id, 2u);
  EXPECT_EQ(launches.back().window_id, 1u);
  EXPECT_EQ(launches.back().launch_index, 1u);
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

TEST(LaunchLog, SkipWithoutCountAndCountWithoutSkip) {
  // ncu -s 2 (every launch from the third on) and ncu -c 2 (the first two).
  for (const auto& [skip, count, expected] :
       std::vector<std::tuple<uint64_t, std::optional<uint64_t>, std::vector<bool>>>{
           {2, std::nullopt, {false, false, true, true, true}},
           {1, std::nullopt, {false, true, true, true, true}},
           {0, 2, {true, true, false, false, false}}}) {
    Recorded rec;
    LaunchLog log(false, rec.sink());
    log.set_launch_range(skip, count);
    ASSERT_TRUE(log.open_window(1, 0).has_value());
    std::vector<bool> in_window;
    for (uint32_t c = 1; c <= 5; ++c) in_window.push_back(log.enter(c, 0).in_window);
    EXPECT_EQ(in_window, expected) << "-s " << skip << " -c " << count.value_or(0);
  }
}

TEST(LaunchLog, CurrentWindowIsTheOpenOneOnly) {
  Recorded rec;
  LaunchLog log(false, rec.sink());
  EXPECT_EQ(log.current_window(), std::nullopt);
  ASSERT_EQ(log.open_window(1, 0), std::optional<uint32_t>(1));
  EXPECT_EQ(log.current_window(), std::optional<uint32_t>(1));
  log.close_window();
  EXPECT_EQ(log.current_window(), std::nullopt) << "after cudaProfilerStop no window is current";
  ASSERT_EQ(log.open_window(2, 0), std::optional<uint32_t>(2));
  EXPECT_EQ(log.current_window(), std::optional<uint32_t>(2));
}

// enter_admitted (--kernel-id, --filter-mode, --launch-skip-before-match): `admit` is asked only
// inside an open window, so those counts never see a launch outside every window, and its answer
// decides the ticket and the kernel-record filter; set_launch_range's -s/-c are not applied.
TEST(LaunchLog, EnterAdmittedAsksOnlyInsideWindows) {
  Recorded rec;
  LaunchLog log(false, rec.sink());
  log.set_launch_range(5, 1);  // would refuse everything below: not applied by enter_admitted
  int asked = 0;
  auto launch = [&](uint32_t corr, bool answer) {
    LaunchTicket t = log.enter_admitted(corr, 0, [&] {
      ++asked;
      return answer;
    });
    trace::LaunchApi l;
    l.correlation_id = corr;
    log.exit(t, l, "k");
    return t.in_window;
  };
  EXPECT_FALSE(launch(1, true));
  EXPECT_EQ(asked, 0);
  ASSERT_TRUE(log.open_window(1, 0).has_value());
  EXPECT_TRUE(launch(2, true));
  EXPECT_FALSE(launch(3, false));
  EXPECT_TRUE(launch(4, true));
  EXPECT_EQ(asked, 3);
  log.close_window();
  EXPECT_FALSE(launch(5, true));
  EXPECT_EQ(asked, 3);
  std::vector<uint32_t> recorded;
  for (const auto& l : rec.launches()) recorded.push_back(l.correlation_id);
  EXPECT_EQ(recorded, (std::vector<uint32_t>{2, 4}));
  EXPECT_TRUE(log.kernel_kept(2));
  EXPECT_FALSE(log.kernel_kept(3));
  EXPECT_FALSE(log.kernel_kept(5));
}

TEST(LaunchLog, ManyMoreWindowsThanSlotsKeepDenseIndicesAndAStaleTicketWritesNothing) {
  // Each window's launch counter lives in slot window % kWindowSlots: a slot reused by a later
  // window starts again at 0, and a ticket of the window that used the slot before is refused.
  Recorded rec;
  LaunchLog log(false, rec.sink());
  constexpr uint32_t kWindows = 2 * LaunchLog::kWindowSlots + 3;
  uint32_t corr = 0;
  LaunchTicket stale;
  uint32_t stale_corr = 0;
  for (uint32_t w = 1; w <= kWindows; ++w) {
    ASSERT_EQ(log.open_window(w, 0), std::optional<uint32_t>(w));
    for (int i = 0; i < 3; ++i) log.exit(log.enter(++corr, 0), trace::LaunchApi{});
    if (w == 2) stale = log.enter(stale_corr = ++corr, 0);  // in flight while 64 more windows open
    ASSERT_EQ(log.close_window(), std::optional<uint32_t>(w));
  }
  log.exit(stale, trace::LaunchApi{});  // its slot now counts window 2 + 2 * kWindowSlots
  std::map<uint32_t, std::vector<uint64_t>> indices;
  for (const auto& l : rec.launches()) indices[l.window_id].push_back(l.launch_index);
  ASSERT_EQ(indices.size(), kWindows);
  for (const auto& [w, idx] : indices) EXPECT_EQ(idx, (std::vector<uint64_t>{0, 1, 2})) << "window " << w;
  EXPECT_TRUE(log.kernel_kept(stale_corr)) << "its kernel ran inside window 2: kept";
}

TEST(CorrelationLog, AThreadFarAheadOfTheAskingSideLosesNoDecision) {
  // One thread records 5 ring lengths of decisions without anybody asking: a full ring is applied
  // by the recording thread itself. Ids run in blocks of 100 accepted, 50 rejected.
  CorrelationLog log;
  constexpr uint32_t kIds = 5 * CorrelationLog::kRingEntries;
  auto accepted = [](uint32_t id) { return id % 150 < 100; };
  for (uint32_t id = 1; id <= kIds; ++id) log.record(id, 0, accepted(id));
  for (uint32_t id = 1; id <= kIds; ++id) ASSERT_EQ(log.contains(id), accepted(id)) << id;
  EXPECT_LE(log.intervals(), kIds / 150 + 2) << "one interval per block of accepted ids";
  EXPECT_FALSE(log.contains(0));
}

TEST(CorrelationLog, ARuntimeIdAndItsDriverIdExtendOneIntervalCountedWithoutAsking) {
  // Launches whose runtime call has an id of its own just below the driver call's (CUPTI gives
  // both from one counter). After a rejected launch the next accepted one starts a new interval:
  // its runtime id first, then its driver id next to it, so that a window of launches stays one
  // interval. intervals() counts the decisions still in the rings, with nobody having asked.
  CorrelationLog log;
  log.record(2, 1, false);
  log.record(4, 3, true);
  log.record(6, 5, true);
  log.record(8, 7, false);
  log.record(10, 9, true);
  log.record(12, 11, true);
  EXPECT_EQ(log.intervals(), 2u);  // [3, 6] and [9, 12]
  for (uint32_t id = 1; id <= 12; ++id) EXPECT_EQ(log.contains(id), (id >= 3 && id <= 6) || id >= 9) << id;
}

TEST(CorrelationLog, DecisionsOfManyThreadsAreAnsweredWhileTheyRecord) {
  // 8 threads take ids from one counter (CUPTI's correlation ids), half of the launches with a
  // runtime id first, and record a decision per launch while another thread keeps asking.
  CorrelationLog log;
  constexpr int kThreads = 8;
  constexpr uint32_t kPerThread = 20000;
  auto accepted = [](uint32_t id) { return (id / 97) % 3 != 0 || id % 11 == 0; };
  std::vector<int8_t> expected(kThreads * kPerThread * 2 + 1, -1);  // -1: not a launch's id
  std::atomic<uint32_t> next{1};
  std::atomic<bool> stop{false};
  std::thread asking([&] {
    uint32_t id = 1;
    while (!stop.load()) (void)log.contains(id++ % (kThreads * kPerThread * 2));
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (uint32_t i = 0; i < kPerThread; ++i) {
        uint32_t runtime = 0;
        if ((i + static_cast<uint32_t>(t)) % 2 == 0) runtime = next.fetch_add(1);
        const uint32_t id = next.fetch_add(1);
        const bool keep = accepted(id);
        expected[id] = keep;
        if (runtime) expected[runtime] = keep;
        log.record(id, runtime, keep);
      }
    });
  for (auto& th : threads) th.join();
  stop = true;
  asking.join();
  size_t kept = 0, dropped = 0;
  for (uint32_t id = 1; id < next.load(); ++id) {
    ASSERT_NE(expected[id], -1) << id;
    ASSERT_EQ(log.contains(id), expected[id] == 1) << id;
    (expected[id] ? kept : dropped)++;
  }
  EXPECT_GT(kept, 0u);
  EXPECT_GT(dropped, 0u);
}

}  // namespace
}  // namespace rf::collector
