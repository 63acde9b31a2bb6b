// kernels.csv fields and the Aggregate behind ranges.csv, phases.csv and callsites.csv (rows.h):
// which launches each ratio counts, and merge() giving what adding every launch gives.
#include "rfprof/analyzer/rows.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {
namespace {

/// A launch with FLOP in fp64, fp32 and fp16 (total `flop`), DRAM bytes `dram` (read = write), L2
/// and L1 bytes (0: none), 7 sparse INT8 tensor ops (no FLOP), and `duration_ns` (nullopt: none).
KernelRow launch(double flop, std::optional<double> dram, std::optional<uint64_t> duration_ns, double l2 = 0,
                 double l1 = 0) {
  KernelRow r;
  r.metrics.fp64_flop = flop / 4;
  r.metrics.fp32_flop = flop / 2;
  r.metrics.fp16_flop = flop / 4;
  if (dram) {
    r.metrics.dram_read_bytes = *dram / 2;
    r.metrics.dram_write_bytes = *dram / 2;
  }
  if (l2 > 0) r.metrics.l2_bytes = l2;
  if (l1 > 0) r.metrics.l1_bytes = l1;
  r.metrics.tensor_sparse[kTensorInt8] = 7;
  r.duration_ns = duration_ns;
  return r;
}

/// The field of `fields` under column `name` of `header`.
std::string field(const std::vector<std::string>& header, const std::vector<std::string>& fields,
                  const std::string& name) {
  const auto it = std::find(header.begin(), header.end(), name);
  EXPECT_NE(it, header.end()) << name;
  return it == header.end() ? "" : fields.at(static_cast<size_t>(it - header.begin()));
}

TEST(Rows, GridAndBlockArePrintedXYZ) {
  KernelRow r;
  r.grid = std::array<int32_t, 3>{4, 2, 3};
  r.block = std::array<int32_t, 3>{32, 8, 1};
  const auto f = r.csv_fields();
  EXPECT_EQ(field(kernels_csv_header(), f, "grid"), "4,2,3");
  EXPECT_EQ(field(kernels_csv_header(), f, "block"), "32,8,1");
}

// What a launch does not have is an empty cell, never a 0: a row from counters without their
// kernel record has no device, stream, grid, block or duration; device 0 and stream 0 are numbers.
TEST(Rows, MissingLaunchAttributesAreEmptyCellsNotZeros) {
  KernelRow none;
  none.id = 9;
  const auto& header = kernels_csv_header();
  const auto f = none.csv_fields();
  for (const char* column : {"device", "stream", "grid", "block", "duration_ns", "fp64_flop", "l2_bytes",
                             "arithmetic_intensity", "flop_per_s", "bound", "roof_fraction"})
    EXPECT_EQ(field(header, f, column), "") << column;
  EXPECT_EQ(field(header, f, "id"), "9");
  KernelRow zero;
  zero.device = 0;
  zero.stream = 0;
  zero.duration_ns = 0;
  zero.grid = std::array<int32_t, 3>{1, 1, 1};
  const auto z = zero.csv_fields();
  EXPECT_EQ(field(header, z, "device"), "0");
  EXPECT_EQ(field(header, z, "stream"), "0");
  EXPECT_EQ(field(header, z, "duration_ns"), "0");
  EXPECT_EQ(field(header, z, "grid"), "1,1,1");
  EXPECT_EQ(field(header, z, "block"), "");
}

// Each ratio sums only the launches that have both of its terms: FLOP/byte over launches with FLOP
// and DRAM bytes, FLOP/s over launches with FLOP and a duration.
TEST(Rows, EachRatioCountsTheLaunchesThatHaveBothTerms) {
  Aggregate a;
  a.add(launch(100, 20, 10, 50, 25));   // 5 FLOP/byte, 1e10 FLOP/s; L2 2, L1 4 FLOP/byte
  a.add(launch(1000, std::nullopt, std::nullopt));  // FLOP only
  a.add(launch(0, 80, 30));             // 0 FLOP: counted in both ratios
  EXPECT_EQ(a.launches, 3u);
  EXPECT_EQ(a.counted_launches, 2u);  // summary.json's launches_with_counters
  EXPECT_EQ(a.rate_ns, 40u);
  ASSERT_TRUE(a.arithmetic_intensity());
  EXPECT_DOUBLE_EQ(*a.arithmetic_intensity(), 100.0 / 100.0);  // (100 + 0) / (20 + 80)
  ASSERT_TRUE(a.flop_per_s());
  EXPECT_DOUBLE_EQ(*a.flop_per_s(), 100.0 / 40e-9);  // (100 + 0) FLOP / (10 + 30) ns
  ASSERT_TRUE(a.l2_arithmetic_intensity());
  EXPECT_DOUBLE_EQ(*a.l2_arithmetic_intensity(), 2.0);
  EXPECT_DOUBLE_EQ(*a.l1_arithmetic_intensity(), 4.0);
  // ranges.csv's columns, L2 before L1.
  const auto header = aggregate_csv_header("nvtx");
  const auto f = a.csv_fields("train");
  EXPECT_EQ(field(header, f, "l2_arithmetic_intensity"), "2");
  EXPECT_EQ(field(header, f, "l1_arithmetic_intensity"), "4");
  EXPECT_EQ(field(header, f, "duration_ns"), "40");
  EXPECT_EQ(field(header, f, "launches"), "3");  // the untimed launch too
  EXPECT_EQ(field(header, f, "l2_bytes"), "50");
  EXPECT_EQ(field(header, f, "l1_bytes"), "25");
  // A launch with L2 and L1 bytes but no FLOP (no instruction counters) is in neither cache ratio.
  KernelRow bytes_only;
  bytes_only.metrics.l2_bytes = 1000;
  bytes_only.metrics.l1_bytes = 1000;
  a.add(bytes_only);
  EXPECT_EQ(a.l2_counted, 1u);
  EXPECT_EQ(a.l1_counted, 1u);
  EXPECT_DOUBLE_EQ(*a.l2_arithmetic_intensity(), 2.0);
  EXPECT_DOUBLE_EQ(*a.l1_arithmetic_intensity(), 4.0);
}

// A launch of 0 ns (start == end, no gpu__time_duration) has no FLOP/s of its own (kernels.csv
// leaves it empty): its FLOP are not in a sum's rate either. They were, with no time: a range of
// two 2000-FLOP launches, 0 and 1000 ns, read 4e9 FLOP/s for the 2e9 of its one timed launch.
TEST(Rows, AZeroLengthLaunchAddsNoFlopToTheRate) {
  Aggregate a;
  a.add(launch(2000, 100, 0));
  a.add(launch(2000, 100, 1000));
  EXPECT_EQ(a.rate_ns, 1000u);
  ASSERT_TRUE(a.flop_per_s());
  EXPECT_DOUBLE_EQ(*a.flop_per_s(), 2e9);
  EXPECT_DOUBLE_EQ(*a.arithmetic_intensity(), 4000.0 / 200.0);  // bytes and FLOP of both
}

// merge() gives what adding each launch of the other aggregate gives (callsites.csv merges the
// call sites of each trace).
TEST(Rows, MergeEqualsAddingEveryLaunch) {
  const std::vector<KernelRow> rows = {launch(100, 20, 10, 50, 25), launch(1000, std::nullopt, std::nullopt),
                                       launch(300, 60, 5, 0, 30), launch(40, 8, std::nullopt, 10, 0),
                                       launch(0, 80, 30)};
  Aggregate all, first, second;
  for (size_t i = 0; i < rows.size(); ++i) {
    all.add(rows[i]);
    (i < 2 ? first : second).add(rows[i]);
  }
  first.memory_bound_ns = 7;
  second.memory_bound_ns = 11;
  first.compute_bound_ns = 13;
  second.compute_bound_ns = 17;
  first.merge(second);
  EXPECT_EQ(first.csv_fields("k"), all.csv_fields("k"));
  EXPECT_EQ(first.memory_bound_ns, 18u);
  EXPECT_EQ(first.compute_bound_ns, 30u);
  // The sums behind the ratios, term by term.
  EXPECT_EQ(first.counted_launches, all.counted_launches);
  EXPECT_EQ(first.l2_counted, all.l2_counted);
  EXPECT_EQ(first.l1_counted, all.l1_counted);
  EXPECT_EQ(first.rate_ns, all.rate_ns);
  EXPECT_DOUBLE_EQ(first.l1_ai_flop, all.l1_ai_flop);
  // The totals processes.csv and ops.csv print (not ranges.csv's columns).
  EXPECT_EQ(first.total_flop.value(), all.total_flop.value());
  EXPECT_EQ(first.total_flop.count, 5u);
  EXPECT_EQ(first.dram_bytes.value(), all.dram_bytes.value());
  EXPECT_EQ(first.dram_bytes.count, 4u);
  EXPECT_EQ(format_optional(first.tensor_sparse[kTensorInt8].value()), "35");  // 5 launches x 7
}

}  // namespace
}  // namespace rf::analyzer
