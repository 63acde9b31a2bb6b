// ContextTable (rfprof/collector/context_table.h): per-context setup once, never under the lock.
#include "rfprof/collector/context_table.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

namespace rf::collector {
namespace {

using namespace std::chrono_literals;

struct Profiler {
  int id;
};
using Table = ContextTable<Profiler>;

const void* ctx(uintptr_t n) { return reinterpret_cast<const void*>(n); }

/// Ends the test binary with a failure (exit 1, one line on stderr) unless destroyed within
/// `limit`: a ContextTable call that blocked where it must not would otherwise hang the test
/// (a blocked std::async future cannot be abandoned), not fail it.
class Watchdog {
 public:
  explicit Watchdog(std::chrono::seconds limit) : done_(std::make_shared<std::atomic<bool>>(false)) {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::thread([done = done_, limit, test] {
      const auto end = std::chrono::steady_clock::now() + limit;
      while (std::chrono::steady_clock::now() < end) {
        if (done->load()) return;
        std::this_thread::sleep_for(10ms);
      }
      std::fprintf(stderr, "FAILED: ContextTable.%s still blocked after %lld s: a call waited where it must not\n",
                   test.c_str(), static_cast<long long>(limit.count()));
      std::_Exit(1);
    }).detach();
  }
  ~Watchdog() { done_->store(true); }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

 private:
  std::shared_ptr<std::atomic<bool>> done_;
};

TEST(ContextTable, SetupRunsOnceAndConcurrentCallersGetItsResult) {
  Watchdog dog(10s);
  Table table;
  std::atomic<int> setups{0};
  std::vector<std::future<std::shared_ptr<Profiler>>> results;
  for (int i = 0; i < 8; ++i)
    results.push_back(std::async(std::launch::async, [&] {
      return table.get_or_setup(ctx(1), [&] {
        setups.fetch_add(1);
        std::this_thread::sleep_for(50ms);  // the others arrive while it runs
        return std::make_shared<Profiler>(Profiler{7});
      });
    }));
  std::shared_ptr<Profiler> first = results[0].get();
  ASSERT_TRUE(first);
  for (size_t i = 1; i < results.size(); ++i) EXPECT_EQ(results[i].get(), first);
  EXPECT_EQ(setups.load(), 1);
  EXPECT_EQ(table.find(ctx(1)), first);
}

// The deadlock this table exists to prevent: a setup (CUPTI calls) waits for another thread (a
// CUPTI callback) that looks the table up. With a lock held across the setup this would hang; the
// watchdog ends the test with a failure instead.
TEST(ContextTable, OtherThreadsLookupsDoNotWaitForASetup) {
  Watchdog dog(10s);
  Table table;
  bool other_finished = false;
  auto p = table.get_or_setup(ctx(1), [&] {
    auto other = std::async(std::launch::async, [&] {
      EXPECT_EQ(table.find(ctx(1)), nullptr);  // not set up yet: no wait
      EXPECT_TRUE(table.all().empty());
      return table.get_or_setup(ctx(2), [] { return std::make_shared<Profiler>(Profiler{2}); });
    });
    other_finished = other.wait_for(5s) == std::future_status::ready;
    if (other_finished) {
      EXPECT_EQ(other.get()->id, 2);
    }
    return std::make_shared<Profiler>(Profiler{1});
  });
  EXPECT_TRUE(other_finished);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 1);
  EXPECT_EQ(table.all().size(), 2u);
}

TEST(ContextTable, AskingAgainFromInsideTheSetupGetsNullAtOnce) {
  Watchdog dog(10s);  // a re-entry that waited would wait for itself
  Table table;
  std::shared_ptr<Profiler> inner = std::make_shared<Profiler>(Profiler{-1});
  int setups = 0;
  auto outer = table.get_or_setup(ctx(1), [&] {
    ++setups;
    inner = table.get_or_setup(ctx(1), [&] {
      ++setups;
      return std::make_shared<Profiler>(Profiler{2});
    });
    return std::make_shared<Profiler>(Profiler{1});
  });
  EXPECT_EQ(inner, nullptr);
  EXPECT_EQ(setups, 1);
  ASSERT_TRUE(outer);
  EXPECT_EQ(table.get_or_setup(ctx(1), [] { return std::make_shared<Profiler>(Profiler{3}); })->id, 1);
}

TEST(ContextTable, AFailedSetupIsNotRetriedUntilTheContextIsErased) {
  Table table;
  int setups = 0;
  auto failing = [&] {
    ++setups;
    return std::shared_ptr<Profiler>();
  };
  EXPECT_EQ(table.get_or_setup(ctx(1), failing), nullptr);
  EXPECT_EQ(table.get_or_setup(ctx(1), failing), nullptr);
  EXPECT_EQ(setups, 1);
  EXPECT_EQ(table.erase(ctx(1)), nullptr);  // a new context with the same handle
  auto p = table.get_or_setup(ctx(1), [] { return std::make_shared<Profiler>(Profiler{4}); });
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 4);
}

TEST(ContextTable, AThrowingSetupRethrowsAndRefusesTheContext) {
  Table table;
  EXPECT_THROW(table.get_or_setup(ctx(1), []() -> std::shared_ptr<Profiler> { throw std::runtime_error("x"); }),
               std::runtime_error);
  int setups = 0;
  EXPECT_EQ(table.get_or_setup(ctx(1),
                               [&] {
                                 ++setups;
                                 return std::make_shared<Profiler>(Profiler{1});
                               }),
            nullptr);
  EXPECT_EQ(setups, 0);
}

TEST(ContextTable, RefuseReturnsTheObjectAndStopsLaterSetups) {
  Table table;
  auto p = table.get_or_setup(ctx(1), [] { return std::make_shared<Profiler>(Profiler{1}); });
  EXPECT_EQ(table.refuse(ctx(1)), p);
  EXPECT_EQ(table.find(ctx(1)), nullptr);
  EXPECT_TRUE(table.all().empty());
  EXPECT_EQ(table.get_or_setup(ctx(1), [] { return std::make_shared<Profiler>(Profiler{2}); }), nullptr);
  // Another context is not affected.
  EXPECT_NE(table.get_or_setup(ctx(2), [] { return std::make_shared<Profiler>(Profiler{2}); }), nullptr);
}

TEST(ContextTable, AContextErasedDuringItsSetupDropsTheResult) {
  Watchdog dog(10s);  // an erase that waited for the setup would never return
  Table table;
  std::promise<void> started, erased;
  std::weak_ptr<Profiler> made;
  auto setter = std::async(std::launch::async, [&] {
    return table.get_or_setup(ctx(1), [&] {
      started.set_value();
      erased.get_future().wait();
      auto p = std::make_shared<Profiler>(Profiler{1});
      made = p;
      return p;
    });
  });
  started.get_future().wait();
  EXPECT_EQ(table.erase(ctx(1)), nullptr);
  erased.set_value();
  EXPECT_EQ(setter.get(), nullptr);
  EXPECT_TRUE(made.expired());  // destroyed, not kept for a context that went away
  EXPECT_EQ(table.find(ctx(1)), nullptr);
  // The next context with that handle is set up afresh.
  auto p = table.get_or_setup(ctx(1), [] { return std::make_shared<Profiler>(Profiler{5}); });
  ASSERT_TRUE(p);
  EXPECT_EQ(p->id, 5);
}

TEST(ContextTable, AWaiterSeesTheRefusalOfTheSetupItWaitedFor) {
  Watchdog dog(10s);
  Table table;
  std::promise<void> started, go;
  auto setter = std::async(std::launch::async, [&] {
    return table.get_or_setup(ctx(1), [&] {
      started.set_value();
      go.get_future().wait();
      return std::shared_ptr<Profiler>();  // failed
    });
  });
  started.get_future().wait();
  std::atomic<int> waiter_setups{0};
  auto waiter = std::async(std::launch::async, [&] {
    return table.get_or_setup(ctx(1), [&] {
      waiter_setups.fetch_add(1);
      return std::make_shared<Profiler>(Profiler{9});
    });
  });
  EXPECT_EQ(waiter.wait_for(100ms), std::future_status::timeout);  // waits for the setup
  go.set_value();
  EXPECT_EQ(setter.get(), nullptr);
  EXPECT_EQ(waiter.get(), nullptr);
  EXPECT_EQ(waiter_setups.load(), 0);
}

}  // namespace
}  // namespace rf::collector
