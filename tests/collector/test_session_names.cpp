// Kernel names: demangling, and one demangle/intern per distinct name.
#include <gtest/gtest.h>

#include <map>

#include "rfprof/collector/names.h"

namespace rf::collector {
namespace {

TEST(Demangle, ItaniumNames) {
  EXPECT_EQ(demangle("_Z5saxpyifPfS_"), "saxpy(int, float, float*, float*)");
  EXPECT_EQ(demangle("_ZN3foo3barIfEEvPT_i"), "void foo::bar<float>(float*, int)");
}

TEST(Demangle, NonMangledNamesAreUnchanged) {
  EXPECT_EQ(demangle("vectorAdd"), "vectorAdd");
  EXPECT_EQ(demangle(""), "");
  EXPECT_EQ(demangle("_Z"), "_Z");
  EXPECT_EQ(demangle("_Zx!"), "_Zx!");  // looks mangled, is not
}

TEST(KernelNameCache, InternsEachDistinctNameOnce) {
  std::map<std::string, uint32_t> table;
  int calls = 0;
  KernelNameCache cache([&](std::string_view s) {
    ++calls;
    auto [it, inserted] = table.emplace(std::string(s), static_cast<uint32_t>(table.size() + 1));
    return it->second;
  });
  auto a1 = cache.ids("_Z5saxpyifPfS_");
  auto a2 = cache.ids("_Z5saxpyifPfS_");
  EXPECT_EQ(a1, a2);
  EXPECT_EQ(calls, 2);  // mangled + demangled, once
  EXPECT_EQ(table.at("_Z5saxpyifPfS_"), a1.first);
  EXPECT_EQ(table.at("saxpy(int, float, float*, float*)"), a1.second);
  EXPECT_NE(a1.first, a1.second);

  auto c = cache.ids("vectorAdd");  // C kernel: one string serves as both
  EXPECT_EQ(c.first, c.second);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.ids(""), std::make_pair(0u, 0u));
}

// CUPTI's own kernel seen on an H100 (CUPTI 13.0) while it replayed a CUDA graph under the Range
// Profiler, carrying the graph launch's correlation id: dropped; application kernels are kept,
// including ones whose names merely contain the word.
TEST(ReplayToolKernel, OnlyCuptisMemcmpIsDropped) {
  EXPECT_TRUE(is_replay_tool_kernel("tools_memcmp"));
  EXPECT_FALSE(is_replay_tool_kernel("_Z5scalePfffi"));
  EXPECT_FALSE(is_replay_tool_kernel("tools_memcmp_mine"));
  EXPECT_FALSE(is_replay_tool_kernel("my_tools_memcmp"));
  EXPECT_FALSE(is_replay_tool_kernel(""));
}

}  // namespace
}  // namespace rf::collector
