// Replay across steps (RFPROF_REPLAY=step): what its state machine costs per kernel launch, on the
// real launch sequence of one ResNet-18 training step recorded on an H100
// (examples/traces/resnet18-h100.rftrace: 374 launches of 59 kernels, mangled names of 151 bytes
// on average). Each launch's identity is built as the session's launch exit callback builds it
// (Session::on_launch_exit: the kernel's name from CUPTI's symbolName, one address per kernel;
// grid, block) and handed to StepReplay::on_launch; each window is compared with its group's first when it closes. The
// windows cycle as in a run: pass 0, pass 1 (compared), timing (compared), for ever. What CUPTI
// and the session's locks cost is not here (bench_session_callbacks). Results: bench/README.md.
#include <benchmark/benchmark.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "rfprof/collector/step_replay.h"
#include "rfprof/trace/reader.h"

namespace {

using rf::collector::LaunchIdentity;
using rf::collector::StepReplay;
using rf::collector::WindowVerdict;

/// One launch of the recorded step: its name (NUL-terminated, as CUPTI's symbolName), grid, block.
struct RecordedLaunch {
  const char* name = nullptr;
  std::array<int32_t, 3> grid{}, block{};
};

/// The recorded step's launches, in launch order; their names live in `names`, one string per
/// distinct kernel, so that every launch of a kernel hands the same address, as CUPTI's symbolName
/// normally does.
struct RecordedStep {
  std::deque<std::string> names;
  std::vector<RecordedLaunch> launches;
};

/// Reads the kernel launches of `path` (LaunchApi records, graphs left out). Exits on error.
RecordedStep load(const char* path) {
  RecordedStep s;
  try {
    rf::trace::Reader reader(path);
    rf::trace::Record rec;
    std::map<std::string, const char*> by_name;
    while (reader.next(rec))
      if (const auto* l = std::get_if<rf::trace::LaunchApi>(&rec); l && !l->is_graph) {
        const std::string name = reader.string(l->kernel_name);
        auto it = by_name.find(name);
        if (it == by_name.end()) it = by_name.emplace(name, s.names.emplace_back(name).c_str()).first;
        s.launches.push_back({it->second, {l->grid[0], l->grid[1], l->grid[2]}, {l->block[0], l->block[1], l->block[2]}});
      }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_step_replay: %s: %s\n", path, e.what());
    std::exit(2);
  }
  if (s.launches.empty()) {
    std::fprintf(stderr, "bench_step_replay: %s: no kernel launch\n", path);
    std::exit(2);
  }
  return s;
}

const RecordedStep& step() {
  static const RecordedStep s = load(RF_RESNET18_TRACE);
  return s;
}

/// Items: launches. One iteration is one window of the recorded step (begin, every launch, end).
void BM_StepReplayWindows(benchmark::State& state) {
  const RecordedStep& s = step();
  StepReplay replay(/*passes=*/2, /*groups=*/UINT32_MAX);
  uint64_t discarded = 0;
  for (auto _ : state) {
    replay.begin();
    for (const RecordedLaunch& l : s.launches) {
      LaunchIdentity identity;  // as Session::on_launch_exit builds it, one per launch
      identity.kernel = l.name;
      identity.grid = l.grid;
      identity.block = l.block;
      replay.on_launch(identity);
    }
    discarded += replay.end().kind == WindowVerdict::kDiscarded;
  }
  if (discarded > 0) state.SkipWithError("a window was discarded: the windows differ");
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(s.launches.size()));
  state.counters["launches_per_window"] = static_cast<double>(s.launches.size());
  state.counters["kernels"] = static_cast<double>(s.names.size());
}
BENCHMARK(BM_StepReplayWindows);

}  // namespace

BENCHMARK_MAIN();
