// Tensor metric name parsing and the per-chip metric set planner (metric_sets.h). No GPU needed:
// the planner asks the profiler host API, which works from a chip name alone.
#include "rfprof/collector/metric_sets.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace rf::collector {
namespace {

TEST(TensorMetricName, ParsesAllOpNames) {
  auto t = parse_tensor_metric("sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->precision, TensorPrecision::kFp16);
  EXPECT_EQ(t->sparsity, TensorSparsity::kDense);
  EXPECT_EQ(t->op, "");
  EXPECT_EQ(t->dst, "fp32");
  EXPECT_EQ(t->base, "sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off");
}

TEST(TensorMetricName, PrecisionAndSparsityNames) {  // as the plans and listings print them
  const std::pair<TensorPrecision, const char*> precisions[] = {
      {TensorPrecision::kFp64, "fp64"}, {TensorPrecision::kTf32, "tf32"}, {TensorPrecision::kFp16, "fp16"},
      {TensorPrecision::kBf16, "bf16"}, {TensorPrecision::kFp8, "fp8"},   {TensorPrecision::kInt8, "int8"}};
  for (const auto& [p, name] : precisions) EXPECT_STREQ(precision_name(p), name);
  EXPECT_STREQ(sparsity_name(TensorSparsity::kDense), "dense");
  EXPECT_STREQ(sparsity_name(TensorSparsity::kSparse), "sparse");
  EXPECT_STREQ(sparsity_name(TensorSparsity::kBoth), "both");
}

TEST(TensorMetricName, ParsesPerOpNamesAndSparsity) {
  auto t = parse_tensor_metric("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_on");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->precision, TensorPrecision::kBf16);
  EXPECT_EQ(t->sparsity, TensorSparsity::kSparse);
  EXPECT_EQ(t->op, "hgmma");
  // A hostile trace's 1 MiB metric name is no tensor metric (the regex recursed per character).
  EXPECT_FALSE(parse_tensor_metric("sm__ops_path_tensor_src_" + std::string(1 << 20, 'a')));
  auto u = parse_tensor_metric("sm__ops_path_tensor_src_fp64.sum");
  ASSERT_TRUE(u);
  EXPECT_EQ(u->precision, TensorPrecision::kFp64);
  EXPECT_EQ(u->sparsity, TensorSparsity::kBoth);
  EXPECT_EQ(u->dst, "");
  auto v = parse_tensor_metric("sm__ops_path_tensor_src_fp8_sparsity_off.sum");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->precision, TensorPrecision::kFp8);
  EXPECT_EQ(v->sparsity, TensorSparsity::kDense);
}

TEST(TensorMetricName, TuringCombinedSourceIsFp16) {
  auto t = parse_tensor_metric("sm__ops_path_tensor_src_fp16_bf16_tf32_dst_fp32.sum");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->precision, TensorPrecision::kFp16);
  EXPECT_EQ(t->dst, "fp32");
}

TEST(TensorMetricName, RejectsOtherNamesRollupsAndUnreportedTypes) {
  for (const char* n : {"dram__bytes_read.sum", "sm__inst_executed_pipe_tensor.sum",
                        "sm__ops_path_tensor_src_int4.sum", "sm__ops_path_tensor_src_fp4_fp6_dst_fp16.sum",
                        "sm__ops_path_tensor_src_fp16.avg", "sm__ops_path_tensor_src_fp16_realtime.sum",
                        "smsp__ops_path_tensor_src_fp64.sum", "sm__ops_path_tensor_src_int1"})
    EXPECT_FALSE(parse_tensor_metric(n)) << n;
}

// GB100's combined fp4_fp6_fp8 source is FP8, marked so that a plain fp8 name is preferred.
TEST(TensorMetricName, TheCombinedFp4Fp6Fp8SourceIsFp8Marked) {
  auto t = parse_tensor_metric("sm__ops_path_tensor_op_utcqmma_src_fp4_fp6_fp8_dst_fp32_sparsity_on.sum");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->precision, TensorPrecision::kFp8);
  EXPECT_TRUE(t->with_fp4_fp6);
  EXPECT_EQ(t->op, "utcqmma");
  EXPECT_EQ(t->dst, "fp32");
  EXPECT_EQ(t->sparsity, TensorSparsity::kSparse);
  auto plain = parse_tensor_metric("sm__ops_path_tensor_src_fp8_sparsity_off.sum");
  ASSERT_TRUE(plain);
  EXPECT_FALSE(plain->with_fp4_fp6);
}

// ---- Planner, per chip ---------------------------------------------------------------------------

class PlanPerChip : public ::testing::TestWithParam<const char*> {};

TEST_P(PlanPerChip, EverySetIsValidAndItsPassCountIsTheHostApis) {
  MetricHost host(GetParam());
  for (const auto& set : metric_set_names()) {
    MetricSetPlan plan = plan_metric_set(host, set);
    EXPECT_EQ(plan.set, set);
    EXPECT_EQ(plan.chip, GetParam());
    if (set == "timing") {
      EXPECT_TRUE(plan.metrics.empty());
      EXPECT_EQ(plan.passes, 0u);
      continue;
    }
    EXPECT_NO_THROW(host.validate(plan.metrics)) << set;
    EXPECT_EQ(plan.passes, host.num_passes(plan.metrics)) << set;
    std::set<std::string> unique(plan.metrics.begin(), plan.metrics.end());
    EXPECT_EQ(unique.size(), plan.metrics.size()) << set << ": a metric listed twice";
  }
  EXPECT_EQ(plan_metric_set(host, "roofline").passes, 2u);
}

TEST_P(PlanPerChip, TensorTermsCountEachOpOnceWithTheirOwnPrecisionAndSparsity) {
  MetricHost host(GetParam());
  MetricSetPlan plan = plan_metric_set(host, "roofline-tensor");
  ASSERT_FALSE(plan.tensor.empty()) << "every chip from Volta on has FP16 tensor math";
  std::set<std::pair<int, int>> terms;
  std::set<int> precisions_with_sparse;
  for (const auto& t : plan.tensor)
    if (t.sparsity == TensorSparsity::kSparse) precisions_with_sparse.insert(static_cast<int>(t.precision));
  for (const auto& t : plan.tensor) {
    EXPECT_TRUE(terms.insert({static_cast<int>(t.precision), static_cast<int>(t.sparsity)}).second)
        << "term listed twice";
    ASSERT_FALSE(t.metrics.empty());
    std::map<std::string, std::set<std::string>> dst_by_op;
    for (const auto& m : t.metrics) {
      auto parsed = parse_tensor_metric(m);
      ASSERT_TRUE(parsed) << m;
      EXPECT_EQ(parsed->precision, t.precision) << m;
      if (parsed->sparsity != TensorSparsity::kBoth) {
        EXPECT_EQ(parsed->sparsity, t.sparsity) << m;
      }
      EXPECT_EQ(t.family == "all-op", parsed->op.empty()) << m;
      // one op is never counted twice: either one name without destination or one per destination
      auto& dsts = dst_by_op[parsed->op];
      EXPECT_TRUE(dsts.insert(parsed->dst).second) << m;
      EXPECT_FALSE(dsts.count("") && dsts.size() > 1) << m;
    }
  }
  // the dense FP16 term exists on every chip
  EXPECT_TRUE(terms.count({static_cast<int>(TensorPrecision::kFp16), static_cast<int>(TensorSparsity::kDense)}));
  // a total (dense + sparse) metric is only used for a precision without sparse math on the chip
  for (const auto& t : plan.tensor)
    for (const auto& m : t.metrics)
      if (parse_tensor_metric(m)->sparsity == TensorSparsity::kBoth) {
        EXPECT_FALSE(precisions_with_sparse.count(static_cast<int>(t.precision))) << m;
      }
}

TEST_P(PlanPerChip, HierarchicalAddsCacheLevelsToRooflineTensor) {
  MetricHost host(GetParam());
  auto rt = plan_metric_set(host, "roofline-tensor");
  auto h = plan_metric_set(host, "hierarchical");
  for (const auto& m : rt.metrics)
    EXPECT_NE(std::find(h.metrics.begin(), h.metrics.end(), m), h.metrics.end()) << m;
  EXPECT_NE(std::find(h.metrics.begin(), h.metrics.end(), "lts__t_sectors_op_read.sum"), h.metrics.end());
  EXPECT_GE(h.passes, rt.passes);
}

INSTANTIATE_TEST_SUITE_P(Chips, PlanPerChip,
                         ::testing::Values("GV100", "TU104", "GA100", "GA102", "AD102", "GH100", "GB100", "GB202"));

// GB100 and GB102 count FP8 tensor math only with the combined fp4_fp6_fp8 source: the plan takes
// it for FP8, dense and sparse, with a note (it once noted "no fp8 tensor math on GB100" and
// collected none); chips with a plain fp8 source never take the combined one.
TEST(Plan, Gb100CountsFp8ThroughTheCombinedSource) {
  const std::vector<std::string> chips = MetricHost::supported_chips();
  ASSERT_TRUE(std::count(chips.begin(), chips.end(), "GB100"));
  for (const char* chip : {"GB100", "GH100", "GB202"}) {
    if (!std::count(chips.begin(), chips.end(), chip)) continue;
    MetricHost host(chip);
    const auto plan = plan_metric_set(host, "roofline-tensor");
    int fp8_terms = 0;
    for (const auto& t : plan.tensor) {
      if (t.precision != TensorPrecision::kFp8) continue;
      ++fp8_terms;
      for (const auto& m : t.metrics)
        EXPECT_EQ(m.find("fp4_fp6_fp8") != std::string::npos, std::string(chip) == "GB100") << chip << " " << m;
    }
    EXPECT_EQ(fp8_terms, 2) << chip;  // dense and sparse
    bool noted = false, none = false;
    for (const auto& n : plan.notes) {
      noted |= n.find("fp4_fp6_fp8") != std::string::npos;
      none |= n.find("no fp8 tensor math") != std::string::npos;
    }
    EXPECT_EQ(noted, std::string(chip) == "GB100") << chip;
    EXPECT_FALSE(none) << chip;
  }
}

TEST(Plan, AmpereSplitsDenseAndSparseTf32) {
  MetricHost host("GA100");
  auto plan = plan_metric_set(host, "roofline-tensor");
  int tf32_terms = 0;
  for (const auto& t : plan.tensor)
    if (t.precision == TensorPrecision::kTf32) {
      ++tf32_terms;
      for (const auto& m : t.metrics)
        EXPECT_NE(m.find(t.sparsity == TensorSparsity::kDense ? "_sparsity_off" : "_sparsity_on"), std::string::npos) << m;
    }
  EXPECT_EQ(tf32_terms, 2);
}

TEST(Plan, VoltaHasOnlyDenseFp16TensorMath) {
  MetricHost host("GV100");
  auto plan = plan_metric_set(host, "roofline-tensor");
  ASSERT_EQ(plan.tensor.size(), 1u);
  EXPECT_EQ(plan.tensor[0].precision, TensorPrecision::kFp16);
  EXPECT_EQ(plan.tensor[0].sparsity, TensorSparsity::kDense);
  EXPECT_EQ(plan.tensor[0].metrics,
            (std::vector<std::string>{"sm__ops_path_tensor_src_fp16_dst_fp16.sum", "sm__ops_path_tensor_src_fp16_dst_fp32.sum"}));
  EXPECT_EQ(plan.passes, 2u);  // measured: the tensor counters share the roofline set's hardware pass
}

// The host API's plan against the H100 itself: tests/data/h100-2026-11-23/gemm/gemm.rftrace
// recorded this set, and its MetricConfig holds what the Range Profiler reported there.
TEST(Plan, HopperRooflineTensorIsThe35MetricsAndThe7PassesAnH100Reported) {
  MetricHost host("GH100");
  const auto plan = plan_metric_set(host, "roofline-tensor");
  EXPECT_EQ(plan.metrics.size(), 35u);
  EXPECT_EQ(plan.passes, 7u);
}

// The tensor-pipe instruction count (default_metrics()' last) is in rfprof's roofline set, the
// default, and in neither tensor set: they count tensor math itself, and roofline-tensor stays
// the 35 metrics an H100 reported (above).
TEST(MetricSetsHostApi, TensorPipeInstructionsOnlyInTheRooflineSet) {
  for (const char* chip : {"GV100", "TU104", "GA100", "AD102", "GH100", "GB100"}) {
    MetricHost host(chip);
    for (const auto& set : metric_set_names()) {
      const auto plan = plan_metric_set(host, set);
      const bool has = std::find(plan.metrics.begin(), plan.metrics.end(), kTensorPipeInstMetric) != plan.metrics.end();
      EXPECT_EQ(has, set == "roofline") << chip << " " << set;
    }
    EXPECT_EQ(plan_metric_set(host, "roofline").metrics.front(), default_metrics().front()) << chip;
  }
}

TEST(Plan, HopperCountsHgmmaAndHmmaPaths) {
  MetricHost host("GH100");
  auto plan = plan_metric_set(host, "roofline-tensor");
  bool hgmma = false, hmma = false;
  for (const auto& t : plan.tensor)
    if (t.precision == TensorPrecision::kTf32 && t.sparsity == TensorSparsity::kDense)
      for (const auto& m : t.metrics) {
        hgmma |= m.find("_op_hgmma_") != std::string::npos;
        hmma |= m.find("_op_hmma_") != std::string::npos;
      }
  EXPECT_TRUE(hgmma && hmma) << "dense TF32 on GH100 must count both the wgmma and the mma path";
}

TEST(Plan, ConsumerBlackwellUsesItsDramByteNames) {
  MetricHost host("GB202");
  auto plan = plan_metric_set(host, "roofline");
  EXPECT_NE(std::find(plan.metrics.begin(), plan.metrics.end(), "dram__bytes_op_read.sum"), plan.metrics.end());
  EXPECT_EQ(std::find(plan.metrics.begin(), plan.metrics.end(), "dram__bytes_read.sum"), plan.metrics.end());
  ASSERT_FALSE(plan.notes.empty());
  EXPECT_NE(plan.notes[0].find("dram__bytes_op_read.sum"), std::string::npos);
}

TEST(Plan, UnknownSetIsRejectedWithTheKnownNames) {
  MetricHost host("GH100");
  try {
    plan_metric_set(host, "rooflin");
    FAIL() << "no MetricError";
  } catch (const MetricError& e) {
    EXPECT_NE(std::string(e.what()).find("\"rooflin\""), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("roofline-tensor"), std::string::npos);
  }
  EXPECT_EQ(metric_set_description("rooflin"), "");
  for (const auto& s : metric_set_names()) EXPECT_NE(metric_set_description(s), "") << s;
}

}  // namespace
}  // namespace rf::collector
