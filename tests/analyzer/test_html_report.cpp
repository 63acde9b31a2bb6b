// report.html and scaling.csv: page data read back from the page, escaping of hostile kernel
// names, batch size and iteration parsing, scaling rows.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/html_report.h"
#include "rfprof/analyzer/svg_roofline.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::Counts;
using testing::TempDir;
using testing::TraceBuilder;

const std::string kHostile = "relu</script><b>&amp;\"'";

void write_trace(const fs::path& path, const std::string& command_line, uint64_t duration_ns) {
  TraceBuilder t(path);
  trace::ProcessInfo p;
  p.pid = 7;
  p.command_line = t.writer().intern(command_line);
  p.mode = trace::CollectionMode::kCounters;
  t.writer().append(p);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100", 3352320000ull);
  t.config(1, testing::roofline_metrics());
  t.push(1, 100, 1000, "forward");
  if (duration_ns == 4000) t.memory(true, 1500, 0x100, 5ull << 30);  // trace b only
  t.pop(1, 100, 2000);
  Counts c;
  c.ffma = 500;  // 1000 FP32 FLOP
  c.read = 300;
  c.write = 100;  // 400 bytes
  for (uint32_t corr : {11u, 12u}) {
    t.launch(corr, 0, 100, 1000 + corr);
    t.kernel(corr, corr * 100000, corr * 100000 + duration_ns, corr == 11 ? kHostile : "gemm<float>");
    t.counters(1, corr, c.values());
  }
  t.finish();
}

/// The JSON inside <script id="rf-data">...</script> of a page.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"rf-data\">";
  auto b = html.find(open);
  EXPECT_NE(b, std::string::npos);
  b += open.size();
  auto e = html.find("</script>", b);
  EXPECT_NE(e, std::string::npos);
  return nlohmann::json::parse(html.substr(b, e - b));
}

TEST(HtmlReport, StepRangeNameIsTheStepComponentOfTheNvtxPath) {
  EXPECT_EQ(step_range_name("step 5/forward/aten::conv2d"), "step 5");
  EXPECT_EQ(step_range_name("train/Iteration 12/backward"), "Iteration 12");
  EXPECT_EQ(step_range_name("iter"), "iter");
  EXPECT_EQ(step_range_name("epoch 1/step_3/x"), "");  // '_' continues the word: not a step range
  EXPECT_EQ(step_range_name("stepper/steps"), "");
  EXPECT_EQ(step_range_name("forward"), "");
  EXPECT_EQ(step_range_name(""), "");
}

// The shipped trace profiled 1 of its 5 steps (main.py --iters 5 --profile-iters 1): samples per
// second come from the one step whose kernels it holds, not the command line's 5 (which gave 5x).
TEST(HtmlReport, ThroughputCountsTheStepsWhoseKernelsTheTraceHolds) {
  TempDir dir;
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({testing::shipped_trace()}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  testing::CsvTable t = testing::CsvTable::read(out / "scaling.csv");
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.cell(0, "batch_size"), "16");
  EXPECT_EQ(t.cell(0, "iterations"), "1");
  const double gpu_s = std::stod(t.cell(0, "gpu_time_ns")) * 1e-9;
  EXPECT_NEAR(std::stod(t.cell(0, "throughput_samples_per_s")), 16 / gpu_s, 1e-6 * 16 / gpu_s);
}

// Each point says where it sits under its device's roof, as kernels.csv says of a launch: here
// one launch per point, so the two must agree. 1000 FLOP over 400 bytes (AI 2.5) in 1 us on an
// H100 (DRAM 3.35 TB/s): memory-bound, 1e9 / (2.5 * 3.35e12) of the roof.
TEST(HtmlReport, PointsCarryTheirBoundAndRoofFraction) {
  TempDir dir;
  write_trace(dir.path / "a.rftrace", "python3 train.py", 1000);
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "a.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  auto d = page_data(testing::slurp(out / "report.html"));
  testing::CsvTable kernels = testing::CsvTable::read(out / "kernels.csv");
  ASSERT_EQ(d["points"].size(), 2u);
  ASSERT_EQ(kernels.rows.size(), 2u);
  for (const auto& p : d["points"]) {
    EXPECT_EQ(p["bound"], "memory");
    ASSERT_TRUE(p["roof_fraction"].is_number()) << p;
    const double f = p["roof_fraction"].get<double>();
    EXPECT_NEAR(f, 1e9 / (2.5 * 3.35e12), 1e-3 * f) << "the H100 SXM5 datasheet's 3.35 TB/s";
    for (size_t r = 0; r < kernels.rows.size(); ++r)
      if (kernels.cell(r, "kernel") == p["kernel"].get<std::string>()) {
        EXPECT_EQ(kernels.cell(r, "bound"), "memory");
        EXPECT_NEAR(std::stod(kernels.cell(r, "roof_fraction")), f, 1e-9 * f);
      }
  }
}

TEST(HtmlReport, PageHoldsEscapedDataAndScalingRows) {
  TempDir dir;
  write_trace(dir.path / "a.rftrace", "python3 train.py --batch-size 8 --steps 2", 1000);
  write_trace(dir.path / "b.rftrace", "python3 train.py", 4000);
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "a.rftrace", dir.path / "b.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;

  const std::string html = testing::slurp(out / "report.html");
  // The hostile name never appears raw: only the template's own </script> tags close scripts.
  EXPECT_EQ(html.find("relu</script>"), std::string::npos);
  EXPECT_EQ(html.find("<b>&amp;"), std::string::npos);
  EXPECT_NE(html.find("relu\\u003c/script\\u003e\\u003cb\\u003e\\u0026amp;"), std::string::npos);
  EXPECT_NE(html.find("vegaEmbed"), std::string::npos);  // libraries inlined
  EXPECT_EQ(html.find("@RF_"), std::string::npos);       // every marker replaced
  EXPECT_EQ(html.find("<script src"), std::string::npos);  // nothing loaded from elsewhere

  auto d = page_data(html);
  ASSERT_EQ(d["traces"].size(), 2u);
  EXPECT_EQ(d["traces"][0]["label"], "batch 8");
  EXPECT_EQ(d["traces"][1]["label"], "b");  // the file stem, as processes.csv labels it
  // Trace a: 2 launches x 1000 FLOP in 2 x 1000 ns -> 1e9 FLOP/s; 2000 FLOP / 800 bytes = 2.5.
  EXPECT_EQ(d["traces"][0]["launches"], 2);
  EXPECT_EQ(d["traces"][0]["duration_ns"], 2000);
  EXPECT_DOUBLE_EQ(d["traces"][0]["flop"].get<double>(), 2000.0);
  EXPECT_DOUBLE_EQ(d["traces"][0]["flop_per_s"].get<double>(), 1e9);
  EXPECT_DOUBLE_EQ(d["traces"][0]["arithmetic_intensity"].get<double>(), 2.5);
  // 8 samples x 2 steps / 2 us = 8e6 samples/s; trace b has no batch size.
  EXPECT_DOUBLE_EQ(d["traces"][0]["throughput_samples_per_s"].get<double>(), 8e6);
  EXPECT_TRUE(d["traces"][1]["throughput_samples_per_s"].is_null());
  EXPECT_DOUBLE_EQ(d["traces"][1]["flop_per_s"].get<double>(), 2.5e8);

  // 2 traces x 2 kernels, all in phase forward, range "forward"; the hostile name intact.
  ASSERT_EQ(d["points"].size(), 4u);
  int hostile = 0;
  for (const auto& p : d["points"]) {
    EXPECT_EQ(p["phase"], "forward");
    EXPECT_EQ(p["range"], "forward");
    EXPECT_GE(p["device_index"].get<int>(), 0);
    if (p["kernel"] == kHostile) ++hostile;
  }
  EXPECT_EQ(hostile, 2);
  // Short names are not repeated: kernel_short only for a folded name.
  for (const auto& p : d["points"]) EXPECT_FALSE(p.contains("kernel_short")) << p["kernel"];
  // The phase's colour is roofline.svg's.
  std::vector<std::string> seen;
  EXPECT_EQ(d["phase_colours"], nlohmann::json({{"forward", group_colour("forward", seen)}}));
  // Roofs from the device's ceilings: the H100 datasheet entry has FP32 and DRAM values.
  ASSERT_EQ(d["devices"].size(), 2u);
  bool fp32 = false, dram = false;
  for (const auto& r : d["devices"][0]["roofs"]) {
    if (r["name"] == "fp32_flop_per_s") fp32 = r["kind"] == "compute";
    if (r["name"] == "dram_bytes_per_s") dram = r["kind"] == "bandwidth";
  }
  EXPECT_TRUE(fp32 && dram);
  EXPECT_TRUE(d["ops"].is_null());  // summary.json without "ops"

  // scaling.csv and processes.csv name and size each trace alike.
  testing::CsvTable scaling = testing::CsvTable::read(out / "scaling.csv");
  testing::CsvTable processes = testing::CsvTable::read(out / "processes.csv");
  ASSERT_EQ(scaling.rows.size(), 2u);
  ASSERT_EQ(processes.rows.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(scaling.cell(r, "label"), processes.cell(r, "label"));
    EXPECT_EQ(scaling.cell(r, "trace"), processes.cell(r, "trace"));
    EXPECT_EQ(scaling.cell(r, "batch_size"), processes.cell(r, "batch_size"));
  }
  // Trace b holds 5 GiB while "forward" is open; trace a has no memory records.
  ASSERT_EQ(d["ranges"].size(), 1u);
  EXPECT_EQ(d["ranges"][0]["peak_memory_bytes"], 5ull << 30);
  ASSERT_EQ(d["phases"].size(), 1u);
  EXPECT_EQ(d["phases"][0]["phase"], "forward");
  EXPECT_EQ(d["phases"][0]["peak_memory_bytes"], 5ull << 30);

  const auto csv = testing::lines_of(out / "scaling.csv");
  ASSERT_EQ(csv.size(), 3u);
  EXPECT_EQ(csv[0], "label,trace,batch_size,iterations,launches,gpu_time_ns,flop,flop_per_s,"
                    "arithmetic_intensity,throughput_samples_per_s");
  EXPECT_EQ(csv[1].substr(0, 8), "batch 8,");
  EXPECT_NE(csv[1].find(",8,2,2,2000,2000,1000000000,2.5,8000000"), std::string::npos) << csv[1];
  EXPECT_NE(csv[2].find("b.rftrace,"), std::string::npos);
  EXPECT_NE(csv[2].find(",,,2,8000,2000,250000000,2.5,"), std::string::npos) << csv[2];
}

}  // namespace
}  // namespace rf::analyzer
