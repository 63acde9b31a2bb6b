// FLOP formulas per precision, DRAM bytes, arithmetic intensity and FLOP/s on constructed counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>

#include "analyzer_samples.h"
#include "rfprof/analyzer/flops.h"

namespace rf::analyzer {
namespace {

using testing::Counts;
using testing::roofline_metrics;

LaunchMetrics eval(const Counts& c) { return MetricLayout(roofline_metrics()).evaluate(c.values()); }

TEST(Flops, Fp32IsAddPlusMulPlusTwiceFma) {
  Counts c;
  c.ffma = 1000;
  EXPECT_EQ(eval(c).fp32_flop, 2000.0);
  c.fadd = 3;
  c.fmul = 5;
  c.ffma = 7;
  EXPECT_EQ(eval(c).fp32_flop, 3.0 + 5.0 + 2.0 * 7.0);
  EXPECT_EQ(eval(c).fp64_flop, 0.0);  // present (metrics collected) and zero
}

// GB100, GB102 and GB110 count packed FP32 (FADD2/FMUL2/FFMA2, two lanes each) apart from FADD/FMUL/
// FFMA: 2, 2 and 4 FLOP each, added to fp32_flop when the list has them (a review: rfprof
// collected none, so FP32 FLOP were short by 4 per FFMA2 thread instruction there).
TEST(Flops, PackedFp32IsAddedWhereTheListHasIt) {
  std::vector<std::string> names = roofline_metrics();
  names.emplace_back(metric::kFadd2);
  names.emplace_back(metric::kFmul2);
  names.emplace_back(metric::kFfma2);
  Counts c;
  c.fadd = 3;
  c.fmul = 5;
  c.ffma = 7;
  std::vector<double> values = c.values();
  values.insert(values.end(), {11.0, 13.0, 17.0});
  const MetricLayout layout(names);
  EXPECT_EQ(layout.evaluate(values).fp32_flop, 3.0 + 5.0 + 2.0 * 7.0 + 2.0 * 11.0 + 2.0 * 13.0 + 4.0 * 17.0);
  for (size_t i = values.size() - 3; i < values.size(); ++i) EXPECT_TRUE(layout.uses(i));
  values.back() = std::numeric_limits<double>::quiet_NaN();  // FFMA2 not available: FP32 unknown
  EXPECT_FALSE(layout.evaluate(values).fp32_flop.has_value());
  EXPECT_EQ(eval(c).fp32_flop, 3.0 + 5.0 + 2.0 * 7.0);  // other chips' lists: as before
}

// GB100's combined fp4_fp6_fp8 source is FP8 tensor math in a list without a plain fp8 name, and
// is left out beside one (an ncu CSV with both would count those instructions twice).
TEST(Flops, TheCombinedFp8SourceCountsOnlyWithoutAPlainOne) {
  const std::string combined = "sm__ops_path_tensor_op_utcqmma_src_fp4_fp6_fp8_dst_fp32_sparsity_off.sum";
  const std::string plain = "sm__ops_path_tensor_src_fp8_sparsity_off.sum";
  std::vector<std::string> names = roofline_metrics();
  names.push_back(combined);
  std::vector<double> values = Counts{}.values();
  values.push_back(1e6);
  EXPECT_EQ(MetricLayout(names).evaluate(values).tensor_dense[4], 1e6);  // fp8
  names.push_back(plain);
  values.push_back(3e6);
  EXPECT_EQ(MetricLayout(names).evaluate(values).tensor_dense[4], 3e6);
}

TEST(Flops, Fp64UsesTheDoubleInstructions) {
  Counts c;
  c.dadd = 11;
  c.dmul = 13;
  c.dfma = 17;
  c.ffma = 1000;  // must not leak into FP64
  EXPECT_EQ(eval(c).fp64_flop, 11.0 + 13.0 + 34.0);
}

TEST(Flops, Fp16UsesTheNamedHalf2Weights) {
  Counts c;
  c.hadd = 1;
  c.hmul = 2;
  c.hfma = 3;
  const double expected = kFp16Weights.add * 1 + kFp16Weights.mul * 2 + kFp16Weights.fma * 3;
  EXPECT_EQ(eval(c).fp16_flop, expected);
  // Nsight Compute's roofline weights for packed half2: 2, 2, 4.
  EXPECT_EQ(expected, 2.0 + 4.0 + 12.0);
}

TEST(Flops, DramBytesAreReadPlusWrite) {
  Counts c;
  c.read = 600;
  c.write = 400;
  c.gpu_time = 1234;
  LaunchMetrics m = eval(c);
  EXPECT_EQ(m.dram_read_bytes, 600.0);
  EXPECT_EQ(m.dram_write_bytes, 400.0);
  EXPECT_EQ(m.dram_bytes(), 1000.0);
  EXPECT_EQ(m.gpu_time_ns, 1234.0);
}

TEST(Flops, MetricOrderDoesNotMatter) {
  std::vector<std::string> names = roofline_metrics();
  Counts c;
  c.fadd = 1; c.fmul = 2; c.ffma = 3; c.dfma = 4; c.hfma = 5; c.read = 6; c.write = 7;
  std::vector<double> values = c.values();
  std::vector<size_t> order(names.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::mt19937 rng(42);
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::string> shuffled_names;
  std::vector<double> shuffled_values;
  for (size_t i : order) {
    shuffled_names.push_back(names[i]);
    shuffled_values.push_back(values[i]);
  }
  LaunchMetrics a = MetricLayout(names).evaluate(values);
  LaunchMetrics b = MetricLayout(shuffled_names).evaluate(shuffled_values);
  EXPECT_EQ(a.fp32_flop, b.fp32_flop);
  EXPECT_EQ(a.fp64_flop, b.fp64_flop);
  EXPECT_EQ(a.fp16_flop, b.fp16_flop);
  EXPECT_EQ(a.dram_bytes(), b.dram_bytes());
  EXPECT_EQ(b.fp32_flop, 1.0 + 2.0 + 6.0);
}

TEST(Flops, AbsentMetricGivesAbsentColumnNotZero) {
  std::vector<std::string> names = {std::string(metric::kFadd), std::string(metric::kFmul),
                                    std::string(metric::kFfma), std::string(metric::kDramRead)};
  LaunchMetrics m = MetricLayout(names).evaluate(std::vector<double>{1, 2, 3, 100});
  EXPECT_EQ(m.fp32_flop, 1.0 + 2.0 + 6.0);
  EXPECT_FALSE(m.fp64_flop.has_value());
  EXPECT_FALSE(m.fp16_flop.has_value());
  EXPECT_FALSE(m.dram_write_bytes.has_value());
  EXPECT_FALSE(m.total_flop().has_value());
  EXPECT_FALSE(m.dram_bytes().has_value());
}

TEST(Flops, NanOrMissingValueIsAbsent) {
  Counts c;
  c.ffma = std::numeric_limits<double>::quiet_NaN();
  c.read = 8;
  LaunchMetrics m = eval(c);
  EXPECT_FALSE(m.fp32_flop.has_value());
  EXPECT_EQ(m.dram_read_bytes, 8.0);
  // Fewer values than metric names: the names past the end are absent.
  LaunchMetrics short_m = MetricLayout(roofline_metrics()).evaluate(std::vector<double>{1, 1, 1});
  EXPECT_EQ(short_m.fp64_flop, 4.0);
  EXPECT_FALSE(short_m.fp32_flop.has_value());
}

// No counter is negative or infinite: such a value comes from a corrupt trace (one flipped byte
// once put negative FLOP into kernels.csv) and is absent, not summed.
TEST(Flops, NegativeOrInfiniteValueIsAbsent) {
  Counts c;
  c.fadd = -3;
  c.read = std::numeric_limits<double>::infinity();
  c.write = 16;
  c.dfma = 2;
  LaunchMetrics m = eval(c);
  EXPECT_FALSE(m.fp32_flop.has_value());
  EXPECT_FALSE(m.dram_read_bytes.has_value());
  EXPECT_FALSE(m.dram_bytes().has_value());
  EXPECT_EQ(m.dram_write_bytes, 16.0);
  EXPECT_EQ(m.fp64_flop, 4.0);
  EXPECT_FALSE(m.total_flop().has_value());  // needs every precision
  c.fadd = -0.0;  // zero, whatever its sign
  EXPECT_EQ(eval(c).fp32_flop, 0.0);
}

TEST(Flops, IntensityAndRate) {
  EXPECT_EQ(arithmetic_intensity(2000.0, 1000.0), 2.0);
  EXPECT_FALSE(arithmetic_intensity(2000.0, 0.0).has_value());
  EXPECT_FALSE(arithmetic_intensity(std::nullopt, 10.0).has_value());
  EXPECT_FALSE(arithmetic_intensity(10.0, std::nullopt).has_value());
  EXPECT_EQ(flop_per_s(2000.0, uint64_t{1000}), 2e9);  // 2000 FLOP in 1 us
  EXPECT_FALSE(flop_per_s(2000.0, uint64_t{0}).has_value());
  EXPECT_FALSE(flop_per_s(2000.0, std::nullopt).has_value());
  Counts c;
  c.ffma = 500;
  c.dfma = 250;
  c.hfma = 100;
  LaunchMetrics m = eval(c);
  EXPECT_EQ(m.total_flop(), 1000.0 + 500.0 + kFp16Weights.fma * 100);
}

}  // namespace
}  // namespace rf::analyzer
