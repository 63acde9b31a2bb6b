// Attainable performance and above-roof detection (rfprof/analyzer/roof.h).
#include "rfprof/analyzer/roof.h"

#include <algorithm>

namespace rf::analyzer {

namespace {

/// mix_peak_flop_per_s(m, c), given `total` == m.total_flop().
std::optional<double> mix_peak(const LaunchMetrics& m, const std::optional<double>& total, const DeviceCeilings& c) {
  if (!total || *total <= 0.0) return std::nullopt;
  double seconds_at_peak = 0.0;
  // Tensor terms at their dense peak; sparse terms at twice it (NVIDIA's 2:4 sparse peaks).
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    if (p == kTensorInt8) continue;  // integer ops are not in total FLOP
    for (auto [flop, factor] : {std::pair{m.tensor_dense[p], 1.0}, std::pair{m.tensor_sparse[p], 2.0}}) {
      if (!flop || *flop <= 0.0) continue;
      if (!c.tensor[p].value) return std::nullopt;
      seconds_at_peak += *flop / (*c.tensor[p].value * factor);
    }
  }
  for (auto [flop, peak] : {std::pair{m.fp64_flop, c.fp64.value}, std::pair{m.fp32_flop, c.fp32.value},
                            std::pair{m.fp16_flop, c.fp16.value}}) {
    if (*flop <= 0.0) continue;
    if (!peak) return std::nullopt;
    seconds_at_peak += *flop / *peak;
  }
  return *total / seconds_at_peak;
}

}  // namespace

std::optional<double> mix_peak_flop_per_s(const LaunchMetrics& m, const DeviceCeilings& c) {
  return mix_peak(m, m.total_flop(), c);
}

namespace {

/// True when every ceiling in the peak of `m`'s precision mix is measured.
bool mix_ceilings_measured(const LaunchMetrics& m, const DeviceCeilings& c) {
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    const bool used = (m.tensor_dense[p] && *m.tensor_dense[p] > 0.0) ||
                      (m.tensor_sparse[p] && *m.tensor_sparse[p] > 0.0);
    if (used && !c.tensor[p].measured) return false;
  }
  for (auto [flop, ceiling] : {std::pair{m.fp64_flop, &c.fp64}, std::pair{m.fp32_flop, &c.fp32},
                               std::pair{m.fp16_flop, &c.fp16}})
    if (flop && *flop > 0.0 && !ceiling->measured) return false;
  return true;
}

}  // namespace

RoofCheck check_roof(const LaunchMetrics& m, const std::optional<uint64_t>& duration_ns,
                     const DeviceCeilings& c) {
  RoofCheck r;
  const std::optional<double> total = m.total_flop(), bytes = m.dram_bytes();  // once per launch
  r.compute_peak_flop_per_s = mix_peak(m, total, c);
  r.dram_bandwidth = c.dram.value;
  r.tensor_flop_measured = m.tensor_flop().has_value();
  r.no_dram_bytes = bytes && *bytes == 0.0;
  if (auto ai = arithmetic_intensity(total, bytes); ai && c.dram.value)
    r.memory_roof_flop_per_s = *ai * *c.dram.value;
  const std::optional<double>& memory_roof = r.memory_roof_flop_per_s;
  if (r.compute_peak_flop_per_s && memory_roof)
    r.attainable_flop_per_s = std::min(*r.compute_peak_flop_per_s, *memory_roof);
  else if (r.compute_peak_flop_per_s)
    r.attainable_flop_per_s = r.compute_peak_flop_per_s;
  else
    r.attainable_flop_per_s = memory_roof;

  // INT8 tensor ops: placed by time (RoofCheck::placed_by_time), dense at the INT8 peak, sparse
  // at twice it.
  double int8_ops = 0.0, int8_dense_ops = 0.0;  // sparse ops count half at the dense peak
  for (auto [ops, factor] : {std::pair{m.tensor_dense[kTensorInt8], 1.0}, std::pair{m.tensor_sparse[kTensorInt8], 2.0}}) {
    if (!ops || *ops <= 0.0) continue;
    int8_ops += *ops;
    int8_dense_ops += *ops / factor;
  }
  r.int8_ops = int8_ops > 0.0;
  if (const std::optional<double>& peak = c.tensor[kTensorInt8].value; r.int8_ops && peak && *peak > 0.0)
    r.int8_seconds_at_peak = int8_dense_ops / *peak;
  if (total && *total <= 0.0)
    r.flop_seconds_at_peak = 0.0;
  else if (total && r.compute_peak_flop_per_s)
    r.flop_seconds_at_peak = *total / *r.compute_peak_flop_per_s;  // absent: FLOP or a peak unknown
  if (bytes && c.dram.value && *c.dram.value > 0.0) r.memory_seconds = *bytes / *c.dram.value;

  if (!duration_ns || *duration_ns == 0) return r;
  const double seconds = static_cast<double>(*duration_ns) * 1e-9;
  r.duration_seconds = seconds;
  r.achieved_flop_per_s = flop_per_s(total, duration_ns);
  if (bytes) r.dram_bytes_per_s = *bytes / seconds;

  r.above_compute = r.achieved_flop_per_s && r.compute_peak_flop_per_s &&
                    *r.achieved_flop_per_s > *r.compute_peak_flop_per_s;
  // With INT8 work: its compute time at peak, or the INT8 work's alone (a lower bound) when the
  // FLOP's is unknown.
  const std::optional<double> compute_seconds =
      r.placed_by_time() ? std::optional<double>(r.compute_seconds().value_or(*r.int8_seconds_at_peak)) : std::nullopt;
  if (compute_seconds && *compute_seconds > seconds) r.above_compute = true;
  r.above_memory = r.dram_bytes_per_s && c.dram.value && *r.dram_bytes_per_s > *c.dram.value;
  if (!r.above()) return r;

  bool measured = true;
  if (r.above_compute) {
    if (compute_seconds)
      r.excess = std::max(r.excess, *compute_seconds / seconds);
    else
      r.excess = std::max(r.excess, *r.achieved_flop_per_s / *r.compute_peak_flop_per_s);
    measured = mix_ceilings_measured(m, c);
  }
  if (r.above_memory) {
    r.excess = std::max(r.excess, *r.dram_bytes_per_s / *c.dram.value);
    measured = measured && c.dram.measured &&
               (!c.dram.datasheet || *r.dram_bytes_per_s <= *c.dram.datasheet);
  }
  r.only_measured_ceilings_exceeded = measured && r.excess <= kMeasuredCeilingMargin;
  return r;
}

}  // namespace rf::analyzer
