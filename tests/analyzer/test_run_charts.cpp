// The charts of a run (roofline_charts.h): one per device, titled by device id and pid, with the
// device's DRAM slope; kernel groups drawn as points or counted in notes (without counters, or
// with 0 FLOP or 0 DRAM bytes); a chart for launches without a device record; roofs merged only
// within 0.1 %.
#include "rfprof/analyzer/roofline_charts.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/phases.h"
#include "rfprof/analyzer/report.h"
#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::TraceBuilder;

/// The charts of one trace, as run_analysis builds them for roofline.svg.
std::vector<RooflineChart> charts_of(const fs::path& trace) {
  CeilingSources sources;
  sources.datasheet = &CeilingDb::builtin();
  std::ostringstream kernels, counters;
  Report report(sources, kernels, counters);
  const TraceContext ctx = read_context(trace);
  report.begin_trace(ctx);
  const StreamStats stats =
      stream_launches(ctx, PhaseMap::defaults(), [&](const LaunchOutput& l) { report.add_launch(l); });
  report.end_trace(ctx, stats);
  return run_charts(report);
}

/// Writes a counters-mode trace of pid 4242 with an H100 as device 3; `body` adds launches.
/// add(t, id, kernel, device, counts, start, end) writes one launch with its kernel and counters
/// (no counters when `counts` is empty).
using AddLaunch = std::function<void(uint32_t, const std::string&, uint32_t, const std::vector<double>&,
                                     uint64_t, uint64_t)>;
fs::path write_trace(const fs::path& p, const std::function<void(const AddLaunch&)>& body) {
  TraceBuilder t(p);
  t.process(4242, trace::CollectionMode::kCounters);
  t.device(3, "NVIDIA H100 80GB HBM3", "GH100");
  t.config(1, testing::roofline_metrics());
  body([&](uint32_t id, const std::string& kernel, uint32_t device, const std::vector<double>& counts,
           uint64_t start, uint64_t end) {
    t.launch(id, 0, 5, 100 * id);
    t.kernel(id, start, end, kernel, device);
    if (!counts.empty()) t.counters(1, id, counts);
  });
  t.window(0, false, 1'000'000);
  t.finish();
  return p;
}

std::vector<double> counts(double ffma, double read, double gpu_time = 0) {
  testing::Counts c;
  c.ffma = ffma;
  c.read = read;
  c.gpu_time = gpu_time;
  return c.values();
}

TEST(RunCharts, PointsAndNotesOfADevice) {
  TempDir dir;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const fs::path p = write_trace(dir.path / "t.rftrace", [&](const AddLaunch& add) {
    add(1, "gemm", 3, counts(1000, 1000), 10'000, 11'000);  // AI 2, 2e9 FLOP/s, 1000 ns: a point
    add(2, "nocount", 3, {}, 20'000, 20'500);               // no counters
    add(3, "untimed", 3, counts(10, 10), 0, 0);              // counters, but no duration
    add(4, "no_dram", 3, counts(10, nan), 30'000, 30'100);   // FLOP and time, no DRAM bytes
    add(5, "copy", 3, counts(0, 1000), 40'000, 40'123);      // 0 FLOP
    add(6, "tiny_bytes", 3, counts(1e300, 1e-300), 50'000, 50'100);  // an intensity past double
  });
  const auto charts = charts_of(p);
  ASSERT_EQ(charts.size(), 1u);  // no launch without a device record: no second chart
  const RooflineChart& c = charts[0];
  EXPECT_EQ(c.title, "device 3: NVIDIA H100 80GB HBM3 (pid 4242)");
  EXPECT_EQ(c.dram_bytes_per_s, 3.35e12);
  ASSERT_EQ(c.points.size(), 1u);
  EXPECT_EQ(c.points[0].label, "gemm");
  EXPECT_EQ(c.points[0].group, "other");  // coloured by phase: outside every NVTX range
  EXPECT_DOUBLE_EQ(c.points[0].ai, 2.0);
  EXPECT_DOUBLE_EQ(c.points[0].flop_per_s, 2e9);
  EXPECT_DOUBLE_EQ(c.points[0].time_ns, 1000.0);
  // "untimed" has counters but no duration: said apart (it was counted as without counters).
  EXPECT_EQ(c.notes, (std::vector<std::string>{"2 kernel group(s) without", "counters not drawn",
                                               "1 kernel group(s) without", "GPU time (no FLOP/s) not drawn",
                                               "2 kernel group(s) with 0 FLOP", "or 0 DRAM bytes not drawn",
                                               "(0.000223 ms GPU time; in kernels.csv)"}));  // 3 digits
}

// Launches on a device without a DeviceInfo record get a chart of their own as soon as one of
// their groups is drawn or counted in a note, and the notes appear from one group on.
TEST(RunCharts, LaunchesWithoutADeviceRecordHaveTheirOwnChart) {
  TempDir dir;
  auto unknown_chart = [&](const std::string& name, const std::vector<double>& c) {
    const fs::path p = write_trace(dir.path / (name + ".rftrace"), [&](const AddLaunch& add) {
      add(1, "gemm", 3, counts(1000, 1000), 10'000, 11'000);
      add(2, name, 9, c, 20'000, 20'400);
    });
    const auto charts = charts_of(p);
    EXPECT_EQ(charts.size(), 2u) << name;
    return charts.size() == 2 ? charts[1] : RooflineChart{};
  };
  const RooflineChart point = unknown_chart("drawn", counts(1000, 1000));
  EXPECT_EQ(point.title, "launches without a device record");
  EXPECT_EQ(point.points.size(), 1u);
  EXPECT_TRUE(point.notes.empty());
  const RooflineChart uncounted = unknown_chart("uncounted", {});
  EXPECT_TRUE(uncounted.points.empty());
  EXPECT_EQ(uncounted.notes, (std::vector<std::string>{"1 kernel group(s) without", "counters not drawn"}));
  const RooflineChart zero = unknown_chart("zero", counts(0, 1000));
  EXPECT_EQ(zero.notes, (std::vector<std::string>{"1 kernel group(s) with 0 FLOP", "or 0 DRAM bytes not drawn",
                                                  "(0.0004 ms GPU time; in kernels.csv)"}));
}

// Two devices: each chart gets the notes of its own device's groups.
TEST(RunCharts, NotesStayWithTheirDevice) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    TraceBuilder t(p);
    t.process(4242, trace::CollectionMode::kCounters);
    t.device(3, "NVIDIA H100 80GB HBM3", "GH100");
    t.device(4, "NVIDIA H100 80GB HBM3", "GH100");
    t.config(1, testing::roofline_metrics());
    t.launch(1, 0, 5, 100);
    t.kernel(1, 10'000, 11'000, "gemm", 3);
    t.counters(1, 1, counts(1000, 1000));
    t.launch(2, 0, 5, 200);
    t.kernel(2, 20'000, 20'400, "nocount", 4);
    t.window(0, false, 1'000'000);
    t.finish();
  }
  const auto charts = charts_of(p);
  ASSERT_EQ(charts.size(), 2u);
  EXPECT_EQ(charts[0].title, "device 3: NVIDIA H100 80GB HBM3 (pid 4242)");
  EXPECT_EQ(charts[0].points.size(), 1u);
  EXPECT_TRUE(charts[0].notes.empty());
  EXPECT_EQ(charts[1].title, "device 4: NVIDIA H100 80GB HBM3 (pid 4242)");
  EXPECT_TRUE(charts[1].points.empty());
  EXPECT_EQ(charts[1].notes, (std::vector<std::string>{"1 kernel group(s) without", "counters not drawn"}));
}

TEST(RoofsOf, OnlyRoofsWithinATenthOfAPercentAreMerged) {
  DeviceCeilings c;
  c.fp64.value = 1.0005e12;  // 0.05 % above FP32: one roof
  c.fp32.value = 1e12;
  c.fp16.value = 1.4e12;     // 40 % above: a roof of its own
  c.tensor[2].value = 1.405e12;  // FP16 tensor, 0.36 % above FP16: a roof of its own too
  const auto roofs = roofs_of(c);
  ASSERT_EQ(roofs.size(), 3u);
  EXPECT_EQ(roofs[0].label, "FP64, FP32");
  EXPECT_EQ(roofs[0].peak, 1.0005e12);
  EXPECT_EQ(roofs[1].label, "FP16");
  EXPECT_EQ(roofs[2].label, "FP16 tensor");
}

}  // namespace
}  // namespace rf::analyzer
