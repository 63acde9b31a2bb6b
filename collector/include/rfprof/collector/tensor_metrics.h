// Names of CUPTI's tensor-core math metrics, sm__ops_path_tensor_[op_<OP>_]src_<SRC>[_dst_<DST>]
// [_sparsity_{on,off}], parsed into precision, sparsity and op. Pure string logic (no CUPTI), used
// by the metric set planner (metric_sets.h) and by rfanalyze to sum tensor FLOPs per precision.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rf::collector {

/// Precision of a tensor-core metric's source operands, as rfprof reports it.
enum class TensorPrecision { kFp64, kTf32, kFp16, kBf16, kFp8, kInt8 };

/// Sparsity of the counted math: 2:4 structured sparsity off (dense), on (sparse), or a metric that
/// counts both (no _sparsity_ suffix).
enum class TensorSparsity { kDense, kSparse, kBoth };

/// One parsed tensor metric name.
struct TensorMetric {
  TensorPrecision precision = TensorPrecision::kFp16;
  TensorSparsity sparsity = TensorSparsity::kBoth;
  std::string op;   ///< instruction family ("hmma", "hgmma", "imma", ...); "" for all ops
  std::string dst;  ///< accumulator type ("fp16", "fp32"); "" when the name gives none
  std::string base; ///< the name without rollup suffix, e.g. "sm__ops_path_tensor_src_fp16"
  /// Source "fp4_fp6_fp8" (GB100, GB102: their only FP8 counters, the f8f6f4 instruction kind,
  /// FP4 and FP6 operands included): reported as FP8, used only where the chip or metric list has
  /// no plain "fp8" source.
  bool with_fp4_fp6 = false;
};

/// Parses a tensor math metric name, with or without a ".sum" rollup (other rollups and the
/// "_realtime" variants are not parsed). Unit of such a metric: "math_op" (CUPTI's dim unit), counted
/// by rfprof as one FLOP (integer op for INT8) per math op — see docs/metrics.md, "Tensor FLOPs".
/// Source types rfprof does not report (int1, int4, fp4, fp4_fp6) and non-tensor names give
/// nullopt. Turing's combined source "fp16_bf16_tf32" is reported as FP16 (Turing has no BF16 or
/// TF32); GB100's "fp4_fp6_fp8" as FP8 (TensorMetric::with_fp4_fp6).
std::optional<TensorMetric> parse_tensor_metric(std::string_view name);

/// "fp64", "tf32", "fp16", "bf16", "fp8", "int8".
const char* precision_name(TensorPrecision p) noexcept;

/// "dense", "sparse", "both".
const char* sparsity_name(TensorSparsity s) noexcept;

}  // namespace rf::collector
