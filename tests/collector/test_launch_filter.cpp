// LaunchFilter (launch_filter.h): ncu's -k (exact, regex:, name bases) and --nvtx-include/exclude
// rules (push/pop patterns with wildcards and anchors, start/end ranges, domains), per thread.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "rfprof/collector/launch_filter.h"

namespace rf::collector {
namespace {

constexpr const char* kScale = "_Z5scalePfffi";                                  // scale(float*, float, float, int)
constexpr const char* kGemm = "_Z4gemmIfEvPT_";                                  // void gemm<float>(float*)
constexpr const char* kAnon = "_ZN2at6native12_GLOBAL__N_16kernelIfLi4EEEvPKT_i";  // void at::native::(anonymous namespace)::kernel<float, 4>(float const*, int)

LaunchFilter filter(std::string name, std::vector<std::string> include = {}, std::vector<std::string> exclude = {},
                    std::string base = "function") {
  LaunchFilterOptions o;
  o.kernel_name = std::move(name);
  o.kernel_name_base = std::move(base);
  o.nvtx_include = std::move(include);
  o.nvtx_exclude = std::move(exclude);
  return LaunchFilter(o);
}

TEST(LaunchFilter, FunctionNames) {
  EXPECT_EQ(function_name_of("scale(float*, float, float, int)"), "scale");
  EXPECT_EQ(function_name_of("void gemm<float>(float*)"), "gemm");
  EXPECT_EQ(function_name_of("void at::native::(anonymous namespace)::kernel<float, 4>(float const*, int)"),
            "at::native::(anonymous namespace)::kernel");
  EXPECT_EQ(function_name_of("void ns::f<(anonymous namespace)::T>(int)"), "ns::f");
  EXPECT_EQ(function_name_of("plain_c_kernel"), "plain_c_kernel");
  // Text after a template argument list: a nested name, a templated return type.
  EXPECT_EQ(function_name_of("void ns::outer<int>::inner(float)"), "ns::outer::inner");
  EXPECT_EQ(function_name_of("std::vector<int> make(int)"), "make");
  // --print-kernel-base function: without namespaces.
  EXPECT_EQ(bare_function_name("void at::native::(anonymous namespace)::kernel<float, 4>(float const*, int)"),
            "kernel");
  EXPECT_EQ(bare_function_name("void ns::outer<int>::inner(float)"), "inner");
  EXPECT_EQ(bare_function_name("scale(float*, float, float, int)"), "scale");
}

TEST(LaunchFilter, FunctionNameMatchesOnDemangledNames) {  // rfprof -i -k NAME uses this rule
  EXPECT_TRUE(function_name_matches("void gemm<float>(float*)", "gemm"));
  EXPECT_TRUE(function_name_matches("void gemm<float>(float*)", "void gemm<float>(float*)"));
  EXPECT_FALSE(function_name_matches("void gemm<float>(float*)", "void gemm<float>"));
  EXPECT_TRUE(function_name_matches("void at::native::k<4>(int)", "k"));
  EXPECT_FALSE(function_name_matches("void at::native::k<4>(int)", "native"));
}

TEST(LaunchFilter, ExactNamesPerBase) {
  EXPECT_TRUE(kernel_name_equals(kScale, "function", "scale"));
  EXPECT_TRUE(kernel_name_equals(kScale, "function", "scale(float*, float, float, int)"));
  EXPECT_FALSE(kernel_name_equals(kScale, "function", "scal"));
  EXPECT_TRUE(kernel_name_equals(kGemm, "function", "gemm"));
  EXPECT_TRUE(kernel_name_equals(kAnon, "function", "kernel"));  // without its namespaces
  EXPECT_TRUE(kernel_name_equals(kAnon, "function", "at::native::(anonymous namespace)::kernel"));
  EXPECT_FALSE(kernel_name_equals(kGemm, "demangled", "gemm"));
  EXPECT_TRUE(kernel_name_equals(kGemm, "demangled", "void gemm<float>(float*)"));
  EXPECT_TRUE(kernel_name_equals(kGemm, "mangled", kGemm));
  EXPECT_FALSE(kernel_name_equals(kGemm, "mangled", "gemm"));
}

TEST(LaunchFilter, KernelNameFilterExactAndRegex) {
  LaunchFilter none = filter("");
  EXPECT_FALSE(none.active());
  EXPECT_TRUE(none.selects(kScale, 1));
  LaunchFilter exact = filter("gemm");
  EXPECT_TRUE(exact.active());
  EXPECT_FALSE(exact.uses_nvtx());
  EXPECT_TRUE(exact.selects(kGemm, 1));
  EXPECT_FALSE(exact.selects(kScale, 1));
  EXPECT_FALSE(exact.selects("", 1));  // a graph launch has no name
  EXPECT_TRUE(exact.selects(kGemm, 2));  // cached answer, same result
  // --kernel-name-base function (the default): searched in the function name, without return
  // type, template arguments and parameters, as ncu's "regex:Bar" names kernels with "Bar" in
  // their function name. It was searched in the whole demangled name, where ^gemm$ found nothing
  // and "float" named every kernel taking a float*.
  LaunchFilter re = filter("regex:^gemm$");
  EXPECT_TRUE(re.selects(kGemm, 1));
  EXPECT_FALSE(re.selects(kScale, 1));
  EXPECT_FALSE(filter("regex:^void g.*<float>").selects(kGemm, 1));
  EXPECT_FALSE(filter("regex:float").selects(kGemm, 1));
  // With or without its namespaces, as an exact name.
  const std::string ns = "_ZN2at6native4gemmIfEEvPf";  // void at::native::gemm<float>(float*)
  EXPECT_TRUE(filter("regex:^gemm$").selects(ns, 1));
  EXPECT_TRUE(filter("regex:^at::native::").selects(ns, 1));
  EXPECT_FALSE(filter("regex:^void").selects(ns, 1));
  LaunchFilter part = filter("regex:cal");  // searched, not anchored
  EXPECT_TRUE(part.selects(kScale, 1));
  LaunchFilter mangled = filter("regex:^_Z5", {}, {}, "mangled");
  EXPECT_TRUE(mangled.selects(kScale, 1));
  EXPECT_FALSE(mangled.selects(kGemm, 1));
}

TEST(LaunchFilter, RegexKernelNamesPerBaseAndCase) {
  // --kernel-name-base demangled: the expression is searched in the demangled name, as with function.
  EXPECT_NO_THROW(filter("", {}, {}, "demangled"));
  LaunchFilter demangled = filter("regex:^void gemm<float>\\(float\\*\\)$", {}, {}, "demangled");
  EXPECT_TRUE(demangled.selects(kGemm, 1));
  EXPECT_FALSE(demangled.selects(kScale, 1));
  EXPECT_FALSE(filter("gemm", {}, {}, "demangled").selects(kGemm, 1));  // exact: the whole name
  EXPECT_TRUE(filter("void gemm<float>(float*)", {}, {}, "demangled").selects(kGemm, 1));
  // Kernel names are case-sensitive: -k regex:Gemm is not gemm.
  EXPECT_FALSE(filter("regex:Gemm").selects(kGemm, 1));
  EXPECT_FALSE(filter("regex:GEMM", {}, {}, "mangled").selects("_Z4gemmv", 1));
}

TEST(LaunchFilter, ExternCKernelsAreMatchedByTheirSymbol) {
  // An extern "C" kernel's symbol does not demangle: its name is the symbol itself, for every base.
  EXPECT_TRUE(filter("plain_c_kernel").selects("plain_c_kernel", 1));
  EXPECT_TRUE(filter("regex:^plain_c").selects("plain_c_kernel", 1));
  EXPECT_TRUE(filter("plain_c_kernel", {}, {}, "demangled").selects("plain_c_kernel", 1));
  EXPECT_FALSE(filter("plain_c").selects("plain_c_kernel", 1));
}

TEST(LaunchFilter, ExcludeRulesAloneMakeAnActiveNvtxFilter) {
  // Only --nvtx-exclude: the session must keep the filter and feed it NVTX ranges.
  LaunchFilter f = filter("", {}, {"warmup/"});
  EXPECT_TRUE(f.active());
  EXPECT_TRUE(f.uses_nvtx());
  EXPECT_TRUE(f.selects(kScale, 1));
  f.nvtx().push(1, "", "warmup");
  EXPECT_FALSE(f.selects(kScale, 1));
  f.nvtx().pop(1, "");
  EXPECT_TRUE(f.selects(kScale, 1));
  LaunchFilter se = filter("", {}, {"warmup"});  // a start/end exclude rule
  EXPECT_TRUE(se.active());
  EXPECT_TRUE(se.uses_nvtx());
}

TEST(LaunchFilter, BadRegexBaseOrRuleIsAFilterError) {
  EXPECT_THROW(filter("regex:(unclosed"), FilterError);
  EXPECT_THROW(filter("", {}, {}, "short"), FilterError);
  EXPECT_THROW(filter("", {"A//B"}), FilterError);
  EXPECT_THROW(filter("", {"@A"}), FilterError);
  EXPECT_THROW(filter("", {}, {"D@"}), FilterError);
  try {
    filter("", {"A//B"});
  } catch (const FilterError& e) {
    EXPECT_NE(std::string(e.what()).find("\"A//B\""), std::string::npos) << e.what();
  }
}

TEST(LaunchFilter, NvtxIncludeExcludePerThreadAndDomain) {
  LaunchFilter f = filter("", {"forward/", "Dom@timed/"}, {"forward/skip_me/"});
  EXPECT_TRUE(f.uses_nvtx());
  NvtxState& s = f.nvtx();
  EXPECT_FALSE(f.selects(kScale, 1));  // no range open: no include matches
  s.push(1, "", "step");
  s.push(1, "", "forward");
  EXPECT_TRUE(f.selects(kScale, 1));
  EXPECT_FALSE(f.selects(kScale, 2));  // thread 2 has its own (empty) stack
  s.push(1, "", "skip_me");
  EXPECT_FALSE(f.selects(kScale, 1));  // excluded
  s.pop(1, "");
  EXPECT_TRUE(f.selects(kScale, 1));
  s.push(2, "Other", "timed");
  EXPECT_FALSE(f.selects(kScale, 2));  // wrong domain
  s.push(2, "Dom", "timed");
  EXPECT_TRUE(f.selects(kScale, 2));
  s.pop(2, "Dom");
  s.pop(2, "Dom");  // popping an empty stack is ignored
  EXPECT_FALSE(f.selects(kScale, 2));
  s.pop(1, "");
  s.pop(1, "");
  EXPECT_FALSE(f.selects(kScale, 1));
}

TEST(LaunchFilter, StartEndRangesAreProcessWide) {
  LaunchFilter f = filter("gemm", {"epoch 2"});
  NvtxState& s = f.nvtx();
  EXPECT_FALSE(f.selects(kGemm, 7));
  s.start(11, "", "epoch 1");
  EXPECT_FALSE(f.selects(kGemm, 7));
  s.start(12, "", "epoch 2");  // started on one thread ...
  EXPECT_TRUE(f.selects(kGemm, 7));   // ... selects launches of any thread
  EXPECT_FALSE(f.selects(kScale, 7));  // the name filter still applies
  s.end(12);
  EXPECT_FALSE(f.selects(kGemm, 7));
  s.end(99);  // unknown id: ignored
}

TEST(LaunchFilter, StartEndRuleCountsOverlappingRangesOfItsNameAndReusedIds) {
  // A start/end rule's name is watched: an atomic count of its open ranges answers the launch path.
  LaunchFilter f = filter("", {"epoch"});
  NvtxState& s = f.nvtx();
  s.start(1, "", "epoch");
  s.start(2, "", "epoch");  // two overlapping ranges of the name
  EXPECT_TRUE(f.selects(kScale, 3));
  s.end(1);
  EXPECT_TRUE(f.selects(kScale, 3)) << "one of the two is still open";
  s.start(2, "", "other");  // id 2 reused for another name: the epoch range is no longer open
  EXPECT_FALSE(f.selects(kScale, 3));
  s.end(2);
  s.end(2);  // ended twice: ignored, the count never goes below zero
  s.start(5, "", "epoch");
  EXPECT_TRUE(f.selects(kScale, 3));
  s.end(5);
  EXPECT_FALSE(f.selects(kScale, 3));
  // A name no rule watches: a LaunchFilter's state keeps no names (its starts and ends take no
  // lock), so it cannot tell; a state that keeps names answers from its open ranges.
  s.start(6, "D", "unwatched");
  EXPECT_FALSE(s.start_end_open("D", "unwatched"));
  EXPECT_EQ(s.open_ranges_locked(), 0u);
  NvtxState names;
  names.start(6, "D", "unwatched");
  EXPECT_TRUE(names.start_end_open("D", "unwatched"));
  EXPECT_FALSE(names.start_end_open("", "unwatched"));
  names.end(6);
  EXPECT_FALSE(names.start_end_open("D", "unwatched"));
}

TEST(LaunchFilter, StartEndRangesCountInTheirOwnDomainOnly) {
  // D@x is open only while a range x of domain D is; x in domain E neither opens it nor answers
  // for it, and D1@x and D2@x are two rules with two counters.
  LaunchFilter f = filter("", {"D@x"});
  NvtxState& s = f.nvtx();
  s.start(1, "E", "x");
  EXPECT_FALSE(f.selects(kScale, 1));
  EXPECT_FALSE(s.start_end_open("D", "x"));  // asked by name: E's x is open, D's is not
  s.start(2, "D", "x");
  EXPECT_TRUE(f.selects(kScale, 1));
  EXPECT_TRUE(s.start_end_open("D", "x"));
  s.end(2);
  EXPECT_FALSE(f.selects(kScale, 1));
  s.end(1);
  NvtxState names;  // keeps names: answers for E's x too
  names.start(1, "E", "x");
  EXPECT_TRUE(names.start_end_open("E", "x"));
  EXPECT_FALSE(names.start_end_open("D", "x"));

  LaunchFilter two = filter("", {"D1@x", "D2@x"});
  two.nvtx().start(1, "D2", "x");
  EXPECT_TRUE(two.selects(kScale, 1));
  two.nvtx().end(1);
  two.nvtx().start(2, "D1", "x");
  EXPECT_TRUE(two.selects(kScale, 1));
  NvtxState st;
  const NvtxRule d1 = NvtxRule::parse("D1@x"), d2 = NvtxRule::parse("D2@x");
  EXPECT_NE(st.watch(d1.domain, d1.pattern[0].name), st.watch(d2.domain, d2.pattern[0].name));
}

TEST(LaunchFilter, ALiteralAndARegexRuleOfTheSameTextAreTwoRules) {
  // include regex:epoch (any range containing "epoch"), exclude the range named exactly "epoch".
  LaunchFilter f = filter("", {"regex:epoch"}, {"epoch"});
  NvtxState& s = f.nvtx();
  s.start(1, "", "epoch 2");
  EXPECT_TRUE(f.selects(kScale, 1));
  s.start(2, "", "epoch");
  EXPECT_FALSE(f.selects(kScale, 1));
  s.end(2);
  EXPECT_TRUE(f.selects(kScale, 1));
}

TEST(LaunchFilter, ARegexDomainRuleLooksAtEveryDomainItNames) {
  LaunchFilter f = filter("", {"regex:^Dom@x/"});
  NvtxState& s = f.nvtx();
  s.push(1, "Dom1", "a");
  EXPECT_FALSE(f.selects(kScale, 1));
  s.push(1, "Dom2", "x");  // the second matching domain holds the range
  EXPECT_TRUE(f.selects(kScale, 1));
  s.push(2, "Dom9", "x");
  s.push(2, "Dom0", "y");
  EXPECT_TRUE(f.selects(kScale, 2));
}

TEST(LaunchFilter, ThreadsPushPopAndLaunchAtOnce) {
  // 8 launching threads, each with its own push/pop stack, ask while the others push and pop and
  // another thread starts and ends a watched range; every answer follows the asking thread's own
  // stack (and the range, which only this test's main thread changes between phases). Also under
  // ThreadSanitizer (scripts/run-tests).
  LaunchFilter f = filter("regex:scale|gemm", {"step/*/forward/"}, {"forward/skip/"});
  NvtxState& s = f.nvtx();
  constexpr int kThreads = 8, kRounds = 3000;
  std::atomic<int> wrong{0};
  std::atomic<bool> stop{false};
  std::thread ranges([&] {
    for (uint64_t id = 1000; !stop.load(); ++id) {
      s.start(id, "", "unrelated");
      s.end(id);
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      const auto tid = static_cast<uint64_t>(100 + t);
      for (int i = 0; i < kRounds; ++i) {
        s.push(tid, "", "step");
        s.push(tid, "", "layer");
        wrong += f.selects(kScale, tid);  // forward not open yet
        s.push(tid, "", "forward");
        wrong += !f.selects(t % 2 ? kScale : kGemm, tid);
        wrong += f.selects(kAnon, tid);  // the name filter refuses it
        if (i % 3 == 0) {
          s.push(tid, "", "skip");
          wrong += f.selects(kScale, tid);
          s.pop(tid, "");
        }
        s.pop(tid, "");
        s.pop(tid, "");
        s.pop(tid, "");
        wrong += f.selects(kScale, tid);
      }
    });
  for (auto& th : threads) th.join();
  stop = true;
  ranges.join();
  EXPECT_EQ(wrong.load(), 0);
  for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(s.stack(static_cast<uint64_t>(100 + t), "").empty());
}

// Threads that come and go, each pushing and launching under an NVTX rule as the session calls
// the filter (NvtxState::kCallingThread), half of them exiting with their range still pushed:
// the state holds stacks for the threads alive at once, and a thread never sees the ranges of
// the thread whose stacks it was handed. Until 2026-11-29 the session named threads by their
// system thread id and each one's stacks stayed for good (9,600 here; 303 bytes each, and every
// thread's first range scanned them all under the registry lock).
TEST(LaunchFilter, ThreadsThatComeAndGoLeaveNoStacksBehind) {
  LaunchFilter f = filter("", {"forward/"});
  NvtxState& s = f.nvtx();
  constexpr int kWaves = 300, kAtOnce = 32;
  std::atomic<int> wrong{0};
  for (int w = 0; w < kWaves; ++w) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kAtOnce; ++t)
      threads.emplace_back([&, t] {
        constexpr uint64_t me = NvtxState::kCallingThread;
        wrong += f.selects(kScale, me);  // no range of its own open yet
        s.push(me, "", "forward");
        wrong += !f.selects(kScale, me);
        if (t % 2) s.pop(me, "");
      });
    for (auto& th : threads) th.join();
  }
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(s.threads_held(), size_t{kAtOnce});
}

// Start/end ranges of watched names from several threads at once, more of them open than the
// lock-free table holds (the rest under the lock): each is counted while open and only then.
TEST(LaunchFilter, StartEndRangesBeyondTheTableAndFromManyThreadsAreCounted) {
  LaunchFilter f = filter("", {"epoch"});
  NvtxState& s = f.nvtx();
  constexpr uint64_t kOpen = 2 * NvtxState::kOpenSlots;
  for (uint64_t id = 1; id <= kOpen; ++id) s.start(id, "", "epoch");
  EXPECT_GT(s.open_ranges_locked(), 0u);  // past the table
  for (uint64_t id = 1; id < kOpen; ++id) s.end(id);
  EXPECT_TRUE(f.selects(kScale, 1)) << "the last one is still open";
  s.end(kOpen);
  EXPECT_FALSE(f.selects(kScale, 1));
  EXPECT_EQ(s.open_ranges_locked(), 0u);

  constexpr int kThreads = 4, kRanges = 20000;
  s.start(1, "", "epoch");  // open throughout
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      uint64_t id = 1000000u * static_cast<uint64_t>(t + 1);
      for (int i = 0; i < kRanges; ++i, ++id) {
        s.start(id, "", i % 2 ? "epoch" : "other");
        if (i % 7 == 0) s.start(id, "", "epoch");  // the id reused while open
        wrong += !f.selects(kScale, NvtxState::kCallingThread);
        s.end(id);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  s.end(1);
  EXPECT_FALSE(f.selects(kScale, 1));
  EXPECT_EQ(s.open_ranges_locked(), 0u);
}

}  // namespace
}  // namespace rf::collector
