// The host side of a context's counters set-up (Session::set_up_profiler, ContextProfiler's
// constructor): planning the metric set for the chip, then MetricHost, validation, the config
// image and the pass count, with CUPTI's profiler host API (no GPU needed). On an H100 the whole
// counters-mode start-up took ~3.2 s (validation/h100-2026-11-23/report.md §6); this separates the
// host API's share from CUPTI's device-side calls (initialize, counter availability, enable).
// Figures: bench/README.md.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/metric_sets.h"

namespace {

using rf::collector::MetricHost;

const char* const kSets[] = {"roofline", "roofline-tensor", "hierarchical"};

/// What set_up_profiler and ContextProfiler do on the host per context, in order. Arg: index in
/// kSets. Counters: metrics and passes of the plan.
void BM_HostSideOfCountersSetup(benchmark::State& state) {
  const std::string set = kSets[state.range(0)];
  size_t metrics = 0, passes = 0, image_bytes = 0;
  for (auto _ : state) {
    std::vector<std::string> planned = rf::collector::plan_metric_set(MetricHost("GH100"), set).metrics;
    MetricHost host("GH100");
    host.validate(planned);
    std::vector<uint8_t> image = host.config_image(planned);
    passes = host.num_passes(planned);
    metrics = planned.size();
    image_bytes = image.size();
    benchmark::DoNotOptimize(image.data());
  }
  state.SetLabel(set);
  state.counters["metrics"] = static_cast<double>(metrics);
  state.counters["passes"] = static_cast<double>(passes);
  state.counters["config_image_bytes"] = static_cast<double>(image_bytes);
}
BENCHMARK(BM_HostSideOfCountersSetup)->DenseRange(0, 2)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
