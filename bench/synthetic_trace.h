// A synthetic counters-mode trace shaped like a training run, for the benchmarks: one process, one
// device, `iterations` steps of forward/backward/optimizer NVTX ranges (backward kernels launched
// on a second thread, as PyTorch's autograd does), each launch with its LaunchApi, KernelActivity
// and RangeCounters (the default roofline metric list), from `distinct_kernels` kernel names.
// With `counters` false it is the trace of a counters-mode run whose counters were unavailable:
// no MetricConfig or RangeCounters, one CollectorError (kCountersUnavailable) instead. With
// `op_ranges`, every launch also has an operator range around it (emit_nvtx's shape).
#pragma once

#include <cstdint>
#include <filesystem>

namespace rf::bench {

/// Shape of a synthetic trace.
struct SyntheticShape {
  uint64_t launches = 1'000'000;      ///< kernel launches in all
  uint32_t distinct_kernels = 200;    ///< distinct kernel names
  uint32_t launches_per_iteration = 100;
  bool counters = true;               ///< false: counters mode, but no counters were collected
  /// Each launch inside an operator's NVTX push/pop range ("aten::op_<n>", 40 names) on its
  /// launching thread, as torch.autograd.profiler.emit_nvtx records: one range per launch more.
  bool op_ranges = false;
};

/// Writes the trace to `path` (overwriting it). Throws rf::trace::WriteError on I/O failure.
/// Returns the number of launches written.
uint64_t write_synthetic_trace(const std::filesystem::path& path, const SyntheticShape& shape);

}  // namespace rf::bench
