// The session's launch callbacks allocate nothing after a thread's first launches, in timing mode
// (issue 8: "launch callbacks that do no allocation"): the real Session::on_callback, called as
// CUPTI calls it for a launch through the runtime (runtime entry, driver entry, driver exit,
// runtime exit), on the fake CUPTI. test_launch_alloc shows the same for LaunchLog and the writer
// alone; this one covers what the session adds around them, and found one allocation they
// missed: with no kernel record asked about (none here), a thread's decision ring fills after
// 4,096 launches and the thread applies it to the kernel-record filter itself, whose first
// interval allocated (now reserved: CorrelationFilter::kReservedIntervals). Global operator new
// is replaced here (alloc_counter.h) and counts what the launching thread allocates while armed.
#include <functional>
#include <string_view>

#include "alloc_counter.h"
#include "fake_session.h"
#include "fake_steps.h"
#include "rfprof/collector/step_range_windows.h"

namespace rf::fake_cupti {
namespace {

using test::t_allocations;
using test::t_armed;

using trace::CollectionMode;

/// `n` launches of `kernel` on `ctx` through the session's callback alone (DirectLaunch),
/// correlation ids from `*next` on. Returns the allocations the calling thread made during them
/// when `armed`.
uint64_t launches(CUcontext ctx, const char* kernel, int n, uint32_t* next, bool armed) {
  DirectLaunch launch(ctx, kernel, 1, 128);
  if (!launch.ok()) std::_Exit(5);
  t_allocations = 0;
  test::t_buffer_allocations = 0;
  t_armed = armed;
  for (int i = 0; i < n; ++i) launch((*next)++);
  t_armed = false;
  return t_allocations;
}

/// In the child: warms the thread up, then reports the allocations of 20,000 launches to stderr.
/// Also reports the writer buffers allocated meanwhile (alloc_counter.h: only when the flush thread
/// is behind), which expect_few_buffers bounds.
void count_allocations(CUcontext ctx) {
  uint32_t next = 1000;
  launches(ctx, "_Z4gemmPKfS0_Pf", 2000, &next, false);  // the thread's buffer, caches, name
  launches(ctx, "_Z4reluPf", 2000, &next, false);
  uint64_t n = launches(ctx, "_Z4gemmPKfS0_Pf", 10000, &next, true);
  uint64_t buffers = test::t_buffer_allocations;
  n += launches(ctx, "_Z4reluPf", 10000, &next, true);
  buffers += test::t_buffer_allocations;
  std::fprintf(stderr, "allocations=%llu\nwriter buffers=%llu\n", static_cast<unsigned long long>(n),
               static_cast<unsigned long long>(buffers));
}

/// count_allocations' 20,000 launch records are well under 4 MiB, 64 buffers of 64 KiB: more would
/// mean buffers allocated per launch, not per buffer handed over.
void expect_few_buffers(const std::string& err) {
  const size_t at = err.find("writer buffers=");
  ASSERT_NE(at, std::string::npos) << err;
  EXPECT_LE(std::stoull(err.substr(at + 15)), 64u) << err;
}

// The instrument works in this executable: a thread's first launches allocate (its writer buffer,
// its caches, the kernel's name), and the replaced operator new counts them.
TEST_F(FakeSessionTest, AThreadsFirstLaunchesAllocateAndAreCounted) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    uint32_t next = 1000;
    const uint64_t n = launches(create_context(1), "_Z4gemmPKfS0_Pf", 10, &next, true);
    std::fprintf(stderr, "allocations=%llu\n", static_cast<unsigned long long>(n));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const size_t at = c.err.find("allocations=");
  ASSERT_NE(at, std::string::npos) << c.err;
  EXPECT_GT(std::stoull(c.err.substr(at + 12)), 0u) << c.err;
}

TEST_F(FakeSessionTest, TimingModeLaunchCallbacksAllocateNothing) {
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    count_allocations(create_context(1));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << c.err;
  expect_few_buffers(c.err);
  // The 24,000 launches are in the trace: the arming did not skip the path it measures.
  EXPECT_EQ(read_trace(trace_).all<trace::LaunchApi>().size(), 24000u);
}

TEST_F(FakeSessionTest, TimingModeLaunchCallbacksWithFiltersAllocateNothing) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.filter.kernel_name = "regex:gemm|relu";
    o.filter.nvtx_include = {"forward/"};
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    nvtx_push("forward");
    count_allocations(ctx);
    nvtx_pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << c.err;
  expect_few_buffers(c.err);
  EXPECT_EQ(read_trace(trace_).all<trace::LaunchApi>().size(), 24000u);
}

// Replay across steps (RFPROF_REPLAY=step): a pass window's launches allocate nothing once the
// group's first window has given the reference, with PyTorch's long mangled names (until
// 2026-11-29 each launch copied its name twice, into its identity and into the window's sequence:
// 2 allocations per launch, and the sequence's growth in every window).
TEST_F(FakeSessionTest, StepReplayLaunchCallbacksAllocateNothingAfterTheFirstWindow) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    const char* names[] = {"_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_",
                           "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32_warpgroupsize1x1x1"};
    DirectLaunch a(ctx, names[0], 1, 128), b(ctx, names[1], 1, 128);
    if (!a.ok() || !b.ok()) std::_Exit(5);
    uint32_t next = 1000;
    uint64_t n = 0;
    for (int window = 0; window < 2; ++window) {
      profiler_start(ctx);
      t_allocations = 0;
      for (int i = 0; i < 1000; ++i) {
        // The window's first launch starts the pass (cuptiRangeProfilerStart: CUPTI's allocations,
        // here the fake's, are not rfprof's); the first window makes the reference, its names
        // copied once.
        t_armed = window > 0 && i > 0;
        (i % 3 ? a : b)(next++);
      }
      t_armed = false;
      n += t_allocations;
      profiler_stop(ctx);
    }
    std::fprintf(stderr, "allocations=%llu\n", static_cast<unsigned long long>(n));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << c.err;
  // The windows' launches reached the replay: the group's last pass was checked against their
  // 1000 (the fake's Range Profiler saw no kernel through the direct calls: 0 ranges, the group
  // restarts).
  const auto mismatches = errors_with(read_trace(trace_), trace::ErrorCode::kRangeLaunchMismatch);
  ASSERT_EQ(mismatches.size(), 1u);
  EXPECT_EQ(mismatches[0].expected, 1000u);
  EXPECT_EQ(mismatches[0].actual, 0u);
}

// NVTX ranges around every operator with replay across NVTX ranges (RFPROF_REPLAY_RANGE): in the
// default domain, and in a named domain where each range takes the thread's depth from 0 to 1
// (until 2026-11-28 a std::map node then, one allocation per range); with no window open (the
// regex:, whose search allocates, answered from the thread's cache of names) and with the step's
// window open.
TEST_F(FakeSessionTest, NvtxRangesUnderAReplayRangeAllocateNothing) {
  const Child c = run_child([&] {
    collector::SessionOptions o = nvtx_step_options(trace_);
    o.replay_range = "regex:^step ";
    if (!collector::start_session(o)) std::_Exit(3);
    DirectNvtx plain, in_domain(nvtx_domain_create("bench"));
    if (!plain.ok() || !in_domain.ok()) std::_Exit(5);
    // Two names in different slots of the thread's cache of names (two in one slot would evict
    // each other and be searched at every push, by design).
    const char* a = "aten::mm";
    const char* b = nullptr;
    auto slot = [](std::string_view s) { return std::hash<std::string_view>{}(s) % collector::StepRangeWindows::kNameCacheSlots; };
    for (const char* name : {"aten::cudnn_convolution_transpose_backward", "aten::convolution_backward", "aten::addmm_"})
      if (!b && slot(name) != slot(a)) b = name;
    if (!b) std::_Exit(6);
    auto ranges = [&](int n) {
      for (int i = 0; i < n; ++i) {
        plain.push(i % 2 ? a : b);
        plain.pop();
        in_domain.push(a);
        in_domain.pop();
      }
    };
    uint64_t n = 0;
    for (bool window : {false, true}) {
      // Opens the window (recorded without counters: no context is current on this thread).
      if (window) nvtx_push("step 0");
      ranges(100);
      t_allocations = 0;
      t_armed = true;
      ranges(10000);
      t_armed = false;
      n += t_allocations;
    }
    std::fprintf(stderr, "allocations=%llu\n", static_cast<unsigned long long>(n));
    nvtx_pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << c.err;
}

// The same with an NVTX filter rule (--nvtx-include), whose per-thread stacks keep each pushed
// name: an entry's string is reused by the next push at its depth (until 2026-11-28 each push of a
// name longer than the string's 15 inline bytes allocated, 20,000 of 20,000 here), and a named
// domain's name comes from the thread's copy.
TEST_F(FakeSessionTest, NvtxRangesUnderAFilterRuleAllocateNothing) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.filter.nvtx_include = {"bench@forward/aten::convolution_backward/"};
    if (!collector::start_session(o)) std::_Exit(3);
    DirectNvtx plain, in_domain(nvtx_domain_create("bench"));
    if (!plain.ok() || !in_domain.ok()) std::_Exit(5);
    in_domain.push("forward");
    auto ranges = [&](int n) {
      for (int i = 0; i < n; ++i) {
        plain.push(i % 2 ? "aten::convolution_backward" : "aten::cudnn_convolution_transpose_backward");
        plain.pop();
        in_domain.push(i % 2 ? "aten::convolution_backward" : "aten::cudnn_convolution_transpose_backward");
        in_domain.pop();
      }
    };
    ranges(100);
    t_allocations = 0;
    t_armed = true;
    ranges(10000);
    t_armed = false;
    std::fprintf(stderr, "allocations=%llu\n", static_cast<unsigned long long>(t_allocations));
    in_domain.pop();
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << c.err;
}

// nvtxRangeStart*/nvtxRangeEnd pairs, in the default domain and in a named one: without rules
// (the range style's bookkeeping, nvtx_style.h), with a start/end rule that names the ranges,
// and with a push/pop rule (the filter's open ranges are kept whatever the rules). Until
// 2026-11-29 each start inserted its id into the style's set (one allocation per range, under the
// session's activity mutex), and with rules NvtxState kept each open range in a map with copies
// of its names (two to four more).
TEST_F(FakeSessionTest, NvtxStartEndRangesAllocateNothing) {
  for (const char* rule : {"", "bench@aten::convolution_backward", "forward/"}) {
    std::filesystem::remove(trace_);
    const Child c = run_child([&] {
      auto o = options(CollectionMode::kTiming);
      if (*rule) o.filter.nvtx_include = {rule, "aten::convolution_backward"};
      if (!collector::start_session(o)) std::_Exit(3);
      DirectNvtx plain, in_domain(nvtx_domain_create("bench"));
      if (!plain.ok() || !in_domain.ok()) std::_Exit(5);
      uint64_t id = 1;
      auto ranges = [&](int n) {
        for (int i = 0; i < n; ++i) {
          plain.start("aten::convolution_backward", id);
          plain.end(id++);
          in_domain.start(i % 2 ? "aten::convolution_backward" : "aten::cudnn_convolution_transpose_backward", id);
          in_domain.end(id++);
        }
      };
      ranges(100);
      t_allocations = 0;
      t_armed = true;
      ranges(10000);
      t_armed = false;
      std::fprintf(stderr, "allocations=%llu\n", static_cast<unsigned long long>(t_allocations));
    });
    ASSERT_TRUE(c.exited_zero()) << rule << ": " << c.err;
    EXPECT_NE(c.err.find("allocations=0\n"), std::string::npos) << "rule \"" << rule << "\": " << c.err;
  }
}

}  // namespace
}  // namespace rf::fake_cupti
