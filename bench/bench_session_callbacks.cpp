// The real session's launch callbacks (Session::on_callback), called as CUPTI calls them for a
// launch through the runtime: runtime entry, driver entry, driver exit, runtime exit. CUPTI is the
// fake of tests/collector/fake_cupti.h, whose own work is not in the timed loop: the benchmark
// calls the subscribed callback directly, with the fake driver loaded (tests/collector/
// fake_libcuda.cpp: the current context, stream capture). So this is rfprof's cost per launch in timing mode,
// above CUPTI (bench_launch_path times LaunchLog and the writer alone, without the session's
// dispatch, filters and thread-local launch state). BM_SessionNvtxPushPop and
// BM_SessionNvtxDomainPushPop: an NVTX push/pop range through the session's NVTX callback;
// BM_SessionNvtxStartEnd: an nvtxRangeStartA/nvtxRangeEnd pair. Results: bench/README.md.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "fake_cupti.h"
#include "rfprof/collector/session.h"

namespace {

namespace fake = rf::fake_cupti;

/// One session for the whole process (a session is never stopped), the trace in TMPDIR. The
/// process's options (main()): timing mode, or with `replay_range` replay across steps with that
/// NVTX range as the window (RFPROF_REPLAY_RANGE); `kernel_filter` sets -k, `kernel_id`
/// --kernel-id and `nvtx_include` --nvtx-include.
std::filesystem::path g_trace;

/// Registered before the session starts, so it runs after the session's exit handler.
void remove_trace() {
  std::error_code ec;
  std::filesystem::remove(g_trace, ec);
}

/// The settings of one benchmark process (main()'s flags).
struct ProcessOptions {
  std::string kernel_filter, kernel_id, nvtx_include, replay_range, open_range;
  bool outside_window = false;  // profile-from-start off and no window opened: launches outside
};

struct Process {
  CUcontext ctx = nullptr;
  nvtxDomainHandle_t domain = nullptr;  // "bench", created after the session started
  std::atomic<uint32_t> next{1};
  explicit Process(const ProcessOptions& p) {
    if (!fake::load_fake_driver(RF_FAKE_LIBCUDA)) std::fprintf(stderr, "bench_session_callbacks: no fake driver\n");
    rf::collector::SessionOptions o;
    g_trace = std::filesystem::temp_directory_path() / ("rfbench-session-" + std::to_string(::getpid()) + ".rftrace");
    std::atexit(remove_trace);
    o.output = g_trace;
    o.mode = rf::trace::CollectionMode::kTiming;
    o.filter.kernel_name = p.kernel_filter;
    if (!p.kernel_id.empty()) o.kernel_id = rf::collector::KernelId::parse(p.kernel_id);
    if (!p.nvtx_include.empty()) o.filter.nvtx_include = {p.nvtx_include};
    if (p.outside_window) o.profile_from_start = false;
    if (!p.replay_range.empty()) {
      o.mode = rf::trace::CollectionMode::kCounters;
      o.profile_from_start = false;
      o.replay_across_steps = true;
      o.replay_range = p.replay_range;
    }
    if (!rf::collector::start_session(o)) std::fprintf(stderr, "bench_session_callbacks: no session\n");
    ctx = fake::create_context(1);
    domain = fake::nvtx_domain_create("bench");
    // Pushed on the main thread and never popped: with replay_range, the window stays open (no
    // context is current here, so it is a window recorded without counters).
    if (!p.open_range.empty()) fake::nvtx_push(p.open_range);
  }
};

Process* g_process = nullptr;

void BM_SessionLaunchCallbacks(benchmark::State& state) {
  fake::DirectLaunch launch(g_process->ctx, "_Z4gemmPKfS0_Pf", 1024, 256);
  if (!launch.ok()) {
    state.SkipWithError("no session");
    return;
  }
  for (auto _ : state) launch(g_process->next.fetch_add(1, std::memory_order_relaxed));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SessionLaunchCallbacks)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

/// Push/pop ranges named "aten::mm" in `domain` (null: the default domain) through the session's
/// NVTX callback, one pair per iteration.
void push_pop_ranges(benchmark::State& state, nvtxDomainHandle_t domain) {
  fake::DirectNvtx nvtx(domain);
  if (!nvtx.ok()) {
    state.SkipWithError("no session");
    return;
  }
  for (auto _ : state) {
    nvtx.push("aten::mm");
    nvtx.pop();
  }
  state.SetItemsProcessed(state.iterations());
}

/// nvtxRangePushA + nvtxRangePop, as PyTorch's emit_nvtx makes around every operator. Without
/// filter or replay range: the range-style bookkeeping alone.
void BM_SessionNvtxPushPop(benchmark::State& state) { push_pop_ranges(state, nullptr); }
BENCHMARK(BM_SessionNvtxPushPop)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

/// The same in the NVTX domain "bench" (nvtxDomainRangePushEx + nvtxDomainRangePop).
void BM_SessionNvtxDomainPushPop(benchmark::State& state) { push_pop_ranges(state, g_process->domain); }
BENCHMARK(BM_SessionNvtxDomainPushPop)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

/// nvtxRangeStartA("aten::mm") + nvtxRangeEnd, one pair per iteration, each thread with range ids
/// of its own (no marker records: the ids stay unconfirmed, as between two activity buffers).
void BM_SessionNvtxStartEnd(benchmark::State& state) {
  fake::DirectNvtx nvtx;
  if (!nvtx.ok()) {
    state.SkipWithError("no session");
    return;
  }
  static std::atomic<uint64_t> next_base{1};
  uint64_t id = next_base.fetch_add(1) << 40;
  for (auto _ : state) {
    nvtx.start("aten::mm", id);
    nvtx.end(id++);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SessionNvtxStartEnd)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

}  // namespace

/// The process's own flags (before Google Benchmark's, which are passed on):
/// `--kernel-filter EXPR` (-k), `--kernel-id ID`, `--nvtx-include RULE`, `--replay-range RULE` (replay across steps
/// with NVTX-range windows), `--open-range NAME` (an NVTX range pushed before the benchmarks run),
/// `--outside-window` (profile-from-start off and no cudaProfilerStart: every launch is outside a
/// window, as in a PyTorch run profiling a few steps).
int main(int argc, char** argv) {
  CLI::App app("bench_session_callbacks: rfprof's session callbacks on the fake CUPTI");
  app.allow_extras();
  ProcessOptions p;
  app.add_option("--kernel-filter", p.kernel_filter, "-k for this process");
  app.add_option("--kernel-id", p.kernel_id, "--kernel-id for this process");
  app.add_option("--nvtx-include", p.nvtx_include, "--nvtx-include for this process");
  app.add_option("--replay-range", p.replay_range, "replay across steps, this NVTX range as the window");
  app.add_option("--open-range", p.open_range, "an NVTX range pushed on the main thread first");
  app.add_flag("--outside-window", p.outside_window, "profile-from-start off, no window: launches outside");
  CLI11_PARSE(app, argc, argv);
  std::vector<std::string> rest = app.remaining();
  std::vector<char*> args{argv[0]};
  for (auto& r : rest) args.push_back(r.data());
  int n = static_cast<int>(args.size());
  g_process = new Process(p);  // never deleted, as the session it started
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
