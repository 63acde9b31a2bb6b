// BatchThread (batch_thread.h): order, draining, bounded memory, errors and shutdown. Its own
// executable, without the analyzer library, so the ThreadSanitizer build in CI runs it cheaply.
#include "rfprof/analyzer/batch_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace rf::analyzer {
namespace {

using namespace std::chrono_literals;

/// Polls `done` for up to 10 s; whether it became true.
template <typename F>
bool eventually(F done) {
  for (auto end = std::chrono::steady_clock::now() + 10s; std::chrono::steady_clock::now() < end;) {
    if (done()) return true;
    std::this_thread::sleep_for(1ms);
  }
  return done();
}

/// A consumer held at its first item until `release`: counts the items it consumed.
struct HeldConsumer {
  std::atomic<bool> held{false}, release{false};
  std::atomic<int> consumed{0};
  std::function<void(const int&)> consume() {
    return [this](const int&) {
      held = true;
      while (!release) std::this_thread::sleep_for(std::chrono::microseconds(100));
      consumed.fetch_add(1);
    };
  }
};

TEST(BatchThread, ItemsAreConsumedInOrderOnAThreadOfTheirOwn) {
  for (size_t batch : {1, 2, 7, 1024}) {
    std::vector<std::string> seen;
    std::thread::id consumer;
    BatchThread<std::string> t(
        [&](const std::string& s) {
          seen.push_back(s);
          consumer = std::this_thread::get_id();
        },
        batch);
    ASSERT_TRUE(t.threaded());
    std::vector<std::string> given;
    for (int i = 0; i < 5000; ++i) {
      // Lengths vary, so a reused item's memory holds longer and shorter strings in turn.
      given.push_back(std::to_string(i) + std::string(static_cast<size_t>(i % 37), 'x'));
      t.add(given.back());
    }
    t.drain();
    EXPECT_EQ(seen, given) << "batch " << batch;
    EXPECT_NE(consumer, std::this_thread::get_id());
    // More after a drain, then drained again: only the new ones are added.
    t.add("after");
    t.drain();
    ASSERT_EQ(seen.size(), given.size() + 1);
    EXPECT_EQ(seen.back(), "after");
  }
}

TEST(BatchThread, DrainReturnsOnlyOnceEveryItemIsConsumed) {
  std::atomic<int> consumed{0};
  BatchThread<int> t(
      [&](const int&) {
        std::this_thread::sleep_for(200us);
        consumed.fetch_add(1);
      },
      16);
  for (int i = 0; i < 300; ++i) t.add(i);  // 18 full batches and a part of one
  t.drain();
  EXPECT_EQ(consumed.load(), 300);
  t.drain();  // nothing left: returns at once
  EXPECT_EQ(consumed.load(), 300);
}

// Batches of 2, 3 batches: while the consumer is held on the first item, the first batch is being
// consumed, the second and third are queued, and the sixth add() waits for a free batch.
TEST(BatchThread, AddWaitsWhileEveryBatchIsInUse) {
  HeldConsumer c;
  BatchThread<int> t(c.consume(), 2, 3);
  std::atomic<int> returned{0};
  std::thread adder([&] {
    for (int i = 0; i < 20; ++i) {
      t.add(i);
      returned.fetch_add(1);
    }
  });
  // EXPECT, not ASSERT: the adder must be released and joined whatever happens.
  EXPECT_TRUE(eventually([&] { return c.held && returned >= 5; }));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(returned.load(), 5) << "add() went on with every batch in use";
  EXPECT_EQ(c.consumed.load(), 0);
  c.release = true;
  adder.join();
  EXPECT_EQ(returned.load(), 20);
  t.drain();  // the owner changed threads once the adder was joined
  EXPECT_EQ(c.consumed.load(), 20);
}

TEST(BatchThread, AConsumersExceptionIsRethrownByDrainAndTheItemsAfterItAreDropped) {
  std::vector<int> seen;
  BatchThread<int> t(
      [&](const int& i) {
        if (i == 5) throw std::runtime_error("no space left on device");
        seen.push_back(i);
      },
      4, 3);
  for (int i = 0; i < 100; ++i) t.add(i);  // batches keep cycling after the failure: no wait forever
  try {
    t.drain();
    FAIL() << "drain() did not rethrow";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "no space left on device");
  }
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4}));
  t.add(200);
  EXPECT_THROW(t.drain(), std::runtime_error);  // still failed: nothing more is consumed
  EXPECT_EQ(seen.size(), 5u);
}

TEST(BatchThread, TheDestructorStopsAfterTheBatchBeingConsumed) {
  HeldConsumer c;
  std::thread releaser;
  {
    BatchThread<int> t(c.consume(), 2, 3);
    for (int i = 0; i < 5; ++i) t.add(i);  // batch {0,1} consumed, {2,3} queued, 4 filling
    EXPECT_TRUE(eventually([&] { return c.held.load(); }));  // EXPECT: the releaser must start
    // Released once the destructor below has asked the thread to stop (it does so at once).
    releaser = std::thread([&] {
      std::this_thread::sleep_for(200ms);
      c.release = true;
    });
  }  // joins once {0,1} is done; {2,3} and 4 are dropped
  releaser.join();
  EXPECT_EQ(c.consumed.load(), 2);
}

// Without a thread (none could be started; here asked for): add() consumes at once, on the
// caller's thread, and a consumer's exception comes out of add().
TEST(BatchThread, InlineModeConsumesInAddAndThrowsFromIt) {
  std::vector<int> seen;
  std::thread::id consumer;
  BatchThread<int> t(
      [&](const int& i) {
        if (i < 0) throw std::runtime_error("bad item");
        seen.push_back(i);
        consumer = std::this_thread::get_id();
      },
      4, 3, /*threaded=*/false);
  EXPECT_FALSE(t.threaded());
  t.add(1);
  EXPECT_EQ(seen, std::vector<int>{1});  // before any batch is full
  EXPECT_EQ(consumer, std::this_thread::get_id());
  t.add_by([](int& slot) { slot = 2; });
  EXPECT_THROW(t.add(-1), std::runtime_error);
  t.drain();
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
}

// add_by fills the batch's slot itself: what it leaves out never reaches the consumer, also in a
// slot reused from an earlier batch.
TEST(BatchThread, AddByFillsTheSlotAsItsCallerSays) {
  struct Row {
    std::string name;
    std::string scratch;  // the caller's, not for the consumer
  };
  std::vector<std::string> names, scratches;
  BatchThread<Row> t(
      [&](const Row& r) {
        names.push_back(r.name);
        scratches.push_back(r.scratch);
      },
      2, 2);
  for (int i = 0; i < 7; ++i) {
    const Row given{"row" + std::to_string(i), "scratch" + std::to_string(i)};
    if (i < 2)
      t.add(given);  // the first batch: whole copies, later reused by add_by
    else
      t.add_by([&](Row& slot) {
        slot.name = given.name;
        slot.scratch.clear();
      });
  }
  t.drain();
  EXPECT_EQ(names, (std::vector<std::string>{"row0", "row1", "row2", "row3", "row4", "row5", "row6"}));
  EXPECT_EQ(scratches, (std::vector<std::string>{"scratch0", "scratch1", "", "", "", "", ""}));
}

}  // namespace
}  // namespace rf::analyzer
