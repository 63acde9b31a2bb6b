// Replay across training steps: the window state machine (step_replay.h), no GPU needed.
#include "rfprof/collector/step_replay.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <string_view>

namespace rf::collector {
namespace {

LaunchIdentity k(std::string_view name, int32_t gx = 1024, int32_t bx = 256) {
  return {name, {gx, 1, 1}, {bx, 1, 1}};
}

/// Runs one window launching `seq`; returns its role and verdict.
std::pair<WindowRole, WindowVerdict> window(StepReplay& r, const std::vector<LaunchIdentity>& seq) {
  WindowRole role = r.begin();
  for (const auto& l : seq) r.on_launch(l);
  return {role, r.end()};
}

const std::vector<LaunchIdentity> kStep = {k("conv"), k("relu"), k("gemm", 64, 128)};

TEST(StepReplay, ALaunchIsDescribedWithItsGridAndBlockInXYZOrder) {
  EXPECT_EQ(describe({"gemm", {64, 2, 3}, {128, 4, 5}}), "gemm<<<(64,2,3),(128,4,5)>>>");
}

TEST(StepReplay, TwoPassesThenATimingWindowMakeAGroup) {
  StepReplay r(2, 1);
  auto [r0, v0] = window(r, kStep);
  EXPECT_EQ(r0.kind, WindowRole::kPass);
  EXPECT_EQ(r0.pass, 0u);
  EXPECT_EQ(v0.kind, WindowVerdict::kKept);
  auto [r1, v1] = window(r, kStep);
  EXPECT_EQ(r1.kind, WindowRole::kPass);
  EXPECT_EQ(r1.pass, 1u);
  EXPECT_EQ(v1.kind, WindowVerdict::kGroupCounters);
  auto [r2, v2] = window(r, kStep);
  EXPECT_EQ(r2.kind, WindowRole::kTiming);
  EXPECT_EQ(v2.kind, WindowVerdict::kGroupTimed);
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.groups_done(), 1u);
  EXPECT_EQ(r.reference(), kStep);
  auto [r3, v3] = window(r, kStep);
  EXPECT_EQ(r3.kind, WindowRole::kDone);
  EXPECT_EQ(v3.kind, WindowVerdict::kIgnored);
}

/// Runs one pass window launching `seq` whose Stop reported `all_submitted`.
WindowVerdict pass_window(StepReplay& r, bool all_submitted, const std::vector<LaunchIdentity>& seq = kStep) {
  EXPECT_EQ(r.begin().kind, WindowRole::kPass);
  for (const auto& l : seq) r.on_launch(l);
  return r.end(all_submitted);
}

// cuptiRangeProfilerStop's isAllPassSubmitted, not the host API's plan, ends a group's passes.
TEST(StepReplay, CuptiSaysWhenThePassesAreComplete) {
  StepReplay fewer(3, 2);
  EXPECT_EQ(pass_window(fewer, false).kind, WindowVerdict::kKept);
  WindowVerdict early = pass_window(fewer, true);  // CUPTI is done after 2 of the 3 planned
  EXPECT_EQ(early.kind, WindowVerdict::kGroupCounters);
  EXPECT_EQ(early.passes_note, "CUPTI completed the passes after 2 windows, 3 were planned; later groups run 2");
  EXPECT_EQ(fewer.passes(), 2u);
  EXPECT_EQ(fewer.planned_passes(), 3u);
  EXPECT_EQ(window(fewer, kStep).first.kind, WindowRole::kTiming);
  // The next group plans CUPTI's count: no note when it agrees.
  EXPECT_EQ(pass_window(fewer, false).passes_note, "");
  WindowVerdict agreed = pass_window(fewer, true);
  EXPECT_EQ(agreed.kind, WindowVerdict::kGroupCounters);
  EXPECT_EQ(agreed.passes_note, "");

  StepReplay more(2, 1);
  EXPECT_EQ(pass_window(more, false).kind, WindowVerdict::kKept);
  WindowVerdict extra = pass_window(more, false);  // the planned last pass, and CUPTI wants another
  EXPECT_EQ(extra.kind, WindowVerdict::kKept);
  EXPECT_EQ(extra.passes_note, "CUPTI wants more passes than the 2 planned; running pass window 3");
  auto [third, v] = window(more, {});
  EXPECT_EQ(third.kind, WindowRole::kPass);
  EXPECT_EQ(third.pass, 2u);
  EXPECT_EQ(v.kind, WindowVerdict::kDiscarded);  // (no launches: the window is discarded, group restarts)
  // Without Stop's answer (no pass was started) the plan decides, as before.
  StepReplay plan(2, 1);
  EXPECT_EQ(window(plan, kStep).second.kind, WindowVerdict::kKept);
  EXPECT_EQ(window(plan, kStep).second.kind, WindowVerdict::kGroupCounters);
}

TEST(StepReplay, PassesCuptiNeverCompletesRestartTheGroupAtTheBound) {
  StepReplay r(2, 1);
  const uint32_t bound = 2 + StepReplay::kMaxExtraPasses;
  for (uint32_t i = 0; i + 1 < bound; ++i) ASSERT_EQ(pass_window(r, false).kind, WindowVerdict::kKept) << i;
  WindowVerdict last = pass_window(r, false);
  EXPECT_EQ(last.kind, WindowVerdict::kDiscarded);
  EXPECT_EQ(last.message, "cuptiRangeProfilerStop still reported passes to submit after 10 pass windows (2 planned); "
                          "the group restarts at pass 0");
  EXPECT_EQ(r.discarded(), 1u);
  EXPECT_EQ(r.passes(), 2u);  // back to the plan
  WindowRole again = r.begin();
  EXPECT_EQ(again.kind, WindowRole::kPass);
  EXPECT_EQ(again.pass, 0u);
}

TEST(StepReplay, OnePassSetAlternatesPassAndTiming) {
  StepReplay r(1, 2);
  std::vector<WindowRole::Kind> roles;
  std::vector<WindowVerdict::Kind> verdicts;
  for (int i = 0; i < 5; ++i) {
    auto [role, v] = window(r, kStep);
    roles.push_back(role.kind);
    verdicts.push_back(v.kind);
  }
  EXPECT_EQ(roles, (std::vector<WindowRole::Kind>{WindowRole::kPass, WindowRole::kTiming, WindowRole::kPass,
                                                  WindowRole::kTiming, WindowRole::kDone}));
  EXPECT_EQ(verdicts, (std::vector<WindowVerdict::Kind>{WindowVerdict::kGroupCounters, WindowVerdict::kGroupTimed,
                                                        WindowVerdict::kGroupCounters, WindowVerdict::kGroupTimed,
                                                        WindowVerdict::kIgnored}));
}

TEST(StepReplay, DifferentKernelInALaterPassRestartsTheGroup) {
  StepReplay r(3, 1);
  EXPECT_EQ(window(r, kStep).second.kind, WindowVerdict::kKept);  // pass 0: reference
  auto changed = kStep;
  changed[1] = k("gelu");
  auto [role, v] = window(r, changed);  // pass 1 with another kernel
  EXPECT_EQ(role.pass, 1u);
  EXPECT_EQ(v.kind, WindowVerdict::kDiscarded);
  EXPECT_EQ(v.message,
            "its kernels differ from the first window's: "
            "launch 1: expected relu<<<(1024,1,1),(256,1,1)>>>, got gelu<<<(1024,1,1),(256,1,1)>>>; "
            "the group restarts at pass 0");
  EXPECT_EQ(r.discarded(), 1u);
  // The group starts over, with the new step as its reference.
  auto [again, v2] = window(r, changed);
  EXPECT_EQ(again.kind, WindowRole::kPass);
  EXPECT_EQ(again.pass, 0u);
  EXPECT_EQ(v2.kind, WindowVerdict::kKept);
  EXPECT_EQ(r.reference(), changed);
}

// Each of the six launch dimensions alone tells two launches apart, and the message names the
// launch's index, what the first window launched there and what this one did.
TEST(StepReplay, EachGridAndBlockDimensionIsCheckedAndNamed) {
  const LaunchIdentity ref{"gemm", {64, 2, 3}, {128, 4, 5}};
  for (int dim = 0; dim < 6; ++dim) {
    LaunchIdentity other = ref;
    if (dim < 3)
      other.grid[static_cast<size_t>(dim)] += 1;
    else
      other.block[static_cast<size_t>(dim - 3)] += 1;
    StepReplay r(2, 1);
    window(r, {k("conv"), ref});
    auto [role, v] = window(r, {k("conv"), other});
    EXPECT_EQ(role.kind, WindowRole::kPass);
    EXPECT_EQ(v.kind, WindowVerdict::kDiscarded) << describe(other);
    EXPECT_FALSE(v.empty);
    EXPECT_EQ(v.message, "its kernels differ from the first window's: launch 1: expected " + describe(ref) +
                             ", got " + describe(other) + "; the group restarts at pass 0");
  }
}

TEST(StepReplay, DifferentGridOrBlockOrLengthIsAMismatch) {
  for (const auto& other : {std::vector<LaunchIdentity>{k("conv", 512), k("relu"), k("gemm", 64, 128)},
                            std::vector<LaunchIdentity>{k("conv"), k("relu", 1024, 128), k("gemm", 64, 128)},
                            std::vector<LaunchIdentity>{k("conv"), k("relu")},
                            std::vector<LaunchIdentity>{k("conv"), k("relu"), k("gemm", 64, 128), k("extra")}}) {
    StepReplay r(2, 1);
    window(r, kStep);
    auto [role, v] = window(r, other);
    EXPECT_EQ(v.kind, WindowVerdict::kDiscarded) << describe(other.back());
    EXPECT_FALSE(v.message.empty());
  }
  StepReplay r(2, 1);
  window(r, kStep);
  auto [role, v] = window(r, {k("conv"), k("relu")});
  EXPECT_EQ(v.message, "its kernels differ from the first window's: 2 launches, expected 3; the group restarts at pass 0");
}

TEST(StepReplay, MismatchedTimingWindowIsRunAgainWithoutLosingCounters) {
  StepReplay r(1, 1);
  EXPECT_EQ(window(r, kStep).second.kind, WindowVerdict::kGroupCounters);
  auto [role, v] = window(r, {k("other")});
  EXPECT_EQ(role.kind, WindowRole::kTiming);
  EXPECT_EQ(v.kind, WindowVerdict::kDiscarded);
  EXPECT_EQ(v.message.find("restarts"), std::string::npos);
  auto [role2, v2] = window(r, kStep);
  EXPECT_EQ(role2.kind, WindowRole::kTiming);
  EXPECT_EQ(v2.kind, WindowVerdict::kGroupTimed);
}

TEST(StepReplay, EmptyFirstWindowIsDiscardedAndUnclosedWindowIsDropped) {
  StepReplay r(2, 1);
  auto [role, v] = window(r, {});
  EXPECT_EQ(v.kind, WindowVerdict::kDiscarded);
  EXPECT_EQ(v.message, "window launched no kernel");
  EXPECT_TRUE(v.empty);  // not a mismatch: the session's end-of-run line leaves it out
  r.begin();
  r.on_launch(k("conv"));
  WindowRole next = r.begin();  // the first never closed
  EXPECT_EQ(r.discarded(), 2u);
  EXPECT_EQ(next.pass, 0u);
  for (const auto& l : kStep) r.on_launch(l);
  EXPECT_EQ(r.end().kind, WindowVerdict::kKept);
  EXPECT_EQ(r.reference(), kStep);  // the unclosed window's launch is not part of it
}

TEST(StepReplay, LaunchesOutsideWindowsAndEndWithoutBeginAreIgnored) {
  StepReplay r(1, 1);
  r.on_launch(k("stray"));
  EXPECT_EQ(r.end().kind, WindowVerdict::kIgnored);
  EXPECT_EQ(window(r, kStep).second.kind, WindowVerdict::kGroupCounters);
  EXPECT_EQ(r.reference(), kStep);
}

// A launch's name is a view of CUPTI's symbolName, read only during on_launch: the replay keeps
// its own copy. Here each name lives in a buffer that is overwritten right after its launch, and
// later windows spell the same names from other buffers.
TEST(StepReplay, NamesAreKeptNotViewed) {
  StepReplay r(2, 1);
  std::string buffer;
  auto launch_from_buffer = [&](const char* name) {
    buffer = name;
    r.on_launch({buffer, {1, 1, 1}, {32, 1, 1}});
    buffer.assign(buffer.size(), 'x');  // the same address, other bytes
  };
  r.begin();
  launch_from_buffer("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_");
  launch_from_buffer("_Z4reluPf");
  EXPECT_EQ(r.end().kind, WindowVerdict::kKept);
  const std::string other_copy[] = {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_",
                                    "_Z4reluPf"};
  auto [role, v] = window(r, {{other_copy[0], {1, 1, 1}, {32, 1, 1}}, {other_copy[1], {1, 1, 1}, {32, 1, 1}}});
  EXPECT_EQ(v.kind, WindowVerdict::kGroupCounters) << v.message;
  ASSERT_EQ(r.reference_size(), 2u);
  EXPECT_EQ(r.reference()[1].kernel, "_Z4reluPf");
  // The buffer's address with another name is another kernel, not the one last seen there.
  r.begin();
  launch_from_buffer("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_");
  launch_from_buffer("_Z4geluPf");
  const WindowVerdict timing = r.end();
  EXPECT_EQ(timing.kind, WindowVerdict::kDiscarded);
  EXPECT_EQ(timing.message, "its kernels differ from the first window's: launch 1: expected "
                            "_Z4reluPf<<<(1,1,1),(32,1,1)>>>, got _Z4geluPf<<<(1,1,1),(32,1,1)>>>");
}

TEST(KernelNameIds, EachDistinctNameHasOneIdWhereverItIsSpelled) {
  KernelNameIds ids;
  EXPECT_EQ(ids.id(kGraphLaunchName), 0u);
  EXPECT_EQ(ids.size(), 1u);
  std::string a = "_Z4gemmPKfS0_Pf", a2 = a, b = "_Z4reluPf";
  const uint32_t ia = ids.id(a);
  EXPECT_EQ(ids.id(a), ia);   // the same address: found without hashing
  EXPECT_EQ(ids.id(a2), ia);  // another address, the same bytes
  const uint32_t ib = ids.id(b);
  EXPECT_NE(ib, ia);
  EXPECT_EQ(ids.size(), 3u);
  a = "_Z4geluPf";  // short: the same inline buffer, other bytes
  const uint32_t ic = ids.id(a);
  EXPECT_NE(ic, ia);
  EXPECT_NE(ic, ib);
  EXPECT_EQ(ids.name(ia), "_Z4gemmPKfS0_Pf");
  EXPECT_EQ(ids.name(ic), "_Z4geluPf");
  EXPECT_EQ(ids.id("_Z4geluPf"), ic);
  // A name that is a prefix of another at the same address is not taken for it.
  std::string p = "_Z4gemmPKfS0_Pf";
  const uint32_t ip = ids.id(p);
  EXPECT_EQ(ids.id(std::string_view(p).substr(0, 6)), ids.id("_Z4gem"));
  EXPECT_NE(ids.id(std::string_view(p).substr(0, 6)), ip);
  EXPECT_THROW((void)ids.name(1000), std::out_of_range);
}

TEST(StepReplay, ZeroPassesOrGroupsAreRejected) {
  EXPECT_THROW(StepReplay(0, 1), std::invalid_argument);
  EXPECT_THROW(StepReplay(1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace rf::collector
