// Parsing of tensor-core metric names (rfprof/collector/tensor_metrics.h).
#include "rfprof/collector/tensor_metrics.h"

#include "rfprof/collector/metric_set_names.h"

#include <regex>

namespace rf::collector {

std::optional<TensorMetric> parse_tensor_metric(std::string_view name) {
  // sm__ops_path_tensor_[op_<OP>_]src_<SRC>[_dst_<DST>][_sparsity_<on|off>][.sum]
  static const std::regex re(
      R"(^(sm__ops_path_tensor_(?:op_([a-z0-9]+)_)?src_([a-z0-9_]+?)(?:_dst_(fp16|fp32))?(?:_sparsity_(on|off))?)(\.sum)?$)");
  // No tensor metric name is near 128 characters; a longer name (a hostile trace's) is not one, and
  // the lazy repetition below recursed once per character (a 60,000-character name: stack overflow).
  if (name.size() > 128) return std::nullopt;
  std::cmatch m;
  if (!std::regex_match(name.data(), name.data() + name.size(), m, re)) return std::nullopt;
  const std::string src = m[3].str();
  TensorMetric t;
  if (src == "fp64") t.precision = TensorPrecision::kFp64;
  else if (src == "tf32") t.precision = TensorPrecision::kTf32;
  else if (src == "fp16" || src == "fp16_bf16_tf32") t.precision = TensorPrecision::kFp16;
  else if (src == "bf16") t.precision = TensorPrecision::kBf16;
  else if (src == "fp8") t.precision = TensorPrecision::kFp8;
  else if (src == "fp4_fp6_fp8") {
    t.precision = TensorPrecision::kFp8;
    t.with_fp4_fp6 = true;
  }
  else if (src == "int8") t.precision = TensorPrecision::kInt8;
  else return std::nullopt;  // int1, int4, fp4, fp4_fp6: not reported
  t.base = m[1].str();
  t.op = m[2].str();
  t.dst = m[4].str();
  t.sparsity = !m[5].matched ? TensorSparsity::kBoth
               : m[5].str() == "on" ? TensorSparsity::kSparse
                                    : TensorSparsity::kDense;
  return t;
}

const char* precision_name(TensorPrecision p) noexcept {
  switch (p) {
    case TensorPrecision::kFp64: return "fp64";
    case TensorPrecision::kTf32: return "tf32";
    case TensorPrecision::kFp16: return "fp16";
    case TensorPrecision::kBf16: return "bf16";
    case TensorPrecision::kFp8: return "fp8";
    case TensorPrecision::kInt8: return "int8";
  }
  return "?";
}

const char* sparsity_name(TensorSparsity s) noexcept {
  switch (s) {
    case TensorSparsity::kDense: return "dense";
    case TensorSparsity::kSparse: return "sparse";
    case TensorSparsity::kBoth: return "both";
  }
  return "?";
}

const std::vector<std::string>& metric_set_names() {
  static const std::vector<std::string> names = {"timing", "roofline", "roofline-tensor", "hierarchical"};
  return names;
}

std::string metric_set_description(const std::string& set) {
  if (set == "timing") return "kernel durations and NVTX ranges only, no counters (no replay)";
  if (set == "roofline") return "FP64/FP32/FP16 instruction counts, DRAM/L2/L1 bytes, duration";
  if (set == "roofline-tensor") return "roofline plus tensor-core math ops per precision, dense and sparse apart";
  if (set == "hierarchical") return "roofline-tensor plus L1 global load/store bytes and L2 read/write sectors";
  return "";
}

}  // namespace rf::collector
