// The real session's launch callbacks (Session::on_callback), called as CUPTI calls them for a
// launch through the runtime: runtime entry, driver entry, driver exit, runtime exit. CUPTI is the
// fake of tests/collector/fake_cupti.h, whose own work is not in the timed loop: the benchmark
// calls the subscribed callback directly, with the fake driver loaded (tests/collector/
// fake_libcuda.cpp: the current context, stream capture). So this is rfprof's cost per launch in timing mode,
// above CUPTI (bench_launch_path times LaunchLog and the writer alone, without the session's
// dispatch, filters and thread-local launch state). BM_SessionNvtxPushPop: an NVTX push/pop
// range through the session's NVTX callback. Results: bench/README.md.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "fake_cupti.h"
#include "rfprof/collector/session.h"

namespace {

namespace fake = rf::fake_cupti;

/// One session for the whole process (a session is never stopped), timing mode, the trace in
/// TMPDIR; `kernel_filter` sets -k for the filter benchmark's process only (see main()).
std::filesystem::path g_trace;

/// Registered before the session starts, so it runs after the session's exit handler.
void remove_trace() {
  std::error_code ec;
  std::filesystem::remove(g_trace, ec);
}

struct Process {
  CUcontext ctx = nullptr;
  std::atomic<uint32_t> next{1};
  explicit Process(const std::string& kernel_filter) {
    if (!fake::load_fake_driver(RF_FAKE_LIBCUDA)) std::fprintf(stderr, "bench_session_callbacks: no fake driver\n");
    rf::collector::SessionOptions o;
    g_trace = std::filesystem::temp_directory_path() / ("rfbench-session-" + std::to_string(::getpid()) + ".rftrace");
    std::atexit(remove_trace);
    o.output = g_trace;
    o.mode = rf::trace::CollectionMode::kTiming;
    o.filter.kernel_name = kernel_filter;
    if (!rf::collector::start_session(o)) std::fprintf(stderr, "bench_session_callbacks: no session\n");
    ctx = fake::create_context(1);
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

/// nvtxRangePushA + nvtxRangePop through the session's NVTX callback (no filter: the range-style
/// bookkeeping alone), as PyTorch's emit_nvtx makes around every operator.
void BM_SessionNvtxPushPop(benchmark::State& state) {
  fake::DirectNvtx nvtx;
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
BENCHMARK(BM_SessionNvtxPushPop)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();

}  // namespace

/// `--kernel-filter=EXPR` (before Google Benchmark's flags): the session's -k, for one process.
int main(int argc, char** argv) {
  std::string filter;
  if (argc > 1 && std::string(argv[1]).rfind("--kernel-filter=", 0) == 0) {
    filter = std::string(argv[1]).substr(16);
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  g_process = new Process(filter);  // never deleted, as the session it started
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
