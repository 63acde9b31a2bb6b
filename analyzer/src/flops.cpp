// FLOP and DRAM byte formulas (sources in rfprof/analyzer/flops.h).
#include "rfprof/analyzer/flops.h"

#include <cmath>

#include "rfprof/collector/tensor_metrics.h"

namespace rf::analyzer {
namespace {

std::optional<size_t> find(const std::vector<std::string>& names, std::string_view metric_name) {
  for (size_t i = 0; i < names.size(); ++i)
    if (names[i] == metric_name) return i;
  return std::nullopt;
}

std::optional<double> value_at(std::span<const double> values, const std::optional<size_t>& index) {
  // NaN: not available; infinite or negative: no counter is, the trace is corrupt.
  if (!index || *index >= values.size() || !std::isfinite(values[*index]) || values[*index] < 0) return std::nullopt;
  return values[*index];
}

/// Sum of the values at `indices`; absent when `indices` is empty or any value is NaN/missing.
std::optional<double> sum_at(std::span<const double> values, const std::vector<size_t>& indices) {
  if (indices.empty()) return std::nullopt;
  double sum = 0.0;
  for (size_t i : indices) {
    auto v = value_at(values, i);
    if (!v) return std::nullopt;
    sum += *v;
  }
  return sum;
}

std::optional<double> precision_flop(std::span<const double> values, const std::optional<size_t>& add,
                                     const std::optional<size_t>& mul, const std::optional<size_t>& fma,
                                     const OpWeights& weights) {
  auto a = value_at(values, add);
  auto m = value_at(values, mul);
  auto f = value_at(values, fma);
  if (!a || !m || !f) return std::nullopt;
  return weighted_flop(*a, *m, *f, weights);
}

}  // namespace

std::optional<double> LaunchMetrics::tensor_flop() const {
  std::optional<double> sum;
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    if (p == kTensorInt8) continue;
    for (const auto* term : {&tensor_dense[p], &tensor_sparse[p]})
      if (*term) sum = sum.value_or(0.0) + **term;
  }
  return sum;
}

std::optional<double> LaunchMetrics::total_flop() const {
  if (!fp64_flop || !fp32_flop || !fp16_flop) return std::nullopt;
  return *fp64_flop + *fp32_flop + *fp16_flop + tensor_flop().value_or(0.0);
}

std::optional<double> LaunchMetrics::dram_bytes() const {
  if (!dram_read_bytes || !dram_write_bytes) return std::nullopt;
  return *dram_read_bytes + *dram_write_bytes;
}

bool LaunchMetrics::uncounted_tensor_work() const {
  return tensor_pipe_inst && *tensor_pipe_inst > 0 && !tensor_flop();
}

double weighted_flop(double add, double mul, double fma, const OpWeights& weights) noexcept {
  return weights.add * add + weights.mul * mul + weights.fma * fma;
}

MetricLayout::MetricLayout(const std::vector<std::string>& names)
    : dadd_(find(names, metric::kDadd)),
      dmul_(find(names, metric::kDmul)),
      dfma_(find(names, metric::kDfma)),
      fadd_(find(names, metric::kFadd)),
      fmul_(find(names, metric::kFmul)),
      ffma_(find(names, metric::kFfma)),
      hadd_(find(names, metric::kHadd)),
      hmul_(find(names, metric::kHmul)),
      hfma_(find(names, metric::kHfma)),
      read_(find(names, metric::kDramRead)),
      write_(find(names, metric::kDramWrite)),
      time_(find(names, metric::kGpuTime)),
      l2_(find(names, metric::kL2Bytes)),
      l1_(find(names, metric::kL1Bytes)),
      tensor_pipe_(find(names, metric::kTensorPipeInst)),
      fadd2_(find(names, metric::kFadd2)),
      fmul2_(find(names, metric::kFmul2)),
      ffma2_(find(names, metric::kFfma2)) {
  if (!read_) read_ = find(names, metric::kDramReadOp);
  if (!write_) write_ = find(names, metric::kDramWriteOp);
  // Tensor terms, as the planner builds them (rf::collector::plan_metric_set): split names go to
  // their sparsity; a name counting dense + sparse goes to the dense term only when the list has no
  // sparse name of its precision (the chip has no sparse math for it).
  std::array<std::vector<size_t>, kTensorPrecisions> dense, sparse, both;
  // GB100's combined fp4_fp6_fp8 source counts FP8 only in a list without a plain fp8 name (the
  // planner's rule; an ncu CSV with both would count the f8f6f4 ops twice).
  bool plain_fp8 = false;
  for (const auto& n : names)
    if (auto t = collector::parse_tensor_metric(n); t && t->precision == collector::TensorPrecision::kFp8 && !t->with_fp4_fp6)
      plain_fp8 = true;
  for (size_t i = 0; i < names.size(); ++i) {
    auto t = collector::parse_tensor_metric(names[i]);
    if (!t || names[i].size() < 4 || names[i].compare(names[i].size() - 4, 4, ".sum") != 0) continue;
    if (t->with_fp4_fp6 && plain_fp8) continue;
    const auto p = static_cast<size_t>(t->precision);
    if (t->sparsity == collector::TensorSparsity::kDense) dense[p].push_back(i);
    else if (t->sparsity == collector::TensorSparsity::kSparse) sparse[p].push_back(i);
    else both[p].push_back(i);
  }
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    if (dense[p].empty() && sparse[p].empty()) dense[p] = both[p];
    if (!dense[p].empty()) tensor_terms_.push_back({p, false, dense[p]});
    if (!sparse[p].empty()) tensor_terms_.push_back({p, true, sparse[p]});
  }
}

bool MetricLayout::uses(size_t index) const noexcept {
  for (const Index& i : {dadd_, dmul_, dfma_, fadd_, fmul_, ffma_, hadd_, hmul_, hfma_, read_, write_, time_, l2_, l1_,
                         tensor_pipe_, fadd2_, fmul2_, ffma2_})
    if (i == index) return true;
  for (const auto& t : tensor_terms_)
    for (size_t i : t.indices)
      if (i == index) return true;
  return false;
}

LaunchMetrics MetricLayout::evaluate(std::span<const double> values) const {
  LaunchMetrics m;
  m.fp64_flop = precision_flop(values, dadd_, dmul_, dfma_, kScalarWeights);
  m.fp32_flop = precision_flop(values, fadd_, fmul_, ffma_, kScalarWeights);
  // Packed FP32, each counter that is in the list (a NaN among them makes FP32 unknown).
  for (auto [index, weight] : {std::pair{fadd2_, kPackedFp32Weights.add}, std::pair{fmul2_, kPackedFp32Weights.mul},
                               std::pair{ffma2_, kPackedFp32Weights.fma}}) {
    if (!index || !m.fp32_flop) continue;
    const std::optional<double> v = value_at(values, index);
    m.fp32_flop = v ? std::optional<double>(*m.fp32_flop + weight * *v) : std::nullopt;
  }
  m.fp16_flop = precision_flop(values, hadd_, hmul_, hfma_, kFp16Weights);
  m.dram_read_bytes = value_at(values, read_);
  m.dram_write_bytes = value_at(values, write_);
  m.gpu_time_ns = value_at(values, time_);
  m.l2_bytes = value_at(values, l2_);
  m.l1_bytes = value_at(values, l1_);
  m.tensor_pipe_inst = value_at(values, tensor_pipe_);
  for (const auto& t : tensor_terms_)
    (t.sparse ? m.tensor_sparse : m.tensor_dense)[t.precision] = sum_at(values, t.indices);
  return m;
}

std::optional<double> arithmetic_intensity(const std::optional<double>& flop,
                                           const std::optional<double>& bytes) {
  if (!flop || !bytes || *bytes == 0.0) return std::nullopt;
  return *flop / *bytes;
}

std::optional<double> flop_per_s(const std::optional<double>& flop,
                                 const std::optional<uint64_t>& duration_ns) {
  if (!flop || !duration_ns || *duration_ns == 0) return std::nullopt;
  return *flop * 1e9 / static_cast<double>(*duration_ns);  // one rounding: 2000 FLOP in 1000 ns is 2e9
}

}  // namespace rf::analyzer
