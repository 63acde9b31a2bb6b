// Tensor-core FLOP per precision and the L1/L2 levels of the hierarchical roofline (flops.h),
// from metric lists shaped like rf::collector::plan_metric_set's.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "analyzer_samples.h"
#include "rfprof/analyzer/flops.h"
#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {
namespace {

using testing::roofline_metrics;

constexpr size_t kFp64 = 0, kTf32 = 1, kFp16 = 2, kBf16 = 3, kFp8 = 4;

/// The roofline list plus `extra`; values: roofline part all 0 except ffma, then `extra_values`.
struct Launch {
  std::vector<std::string> names;
  std::vector<double> values;
  Launch(const std::vector<std::string>& extra, const std::vector<double>& extra_values, double ffma = 0) {
    names = roofline_metrics();
    values.assign(names.size(), 0.0);
    values[5] = ffma;  // smsp__sass_thread_inst_executed_op_ffma_pred_on.sum
    names.insert(names.end(), extra.begin(), extra.end());
    values.insert(values.end(), extra_values.begin(), extra_values.end());
  }
  LaunchMetrics eval() const { return MetricLayout(names).evaluate(values); }
};

TEST(TensorFlops, HopperPerOpNamesSumIntoTheirPrecisionAndSparsity) {
  // GH100's plan: TF32 dense = hgmma + hmma, sparse likewise; FP8 all-op split; FP64 total.
  Launch l({"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_on.sum",
            "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_on.sum",
            "sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp64.sum",
            "sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum"},
           {1000, 24, 300, 7, 50, 9, 4000}, /*ffma=*/10);
  LaunchMetrics m = l.eval();
  EXPECT_EQ(m.tensor_dense[kTf32], 1024.0);
  EXPECT_EQ(m.tensor_sparse[kTf32], 307.0);
  EXPECT_EQ(m.tensor_dense[kFp8], 50.0);
  EXPECT_FALSE(m.tensor_sparse[kFp8]);  // not in the list: absent, not 0
  EXPECT_EQ(m.tensor_dense[kFp64], 9.0);  // no sparse FP64 names: the total is the dense term
  EXPECT_EQ(m.tensor_dense[kTensorInt8], 4000.0);
  EXPECT_FALSE(m.tensor_dense[kFp16]);
  EXPECT_FALSE(m.tensor_dense[kBf16]);
  // tensor FLOP: all floating-point terms, INT8 ops excluded
  EXPECT_EQ(m.tensor_flop(), 1024.0 + 307.0 + 50.0 + 9.0);
  // total: FP32 2*10 plus tensor
  EXPECT_EQ(m.total_flop(), 20.0 + 1024.0 + 307.0 + 50.0 + 9.0);
}

TEST(TensorFlops, UnsplitNameIsDenseOnlyWithoutSparseNamesOfItsPrecision) {
  // Volta: FP16 dst FP16 + dst FP32, no sparsity: both go to the dense FP16 term.
  Launch volta({"sm__ops_path_tensor_src_fp16_dst_fp16.sum", "sm__ops_path_tensor_src_fp16_dst_fp32.sum"},
               {100, 28});
  EXPECT_EQ(volta.eval().tensor_dense[kFp16], 128.0);
  EXPECT_FALSE(volta.eval().tensor_sparse[kFp16]);
  // A list with split names of FP16 ignores an unsplit FP16 name (it would count sparse twice).
  Launch mixed({"sm__ops_path_tensor_src_fp16_sparsity_off.sum", "sm__ops_path_tensor_src_fp16.sum"}, {5, 1000});
  EXPECT_EQ(mixed.eval().tensor_dense[kFp16], 5.0);
  // Likewise with a sparse split name only: the unsplit name counts the sparse work too, so it is
  // not the dense term; FP16 has a sparse term and no dense one.
  Launch sparse_only({"sm__ops_path_tensor_src_fp16_sparsity_on.sum", "sm__ops_path_tensor_src_fp16.sum"},
                     {7, 1000});
  EXPECT_FALSE(sparse_only.eval().tensor_dense[kFp16]);
  EXPECT_EQ(sparse_only.eval().tensor_sparse[kFp16], 7.0);
  EXPECT_EQ(sparse_only.eval().tensor_flop(), 7.0);
}

TEST(TensorFlops, NoTensorMetricsLeaveTotalsAsBefore) {
  Launch l({}, {}, /*ffma=*/3);
  LaunchMetrics m = l.eval();
  EXPECT_FALSE(m.tensor_flop());
  EXPECT_EQ(m.total_flop(), 6.0);
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    EXPECT_FALSE(m.tensor_dense[p]);
    EXPECT_FALSE(m.tensor_sparse[p]);
  }
}

TEST(TensorFlops, NanTensorValueMakesItsTermAbsent) {
  Launch l({"sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum",
            "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum"},
           {10, std::numeric_limits<double>::quiet_NaN()});
  EXPECT_FALSE(l.eval().tensor_dense[kBf16]);
}

TEST(Hierarchy, L2AndL1BytesAndIntensityPerLevel) {
  Launch l({"lts__t_bytes.sum", "l1tex__t_bytes.sum"}, {4000, 16000}, /*ffma=*/1000);
  LaunchMetrics m = l.eval();
  EXPECT_EQ(m.l2_bytes, 4000.0);
  EXPECT_EQ(m.l1_bytes, 16000.0);
  KernelRow row;
  row.metrics = m;
  row.duration_ns = 1000;
  Aggregate a;
  a.add(row);
  a.add(row);
  EXPECT_EQ(a.l2_arithmetic_intensity(), 2000.0 / 4000.0);
  EXPECT_EQ(a.l1_arithmetic_intensity(), 2000.0 / 16000.0);
  EXPECT_EQ(a.l2_bytes.value(), 8000.0);
  const auto header = kernels_csv_header();
  const auto fields = row.csv_fields();
  ASSERT_EQ(fields.size(), header.size());
  auto field = [&](const std::string& col) {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == col) return fields[i];
    return std::string("(no column ") + col + ")";
  };
  EXPECT_EQ(field("l2_bytes"), "4000");
  EXPECT_EQ(field("l2_arithmetic_intensity"), "0.5");
  EXPECT_EQ(field("l1_arithmetic_intensity"), "0.125");
  EXPECT_EQ(field("tensor_tf32_flop"), "");
}

TEST(Hierarchy, ConsumerBlackwellDramNamesAreRecognized) {
  std::vector<std::string> names = {"dram__bytes_op_read.sum", "dram__bytes_op_write.sum"};
  LaunchMetrics m = MetricLayout(names).evaluate(std::vector<double>{300, 200});
  EXPECT_EQ(m.dram_bytes(), 500.0);
}

TEST(TensorColumns, EveryTensorTermHasItsColumnInKernelsAndAggregates) {
  const auto header = kernels_csv_header();
  const auto agg = aggregate_csv_header("phase");
  for (const char* col : {"tensor_fp64_flop", "tensor_tf32_flop", "tensor_fp16_flop", "tensor_bf16_flop",
                          "tensor_fp8_flop", "tensor_int8_ops", "tensor_fp64_sparse_flop",
                          "tensor_tf32_sparse_flop", "tensor_fp16_sparse_flop", "tensor_bf16_sparse_flop",
                          "tensor_fp8_sparse_flop", "tensor_int8_sparse_ops", "l2_bytes", "l1_bytes"}) {
    EXPECT_EQ(std::count(header.begin(), header.end(), col), 1) << col;
    EXPECT_EQ(std::count(agg.begin(), agg.end(), col), 1) << col;
  }
  KernelRow row;
  row.metrics.tensor_sparse[kFp16] = 12;
  Aggregate a;
  a.add(row);
  const auto f = a.csv_fields("x");
  ASSERT_EQ(f.size(), agg.size());
  for (size_t i = 0; i < agg.size(); ++i) {
    if (agg[i] == "tensor_fp16_sparse_flop") {
      EXPECT_EQ(f[i], "12");
    } else if (agg[i].rfind("tensor_", 0) == 0) {
      EXPECT_EQ(f[i], "") << agg[i];
    }
  }
}

}  // namespace
}  // namespace rf::analyzer
