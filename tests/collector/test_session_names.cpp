// Kernel names: demangling, and one demangle/intern per distinct name.
#include <gtest/gtest.h>

#include <map>

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

#include "rfprof/collector/names.h"
#include "rfprof/trace/api_names.h"

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
  // C kernels whose names are also type encodings: only "_Z" names are demangled.
  EXPECT_EQ(demangle("Pf"), "Pf");  // not "float*"
  EXPECT_EQ(demangle("iv"), "iv");
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

// trace.json names each launch call from its LaunchApi (domain, cbid); the trace library keeps
// the ids as numbers, so they are checked here against the CUPTI headers the collector uses.
TEST(LaunchApiNames, EveryRecordedLaunchCallbackIdHasItsCuptiName) {
  using trace::ApiDomain;
  using trace::launch_api_name;
#define RF_DRIVER(name) EXPECT_EQ(launch_api_name(ApiDomain::kDriver, CUPTI_DRIVER_TRACE_CBID_##name), #name)
  RF_DRIVER(cuLaunchKernel);
  RF_DRIVER(cuLaunchKernel_ptsz);
  RF_DRIVER(cuLaunchKernelEx);
  RF_DRIVER(cuLaunchKernelEx_ptsz);
  RF_DRIVER(cuLaunchCooperativeKernel);
  RF_DRIVER(cuLaunchCooperativeKernel_ptsz);
  RF_DRIVER(cuGraphLaunch);
  RF_DRIVER(cuGraphLaunch_ptsz);
#undef RF_DRIVER
#define RF_RUNTIME(name, version) \
  EXPECT_EQ(launch_api_name(ApiDomain::kRuntime, CUPTI_RUNTIME_TRACE_CBID_##name##_##version), #name)
  RF_RUNTIME(cudaLaunchKernel, v7000);
  RF_RUNTIME(cudaLaunchKernel_ptsz, v7000);
  RF_RUNTIME(cudaLaunchKernelExC, v11060);
  RF_RUNTIME(cudaLaunchKernelExC_ptsz, v11060);
  RF_RUNTIME(cudaLaunchCooperativeKernel, v9000);
  RF_RUNTIME(cudaLaunchCooperativeKernel_ptsz, v9000);
  RF_RUNTIME(cudaGraphLaunch, v10000);
  RF_RUNTIME(cudaGraphLaunch_ptsz, v10000);
  RF_RUNTIME(__cudaLaunchKernel, v13000);
  RF_RUNTIME(__cudaLaunchKernel_ptsz, v13000);
#undef RF_RUNTIME
}

TEST(LaunchApiNames, AnIdOutsideTheTableIsLabelledWithItsNumber) {
  using trace::ApiDomain;
  EXPECT_EQ(trace::launch_api_name(ApiDomain::kDriver, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2), "");
  EXPECT_EQ(trace::launch_api_name(ApiDomain::kRuntime, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel), "");
  EXPECT_EQ(trace::launch_api_label(ApiDomain::kDriver, 0), "driver API call (cbid 0)");
  EXPECT_EQ(trace::launch_api_label(ApiDomain::kRuntime, 99999), "runtime API call (cbid 99999)");
  EXPECT_EQ(trace::launch_api_label(ApiDomain::kDriver, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx),
            "cuLaunchKernelEx");
}

}  // namespace
}  // namespace rf::collector
