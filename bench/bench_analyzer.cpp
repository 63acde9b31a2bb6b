// Analyzer throughput on a synthetic 1M-launch training trace (bench/README.md has the figures).
//   BM_ReadRecords:   trace reader alone (records decoded per second)
//   BM_ParseAndJoin:  pass 1 (read_context) + pass 2 (stream_launches: join, FLOP formulas, NVTX
//                     attribution, phases) with a sink that drops the rows; heap_peak_MB: the
//                     most heap above what the process held before, sampled after pass 1 and
//                     every 65,536 launches (pass 1's own peak inside finalize() is not seen);
//                     /LAUNCHES/1: an operator NVTX range around each launch (emit_nvtx)
//   BM_RunAnalysis:   the whole rfanalyze run, CSVs and summary.json written to a temp directory
//   BM_RunAnalysisWithoutPerLaunchOutputs: the same with --skip kernels.csv,counters.csv,trace.json
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>

#include <filesystem>
#include <map>
#include <utility>
#include <set>
#include <sstream>

#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/trace/reader.h"
#include "synthetic_trace.h"

namespace {

namespace fs = std::filesystem;

/// Trace files written by this process, removed at exit (each is ~330 MB per 1M launches).
struct TempTraces {
  std::map<std::pair<uint64_t, bool>, fs::path> paths;  // by (launches, op_ranges)
  ~TempTraces() {
    std::error_code ec;
    for (const auto& [n, p] : paths) fs::remove(p, ec);
  }
};

/// The synthetic trace with `launches` launches (and, with `op_ranges`, an operator NVTX range
/// around each, as emit_nvtx records), written once per process into the temp dir.
const fs::path& trace_with(uint64_t launches, bool op_ranges = false) {
  static TempTraces temp;
  auto& paths = temp.paths;
  auto it = paths.find({launches, op_ranges});
  if (it != paths.end()) return it->second;
  fs::path p = fs::temp_directory_path() / ("rfprof-bench-" + std::to_string(::getpid()) + "-" +
                                            std::to_string(launches) + (op_ranges ? "-ops" : "") + ".rftrace");
  rf::bench::SyntheticShape shape;
  shape.launches = launches;
  shape.op_ranges = op_ranges;
  rf::bench::write_synthetic_trace(p, shape);
  return paths.emplace(std::pair{launches, op_ranges}, p).first->second;
}

void BM_ReadRecords(benchmark::State& state) {
  const fs::path& path = trace_with(static_cast<uint64_t>(state.range(0)));
  uint64_t records = 0;
  for (auto _ : state) {
    rf::trace::Reader reader(path);
    rf::trace::Record r;
    while (reader.next(r)) ++records;
  }
  state.SetItemsProcessed(static_cast<int64_t>(records));
  state.counters["file_MB"] = static_cast<double>(fs::file_size(path)) / 1e6;
}

/// Bytes of heap in use now (glibc mallinfo2: allocated chunks of the arenas plus mmapped ones).
size_t heap_in_use() {
  const struct mallinfo2 m = ::mallinfo2();
  return m.uordblks + m.hblkhd;
}

/// Pass 1 and pass 2; state.range(1) != 0: the trace with an operator range per launch.
void BM_ParseAndJoin(benchmark::State& state) {
  const fs::path& path = trace_with(static_cast<uint64_t>(state.range(0)), state.range(1) != 0);
  const auto phases = rf::analyzer::PhaseMap::defaults();
  uint64_t launches = 0;
  const size_t before = heap_in_use();
  size_t peak = before;
  for (auto _ : state) {
    rf::analyzer::TraceContext ctx = rf::analyzer::read_context(path);
    peak = std::max(peak, heap_in_use());
    rf::analyzer::stream_launches(ctx, phases, [&](const rf::analyzer::LaunchOutput& l) {
      benchmark::DoNotOptimize(l.row.id);
      if (++launches % 65536 == 0) peak = std::max(peak, heap_in_use());  // 16 samples per 1 M
    });
    peak = std::max(peak, heap_in_use());
  }
  state.SetItemsProcessed(static_cast<int64_t>(launches));  // items = kernel launches
  state.counters["heap_peak_MB"] = static_cast<double>(peak - before) / 1e6;
}

/// The whole run; `skip`: outputs not written (rfanalyze --skip).
void run_analysis_bench(benchmark::State& state, const std::set<std::string>& skip) {
  const fs::path& path = trace_with(static_cast<uint64_t>(state.range(0)));
  const fs::path out = fs::temp_directory_path() / ("rfprof-bench-out-" + std::to_string(::getpid()));
  rf::analyzer::AnalyzeOptions options;
  options.traces = {path};
  options.output_dir = out;
  options.skip = skip;
  for (auto _ : state) {
    std::ostringstream err;
    if (rf::analyzer::run_analysis(options, err) != rf::analyzer::kExitOk) state.SkipWithError(err.str().c_str());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  fs::remove_all(out);
}

void BM_RunAnalysis(benchmark::State& state) { run_analysis_bench(state, {}); }

/// rfanalyze --skip kernels.csv,counters.csv,trace.json: every output whose size is not per launch.
void BM_RunAnalysisWithoutPerLaunchOutputs(benchmark::State& state) {
  run_analysis_bench(state, {"kernels.csv", "counters.csv", "trace.json"});
}

}  // namespace

BENCHMARK(BM_ReadRecords)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_ParseAndJoin)->Args({1'000'000, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
// The same with a quarter of the launches (same 200 kernels, 100 launches a step): heap_peak_MB
// of the two shows what grows with the run.
BENCHMARK(BM_ParseAndJoin)->Args({250'000, 0})->Unit(benchmark::kMillisecond)->UseRealTime();
// With an operator range around each launch (torch.autograd.profiler.emit_nvtx's shape): the NVTX
// index holds one range instance per launch more; heap_peak_MB over the two above shows its cost.
BENCHMARK(BM_ParseAndJoin)->Args({250'000, 1})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RunAnalysis)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_RunAnalysisWithoutPerLaunchOutputs)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->UseRealTime();

BENCHMARK_MAIN();
