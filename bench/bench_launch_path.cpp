// Cost per launch of the launch callbacks' work above the CUPTI seam (bench/README.md), in
// timing mode: LaunchLog::enter at the API entry, then LaunchLog::exit writing the LaunchApi
// record through the real rf::trace::Writer, as Session does (session.cpp: the launching
// thread's buffer, append_buffered, and its kernel-name cache, intern_cached).
//   BM_LaunchEnterExit:        no filter, no call stack; Threads(1..4): what threads share
//   BM_ThreadIdSyscall / BM_ThreadIdCached: the launching thread's id, gettid(2) or cached
//   BM_LaunchWithKernelFilter: plus LaunchFilter::selects with a -k filter (cached per symbol)
//   BM_LaunchWithNvtxFilter:   plus an NVTX include rule over a 3-deep push/pop stack
//   BM_LaunchWithRegexNvtxFilter: plus a regex: push/pop rule over a 6-deep stack
//   BM_LaunchWithRegexStartEndFilter: plus a regex: start/end rule, 3 ranges open; 1 and 4 threads
//   BM_FilterSelectsOnly:      LaunchFilter::selects alone (literal/regex start/end, regex push/pop)
//   BM_LaunchWithCallStack:    plus CallStackTable::capture_and_intern (RFPROF_CALLSTACKS=1)
#include <csignal>
#include <benchmark/benchmark.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <filesystem>
#include <memory>
#include <string>

#include "rfprof/collector/call_stacks.h"
#include "rfprof/collector/device_filter.h"
#include "rfprof/collector/launch_selection.h"
#include "rfprof/collector/launch_filter.h"
#include "rfprof/collector/launch_log.h"
#include "rfprof/collector/overhead.h"
#include "rfprof/collector/thread_id.h"
#include "rfprof/trace/writer.h"

namespace {

namespace fs = std::filesystem;
using namespace rf;

constexpr const char* kSymbol = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_T1_";

/// One process's launch path: a writer into the temp dir and a LaunchLog with window 0 open.
struct Path {
  fs::path file = fs::temp_directory_path() / ("rfprof-bench-launch-" + std::to_string(::getpid()) + ".rftrace");
  // The session's writer settings (session.cpp): full chunks wait for a flush thread, woken at once.
  std::mutex flush_mutex;
  std::condition_variable flush_cv;
  bool flush_now = false, stop = false;
  trace::Writer writer{file, trace::WriterOptions{.chunk_bytes = 1u << 20,
                                                  .force_overwrite = true,
                                                  .max_pending_chunks = 8,
                                                  .on_chunk_pending = [this] { wake_flusher(); },
                                                  .signals_blocked_while_locked = {SIGTERM, SIGINT, SIGHUP}}};
  std::thread flusher{[this] { flush_loop(); }};
  collector::LaunchLog log{true, collector::LaunchSink{[this](const trace::Record& r) { writer.append(r); },
                                                       [this](std::string_view s) { return writer.intern_cached(s); },
                                                       [this](const trace::Record& r) { writer.append_buffered(r); }}};
  std::atomic<uint32_t> corr{1};
  Path() { log.process_start(1); }
  void wake_flusher() {
    {
      std::lock_guard lock(flush_mutex);
      flush_now = true;
    }
    flush_cv.notify_one();
  }
  /// The session's flush loop: every second, or at once when a chunk starts waiting.
  void flush_loop() {
    std::unique_lock lock(flush_mutex);
    while (!stop) {
      flush_cv.wait_for(lock, std::chrono::seconds(1), [this] { return stop || flush_now; });
      flush_now = false;
      lock.unlock();
      writer.flush();
      lock.lock();
    }
  }
  ~Path() {
    {
      std::lock_guard lock(flush_mutex);
      stop = true;
    }
    flush_cv.notify_one();
    flusher.join();
    std::error_code ec;
    fs::remove(file.string() + ".part", ec);
    fs::remove(file, ec);
  }
  /// One launch: entry, then exit with its record (timing mode: LaunchLog numbers it).
  void launch(bool selected, uint32_t stack_id) {
    const uint32_t c = corr.fetch_add(1, std::memory_order_relaxed);
    collector::LaunchTicket t = log.enter(c, 0, selected);
    trace::LaunchApi l;
    l.correlation_id = c;
    l.thread_id = collector::current_thread_id();  // as the session records it
    l.api_start_ns = c * 1000ull;
    l.api_end_ns = l.api_start_ns + 400;
    l.grid[0] = 1024;
    l.block[0] = 256;
    l.stack_id = stack_id;
    log.exit(t, l, kSymbol);
  }
};

Path& shared_path() {
  static Path p;
  return p;
}

void BM_LaunchEnterExit(benchmark::State& state) {
  Path& p = shared_path();
  for (auto _ : state) p.launch(true, 0);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchEnterExit)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

// The launching thread's id, recorded for every launch: the system call it once was, and the
// per-thread cache the session now reads (collector/thread_id.h).
void BM_ThreadIdSyscall(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(::syscall(SYS_gettid));
}
BENCHMARK(BM_ThreadIdSyscall);

void BM_ThreadIdCached(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(collector::current_thread_id());
}
BENCHMARK(BM_ThreadIdCached);

void BM_LaunchWithKernelFilter(benchmark::State& state) {
  Path& p = shared_path();
  collector::LaunchFilterOptions o;
  o.kernel_name = "regex:elementwise";
  collector::LaunchFilter filter(o);
  for (auto _ : state) p.launch(filter.selects(kSymbol, 100), 0);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchWithKernelFilter);

void BM_LaunchWithNvtxFilter(benchmark::State& state) {
  Path& p = shared_path();
  collector::LaunchFilterOptions o;
  o.nvtx_include = {"step/*/forward/"};
  collector::LaunchFilter filter(o);
  for (const char* n : {"step", "forward", "aten::fill_"}) filter.nvtx().push(100, "", n);
  for (auto _ : state) p.launch(filter.selects(kSymbol, 100), 0);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchWithNvtxFilter);

/// The push/pop stack of a PyTorch step under emit_nvtx-like ranges, outermost first.
constexpr const char* kDeepStack[] = {"ProfilerStep#3", "step", "forward", "layer1", "aten::conv2d",
                                      "aten::fill_"};

void BM_LaunchWithRegexNvtxFilter(benchmark::State& state) {
  Path& p = shared_path();
  collector::LaunchFilterOptions o;
  o.nvtx_include = {"regex:step/*/forw.rd/"};  // searched in each range name
  collector::LaunchFilter filter(o);
  for (const char* n : kDeepStack) filter.nvtx().push(100, "", n);
  for (auto _ : state) p.launch(filter.selects(kSymbol, 100), 0);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchWithRegexNvtxFilter);

/// A start/end rule given as a regular expression, with one such range open among others;
/// Threads(4): launching threads that ask at once.
void BM_LaunchWithRegexStartEndFilter(benchmark::State& state) {
  Path& p = shared_path();
  static collector::LaunchFilter* filter = [] {
    collector::LaunchFilterOptions o;
    o.nvtx_include = {"regex:train_step_[0-9]+"};
    auto* f = new collector::LaunchFilter(o);
    f->nvtx().start(1, "", "epoch 0");
    f->nvtx().start(2, "", "data loading");
    f->nvtx().start(3, "", "train_step_12");
    return f;
  }();
  const uint64_t thread = 100 + static_cast<uint64_t>(state.thread_index());
  for (auto _ : state) p.launch(filter->selects(kSymbol, thread), 0);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchWithRegexStartEndFilter)->Threads(1)->Threads(4)->UseRealTime();

/// LaunchFilter::selects alone (no launch), for the rule set by the argument: 0 a literal
/// start/end rule, 1 a regex: start/end rule, 2 a regex: push/pop rule over kDeepStack.
void BM_FilterSelectsOnly(benchmark::State& state) {
  static const char* const kRules[] = {"train_step_12", "regex:train_step_[0-9]+", "regex:step/*/forw.rd/"};
  collector::LaunchFilterOptions o;
  o.nvtx_include = {kRules[state.range(0)]};
  collector::LaunchFilter filter(o);
  filter.nvtx().start(1, "", "epoch 0");
  filter.nvtx().start(2, "", "train_step_12");
  for (const char* n : kDeepStack) filter.nvtx().push(100, "", n);
  for (auto _ : state) benchmark::DoNotOptimize(filter.selects(kSymbol, 100));
  state.SetLabel(kRules[state.range(0)]);
}
BENCHMARK(BM_FilterSelectsOnly)->DenseRange(0, 2);

/// DeviceFilter::selects alone (--devices), a thread launching round-robin on Arg contexts (one
/// per GPU it drives) whose answers it already holds; device_of (CUPTI in the session) is not
/// reached after the first round.
void BM_DeviceFilterSelectsOnly(benchmark::State& state) {
  collector::DeviceFilter filter({0}, [](const void* ctx) -> std::optional<uint32_t> {
    return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(ctx) % 4);
  });
  const uintptr_t contexts = static_cast<uintptr_t>(state.range(0));
  uintptr_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(filter.selects(reinterpret_cast<const void*>(0x1000 + i % contexts)));
    ++i;
  }
}
BENCHMARK(BM_DeviceFilterSelectsOnly)->Arg(1)->Arg(8);

/// LaunchSelection::admit alone (--filter-mode per-launch-config -c 1, Arg 0; --kernel-id ::k:2,
/// Arg 1; --launch-skip-before-match 1, Arg 2), one thread launching round-robin over 64 kernel
/// configurations it has already seen: one shard lock and one map lookup per keyed launch.
void BM_LaunchSelectionAdmit(benchmark::State& state) {
  collector::LaunchSelectionOptions o;
  if (state.range(0) == 0) {
    o.mode = collector::FilterMode::kPerLaunchConfig;
    o.launch_count = 1;
  } else if (state.range(0) == 1) {
    o.kernel_id = collector::KernelId::parse("::k:2");
  } else {
    o.skip_before_match = 1;
  }
  collector::LaunchSelection selection(o);
  collector::CountedLaunch launch;
  launch.kernel = "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEEEEviT0_";
  launch.block = {128, 1, 1};
  int32_t i = 0;
  for (auto _ : state) {
    launch.grid[0] = 1 + i++ % 64;
    benchmark::DoNotOptimize(selection.admit(launch, true));
  }
}
BENCHMARK(BM_LaunchSelectionAdmit)->Arg(0)->Arg(1)->Arg(2);

void BM_LaunchWithCallStack(benchmark::State& state) {
  Path& p = shared_path();
  collector::CallStackTable stacks;
  for (auto _ : state) p.launch(true, stacks.capture_and_intern());
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchWithCallStack);

// The launch with the session's cost accounting in timing mode: each of its two callbacks asks
// sample_this_callback() and one in 64 is timed into the process's OverheadStats (overhead.h).
void BM_LaunchWithOverheadSampling(benchmark::State& state) {
  Path& p = shared_path();
  collector::OverheadStats& stats = collector::process_overhead();
  for (auto _ : state) {
    {
      collector::ScopedOverhead entry(collector::sample_this_callback() ? &stats : nullptr,
                                      collector::OverheadPhase::kLaunchCallbacks);
      {
        collector::ScopedOverhead exit(collector::sample_this_callback() ? &stats : nullptr,
                                       collector::OverheadPhase::kLaunchCallbacks);
        p.launch(true, 0);
      }
    }
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_LaunchWithOverheadSampling)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
