// FLOP counts per precision and DRAM bytes of one kernel launch, from Range Profiler metric values.
//
// Sources of the formulas:
//   FP32 FLOP = fadd + fmul + 2 * ffma, with the metrics
//     smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma}_pred_on.sum
//     (CUPTI "Metrics Mapping Table": flop_count_sp; Nsight Compute section
//     SpeedOfLight_RooflineChart). FP64 likewise with dadd, dmul, dfma (flop_count_dp).
//   FP16 FLOP = 2 * hadd + 2 * hmul + 4 * hfma (Nsight Compute roofline: the h* instructions are
//     packed half2, two lanes each; see kFp16Weights).
//   DRAM bytes = dram__bytes_read.sum + dram__bytes_write.sum (Nsight Compute roofline).
//   arithmetic intensity = total FLOP / DRAM bytes; FLOP/s = total FLOP / kernel duration.
//   Tensor FLOP per precision = the sum of the config's sm__ops_path_tensor_* metrics of that
//     precision and sparsity (one FLOP per CUPTI "math_op"; docs/metrics.md, "Tensor FLOPs"), as
//     planned by rf::collector::plan_metric_set. INT8 tensor ops are integer ops: reported, not FLOP.
//   L2 and L1 bytes = lts__t_bytes.sum and l1tex__t_bytes.sum, the levels of the hierarchical
//     roofline of Yang, Kurth, Williams (NERSC), "Hierarchical Roofline Analysis for GPUs", 2020;
//     intensity per level = total FLOP / that level's bytes. Nsight Compute's hierarchical chart
//     section may place its L1 and L2 points from other metrics, so these need not equal its
//     points (not yet compared on a GPU).
// FFMA-based counts do not include tensor-core work: collect the roofline-tensor set for it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace rf::analyzer {

/// Metric names exactly as NVIDIA spells them.
namespace metric {
inline constexpr std::string_view kDadd = "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum";
inline constexpr std::string_view kDmul = "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum";
inline constexpr std::string_view kDfma = "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum";
inline constexpr std::string_view kFadd = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr std::string_view kFmul = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr std::string_view kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
/// Packed FP32 (FADD2, FMUL2, FFMA2: two FP32 values per thread instruction), on GB100, GB102 and GB110.
inline constexpr std::string_view kFadd2 = "smsp__sass_thread_inst_executed_op_fadd2_pred_on.sum";
inline constexpr std::string_view kFmul2 = "smsp__sass_thread_inst_executed_op_fmul2_pred_on.sum";
inline constexpr std::string_view kFfma2 = "smsp__sass_thread_inst_executed_op_ffma2_pred_on.sum";
inline constexpr std::string_view kHadd = "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum";
inline constexpr std::string_view kHmul = "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum";
inline constexpr std::string_view kHfma = "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum";
inline constexpr std::string_view kDramRead = "dram__bytes_read.sum";
inline constexpr std::string_view kDramWrite = "dram__bytes_write.sum";
inline constexpr std::string_view kGpuTime = "gpu__time_duration.sum";
inline constexpr std::string_view kDramReadOp = "dram__bytes_op_read.sum";    ///< GB202's name
inline constexpr std::string_view kDramWriteOp = "dram__bytes_op_write.sum";  ///< GB202's name
inline constexpr std::string_view kL2Bytes = "lts__t_bytes.sum";
inline constexpr std::string_view kL1Bytes = "l1tex__t_bytes.sum";
/// Warp-level instructions executed on the tensor pipe (HMMA, HGMMA, IMMA, DMMA, ...), a hardware
/// counter (CUPTI: "# of warp instructions executed by tensor pipe", unit instruction). In the
/// default set since 2026-11-30: no FLOP, only whether tensor-core work ran that a list without
/// sm__ops_path_tensor_* metrics leaves uncounted (LaunchMetrics::uncounted_tensor_work).
inline constexpr std::string_view kTensorPipeInst = "sm__inst_executed_pipe_tensor.sum";
}  // namespace metric

/// FLOP per executed thread instruction of an add, a multiply and a fused multiply-add.
struct OpWeights {
  double add;
  double mul;
  double fma;
};

/// FP64 and FP32: one FLOP per add or multiply, two per FMA (CUPTI flop_count_dp / flop_count_sp).
inline constexpr OpWeights kScalarWeights{1.0, 1.0, 2.0};
/// FP16: Nsight Compute's roofline weights (2, 2, 4): HADD2/HMUL2/HFMA2 work on packed half2, two
/// values per thread instruction. The older CUPTI flop_count_hp uses (1, 1, 2). Checked on an H100
/// with the half2 example: smsp__sass_thread_inst_executed_op_hfma_pred_on.sum counts one per
/// HFMA2 thread instruction (2,147,483,648 = 262,144 threads x 8,192; tests/data/h100-2026-11-23/
/// examples/hfma2.ncu.csv), so 4 FLOP each.
inline constexpr OpWeights kFp16Weights{2.0, 2.0, 4.0};
/// Packed FP32 on GB100, GB102 and GB110 (FADD2, FMUL2, FFMA2: two FP32 lanes per thread instruction,
/// counted apart from FADD/FMUL/FFMA): 2, 2, 4 FLOP, two lanes of each instruction (rfprof's
/// weighting from the instructions' definition; docs/metrics.md says what NVIDIA's rules show).
/// Added to fp32_flop when the metric list has them (collector: packed_fp32_metrics()). Not yet
/// checked on such a GPU.
inline constexpr OpWeights kPackedFp32Weights{2.0, 2.0, 4.0};

/// Tensor precisions in column order: fp64, tf32, fp16, bf16, fp8 (FLOP) and int8 (integer ops);
/// the order of rf::collector::TensorPrecision.
inline constexpr size_t kTensorPrecisions = 6;
/// Column stem of each tensor precision ("fp64" ... "int8").
inline constexpr std::array<std::string_view, kTensorPrecisions> kTensorPrecisionNames = {
    "fp64", "tf32", "fp16", "bf16", "fp8", "int8"};
/// Index of INT8 in the tensor arrays (integer ops, not FLOP).
inline constexpr size_t kTensorInt8 = 5;

/// What the counters of one launch say. Every field is absent when a metric it needs is not in
/// the metric list or its value is NaN (not available, e.g. a unit shared under MIG), infinite or
/// negative (no counter is: a corrupt trace); absent is never 0. counters.csv keeps the raw value.
struct LaunchMetrics {
  std::optional<double> fp64_flop;         ///< FLOP
  std::optional<double> fp32_flop;         ///< FLOP
  std::optional<double> fp16_flop;         ///< FLOP
  std::optional<double> dram_read_bytes;   ///< bytes
  std::optional<double> dram_write_bytes;  ///< bytes
  std::optional<double> gpu_time_ns;       ///< gpu__time_duration.sum (ns, under replay)
  /// Tensor-core math per precision (kTensorPrecisionNames order) with 2:4 sparsity off / on:
  /// FLOP, integer ops for INT8. Absent when the metric list has no metric for that term.
  std::array<std::optional<double>, kTensorPrecisions> tensor_dense, tensor_sparse;
  std::optional<double> l2_bytes;          ///< lts__t_bytes.sum (bytes)
  std::optional<double> l1_bytes;          ///< l1tex__t_bytes.sum (bytes)
  /// sm__inst_executed_pipe_tensor.sum (warp-level instructions on the tensor pipe); in no FLOP
  /// formula. kernels.csv's `tensor_pipe_inst`.
  std::optional<double> tensor_pipe_inst;

  /// Sum of the present floating-point tensor terms (INT8 excluded), FLOP; absent when none is.
  std::optional<double> tensor_flop() const;
  /// fp64 + fp32 + fp16 FLOP plus tensor_flop() when present; absent unless the three
  /// non-tensor precisions are present.
  std::optional<double> total_flop() const;
  /// DRAM read + write bytes; absent unless both are present.
  std::optional<double> dram_bytes() const;
  /// True when the launch ran tensor-pipe instructions (tensor_pipe_inst > 0) and tensor_flop() is
  /// absent: its metric list has no sm__ops_path_tensor_* term (the default and `roofline` sets) or
  /// only NaN values of them, so total_flop() leaves its tensor-core work out (summary.json's
  /// uncounted_tensor_work).
  bool uncounted_tensor_work() const;
};

/// add_weight * add + mul_weight * mul + fma_weight * fma: the FLOP of one precision.
double weighted_flop(double add, double mul, double fma, const OpWeights& weights) noexcept;

/// Where the metrics LaunchMetrics needs sit in one MetricConfig's metric list. Built once per
/// config, then applied to every RangeCounters of that config.
class MetricLayout {
 public:
  /// `metric_names`: MetricConfig::metrics resolved to names, in order.
  explicit MetricLayout(const std::vector<std::string>& metric_names);
  /// Evaluates the formulas on `values` (RangeCounters::values, same order as the names). A value
  /// missing because `values` is shorter than the names counts as absent.
  LaunchMetrics evaluate(std::span<const double> values) const;
  /// True when the value at `index` enters a formula (FLOP, bytes, time) or is a kernels.csv
  /// column (sm__inst_executed_pipe_tensor.sum); false for any other metric of the list (e.g.
  /// ncu's device__attribute_* columns, some of them text).
  bool uses(size_t index) const noexcept;

 private:
  using Index = std::optional<size_t>;
  Index dadd_, dmul_, dfma_, fadd_, fmul_, ffma_, hadd_, hmul_, hfma_, read_, write_, time_, l2_, l1_;
  Index tensor_pipe_;  // sm__inst_executed_pipe_tensor.sum (default set since 2026-11-30)
  Index fadd2_, fmul2_, ffma2_;  // packed FP32 (GB100, GB110); absent from other chips' lists
  /// A tensor term present in the metric list: the metric indices summed into it.
  struct TensorTerm {
    size_t precision;
    bool sparse;
    std::vector<size_t> indices;
  };
  std::vector<TensorTerm> tensor_terms_;  ///< only the present terms (most lists have none)
};

/// total FLOP / DRAM bytes (FLOP/byte); absent when either is absent or bytes are 0.
std::optional<double> arithmetic_intensity(const std::optional<double>& flop,
                                           const std::optional<double>& bytes);
/// FLOP / (duration_ns * 1e-9) (FLOP/s), computed as FLOP * 1e9 / duration_ns; absent when either
/// is absent or the duration is 0.
std::optional<double> flop_per_s(const std::optional<double>& flop,
                                 const std::optional<uint64_t>& duration_ns);

}  // namespace rf::analyzer
