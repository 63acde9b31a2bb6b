// The session's launch callbacks take no lock shared between launching threads, in timing mode
// (issue 8: "launch callbacks that ... take no global lock"; docs/collector.md, "The launch path
// shares no lock between threads"): the real Session::on_callback, called as CUPTI calls it for a
// launch through the runtime, on the fake CUPTI with the fake driver loaded (as in a real process,
// where a launch means the driver is loaded). pthread_mutex_lock is replaced here (lock_counter.h)
// and records, per thread, the mutexes each launching thread locks while armed. A mutex locked by
// two launching threads is shared; the writer's hand-over of a full 64 KiB thread buffer (about
// 700 launches) is the one shared lock the design allows, so shared locks must stay under one per
// 200 launches; a lock taken at every launch gives one per launch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <latch>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "fake_session.h"
#include "fake_steps.h"
#include "lock_counter.h"

namespace rf::fake_cupti {
namespace {

using test::LockTable;
using test::locks_during;
using trace::CollectionMode;

constexpr int kThreads = 3;
constexpr int kWarmUp = 2000;
constexpr int kMeasured = 20000;

/// What the launching threads locked: per thread, the locks of mutexes another launching thread
/// locked too (shared), and of its own mutexes.
struct LockReport {
  uint64_t shared_max = 0;  ///< the most shared-mutex locks of one thread
  uint64_t own_min = UINT64_MAX;  ///< the fewest locks of a thread's own mutexes
};

LockReport report(const LockTable (&tables)[kThreads]) {
  LockReport r;
  for (int t = 0; t < kThreads; ++t) {
    uint64_t shared = 0, own = 0;
    for (size_t i = 0; i < tables[t].used; ++i) {
      const auto& slot = tables[t].slots[i];
      bool elsewhere = false;
      for (int u = 0; u < kThreads; ++u) elsewhere |= u != t && tables[u].locks_of(slot.mutex) != 0;
      (elsewhere ? shared : own) += slot.locks;
    }
    r.shared_max = std::max(r.shared_max, shared + tables[t].overflow);
    r.own_min = std::min(r.own_min, own);
  }
  return r;
}

/// In the child: kThreads threads launch on `ctx` at once, kWarmUp launches each and then
/// kMeasured armed; prints "shared=N own=M" (LockReport) to stderr. With `outer`, each thread's
/// launches are inside an NVTX push/pop range of that name; with `per_launch`, each launch is
/// inside one of its own (nvtxRangePushA and nvtxRangePop around it, as PyTorch's emit_nvtx).
void launch_from_threads(CUcontext ctx, const char* outer = nullptr, const char* per_launch = nullptr) {
  LockTable tables[kThreads];
  // No thread exits before all are measured: an exited thread's per-thread objects (and their
  // mutexes) go to the next thread that starts (trace::PerThread), which the instrument would
  // count as shared.
  std::latch alive(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      set_current_context(ctx);
      DirectNvtx nvtx;
      DirectLaunch launch(ctx, t % 2 ? "_Z4reluPf" : "_Z4gemmPKfS0_Pf", 1, 128);
      if (!launch.ok() || !nvtx.ok()) std::_Exit(5);
      auto one = [&](uint32_t id) {
        if (per_launch) nvtx.push(per_launch);
        launch(id);
        if (per_launch) nvtx.pop();
      };
      if (outer) nvtx.push(outer);
      uint32_t next = 100000u * static_cast<uint32_t>(t + 1);
      for (int i = 0; i < kWarmUp; ++i) one(next++);
      tables[t] = locks_during([&] {
        for (int i = 0; i < kMeasured; ++i) one(next++);
      });
      if (outer) nvtx.pop();
      alive.arrive_and_wait();
    });
  for (auto& th : threads) th.join();
  const LockReport r = report(tables);
  std::fprintf(stderr, "shared=%llu own=%llu\n", static_cast<unsigned long long>(r.shared_max),
               static_cast<unsigned long long>(r.own_min));
}

/// In the child: kThreads threads push and pop "aten::mm" at once (in `domain`, or the default
/// domain when null; with `start_end`, start and end it, each thread with range ids of its own),
/// kWarmUp pairs each and then kMeasured armed, with no launch; prints "shared=N own=M"
/// (LockReport) to stderr.
void nvtx_from_threads(nvtxDomainHandle_t domain, bool start_end = false) {
  LockTable tables[kThreads];
  std::latch alive(kThreads);  // as in launch_from_threads
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      DirectNvtx nvtx(domain);
      if (!nvtx.ok()) std::_Exit(5);
      uint64_t id = 1000000u * static_cast<uint64_t>(t + 1);
      auto range = [&] {
        if (start_end) {
          nvtx.start("aten::mm", id);
          nvtx.end(id++);
        } else {
          nvtx.push("aten::mm");
          nvtx.pop();
        }
      };
      for (int i = 0; i < kWarmUp; ++i) range();
      tables[t] = locks_during([&] {
        for (int i = 0; i < kMeasured; ++i) range();
      });
      alive.arrive_and_wait();
    });
  for (auto& th : threads) th.join();
  const LockReport r = report(tables);
  std::fprintf(stderr, "shared=%llu own=%llu\n", static_cast<unsigned long long>(r.shared_max),
               static_cast<unsigned long long>(r.own_min));
}

/// The numbers launch_from_threads printed.
LockReport parse(const std::string& err) {
  LockReport r{UINT64_MAX, 0};  // no line printed: fails both checks
  const size_t at = err.find("shared=");
  if (at == std::string::npos) return r;
  unsigned long long shared = 0, own = 0;
  if (std::sscanf(err.c_str() + at, "shared=%llu own=%llu", &shared, &own) == 2) {
    r.shared_max = shared;
    r.own_min = own;
  }
  return r;
}

/// The session with options `o` in a child with the fake driver loaded; launch_from_threads(`outer`,
/// `per_launch`) there; then the checks: the threads' own locks seen at every launch (the
/// instrument saw the path), shared ones under one per 200 launches, every launch in the trace.
/// `property`: the test property that records what was measured.
class FakeLocksTest : public FakeDriverTest {
 protected:
  void expect_no_shared_lock(const collector::SessionOptions& o, const char* outer, const char* per_launch,
                             const char* property) {
    std::filesystem::remove(trace_);
    const Child c = run_child([&] {
      if (!load_fake_driver(RF_FAKE_LIBCUDA)) std::_Exit(4);
      if (!collector::start_session(o)) std::_Exit(3);
      launch_from_threads(create_context(1), outer, per_launch);
    });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    const LockReport r = parse(c.err);
    RecordProperty(property, c.err.substr(0, c.err.find('\n')));
    EXPECT_GE(r.own_min, uint64_t{kMeasured}) << property << ": " << c.err;
    EXPECT_LE(r.shared_max, uint64_t{kMeasured / 200}) << property << ": " << c.err;
    EXPECT_EQ(read_trace(trace_).all<trace::LaunchApi>().size(), size_t{kThreads * (kWarmUp + kMeasured)})
        << property;
  }

  /// The session with options `o` in a child with the fake driver loaded and the NVTX domain
  /// "bench" created; `open_range` pushed first on the main thread when given (no context is
  /// current there: with a replay range it opens a window recorded without counters); then
  /// nvtx_from_threads (in "bench" when `in_domain`; start/end ranges with `start_end`). Checks
  /// that the threads share under one lock per 200 ranges.
  void expect_nvtx_shares_no_lock(const collector::SessionOptions& o, const char* open_range, bool in_domain,
                                  const char* property, bool start_end = false) {
    std::filesystem::remove(trace_);
    const Child c = run_child([&] {
      if (!load_fake_driver(RF_FAKE_LIBCUDA)) std::_Exit(4);
      if (!collector::start_session(o)) std::_Exit(3);
      const nvtxDomainHandle_t domain = nvtx_domain_create("bench");
      if (open_range) nvtx_push(open_range);
      nvtx_from_threads(in_domain ? domain : nullptr, start_end);
    });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    const LockReport r = parse(c.err);
    RecordProperty(property, c.err.substr(0, c.err.find('\n')));
    EXPECT_LE(r.shared_max, uint64_t{kMeasured / 200}) << property << ": " << c.err;
  }
};

// The instrument: a mutex, timed mutex or shared mutex two threads lock while armed is seen as
// shared, with its count.
TEST(LockCounter, AMutexTwoThreadsLockIsShared) {
  std::mutex m;
  std::timed_mutex timed;
  std::shared_mutex shared;
  LockTable tables[kThreads];
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      std::mutex own;
      tables[t] = locks_during([&] {
        for (int i = 0; i < 100; ++i) {
          std::lock_guard a(m);
          std::lock_guard b(own);
        }
        for (int i = 0; i < 10; ++i) {  // the other kinds the replacements see
          if (timed.try_lock_for(std::chrono::seconds(5))) timed.unlock();
          std::shared_lock reader(shared);
        }
      });
    });
  for (auto& th : threads) th.join();
  const LockReport r = report(tables);
  EXPECT_EQ(r.shared_max, 120u);  // m, then 10 of `timed` and 10 of `shared`
  EXPECT_EQ(r.own_min, 100u);
}

TEST_F(FakeLocksTest, TimingModeLaunchCallbacksShareNoLockBetweenThreads) {
  expect_no_shared_lock(options(CollectionMode::kTiming), nullptr, nullptr, "launch_path_locks");
}

TEST_F(FakeLocksTest, TimingModeLaunchCallbacksWithFiltersShareNoLockBetweenThreads) {
  auto o = options(CollectionMode::kTiming);
  o.filter.kernel_name = "regex:gemm|relu";
  o.filter.nvtx_include = {"forward/"};
  expect_no_shared_lock(o, "forward", nullptr, "launch_path_locks_filters");
}

// -k together with --kernel-id's NAME (two LaunchFilters, each with a per-thread cache of its
// answers, trace::PerThread<NameCache>): until 2026-11-29 PerThread's thread-local cache held one
// instance per type, so the two evicted each other and every launch took both registries' lock
// (40,051 shared locks per thread here, 51 with -k alone).
TEST_F(FakeLocksTest, KernelNameFilterWithAKernelIdNameSharesNoLockBetweenThreads) {
  auto o = options(CollectionMode::kTiming);
  o.filter.kernel_name = "regex:gemm|relu";
  o.kernel_id = collector::KernelId::parse("::regex:gemm|relu:");  // no INVOCATION: no sharded counter
  expect_no_shared_lock(o, nullptr, nullptr, "launch_path_locks_kernel_id");
}

// An NVTX push/pop range around every launch (PyTorch's emit_nvtx, one per operator): the NVTX
// callbacks share no lock either. Before 2026-11-28 each push took the session's activity mutex
// (to count pushes for the range style, nvtx_style.h): 20,000 shared locks per thread here.
TEST_F(FakeLocksTest, APushPopRangeAroundEveryLaunchSharesNoLockBetweenThreads) {
  expect_no_shared_lock(options(CollectionMode::kTiming), "forward", "aten::mm", "launch_path_locks_nvtx");
  auto o = options(CollectionMode::kTiming);
  o.filter.nvtx_include = {"forward/aten::mm/"};
  expect_no_shared_lock(o, "forward", "aten::mm", "launch_path_locks_nvtx_filter");
}

// The NVTX callbacks alone, where they do more than count: the step range of replay across steps
// (RFPROF_REPLAY_RANGE) with its window open and with none open (the rule searched in each name),
// and an NVTX filter rule when the ranges are in a named domain (its name looked up at each
// range). Before 2026-11-28 every range took the session's step-range lock, or its NVTX-domain
// lock: 40,000 shared locks per thread here.
TEST_F(FakeLocksTest, NvtxRangesWithAStepRangeOrADomainRuleShareNoLockBetweenThreads) {
  collector::SessionOptions step = nvtx_step_options(trace_);
  step.replay_range = "regex:^step ";
  expect_nvtx_shares_no_lock(step, "step 0", false, "nvtx_locks_step_window_open");
  expect_nvtx_shares_no_lock(step, "step 0", true, "nvtx_locks_step_window_open_domain");
  expect_nvtx_shares_no_lock(step, nullptr, false, "nvtx_locks_step_window_closed");
  auto o = options(CollectionMode::kTiming);
  o.filter.nvtx_include = {"bench@forward/aten::mm/"};
  expect_nvtx_shares_no_lock(o, nullptr, true, "nvtx_locks_domain_filter");
}

// nvtxRangeStart*/nvtxRangeEnd: the range style's bookkeeping (the ids that start callbacks
// report, nvtx_style.h), and with NVTX rules the filter's open start/end ranges, whatever the rule
// (a start/end rule naming the range, a push/pop rule, a start/end rule in a named domain). Until
// 2026-11-29 every start took the session's activity mutex, which CUPTI's buffer thread holds
// while it writes the trace, and with rules every start and end took NvtxState's lock of the open
// ranges: 20,000 to 40,000 shared locks per thread here.
TEST_F(FakeLocksTest, NvtxStartEndRangesShareNoLockBetweenThreads) {
  expect_nvtx_shares_no_lock(options(CollectionMode::kTiming), nullptr, false, "nvtx_locks_start_end", true);
  auto o = options(CollectionMode::kTiming);
  o.filter.nvtx_include = {"aten::mm"};
  expect_nvtx_shares_no_lock(o, nullptr, false, "nvtx_locks_start_end_rule", true);
  o.filter.nvtx_include = {"forward/"};
  expect_nvtx_shares_no_lock(o, nullptr, false, "nvtx_locks_start_end_push_pop_rule", true);
  o.filter.nvtx_include = {"bench@aten::mm"};
  expect_nvtx_shares_no_lock(o, nullptr, true, "nvtx_locks_start_end_domain_rule", true);
}

}  // namespace
}  // namespace rf::fake_cupti
