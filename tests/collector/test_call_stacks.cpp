// CallStackTable: capture with libunwind, deduplication into ids, symbolization, bounds.
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <set>
#include <thread>
#include <vector>

#include "rfprof/collector/call_stacks.h"

// External linkage and ENABLE_EXPORTS (CMakeLists.txt): dladdr finds these names.
namespace rfcs_test {
__attribute__((noinline)) uint32_t launch_site_c(rf::collector::CallStackTable& t) {
  uint32_t id = t.capture_and_intern();
  asm volatile("" ::: "memory");  // keep the call out of tail position
  return id;
}
__attribute__((noinline)) uint32_t launch_site_b(rf::collector::CallStackTable& t) {
  uint32_t id = launch_site_c(t);
  asm volatile("" ::: "memory");
  return id;
}
__attribute__((noinline)) uint32_t launch_site_a(rf::collector::CallStackTable& t) {
  uint32_t id = launch_site_b(t);
  asm volatile("" ::: "memory");
  return id;
}
__attribute__((noinline)) uint32_t other_site(rf::collector::CallStackTable& t) {
  uint32_t id = launch_site_c(t);
  asm volatile("" ::: "memory");
  return id;
}
}  // namespace rfcs_test

namespace {
// Internal linkage: not in the dynamic symbol table, so dladdr finds its module but no name.
__attribute__((noinline)) int unexported_function(int x) {
  asm volatile("" ::: "memory");
  return x * 3 + 1;
}
}  // namespace

namespace rf::collector {
namespace {

/// Index of the first frame whose function contains `name`, or -1.
long find_frame(const std::vector<StackFrame>& frames, const std::string& name) {
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].function.find(name) != std::string::npos) return static_cast<long>(i);
  return -1;
}

TEST(CallStacks, SameCallSiteSameIdOtherCallSiteOtherId) {
  CallStackTable t;
  uint32_t first = 0;
  for (int i = 0; i < 3; ++i) {
    uint32_t id = rfcs_test::launch_site_a(t);  // the same call site each iteration
    ASSERT_NE(id, 0u);
    if (i == 0) first = id;
    EXPECT_EQ(id, first);
  }
  uint32_t other = rfcs_test::other_site(t);
  EXPECT_NE(other, 0u);
  EXPECT_NE(other, first);
  EXPECT_EQ(t.size(), 2u);
}

TEST(CallStacks, SymbolizedInnermostFirstWithDemangledNames) {
  CallStackTable t;
  const uint32_t id = rfcs_test::launch_site_a(t);
  auto stacks = t.symbolize(nullptr);
  ASSERT_EQ(stacks.size(), 1u);
  EXPECT_EQ(stacks[0].first, id);
  const auto& frames = stacks[0].second;
  const long c = find_frame(frames, "rfcs_test::launch_site_c(rf::collector::CallStackTable&)");
  const long b = find_frame(frames, "rfcs_test::launch_site_b");
  const long a = find_frame(frames, "rfcs_test::launch_site_a");
  ASSERT_GE(c, 0) << "launch_site_c not among " << frames.size() << " frames";
  EXPECT_EQ(b, c + 1);
  EXPECT_EQ(a, b + 1);
  EXPECT_NE(frames[static_cast<size_t>(a)].module, "");
  EXPECT_GE(find_frame(frames, "main"), a);  // the stack reaches the test's main()
}

TEST(CallStacks, LeadingMachineryFramesAreLeftOut) {
  CallStackTable t;
  rfcs_test::launch_site_a(t);
  // Treat the test executable itself as "machinery": its leading frames go, and with them every
  // frame up to the first one in another module (libgtest, libc).
  auto all = t.symbolize(nullptr)[0].second;
  ASSERT_FALSE(all.empty());
  const std::string self = all[static_cast<size_t>(find_frame(all, "launch_site_c"))].module;
  auto kept = t.symbolize([&](std::string_view m) { return m == self; })[0].second;
  ASSERT_FALSE(kept.empty());
  EXPECT_LT(kept.size(), all.size());
  EXPECT_NE(kept.front().module, self);
  EXPECT_EQ(find_frame(kept, "launch_site_a"), -1);
  // Only the leading ones: past the first other module (libc's start of main), the executable's
  // own _start is kept.
  EXPECT_NE(std::find_if(kept.begin(), kept.end(), [&](const StackFrame& f) { return f.module == self; }),
            kept.end());
}

TEST(CallStacks, InternDeduplicatesAndTruncatesToMaxDepth) {
  CallStackTable t;
  std::vector<uintptr_t> deep(CallStackTable::kMaxDepth + 30);
  for (size_t i = 0; i < deep.size(); ++i) deep[i] = 0x1000 + i;
  const uint32_t id = t.intern(deep);
  EXPECT_EQ(id, 1u);
  std::vector<uintptr_t> cut(deep.begin(), deep.begin() + CallStackTable::kMaxDepth);
  EXPECT_EQ(t.intern(cut), id);  // the frames past kMaxDepth are not part of the key
  cut.pop_back();
  EXPECT_EQ(t.intern(cut), 2u);  // a prefix is another stack
  EXPECT_EQ(t.intern({}), 0u);
  EXPECT_EQ(t.size(), 2u);
}

TEST(CallStacks, FullTableGivesIdZeroAndCountsTheOverflow) {
  CallStackTable t(3);
  for (uintptr_t i = 1; i <= 3; ++i) {
    std::array<uintptr_t, 2> s{i, i + 100};
    EXPECT_EQ(t.intern(s), i);
  }
  std::array<uintptr_t, 2> known{2, 102}, fresh{9, 9};
  EXPECT_EQ(t.intern(known), 2u);  // known stacks still resolve
  EXPECT_EQ(t.intern(fresh), 0u);
  EXPECT_EQ(t.intern(fresh), 0u);
  EXPECT_EQ(t.overflowed(), 2u);
  EXPECT_EQ(t.size(), 3u);
}

TEST(CallStacks, ConcurrentInternsAgreeOnIds) {
  CallStackTable t;
  constexpr int kThreads = 8, kStacks = 16, kRounds = 2000;
  std::vector<std::vector<uint32_t>> seen(kThreads, std::vector<uint32_t>(kStacks));
  std::vector<std::thread> threads;
  for (int th = 0; th < kThreads; ++th)
    threads.emplace_back([&, th] {
      for (int r = 0; r < kRounds; ++r) {
        const int s = (r * 7 + th) % kStacks;
        std::array<uintptr_t, 3> frames{static_cast<uintptr_t>(s), 42, static_cast<uintptr_t>(s * s)};
        const uint32_t id = t.intern(frames);
        if (seen[th][s] == 0) seen[th][s] = id;
        ASSERT_EQ(seen[th][s], id);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(t.size(), static_cast<size_t>(kStacks));
  std::set<uint32_t> ids(seen[0].begin(), seen[0].end());
  EXPECT_EQ(ids.size(), static_cast<size_t>(kStacks));
  for (int th = 1; th < kThreads; ++th) EXPECT_EQ(seen[th], seen[0]);
}

TEST(CallStacks, MoreStacksThanAThreadCachesStillResolveToTheirIds) {
  // A thread remembers kThreadCacheStacks stacks without the table's lock; the stacks past that
  // are answered by the shared table, with the same ids.
  CallStackTable t;
  constexpr size_t kStacks = CallStackTable::kThreadCacheStacks + 500;
  std::vector<uint32_t> ids(kStacks);
  for (int round = 0; round < 2; ++round)
    for (size_t i = 0; i < kStacks; ++i) {
      std::array<uintptr_t, 2> s{0x4000 + i, 7};
      const uint32_t id = t.intern(s);
      if (round == 0) ids[i] = id;
      ASSERT_EQ(id, ids[i]) << i;
      ASSERT_EQ(id, i + 1) << "ids in order of first sight";
    }
  EXPECT_EQ(t.size(), kStacks);
  std::thread other([&] {  // another thread, with an empty cache, gets the same ids
    for (size_t i = 0; i < kStacks; i += 97) {
      std::array<uintptr_t, 2> s{0x4000 + i, 7};
      EXPECT_EQ(t.intern(s), ids[i]);
    }
  });
  other.join();
  EXPECT_EQ(t.size(), kStacks);
}

// A return address points after its call instruction: the frame is the function holding the call,
// looked up at the byte before. After a call that never returns (a noreturn abort at the end of a
// function), the return address is the next function's first byte, which is not the caller.
TEST(CallStacks, AFrameIsResolvedAtTheByteBeforeItsReturnAddress) {
  CallStackTable t;
  const auto b = reinterpret_cast<uintptr_t>(&rfcs_test::launch_site_b);
  const std::array<uintptr_t, 2> frames{b + 1, b};
  t.intern(frames);
  const auto stacks = t.symbolize(nullptr);
  ASSERT_EQ(stacks.size(), 1u);
  ASSERT_EQ(stacks[0].second.size(), 2u);
  EXPECT_NE(stacks[0].second[0].function.find("rfcs_test::launch_site_b"), std::string::npos)
      << stacks[0].second[0].function;
  EXPECT_EQ(stacks[0].second[1].function.find("launch_site_b"), std::string::npos)
      << stacks[0].second[1].function;
}

// A frame without a symbol is named by its module and the offset of the call byte in it, which
// addr2line -e MODULE resolves; a frame in no module, by that address, in hex with its 0x.
TEST(CallStacks, FramesWithoutASymbolAreNamedByModuleOffsetOrAddress) {
  const auto f = reinterpret_cast<uintptr_t>(&unexported_function);
  Dl_info info{};
  ASSERT_NE(::dladdr(reinterpret_cast<void*>(f), &info), 0);
  ASSERT_EQ(info.dli_sname, nullptr) << "the test's anonymous-namespace function is exported";
  std::string module = info.dli_fname;
  module = module.substr(module.rfind('/') + 1);
  char offset[32];
  std::snprintf(offset, sizeof offset, "+0x%llx",
                static_cast<unsigned long long>(f - reinterpret_cast<uintptr_t>(info.dli_fbase)));
  CallStackTable t;
  const std::array<uintptr_t, 2> frames{f + 1, 0x1001};  // a call byte at f; an unmapped address
  t.intern(frames);
  const auto stack = t.symbolize(nullptr)[0].second;
  ASSERT_EQ(stack.size(), 2u);
  EXPECT_EQ(stack[0].function, module + offset);
  EXPECT_EQ(stack[0].module, info.dli_fname);
  EXPECT_EQ(stack[1].function, "0x1000");
  EXPECT_EQ(stack[1].module, "");
}

TEST(CallStacks, LaunchMachineryModules) {
  EXPECT_TRUE(is_launch_machinery("/opt/rfprof/lib/librfinject.so"));
  EXPECT_TRUE(is_launch_machinery("/usr/local/cuda/extras/CUPTI/lib64/libcupti.so.13"));
  EXPECT_TRUE(is_launch_machinery("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
  EXPECT_TRUE(is_launch_machinery("/usr/lib/x86_64-linux-gnu/libcuda-loader.so"));  // driver modules too
  // The name's start: an application's own module that merely contains the text is not machinery.
  EXPECT_FALSE(is_launch_machinery("/opt/app/lib/mylibcupti_shim.so"));
  EXPECT_FALSE(is_launch_machinery("/opt/app/lib/notlibcuda.so.1"));
  EXPECT_FALSE(is_launch_machinery("/usr/local/cuda/lib64/libcudart.so.13"));
  EXPECT_FALSE(is_launch_machinery("/usr/lib/python3/torch/lib/libtorch_cuda.so"));
  EXPECT_FALSE(is_launch_machinery(""));
}

}  // namespace
}  // namespace rf::collector
