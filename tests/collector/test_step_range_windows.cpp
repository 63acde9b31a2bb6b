// NVTX-range windows for replay across steps (step_range_windows.h): which push/pop or start/end
// opens and closes the window, nested and concurrent ranges, and the name rule.
#include "rfprof/collector/step_range_windows.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace rf::collector {
namespace {

using E = StepRangeEvent;

// examples/imagenet/main.py: "step i" holding "forward", "backward", "optimizer".
TEST(StepRangeWindows, EachStepRangeIsOneWindow) {
  StepRangeWindows w("regex:^step ");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(w.push(1, "step " + std::to_string(i)), E::kOpen);
    EXPECT_TRUE(w.open());
    EXPECT_EQ(w.push(1, "forward"), E::kNone);
    EXPECT_EQ(w.pop(1), E::kNone);  // forward
    EXPECT_EQ(w.push(1, "backward"), E::kNone);
    EXPECT_EQ(w.pop(1), E::kNone);
    EXPECT_EQ(w.pop(1), E::kClose);  // step i
    EXPECT_FALSE(w.open());
  }
}

TEST(StepRangeWindows, NestedOrOtherThreadsRangesDoNotCloseIt) {
  StepRangeWindows w("step");
  EXPECT_EQ(w.push(1, "epoch"), E::kNone);
  EXPECT_EQ(w.push(1, "step"), E::kOpen);
  EXPECT_EQ(w.push(1, "step"), E::kNone);  // a step inside the step: not a second window
  EXPECT_EQ(w.pop(1), E::kNone);
  EXPECT_EQ(w.push(2, "step"), E::kNone);  // another thread's step while one is open
  EXPECT_EQ(w.pop(2), E::kNone);
  EXPECT_EQ(w.pop(2), E::kNone);           // a pop without a push
  EXPECT_EQ(w.pop(1), E::kClose);
  EXPECT_EQ(w.pop(1), E::kNone);           // epoch
  EXPECT_EQ(w.push(2, "step"), E::kOpen);  // now the other thread's step opens one
  EXPECT_EQ(w.pop(2), E::kClose);
}

TEST(StepRangeWindows, StartEndRangesById) {
  StepRangeWindows w("train_step");
  EXPECT_EQ(w.start(7, "warmup"), E::kNone);
  EXPECT_EQ(w.start(8, "train_step"), E::kOpen);
  EXPECT_EQ(w.end(7), E::kNone);
  EXPECT_EQ(w.push(1, "x"), E::kNone);
  EXPECT_EQ(w.pop(1), E::kNone);  // a pop never closes a start/end window
  EXPECT_EQ(w.end(8), E::kClose);
  EXPECT_EQ(w.end(8), E::kNone);
}

TEST(StepRangeWindows, OneWindowAtATimeWhateverKindOpenedIt) {
  StepRangeWindows w("step");
  EXPECT_EQ(w.start(1, "step"), E::kOpen);
  EXPECT_EQ(w.start(2, "step"), E::kNone);  // a second step range while one is open: not taken over
  EXPECT_EQ(w.end(2), E::kNone);
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.end(1), E::kClose);
  EXPECT_EQ(w.push(5, "step"), E::kOpen);  // a push/pop window opened by thread 5
  EXPECT_EQ(w.start(6, "step"), E::kNone);
  EXPECT_EQ(w.end(5), E::kNone);  // range id 5 is not thread 5's pushed range
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.pop(5), E::kClose);  // after a start/end window, a push/pop one closes at its pop
  EXPECT_FALSE(w.open());
}

// NVTX keeps one push/pop stack per domain and thread: another domain's pushes and pops never
// open, close or shift the step's window, whichever order they come in.
TEST(StepRangeWindows, EachDomainHasItsOwnStack) {
  const uint64_t lib = 0x1234;  // a domain handle; 0 is the default domain
  StepRangeWindows w("step");
  EXPECT_EQ(w.push(7, "prefetch", lib), E::kNone);
  EXPECT_EQ(w.push(7, "step"), E::kOpen);
  EXPECT_EQ(w.pop(7, lib), E::kNone);  // the other domain's range ends inside the step
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.push(7, "io", lib), E::kNone);
  EXPECT_EQ(w.pop(7), E::kClose);  // the step ends; the other domain's range is still open
  EXPECT_EQ(w.pop(7, lib), E::kNone);
  EXPECT_EQ(w.push(7, "step", lib), E::kOpen);  // a step range in another domain is a step too
  EXPECT_EQ(w.push(7, "x"), E::kNone);
  EXPECT_EQ(w.pop(7), E::kNone);  // the default domain's pop is not the step's
  EXPECT_EQ(w.pop(7, lib), E::kClose);
  EXPECT_EQ(w.pop(7, lib), E::kNone);  // a pop without a push
}

TEST(StepRangeWindows, NameRule) {
  StepRangeWindows exact("step");
  EXPECT_TRUE(exact.matches("step"));
  EXPECT_FALSE(exact.matches("step 1"));
  StepRangeWindows re("regex:^step [0-9]+$");
  EXPECT_TRUE(re.matches("step 12"));
  EXPECT_FALSE(re.matches("substep 12"));
  EXPECT_FALSE(re.matches("Step 12"));  // case-sensitive, as NVTX names are
  EXPECT_FALSE(exact.matches("Step"));
  // A huge range name is searched in its first 4096 bytes (regex_subject.h): no stack overflow.
  StepRangeWindows rep("regex:^(a|b)*$");
  EXPECT_TRUE(rep.matches(std::string(1 << 20, 'a') + "c"));  // the c lies past the bound
  EXPECT_THROW(StepRangeWindows(""), std::invalid_argument);
  try {
    StepRangeWindows bad("regex:(");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("not a valid regular expression"), std::string::npos);
  }
}

// While no window is open, a thread answers a name it searched before from its cache: over 300
// names, more than the cache has slots (so names share slots and evict each other), in three
// rounds, every push opens a window exactly when the rule matches the name.
TEST(StepRangeWindows, CachedAnswersAreTheRulesWhateverTheOrderOfNames) {
  StepRangeWindows w("regex:^step [0-9]+$");
  std::vector<std::string> names;
  for (int i = 0; i < 100; ++i) {
    names.push_back("step " + std::to_string(i));
    names.push_back("substep " + std::to_string(i));
    names.push_back("step " + std::to_string(i) + " of the epoch");
  }
  ASSERT_GT(names.size(), StepRangeWindows::kNameCacheSlots * 4);
  int opened = 0;
  for (int round = 0; round < 3; ++round)
    for (size_t k = 0; k < names.size(); ++k) {
      const std::string& name = names[(k * 7 + round) % names.size()];
      const bool match = w.matches(name);
      ASSERT_EQ(w.push(3, name) == E::kOpen, match) << name << " in round " << round;
      ASSERT_EQ(w.pop(3) == E::kClose, match) << name;
      opened += match;
    }
  EXPECT_EQ(opened, 300);
}

// PyTorch's emit_nvtx: the training thread's step range, and ranges around every operator on other
// threads (the autograd engine's) at the same time, in the default domain and another, with
// start/end ranges too. Only the step range opens and closes the window; the other threads' ranges
// never do, however they interleave (also run under ThreadSanitizer: scripts/run-tests).
TEST(StepRangeWindows, OtherThreadsRangesNeverOpenOrCloseTheWindowWhileTheyRunAtOnce) {
  StepRangeWindows w("step");
  constexpr int kSteps = 300, kOps = 3000, kOthers = 3;
  std::atomic<int> others_events{0};
  std::vector<std::thread> others;
  for (int t = 0; t < kOthers; ++t)
    others.emplace_back([&, t] {
      const uint64_t thread = 100 + t, domain = t % 2 ? 0x99 : 0;
      int events = 0;
      for (int i = 0; i < kOps; ++i) {
        events += w.push(thread, "aten::mm", domain) != E::kNone;
        events += w.push(thread, "aten::add", domain) != E::kNone;
        events += w.pop(thread, domain) != E::kNone;
        events += w.start(1000000 * (t + 1) + i, "prefetch") != E::kNone;
        events += w.pop(thread, domain) != E::kNone;
        events += w.end(1000000 * (t + 1) + i) != E::kNone;
        events += w.pop(thread, domain) != E::kNone;  // a pop without a push
      }
      others_events += events;
    });
  int opens = 0, closes = 0, nested = 0;
  for (int i = 0; i < kSteps; ++i) {
    opens += w.push(1, "step 1") == E::kOpen;  // not the rule's name
    (void)w.pop(1);
    opens += w.push(1, "step") == E::kOpen;
    nested += w.push(1, "forward") != E::kNone;
    nested += w.pop(1) != E::kNone;
    closes += w.pop(1) == E::kClose;
  }
  for (auto& t : others) t.join();
  EXPECT_EQ(opens, kSteps);
  EXPECT_EQ(closes, kSteps);
  EXPECT_EQ(nested, 0);
  EXPECT_EQ(others_events.load(), 0);
  EXPECT_FALSE(w.open());
}

// Several threads push the step range at once: one window at a time, and the thread whose push
// opened it is the one whose pop closes it. Each window's [after open, before close] ticket
// interval lies inside the real window, so two windows open at once would show as overlapping
// intervals.
TEST(StepRangeWindows, ThreadsPushingTheStepAtOnceGetOneWindowAtATime) {
  StepRangeWindows w("regex:^step");
  constexpr int kThreads = 4, kIterations = 2000;
  std::atomic<uint64_t> ticket{0};
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> windows(kThreads);
  std::vector<int> mismatched(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const uint64_t thread = 10 + t;
      for (int i = 0; i < kIterations; ++i) {
        const bool opened = w.push(thread, "step") == E::kOpen;
        const uint64_t from = opened ? ticket.fetch_add(1) : 0;
        mismatched[t] += w.push(thread, "inner") != E::kNone;
        mismatched[t] += w.pop(thread) != E::kNone;
        const uint64_t to = opened ? ticket.fetch_add(1) : 0;
        const bool closed = w.pop(thread) == E::kClose;
        mismatched[t] += opened != closed;
        if (opened) windows[t].emplace_back(from, to);
      }
    });
  for (auto& t : threads) t.join();
  std::vector<std::pair<uint64_t, uint64_t>> all;
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(mismatched[t], 0) << "thread " << t;
    all.insert(all.end(), windows[t].begin(), windows[t].end());
  }
  ASSERT_FALSE(all.empty());
  std::sort(all.begin(), all.end());
  for (size_t i = 1; i < all.size(); ++i)
    EXPECT_LT(all[i - 1].second, all[i].first) << "two windows open at once";
  EXPECT_FALSE(w.open());
}

// The count that "none matching it" gives: every push and start of every thread, counted in the
// thread's own state, whether a window is open or not.
TEST(StepRangeWindows, RangesSeenCountsEveryThreadsPushesAndStarts) {
  StepRangeWindows w("regex:^step ");
  EXPECT_EQ(w.ranges_seen(), 0u);
  constexpr int kThreads = 3, kRanges = 2000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const uint64_t thread = 10 + t;
      for (int i = 0; i < kRanges; ++i) {
        (void)w.push(thread, i % 7 ? "aten::mm" : "step 3", t % 2 ? 0x42 : 0);  // opens a window now and then
        (void)w.pop(thread, t % 2 ? 0x42 : 0);
        (void)w.start(uint64_t(t) << 32 | i, "prefetch");
        (void)w.end(uint64_t(t) << 32 | i);
      }
    });
  // Read while the threads push (as a finish may): never more than pushed, never going back.
  for (uint64_t last = 0, i = 0; i < 200; ++i) {
    const uint64_t now = w.ranges_seen();
    EXPECT_GE(now, last);
    EXPECT_LE(now, uint64_t{2} * kThreads * kRanges);
    last = now;
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(w.ranges_seen(), uint64_t{2} * kThreads * kRanges);
  (void)w.push(10, "step 4");  // a thread seen before: its count goes on
  EXPECT_EQ(w.ranges_seen(), uint64_t{2} * kThreads * kRanges + 1);
}

// Threads that come and go as a DataLoader's pin-memory threads or a pool recreated per epoch do,
// each pushing ranges as the session calls the windows (StepRangeWindows::kCallingThread), while
// the training thread holds the step's window open and after it closed it: the windows hold
// states for the threads alive at once, every push is still counted, and a thread handed an
// exited thread's state opens and closes windows as its own. Until 2026-11-30 the session named
// threads by gettid() and each one's state stayed for the run (2,001 states here).
TEST(StepRangeWindows, ThreadsThatComeAndGoLeaveNoDepthsBehind) {
  StepRangeWindows w("regex:^step ");
  constexpr uint64_t me = StepRangeWindows::kCallingThread;
  constexpr int kWaves = 250, kAtOnce = 8;
  std::atomic<int> wrong{0};
  auto wave = [&](bool window_open) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kAtOnce; ++t)
      threads.emplace_back([&, t] {
        wrong += w.push(me, "pin_memory") != E::kNone;
        if (window_open) {
          wrong += w.push(me, "step 1") != E::kNone;  // inside the open window: nothing
          wrong += w.pop(me) != E::kNone;
        } else if (t == 0) {  // one thread of the wave opens and closes a window
          wrong += w.push(me, "step 1") != E::kOpen;
          wrong += w.pop(me) != E::kClose;
        } else {
          wrong += w.push(me, "aten::mm") != E::kNone;
          wrong += w.pop(me) != E::kNone;
        }
        wrong += w.pop(me) != E::kNone;
        wrong += w.pop(me) != E::kNone;  // a pop without a push
      });
    for (auto& th : threads) th.join();
  };
  ASSERT_EQ(w.push(me, "step 0"), E::kOpen);
  for (int i = 0; i < kWaves / 2; ++i) wave(true);
  EXPECT_EQ(w.pop(me), E::kClose);
  for (int i = kWaves / 2; i < kWaves; ++i) wave(false);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_FALSE(w.open());
  EXPECT_LE(w.threads_held(), size_t{kAtOnce} + 1);  // the waves' and this thread's
  EXPECT_EQ(w.ranges_seen(), uint64_t{2} * kWaves * kAtOnce + 1);  // the exited threads' pushes too
}

// A thread handed the state of a thread that exited inside the step's window, its range never
// popped, starts at depth 0 in every domain and is not the window's owner: none of its pops, at
// whatever depth, closes that window, which stays open (NVTX never ends the range) until the run's
// end. The owner is the state's serial, new at each hand-over, not a thread id a later thread may
// be given (Linux reuses tids) nor one shared by all callers (kCallingThread).
TEST(StepRangeWindows, AThreadHandedAnExitedOwnersStateDoesNotCloseItsWindow) {
  StepRangeWindows w("step");
  constexpr uint64_t me = StepRangeWindows::kCallingThread, lib = 0x77;
  std::thread([&] {
    EXPECT_EQ(w.push(me, "prefetch", lib), E::kNone);
    EXPECT_EQ(w.push(me, "epoch"), E::kNone);
    EXPECT_EQ(w.push(me, "step"), E::kOpen);  // depth 2; the thread exits inside it
  }).join();
  ASSERT_TRUE(w.open());
  int events = 0;
  std::thread([&] {
    events += w.pop(me) != E::kNone;       // a pop without a push: not the epoch's
    events += w.pop(me, lib) != E::kNone;  // nor the prefetch's
    events += w.push(me, "a") != E::kNone;
    events += w.push(me, "b") != E::kNone;  // depth 2 in the default domain, as the step was
    events += w.pop(me) != E::kNone;
    events += w.pop(me) != E::kNone;
    events += w.pop(me) != E::kNone;
    events += w.push(me, "step") != E::kNone;  // a step while the window is open: nothing
    events += w.pop(me) != E::kNone;
  }).join();
  EXPECT_EQ(events, 0);
  EXPECT_TRUE(w.open());
  EXPECT_EQ(w.threads_held(), 1u) << "the second thread was handed the first one's state";
  EXPECT_EQ(w.ranges_seen(), 6u);
}

}  // namespace
}  // namespace rf::collector
