// Cost per launch of RFPROF_CALLSTACKS: capturing the launching thread's native stack with
// libunwind and interning it into the deduplicating CallStackTable (the work done in the launch
// callback), at several stack depths; and symbolizing at the end of a run. Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "rfprof/collector/call_stacks.h"

namespace {

using rf::collector::CallStackTable;

/// Recurses `depth` frames, then calls `at_bottom` (a launch at that depth).
template <typename F>
__attribute__((noinline)) uint32_t at_depth(int depth, F&& at_bottom) {
  if (depth <= 0) return at_bottom();
  uint32_t r = at_depth(depth - 1, at_bottom);
  benchmark::DoNotOptimize(r);
  return r;
}

/// The launch callback's work for a stack already in the table (the common case: a training
/// loop launches from the same call sites every step). Arg: frames below the benchmark loop.
void BM_CaptureAndIntern(benchmark::State& state) {
  CallStackTable table;
  const int depth = static_cast<int>(state.range(0));
  for (auto _ : state) {
    uint32_t id = at_depth(depth, [&] { return table.capture_and_intern(); });
    benchmark::DoNotOptimize(id);
  }
  state.counters["stacks"] = static_cast<double>(table.size());
}
BENCHMARK(BM_CaptureAndIntern)->Arg(8)->Arg(32)->Arg(60);

/// Unwinding alone (libunwind unw_backtrace), without the table.
void BM_CaptureOnly(benchmark::State& state) {
  const int depth = static_cast<int>(state.range(0));
  uintptr_t frames[CallStackTable::kMaxDepth];
  for (auto _ : state) {
    uint32_t n = at_depth(depth, [&] {
      return static_cast<uint32_t>(CallStackTable::capture(frames));
    });
    benchmark::DoNotOptimize(n);
  }
}
BENCHMARK(BM_CaptureOnly)->Arg(8)->Arg(32)->Arg(60);

/// Interning alone, of a new stack each time (the first launch from a call site).
void BM_InternNew(benchmark::State& state) {
  CallStackTable table(1u << 24);
  std::vector<uintptr_t> frames(32);
  for (size_t i = 0; i < frames.size(); ++i) frames[i] = 0x400000 + 16 * i;
  uintptr_t n = 0;
  for (auto _ : state) {
    frames[0] = ++n;
    benchmark::DoNotOptimize(table.intern(frames));
  }
}
BENCHMARK(BM_InternNew);

/// Symbolizing at exit: the table after 1000 launches from 20 distinct stacks of 12 to 31 frames.
void BM_Symbolize1000Stacks(benchmark::State& state) {
  CallStackTable table;
  for (int s = 0; s < 1000; ++s)
    at_depth(s % 20 + 12, [&] { return table.capture_and_intern(); });
  for (auto _ : state) {
    auto stacks = table.symbolize(rf::collector::is_launch_machinery);
    benchmark::DoNotOptimize(stacks.data());
  }
  state.counters["stacks"] = static_cast<double>(table.size());
}
BENCHMARK(BM_Symbolize1000Stacks)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
