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

}  // namespace
}  // namespace rf::trace
