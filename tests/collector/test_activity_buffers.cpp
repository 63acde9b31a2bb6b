// CUPTI activity buffers with a memory bound (activity_buffers.h): past the bound a request gets
// nullptr (CUPTI then drops and counts records) instead of growing the application's memory.
#include "rfprof/collector/activity_buffers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

namespace rf::collector {
namespace {

TEST(ActivityBuffers, RequestsPastTheBoundGetNoBufferUntilOneComesBack) {
  ActivityBuffers pool(4096, 3);
  std::vector<uint8_t*> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(pool.take());
    ASSERT_NE(held.back(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(held.back()) % 8, 0u);  // CUPTI's alignment
    held.back()[4095] = 1;                                           // the whole buffer is usable
  }
  EXPECT_EQ(pool.outstanding(), 3u);
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.refused(), 2u);
  EXPECT_EQ(pool.outstanding(), 3u);  // refusals hold nothing
  pool.give_back(held.back());
  held.pop_back();
  pool.give_back(nullptr);  // nothing
  EXPECT_EQ(pool.outstanding(), 2u);
  uint8_t* again = pool.take();
  EXPECT_NE(again, nullptr);
  pool.give_back(again);
  for (uint8_t* b : held) pool.give_back(b);
  EXPECT_EQ(pool.outstanding(), 0u);
}

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define RF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define RF_SANITIZED 1
#endif
#endif

TEST(ActivityBuffers, AFailedAllocationIsARefusalThatHoldsNothing) {
#ifdef RF_SANITIZED
  GTEST_SKIP() << "the sanitizer's allocator reports a request this size instead of returning null";
#else
  // No machine has 2^62 bytes: aligned_alloc returns null, as it would for any size once memory
  // runs out.
  ActivityBuffers pool(size_t{1} << 62, 2);
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.take(), nullptr);
  EXPECT_EQ(pool.refused(), 3u);
  EXPECT_EQ(pool.outstanding(), 0u);  // or the bound of 2 would be used up by buffers nobody has
#endif
}

TEST(ActivityBuffers, ManyThreadsNeverHoldMoreThanTheBound) {
  ActivityBuffers pool(256, 8);
  std::atomic<size_t> held{0}, peak{0};  // buffers the threads really hold
  std::atomic<int> asked{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&] {
      std::vector<uint8_t*> mine;
      for (int i = 0; i < 2; ++i)  // 16 requests for 8 buffers before any comes back
        if (uint8_t* b = pool.take()) {
          mine.push_back(b);
          held.fetch_add(1);
        }
      asked.fetch_add(1);
      while (asked.load() < 8) std::this_thread::yield();
      for (int i = 0; i < 2000; ++i) {
        if (uint8_t* b = pool.take()) {
          mine.push_back(b);
          const size_t now = held.fetch_add(1) + 1;
          size_t seen = peak.load();
          while (now > seen && !peak.compare_exchange_weak(seen, now)) {
          }
        }
        if (mine.size() > 2 || (i % 3 == 0 && !mine.empty())) {
          held.fetch_sub(1);
          pool.give_back(mine.back());
          mine.pop_back();
        }
      }
      for (uint8_t* b : mine) {
        held.fetch_sub(1);
        pool.give_back(b);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_LE(peak.load(), 8u);
  EXPECT_GE(pool.refused(), 8u);  // the first 16 requests: 8 refused
  EXPECT_EQ(pool.outstanding(), 0u);
}

}  // namespace
}  // namespace rf::collector
