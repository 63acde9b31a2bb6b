// report.html and scaling.csv: page data read back from the page, escaping of hostile kernel
// names, batch size and iteration parsing, scaling rows.
#include <gtest/gtest.h>

#include <fstream>
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

/// Runs rfanalyze on `traces` into `out` (with `o`'s other options) and returns report.html's data;
/// a failed run fails the test and gives null.
nlohmann::json page_of(std::vector<fs::path> traces, const fs::path& out, AnalyzeOptions o = {}) {
  const testing::AnalysisRun run = testing::analyze(std::move(traces), out, std::move(o));
  EXPECT_EQ(run.status, kExitOk) << run.err;
  if (run.status != kExitOk) return nullptr;
  return page_data(testing::slurp(out / "report.html"));
}

// Until 2026-11-29 the page's sums wrote a GPU time of 0 where no launch had a duration (summary.json:
// null), so report.html and the stdout summary showed "0.000 ms"; now null, and "-" in the summary.
TEST(HtmlReport, NoTimedLaunchIsANullGpuTimeNotZero) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(5, trace::CollectionMode::kTiming);
    t.launch(1, 0, 1, 100);  // its kernel record never came
    t.finish();
  }
  AnalyzeOptions o;
  o.traces = {dir.path / "t.rftrace"};
  o.output_dir = dir.path / "r";
  std::ostringstream err, summary;
  ASSERT_EQ(run_analysis(o, err, &summary), kExitOk) << err.str();
  const nlohmann::json d = page_data(testing::slurp(dir.path / "r" / "report.html"));
  EXPECT_TRUE(d["totals"]["duration_ns"].is_null()) << d["totals"];
  ASSERT_EQ(d["points"].size(), 1u);
  EXPECT_TRUE(d["points"][0]["duration_ns"].is_null()) << d["points"][0];
  ASSERT_EQ(d["phases"].size(), 1u);
  EXPECT_TRUE(d["phases"][0]["duration_ns"].is_null()) << d["phases"][0];
  EXPECT_NE(summary.str().find(", 1 launches, - GPU time, "), std::string::npos) << summary.str();
  EXPECT_EQ(summary.str().find("0.000 ms"), std::string::npos) << summary.str();
}

// A launch belongs to a trace: one before the first trace is a caller's bug, not a point.
TEST(HtmlReport, ALaunchBeforeAnyTraceIsRefused) {
  ReportPage page;
  KernelRow row;
  row.kernel = "k";
  EXPECT_THROW(page.add_launch(row), std::logic_error);
  EXPECT_TRUE(page.scaling_rows().empty());
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
  const auto d = page_of({dir.path / "a.rftrace"}, out);
  ASSERT_FALSE(d.is_null());
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

// A launch with counters whose kernel record never came (no duration) adds its FLOP to the point
// but no time: the point's roof fraction is that of its timed launch, as kernels.csv has it.
// Until 2026-11-29 all the point's FLOP were put over the timed launch's time: twice the fraction.
TEST(HtmlReport, ARoofFractionIsOverTheLaunchesWithFlopAndADuration) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(7, trace::CollectionMode::kCounters);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100", 3352320000ull);
    t.config(1, testing::roofline_metrics());
    Counts c;
    c.ffma = 500;  // 1000 FP32 FLOP
    c.read = 300;
    c.write = 100;  // 400 bytes
    for (uint32_t corr : {11u, 12u}) {
      t.launch(corr, 0, 100, 1000 + corr);
      // The second: a kernel record without timestamps (counters mode) and no gpu__time_duration.
      t.kernel(corr, corr == 11 ? 100000 : 0, corr == 11 ? 101000 : 0, "gemm");
      t.counters(1, corr, c.values());
    }
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const auto d = page_of({dir.path / "t.rftrace"}, out);
  ASSERT_FALSE(d.is_null());
  testing::CsvTable kernels = testing::CsvTable::read(out / "kernels.csv");
  ASSERT_EQ(kernels.rows.size(), 2u);
  ASSERT_EQ(d["points"].size(), 1u) << d["points"];
  const auto& p = d["points"][0];
  EXPECT_EQ(p["launches"], 2);
  EXPECT_EQ(p["flop"], 2000.0);
  EXPECT_EQ(p["rate_ns"], 1000);
  ASSERT_TRUE(p["roof_fraction"].is_number()) << p;
  const double f = p["roof_fraction"].get<double>();
  EXPECT_NEAR(f, 1e9 / (2.5 * 3.35e12), 1e-3 * f) << "1000 FLOP in 1 us at AI 2.5, not 2000";
  size_t timed = 0;
  for (size_t r = 0; r < kernels.rows.size(); ++r)
    if (!kernels.cell(r, "duration_ns").empty()) {
      ++timed;
      EXPECT_NEAR(std::stod(kernels.cell(r, "roof_fraction")), f, 1e-9 * f);
    }
  EXPECT_EQ(timed, 1u);
  EXPECT_EQ(p["bound"], "memory");
}

// A point's sums: GPU time, FLOP and DRAM bytes of its counted launches (null without any), and
// its bound and roof fraction from all its FLOP terms, tensor cores dense and sparse included,
// as kernels.csv has them for the same launch.
TEST(HtmlReport, PointSumsAndRoofsCountEveryTerm) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    trace::ProcessInfo info;
    info.pid = 7;
    info.command_line = t.writer().intern("python train.py --batch-size 8");
    info.mode = trace::CollectionMode::kCounters;
    t.writer().append(info);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    std::vector<std::string> metrics = testing::roofline_metrics();
    metrics.push_back("sm__ops_path_tensor_src_fp16_sparsity_off.sum");
    metrics.push_back("sm__ops_path_tensor_src_fp16_sparsity_on.sum");
    t.config(1, metrics);
    Counts c;
    c.read = 60;
    c.write = 40;
    std::vector<double> v = c.values();
    v.push_back(1e6);    // dense FP16 tensor FLOP
    v.push_back(3e5);    // sparse
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 3000, "tensor_gemm");
    t.counters(1, 1, v);
    t.launch(2, 0, 100, 4000);
    t.kernel(2, 5000, 5500, "no_counters");  // its counters never come
    t.launch(3, 0, 100, 6000);
    t.kernel(3, 0, 0, "untimed");  // counters, but no duration
    t.counters(1, 3, v);
    t.push(1, 100, 6500, "layer1");  // one kernel in two ranges: two points
    t.launch(4, 0, 100, 6600);
    t.kernel(4, 7000, 7100, "relu");
    t.pop(1, 100, 6700);
    t.push(2, 100, 6800, "layer2");
    t.launch(5, 0, 100, 6900);
    t.kernel(5, 7200, 7300, "relu");
    t.pop(2, 100, 6950);
    Counts hot;
    hot.ffma = 1e9;  // 2e9 FLOP in 10 ns: above the roof
    hot.read = 1e6;
    std::vector<double> hv = hot.values();
    hv.push_back(0);
    hv.push_back(0);
    t.launch(6, 0, 100, 8000);
    t.kernel(6, 8100, 8110, "hot");
    t.counters(1, 6, hv);
    t.window(0, false, 9000);
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const auto d = page_of({dir.path / "t.rftrace"}, out);
  ASSERT_FALSE(d.is_null());
  const testing::CsvTable k = testing::CsvTable::read(out / "kernels.csv");
  nlohmann::json gemm, bare, untimed;
  std::vector<std::string> relu_ranges;
  for (const auto& p : d["points"]) {
    if (p["kernel"] == "tensor_gemm") gemm = p;
    if (p["kernel"] == "no_counters") bare = p;
    if (p["kernel"] == "untimed") untimed = p;
    if (p["kernel"] == "relu") relu_ranges.push_back(p["range"]);
  }
  ASSERT_TRUE(gemm.is_object() && bare.is_object() && untimed.is_object()) << d["points"];
  EXPECT_EQ(relu_ranges, (std::vector<std::string>{"layer1", "layer2"}));
  EXPECT_TRUE(untimed["bound"].is_null());  // no time, no rate: no place under a roof
  EXPECT_EQ(d["above_roof_count"], 1);
  // gemm, hot and untimed have the same bound here: 3 launches, 1000 + 10 + 0 ns.
  const nlohmann::json& shares = d["totals"]["by_bound"][gemm["bound"].get<std::string>()];
  EXPECT_EQ(shares["launches"], 3);
  EXPECT_EQ(shares["duration_ns"], 1010);
  // Roofs: only ceilings with a value, each with its source; only FLOP/s and bytes/s, not the
  // L2 size or the INT8 peak (operations, not FLOP), which summary.json lists with values.
  ASSERT_FALSE(d["devices"][0]["roofs"].empty());
  for (const auto& r : d["devices"][0]["roofs"]) {
    EXPECT_TRUE(r["value"].is_number()) << r;
    EXPECT_EQ(r["source"].get<std::string>().rfind("datasheet: H100 SXM5", 0), 0u) << r;
    const std::string name = r["name"];
    const bool compute = name.ends_with("_flop_per_s"), bandwidth = name.ends_with("_bytes_per_s");
    EXPECT_TRUE(compute || bandwidth) << r;
    EXPECT_EQ(r["kind"], compute ? "compute" : "bandwidth") << r;
  }
  const auto summary = nlohmann::json::parse(testing::slurp(out / "summary.json"));
  size_t other_values = 0;
  for (const auto& [key, c] : summary["devices"][0]["ceilings"].items())
    if (!key.ends_with("_flop_per_s") && !key.ends_with("_bytes_per_s") && c.is_object() && c["value"].is_number())
      ++other_values;
  EXPECT_GE(other_values, 2u) << "the L2 size and the INT8 peak: " << summary["devices"][0]["ceilings"];
  // Throughput needs the batch size and the steps: "--batch-size 8" without steps has none.
  EXPECT_TRUE(d["traces"][0]["throughput_samples_per_s"].is_null());
  EXPECT_EQ(d["traces"][0]["batch_size"], 8);
  EXPECT_TRUE(d["traces"][0]["iterations"].is_null());
  EXPECT_EQ(gemm["duration_ns"], 1000);
  // The trace's GPU time counts every timed launch, with counters or not: 1000 + 500 + 2 * 100 + 10.
  EXPECT_EQ(d["traces"][0]["duration_ns"], 1710);
  EXPECT_EQ(gemm["dram_bytes"], 100.0);
  EXPECT_DOUBLE_EQ(gemm["flop"].get<double>(), std::stod(k.cell(0, "arithmetic_intensity")) * 100);
  EXPECT_GE(gemm["flop"].get<double>(), 1.3e6);  // dense and sparse
  // FLOP/byte over DRAM bytes, FLOP/s over the GPU time, as kernels.csv has them.
  EXPECT_DOUBLE_EQ(gemm["arithmetic_intensity"].get<double>(), gemm["flop"].get<double>() / 100);
  EXPECT_DOUBLE_EQ(gemm["flop_per_s"].get<double>(), gemm["flop"].get<double>() / 1000e-9);
  EXPECT_EQ(gemm["bound"], k.cell(0, "bound"));
  EXPECT_DOUBLE_EQ(gemm["roof_fraction"].get<double>(), std::stod(k.cell(0, "roof_fraction")));
  EXPECT_EQ(bare["duration_ns"], 500);
  EXPECT_TRUE(bare["flop"].is_null());
  EXPECT_TRUE(bare["dram_bytes"].is_null());
  EXPECT_TRUE(bare["bound"].is_null());
}

// A device without compute ceilings (no datasheet entry, only its reported bandwidth) gives its
// points no bound: null, as for a point without counters, not an empty string.
TEST(HtmlReport, NoBoundIsNullWithoutComputeCeilings) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(7, trace::CollectionMode::kCounters);
    t.device(0, "Mystery GPU", "GZ100", 1000000000ull);
    t.config(1, testing::roofline_metrics());
    Counts c;
    c.ffma = 500;
    c.read = 300;
    t.launch(1, 0, 100, 1100);
    t.kernel(1, 2000, 3000, "k");
    t.counters(1, 1, c.values());
    t.window(0, false, 9000);
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const auto d = page_of({dir.path / "t.rftrace"}, out);
  ASSERT_FALSE(d.is_null());
  ASSERT_EQ(d["points"].size(), 1u) << d["points"];
  EXPECT_EQ(d["points"][0]["device_index"], 0);
  EXPECT_DOUBLE_EQ(d["points"][0]["flop"].get<double>(), 1000);
  EXPECT_TRUE(d["points"][0]["bound"].is_null()) << d["points"][0];
}

// Phases that are not forward, backward or optimizer take palette colours in name order, as in
// roofline.svg, whatever order their points have (kernel "a" of phase "zeta" comes first here).
TEST(HtmlReport, PhaseColoursFollowPhaseNames) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.push(1, 100, 1000, "zeta");
    t.launch(1, 0, 100, 1100);
    t.kernel(1, 2000, 3000, "a");
    t.pop(1, 100, 1200);
    t.push(2, 100, 1300, "alpha");
    t.launch(2, 0, 100, 1400);
    t.kernel(2, 4000, 5000, "b");
    t.pop(2, 100, 1500);
    t.finish();
  }
  std::ofstream(dir.path / "phases.json") << R"([{"regex": "zeta", "phase": "zeta"}, {"regex": "alpha", "phase": "alpha"}])";
  AnalyzeOptions o;
  o.phase_map = dir.path / "phases.json";
  const fs::path out = dir.path / "out";
  const auto d = page_of({dir.path / "t.rftrace"}, out, o);
  ASSERT_FALSE(d.is_null());
  std::vector<std::string> seen;
  const std::string alpha = group_colour("alpha", seen), zeta = group_colour("zeta", seen);
  ASSERT_NE(alpha, zeta);
  EXPECT_EQ(d["phase_colours"]["alpha"], alpha) << d["phase_colours"];
  EXPECT_EQ(d["phase_colours"]["zeta"], zeta) << d["phase_colours"];
  EXPECT_EQ(d["phase_colours"].size(), 2u);
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
  const auto summary = nlohmann::json::parse(testing::slurp(out / "summary.json"));
  EXPECT_EQ(d["tool"], "rfanalyze");
  EXPECT_FALSE(d["version"].get<std::string>().empty());
  EXPECT_EQ(d["version"], summary["version"]);
  ASSERT_EQ(d["traces"].size(), 2u);
  EXPECT_EQ(d["traces"][0]["label"], "batch 8");
  EXPECT_EQ(d["traces"][1]["label"], "b");  // the file stem, as processes.csv labels it
  // Trace a: 2 launches x 1000 FLOP in 2 x 1000 ns -> 1e9 FLOP/s; 2000 FLOP / 800 bytes = 2.5.
  EXPECT_EQ(d["traces"][0]["launches"], 2);
  EXPECT_EQ(d["traces"][0]["duration_ns"], 2000);
  EXPECT_EQ(d["traces"][0]["iterations"], 2);
  EXPECT_TRUE(d["traces"][1]["iterations"].is_null());
  for (const auto& p : d["points"]) EXPECT_EQ(p["device_index"], p["trace_index"]);  // its own trace's device
  // Each trace's device 0 is a device of its own, under its trace's index and its own id.
  ASSERT_EQ(d["devices"].size(), 2u);
  EXPECT_EQ(d["devices"][1]["trace_index"], 1);
  EXPECT_EQ(d["devices"][1]["device_id"], 0);
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
