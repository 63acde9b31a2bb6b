// trace::PerThread (per_thread.h): one T per thread or key, and the walk over them that takes no
// lock, for a caller that must not wait on a thread stopped inside its first call.
#include "rfprof/trace/per_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

namespace rf::trace {
namespace {

/// A T whose construction (inside the registry's lock, on a thread's first call) waits until
/// `release` is set, as a thread stopped there by a signal would.
struct Gate {
  static inline std::atomic<bool> entered{false};
  static inline std::atomic<bool> release{true};
  Gate() {
    entered = true;
    while (!release.load()) std::this_thread::yield();
  }
  int value = 0;
};

TEST(PerThread, WalkWithoutLockDoesNotWaitForAThreadInsideItsFirstCall) {
  PerThread<Gate> per_thread;
  per_thread.of_key(1).value = 1;  // one entry already there
  Gate::entered = false;
  Gate::release = false;
  std::thread stuck([&] { per_thread.of_key(2).value = 2; });  // holds the registry lock, waiting
  while (!Gate::entered.load()) std::this_thread::yield();

  auto walk = std::async(std::launch::async, [&] {
    int sum = 0, count = 0;
    per_thread.for_each([&](Gate& g) {
      sum += g.value;
      ++count;
    });
    return std::make_pair(count, sum);
  });
  const bool returned = walk.wait_for(std::chrono::seconds(5)) == std::future_status::ready;
  Gate::release = true;  // let the stuck thread go whatever happened, so that the test ends
  stuck.join();
  ASSERT_TRUE(returned) << "the walk waited for the registry's lock";
  EXPECT_EQ(walk.get(), std::make_pair(1, 1));  // the entry being added is not seen

  int count = 0, sum = 0;
  per_thread.for_each([&](Gate& g) {
    sum += g.value;
    ++count;
  });
  EXPECT_EQ(count, 2);
  EXPECT_EQ(sum, 3);
}

TEST(PerThread, WalkWithoutLockSeesEveryEntryAddedBeforeItWhileThreadsAdd) {
  PerThread<std::atomic<int>> per_thread;
  constexpr int kThreads = 8;
  std::atomic<int> added{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      per_thread.of_key(100 + t).store(1);
      ++added;
    });
  for (int seen_before = 0; seen_before < kThreads;) {  // walks while the threads add
    const int done = added.load();
    int seen = 0;
    per_thread.for_each([&](std::atomic<int>&) { ++seen; });
    EXPECT_GE(seen, done);  // every entry whose first call returned before the walk
    EXPECT_LE(seen, kThreads);
    seen_before = done;
  }
  for (auto& t : threads) t.join();
  int ones = 0;
  per_thread.for_each([&](std::atomic<int>& v) { ones += v.load(); });
  EXPECT_EQ(ones, kThreads);
}

// Threads that come and go: a thread's T is handed back when it exits and given, as it was left,
// to a later thread, so the Ts are as many as the threads alive at once, not as the threads that
// ever ran (until 2026-11-29 only a later thread with the same std::thread::id got it back).
TEST(PerThread, ThreadsThatExitHandTheirTsToLaterThreads) {
  PerThread<int> per_thread;
  constexpr int kWaves = 200, kAtOnce = 8;
  std::atomic<int> inherited{0}, wrong{0};
  for (int w = 0; w < kWaves; ++w) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kAtOnce; ++t)
      threads.emplace_back([&] {
        bool handed = false;
        int& mine = per_thread.local(&handed);
        inherited += handed;
        wrong += handed != (mine != 0);  // a new T is 0; a handed-back one was set by its thread
        mine = 1;
        wrong += &per_thread.local() != &mine;
      });
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(per_thread.size(), size_t{kAtOnce});
  EXPECT_GE(inherited.load(), (kWaves - 1) * kAtOnce - kAtOnce);
  int walked = 0;
  per_thread.for_each([&](int& v) { walked += v; });  // handed-back Ts are still walked
  EXPECT_EQ(walked, static_cast<int>(per_thread.size()));
}

// Several instances of one T used in turn by one thread each keep their own T, without the
// registry lock while they fit the thread's cache (PerThread<NameCache> of -k and of --kernel-id's
// NAME at every launch: until 2026-11-29 the cache held one instance per T, and two instances
// used in turn took the registry lock at every call).
TEST(PerThread, InstancesOfOneTypeUsedInTurnEachKeepTheirOwn) {
  constexpr int kInstances = 6;  // more than the cache's ways: some are looked up again
  PerThread<int> instances[kInstances];
  auto check = [&](int base) {
    int wrong = 0;
    for (int round = 0; round < 100; ++round)
      for (int i = 0; i < kInstances; ++i) {
        int& v = instances[i].local();
        wrong += round > 0 && v != base + i;
        v = base + i;
      }
    return wrong;
  };
  EXPECT_EQ(check(10), 0);
  int other = -1;
  std::thread([&] { other = check(100); }).join();
  EXPECT_EQ(other, 0);
  EXPECT_EQ(check(10), 0);
  for (int i = 0; i < kInstances; ++i) EXPECT_EQ(instances[i].local(), 10 + i);
}

/// Calls `per_thread->local()` in its destructor, a thread_local destroyed after the thread
/// handed its Ts back (constructed before the thread's first local()).
struct LateUser {
  PerThread<int>* per_thread = nullptr;
  std::atomic<int>* seen = nullptr;
  ~LateUser() {
    if (per_thread) seen->store(per_thread->local() + 100);
  }
};

// A thread that uses a PerThread during its exit, after its Ts were handed back, gets a T that is
// not one it handed back to another thread (kept by it for good: the bound's exception).
TEST(PerThread, AThreadUsingItDuringItsExitGetsATOfItsOwn) {
  PerThread<int> per_thread;
  std::atomic<int> seen{0};
  std::thread([&] {
    thread_local LateUser late;
    late.per_thread = &per_thread;
    late.seen = &seen;
    per_thread.local() = 7;
  }).join();
  EXPECT_EQ(seen.load(), 100);  // a fresh T, not the 7 handed back
  EXPECT_EQ(per_thread.size(), 2u);
  // A later thread gets the handed-back T, or (with the same std::thread::id) the one kept.
  std::thread([&] { EXPECT_TRUE(per_thread.local() == 7 || per_thread.local() == 0); }).join();
  EXPECT_EQ(per_thread.size(), 2u);
}

}  // namespace
}  // namespace rf::trace
