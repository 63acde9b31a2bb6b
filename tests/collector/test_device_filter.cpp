// ncu's --devices in the collector (device_filter.h): the list's syntax, which launches are
// selected, and how often the device of a context is asked for.
#include <gtest/gtest.h>

#include <atomic>
#include <latch>
#include <map>
#include <thread>
#include <vector>

#include "rfprof/collector/device_filter.h"

namespace rf::collector {
namespace {

TEST(ParseDeviceList, CommaSeparatedOrdinals) {
  EXPECT_EQ(parse_device_list("0"), (std::vector<uint32_t>{0}));
  EXPECT_EQ(parse_device_list("0,2"), (std::vector<uint32_t>{0, 2}));
  EXPECT_EQ(parse_device_list(" 3 , 1 "), (std::vector<uint32_t>{3, 1}));
  EXPECT_EQ(parse_device_list("1023"), (std::vector<uint32_t>{1023}));
  // Spaces around an ordinal are trimmed, nothing else: a tab is refused.
  for (const char* bad : {"", ",", "0,", ",1", "0,,1", "-1", "+1", "a", "0x1", "1.5", "1024", "0,0", "0 1", "\t1",
                          "0,\t2"})
    EXPECT_FALSE(parse_device_list(bad).has_value()) << '"' << bad << '"';
}

/// Contexts 1..4 stand for devices 0..3; context 9 has no device CUPTI can tell.
struct FakeDevices {
  std::atomic<int> asked{0};
  std::map<uintptr_t, uint32_t> device_of_context{{1, 0}, {2, 1}, {3, 2}, {4, 3}};
  DeviceFilter::DeviceOf fn() {
    return [this](const void* ctx) -> std::optional<uint32_t> {
      ++asked;
      auto it = device_of_context.find(reinterpret_cast<uintptr_t>(ctx));
      if (it == device_of_context.end()) return std::nullopt;
      return it->second;
    };
  }
};

const void* ctx(uintptr_t n) { return reinterpret_cast<const void*>(n); }

TEST(DeviceFilter, OnlyListedDevicesAndUnknownOnesAreSelected) {
  FakeDevices fake;
  DeviceFilter f({0, 2}, fake.fn());
  ASSERT_TRUE(f.active());
  EXPECT_TRUE(f.selects(ctx(1)));
  EXPECT_FALSE(f.selects(ctx(2)));
  EXPECT_TRUE(f.selects(ctx(3)));
  EXPECT_FALSE(f.selects(ctx(4)));
  EXPECT_TRUE(f.selects(ctx(9)));  // cannot be placed: profiled rather than lost
  DeviceFilter every({}, fake.fn());
  EXPECT_FALSE(every.active());
  fake.asked = 0;
  EXPECT_TRUE(every.selects(ctx(2)));
  EXPECT_EQ(fake.asked, 0);  // nothing listed: nothing to ask
}

TEST(DeviceFilter, AThreadAsksOncePerContextUntilAContextIsDestroyed) {
  FakeDevices fake;
  DeviceFilter f({1}, fake.fn());
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(f.selects(ctx(2)));
  EXPECT_EQ(fake.asked, 1);
  EXPECT_FALSE(f.selects(ctx(1)));  // another context: asked
  EXPECT_EQ(fake.asked, 2);
  // Context 1 destroyed, its handle reused for device 1: the remembered answer must not stay.
  fake.device_of_context[1] = 1;
  f.forget_contexts();
  EXPECT_TRUE(f.selects(ctx(1)));
  EXPECT_EQ(fake.asked, 3);
  EXPECT_TRUE(f.selects(ctx(1)));
  EXPECT_EQ(fake.asked, 3);
}

// --filter-mode per-gpu counts per device: device() answers with the same per-thread memory,
// with or without a device list.
TEST(DeviceFilter, DeviceOfAContextIsAskedOncePerThreadAndContext) {
  FakeDevices fake;
  DeviceFilter every({}, fake.fn());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(every.device(ctx(3)), std::optional<uint32_t>(2));
    EXPECT_EQ(every.device(ctx(9)), std::nullopt);
  }
  EXPECT_EQ(fake.asked, 2);
  DeviceFilter listed({1}, fake.fn());
  EXPECT_FALSE(listed.selects(ctx(1)));
  EXPECT_EQ(listed.device(ctx(1)), std::optional<uint32_t>(0));  // remembered with the answer
  EXPECT_EQ(fake.asked, 3);
  fake.device_of_context[1] = 1;  // destroyed, the handle reused on device 1
  listed.forget_contexts();
  EXPECT_EQ(listed.device(ctx(1)), std::optional<uint32_t>(1));
  EXPECT_TRUE(listed.selects(ctx(1)));
  EXPECT_EQ(fake.asked, 4);
}

TEST(DeviceFilter, AThreadDrivingSeveralGpusAsksOncePerContext) {
  FakeDevices fake;
  DeviceFilter f({0, 2}, fake.fn());
  for (int step = 0; step < 50; ++step)
    for (uintptr_t c = 1; c <= 4; ++c) EXPECT_EQ(f.selects(ctx(c)), c == 1 || c == 3);
  EXPECT_EQ(fake.asked, 4);
  // Past kContextsPerThread contexts the oldest answer goes: asked again, answered the same.
  for (uintptr_t c = 10; c < 10 + DeviceFilter::kContextsPerThread; ++c) EXPECT_TRUE(f.selects(ctx(c)));
  EXPECT_EQ(fake.asked, 4 + static_cast<int>(DeviceFilter::kContextsPerThread));
  EXPECT_TRUE(f.selects(ctx(1)));
  EXPECT_EQ(fake.asked, 5 + static_cast<int>(DeviceFilter::kContextsPerThread));
}

TEST(DeviceFilter, ThreadsKeepTheirOwnAnswers) {
  FakeDevices fake;
  DeviceFilter f({0}, fake.fn());
  std::atomic<int> wrong{0};
  std::latch alive(8);  // a thread that exited would hand its answers to the next one (PerThread)
  std::vector<std::thread> threads;
  for (uintptr_t t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      const uintptr_t c = 1 + t % 2;  // half on device 0, half on device 1
      for (int i = 0; i < 10000; ++i)
        if (f.selects(ctx(c)) != (c == 1)) ++wrong;
      alive.arrive_and_wait();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(fake.asked, 8);  // once per thread
}

}  // namespace
}  // namespace rf::collector
