// The launch path allocates nothing after a thread's first launches (launch_log.h, docs/collector.md
// "Launches"): LaunchLog::enter/exit into the real trace::Writer (the thread's buffer, its
// kernel-name cache, the 64 KiB buffer hand-over to the flush thread), with a -k filter, an NVTX
// include rule, and a known call stack. Global operator new is replaced in this executable and
// counts, per thread, the allocations made while the test arms it (alloc_counter.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <set>
#include <new>
#include <string>

#include "alloc_counter.h"
#include "rfprof/collector/call_stacks.h"
#include "rfprof/collector/launch_filter.h"
#include "rfprof/collector/launch_log.h"
#include "rfprof/collector/step_replay.h"
#include "rfprof/trace/reader.h"
#include "rfprof/trace/writer.h"

namespace rf::collector {
namespace {

using test::allocations_during;
using test::t_allocations;
using test::t_armed;

namespace fs = std::filesystem;

constexpr const char* kSymbol = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_";

/// The session's launch path in timing mode (as bench/bench_launch_path.cpp): a LaunchLog with
/// window 0 open writing through a trace::Writer. The session's flush thread is played by the test
/// thread itself, not counted: once a launch has handed a full buffer over, the test writes it out
/// before the next launch, so every launch finds the written buffer back in the writer's spares.
/// (A flush thread that falls behind makes the writer allocate a new 68 KiB buffer per buffer
/// handed over, until its spares, at most 16, cover the lag: docs/collector.md.)
class LaunchPath {
 public:
  LaunchPath() { log_.process_start(1); }
  ~LaunchPath() {
    std::error_code ec;
    fs::remove(file_, ec);
    fs::remove(file_.string() + ".part", ec);
  }
  /// One launch through LaunchLog: entry, then exit with its LaunchApi record; then, unarmed, the
  /// flush thread's work if the launch handed a buffer over.
  void launch(bool selected, uint32_t stack_id) {
    const uint32_t c = corr_++;
    LaunchTicket t = log_.enter(c, 0, selected);
    trace::LaunchApi l;
    l.correlation_id = c;
    l.thread_id = 100;
    l.api_start_ns = c * 1000ull;
    l.api_end_ns = l.api_start_ns + 400;
    l.grid[0] = 1024;
    l.block[0] = 256;
    l.stack_id = stack_id;
    log_.exit(t, l, kSymbol);
    if (flush_now_) {
      const bool armed = t_armed;
      t_armed = false;
      flush_now_ = false;
      writer_.flush();
      ++flushes_;
      t_armed = armed;
    }
  }
  /// Buffers handed over and written so far.
  uint64_t flushes() const { return flushes_; }
  /// Finishes the trace and returns how many LaunchApi records it holds.
  uint64_t finish_and_count() {
    writer_.finish();
    uint64_t n = 0;
    trace::Reader r(file_);
    for (trace::Record rec; r.next(rec);)
      if (std::holds_alternative<trace::LaunchApi>(rec)) ++n;
    return n;
  }

 private:
  fs::path file_ = fs::temp_directory_path() / ("rfprof-test-launch-alloc-" + std::to_string(::getpid()) + ".rftrace");
  bool flush_now_ = false;
  uint64_t flushes_ = 0;
  trace::Writer writer_{file_, trace::WriterOptions{.chunk_bytes = 1u << 20,
                                                    .force_overwrite = true,
                                                    .max_pending_chunks = 8,
                                                    .on_chunk_pending = [this] { flush_now_ = true; }}};
  LaunchLog log_{true, LaunchSink{[this](const trace::Record& r) { writer_.append(r); },
                                  [this](std::string_view s) { return writer_.intern_cached(s); },
                                  [this](const trace::Record& r) { writer_.append_buffered(r); }}};
  uint32_t corr_ = 1;
};

// Enough launches to hand several 64 KiB thread buffers to the flush thread (a LaunchApi record
// is about 90 bytes: some 700 launches per buffer).
constexpr int kWarmUp = 5000;
constexpr int kMeasured = 50000;

TEST(LaunchAlloc, TheCountingAllocatorSeesAnAllocation) {
  // The instrument itself: an allocation while armed is counted (else every test below passes).
  const uint64_t n = allocations_during([] {
    auto* v = new char[100];
    delete[] v;
  });
  EXPECT_EQ(n, 1u);
}

TEST(LaunchAlloc, PlainLaunchesAllocateNothingAfterTheFirst) {
  LaunchPath path;
  for (int i = 0; i < kWarmUp; ++i) path.launch(true, 0);
  const uint64_t n = allocations_during([&] {
    for (int i = 0; i < kMeasured; ++i) path.launch(true, 0);
  });
  EXPECT_EQ(n, 0u) << "allocations in " << kMeasured << " launches";
  EXPECT_GT(path.flushes(), 50u);  // buffers were handed over while measured, not only before
  EXPECT_EQ(path.finish_and_count(), uint64_t{kWarmUp + kMeasured});  // every launch written
}

/// Allocations in kMeasured rounds, after kWarmUp, of one launch through `a`'s decision and one
/// through `b`'s (thread 100).
uint64_t allocations_through(LaunchPath& path, LaunchFilter& a, LaunchFilter& b) {
  auto both = [&] {
    path.launch(a.selects(kSymbol, 100), 0);
    path.launch(b.selects(kSymbol, 100), 0);
  };
  for (int i = 0; i < kWarmUp; ++i) both();
  return allocations_during([&] {
    for (int i = 0; i < kMeasured; ++i) both();
  });
}

TEST(LaunchAlloc, KernelAndNvtxFiltersAllocateNothingAfterTheFirst) {
  LaunchPath path;
  LaunchFilterOptions k;
  k.kernel_name = "regex:elementwise";
  LaunchFilter kernel_filter(k);
  LaunchFilterOptions o;
  o.nvtx_include = {"step/*/forward/"};
  LaunchFilter nvtx_filter(o);
  for (const char* name : {"step", "forward", "aten::fill_"}) nvtx_filter.nvtx().push(100, "", name);
  const uint64_t n = allocations_through(path, kernel_filter, nvtx_filter);
  EXPECT_EQ(n, 0u) << "allocations in " << 2 * kMeasured << " filtered launches";
  // Both filters select this kernel under this stack: a filter that refused would write nothing.
  EXPECT_EQ(path.finish_and_count(), uint64_t{2 * (kWarmUp + kMeasured)});
}

// regex: NVTX rules, push/pop and start/end. Before 2026-11-23 each launch searched the rules'
// expressions in the open ranges (std::regex_search allocates its match state: 600,000
// allocations in these 100,000 launches) and a start/end regex rule took the process-wide lock
// of the open ranges. Now the expressions are searched when a range is pushed or started, and a
// launch reads bits and counts.
TEST(LaunchAlloc, RegexNvtxRulesAllocateNothingAtALaunch) {
  LaunchPath path;
  LaunchFilterOptions pp;
  pp.nvtx_include = {"regex:step/*/forw.rd/"};
  LaunchFilter push_pop(pp);
  for (const char* name : {"ProfilerStep#3", "step", "forward", "layer1", "aten::fill_"})
    push_pop.nvtx().push(100, "", name);
  LaunchFilterOptions se;
  se.nvtx_include = {"regex:train_step_[0-9]+"};
  LaunchFilter start_end(se);
  start_end.nvtx().start(1, "", "epoch 0");
  start_end.nvtx().start(2, "", "train_step_12");
  const uint64_t n = allocations_through(path, push_pop, start_end);
  EXPECT_EQ(n, 0u) << "allocations in " << 2 * kMeasured << " launches under regex: rules";
  EXPECT_EQ(path.finish_and_count(), uint64_t{2 * (kWarmUp + kMeasured)});  // both select
}

TEST(LaunchAlloc, AKnownCallStackAllocatesNothing) {
  LaunchPath path;
  CallStackTable stacks;
  std::set<uint32_t> ids;
  uint64_t n = 0;
  // Both rounds capture from the same call site, so the stack is the same: the first round
  // interns it (and allocates), the second finds it in the thread's cache.
  for (int round = 0; round < 2; ++round) {
    t_allocations = 0;
    t_armed = round == 1;
    for (int i = 0; i < kWarmUp; ++i) {
      const uint32_t id = stacks.capture_and_intern();
      ids.insert(id);
      path.launch(true, id);
    }
    t_armed = false;
    n = t_allocations;
  }
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_NE(*ids.begin(), 0u);
  EXPECT_EQ(n, 0u);
}

// Replay across steps' kernel names (step_replay.h): a launch of a known kernel allocates nothing,
// and an allocation that fails while a new name is added (each of them in turn) leaves the ids as
// they were: the name is not half added, and two names never share an id.
TEST(LaunchAlloc, KernelNameIdsStayConsistentWhenAnAllocationFails) {
  const std::string known = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_";
  const std::string fresh = "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize64x128x32";
  bool some_failed = false;
  for (int64_t fail_at = 0; fail_at < 8; ++fail_at) {
    KernelNameIds ids;
    // 15 names so far: the next new one finds names_ full (16 reserved at the first name added),
    // so that adding it allocates the map's node, its string and names_' new storage.
    std::vector<std::string> others;
    for (int i = 0; i < 14; ++i) others.push_back("_Z6kernelILi" + std::to_string(i) + "EEvPfPKf_padded_past_sso");
    for (const auto& o : others) (void)ids.id(o);
    const uint32_t known_id = ids.id(known);
    EXPECT_EQ(allocations_during([&] { EXPECT_EQ(ids.id(known), known_id); }), 0u);
    const size_t before = ids.size();
    test::t_fail_at = fail_at;
    bool failed = false;
    uint32_t fresh_id = 0;
    t_allocations = 0;
    t_armed = true;
    try {
      fresh_id = ids.id(fresh);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
    t_armed = false;
    test::t_fail_at = -1;
    some_failed |= failed;
    if (failed) {
      EXPECT_EQ(ids.size(), before) << "allocation " << fail_at;
      fresh_id = ids.id(fresh);  // added now, whole
    }
    EXPECT_EQ(ids.size(), before + 1) << "allocation " << fail_at;
    EXPECT_EQ(ids.name(fresh_id), fresh) << "allocation " << fail_at;
    EXPECT_EQ(ids.id(fresh), fresh_id);
    EXPECT_EQ(ids.id(known), known_id);
    const uint32_t third = ids.id("_Z5thirdv");
    EXPECT_NE(third, fresh_id) << "allocation " << fail_at;
    EXPECT_EQ(ids.name(third), "_Z5thirdv");
    EXPECT_EQ(ids.name(known_id), known);
  }
  EXPECT_TRUE(some_failed);  // the injection reached the adding of a name
}

}  // namespace
}  // namespace rf::collector
