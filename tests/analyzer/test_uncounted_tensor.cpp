// Tensor-core work a trace's metrics do not count as FLOP (LaunchMetrics::uncounted_tensor_work):
// kernels.csv's tensor_pipe_inst, summary.json's uncounted_tensor_work, the warning on stderr and
// report.html's data, end to end through run_analysis on constructed traces.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analyzer_samples.h"
#include "rfprof/analyzer/flops.h"
#include "rfprof/analyzer/terminal_summary.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::Counts;
using testing::CsvTable;
using testing::TempDir;
using testing::TraceBuilder;

/// One launch of the traces below: a kernel name, its duration (ns), FFMA thread instructions and
/// sm__inst_executed_pipe_tensor.sum.
struct Launch {
  std::string kernel;
  uint64_t ns;
  double ffma;
  double tensor_pipe;
};

/// The metric list of a trace: the roofline list, then (when `with_pipe`) the tensor-pipe count,
/// then (when `with_tensor_flop`) one TF32 tensor math metric, as roofline-tensor plans them.
std::vector<std::string> metrics(bool with_pipe, bool with_tensor_flop) {
  auto m = testing::roofline_metrics();
  if (with_pipe) m.emplace_back("sm__inst_executed_pipe_tensor.sum");
  if (with_tensor_flop) m.emplace_back("sm__ops_path_tensor_src_tf32_sparsity_off.sum");
  return m;
}

/// A counters-mode trace on an H100 (datasheet ceilings) with `launches`, their counters in the
/// list metrics(with_pipe, with_tensor_flop); the tensor math metric reads 2048 per launch.
fs::path write_trace(const fs::path& dir, const std::vector<Launch>& launches, bool with_pipe,
                     bool with_tensor_flop = false) {
  const fs::path path = dir / "t.rftrace";
  TraceBuilder t(path);
  t.process(4242, trace::CollectionMode::kCounters);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100", 3352320000ull);
  t.config(1, metrics(with_pipe, with_tensor_flop));
  uint32_t corr = 10;
  uint64_t at = 1000;
  for (const Launch& l : launches) {
    ++corr;
    t.launch(corr, 0, 100, at);
    t.kernel(corr, at * 10, at * 10 + l.ns, l.kernel);
    Counts c;
    c.ffma = l.ffma;
    c.read = 3e6;
    c.write = 1e6;
    std::vector<double> values = c.values();
    if (with_pipe) values.push_back(l.tensor_pipe);
    if (with_tensor_flop) values.push_back(2048);
    t.counters(1, corr, values);
    at += 1000;
  }
  t.finish();
  return path;
}

/// Five launches with tensor-pipe instructions (four kernels) and one without: 14,000 ns of GPU
/// time, 10,000 ns of it in the five.
const std::vector<Launch> kResnetLike = {
    {"sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_cudnn", 3000, 100, 1e6},
    {"relu_kernel", 4000, 50, 0},
    {"sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_cudnn", 3000, 100, 1e6},
    {"sm90_xmma_fprop_implicit_gemm_tf32f32_cudnn", 2500, 0, 4e5},
    {"sm90_xmma_dgrad_implicit_gemm_tf32f32_cudnn", 1000, 0, 2e5},
    {"hmma_small", 500, 0, 7},
};

/// An integer count as kernels.csv writes it ("1000000", "0").
std::string integer(double v) { return std::to_string(static_cast<long long>(v)); }

nlohmann::json summary_of(const fs::path& out) { return nlohmann::json::parse(testing::slurp(out / "summary.json")); }

/// The JSON inside <script id="rf-data">...</script> of report.html.
nlohmann::json page_data_of(const fs::path& out) {
  const std::string html = testing::slurp(out / "report.html");
  const std::string open = "<script type=\"application/json\" id=\"rf-data\">";
  const size_t b = html.find(open);
  if (b == std::string::npos) return nullptr;
  const size_t e = html.find("</script>", b);
  return nlohmann::json::parse(html.substr(b + open.size(), e - b - open.size()));
}

constexpr const char* kWarning = "ran tensor-core instructions that the collected metrics do not count as FLOP";

TEST(UncountedTensorWork, DefaultListWithTensorPipeInstructionsIsFlaggedWithExactNumbers) {
  TempDir dir;
  const auto run = testing::analyze({write_trace(dir.path, kResnetLike, true)}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = summary_of(dir.path / "out");
  ASSERT_TRUE(s.contains("uncounted_tensor_work")) << s.dump(1);
  const auto& u = s["uncounted_tensor_work"];
  ASSERT_TRUE(u.is_object()) << u;
  EXPECT_EQ(u["launches"], 5);
  EXPECT_EQ(u["gpu_time_ns"], 10000);
  EXPECT_DOUBLE_EQ(u["share_of_gpu_time"].get<double>(), 10000.0 / 14000.0);
  EXPECT_EQ(s["totals"]["duration_ns"], 14000);
  // The three with the most GPU time among them, most first; hmma_small (500 ns) is left out.
  EXPECT_EQ(u["kernels"], nlohmann::json::array({"sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_cudnn",
                                                 "sm90_xmma_fprop_implicit_gemm_tf32f32_cudnn",
                                                 "sm90_xmma_dgrad_implicit_gemm_tf32f32_cudnn"}));
  EXPECT_EQ(u["hint"], "collect the roofline-tensor set (rfprof --set roofline-tensor, "
                       "RFPROF_METRIC_SET=roofline-tensor) to count tensor-core FLOP");
  // One warning line on the error stream (the analyze() helper prints no summary: as -q).
  EXPECT_NE(run.err.find("rfanalyze: warning: 5 launches (71.4% of the GPU time) " + std::string(kWarning) +
                         " (e.g. sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_cudnn): their FLOP/s and "
                         "roofline points leave tensor-core work out; collect with rfprof --set roofline-tensor to "
                         "count it\n"),
            std::string::npos)
      << run.err;
  // report.html's data carries the same object.
  EXPECT_EQ(page_data_of(dir.path / "out")["uncounted_tensor_work"], u);
  // kernels.csv: tensor_pipe_inst is the last column; FLOP stay what was measured (2 per FFMA).
  const auto k = CsvTable::read(dir.path / "out" / "kernels.csv");
  ASSERT_FALSE(k.header.empty());
  EXPECT_EQ(k.header.back(), "tensor_pipe_inst");
  ASSERT_EQ(k.rows.size(), kResnetLike.size());
  for (size_t r = 0; r < k.rows.size(); ++r) {
    const Launch& l = kResnetLike[std::stoul(k.cell(r, "id")) - 11];
    EXPECT_EQ(k.cell(r, "tensor_pipe_inst"), integer(l.tensor_pipe)) << l.kernel;
    EXPECT_EQ(k.cell(r, "fp32_flop"), integer(2 * l.ffma)) << l.kernel;
    EXPECT_EQ(k.cell(r, "tensor_tf32_flop"), "") << l.kernel;
  }
  EXPECT_EQ(s["totals"]["fp32_flop"], 2 * (100 + 50 + 100));
}

TEST(UncountedTensorWork, TheWarningIsOnStderrWithTheSummaryToo) {
  TempDir dir;
  AnalyzeOptions opts;
  opts.traces = {write_trace(dir.path, kResnetLike, true)};
  opts.output_dir = dir.path / "out";
  std::ostringstream err, out;
  ASSERT_EQ(run_analysis(opts, err, &out), kExitOk) << err.str();
  EXPECT_NE(err.str().find(kWarning), std::string::npos) << err.str();
  EXPECT_EQ(out.str().find(kWarning), std::string::npos) << "printed once, on stderr: " << out.str();
}

TEST(UncountedTensorWork, TensorSetsCountTensorFlopAndAreNotFlagged) {
  TempDir dir;
  const auto run = testing::analyze({write_trace(dir.path, kResnetLike, true, /*with_tensor_flop=*/true)},
                                    dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = summary_of(dir.path / "out");
  ASSERT_TRUE(s.contains("uncounted_tensor_work")) << s.dump(1);
  EXPECT_TRUE(s["uncounted_tensor_work"].is_null()) << s["uncounted_tensor_work"];
  EXPECT_EQ(run.err.find(kWarning), std::string::npos) << run.err;
  EXPECT_TRUE(page_data_of(dir.path / "out")["uncounted_tensor_work"].is_null());
  const auto k = CsvTable::read(dir.path / "out" / "kernels.csv");
  const size_t r = k.find("id", "11");
  ASSERT_LT(r, k.rows.size());
  EXPECT_EQ(k.cell(r, "tensor_pipe_inst"), "1000000");
  EXPECT_EQ(k.cell(r, "tensor_tf32_flop"), "2048");
}

TEST(UncountedTensorWork, ListsWithoutTheMetricLeaveTheColumnEmptyAndTheKeyNull) {
  TempDir dir;  // a trace recorded before the default list had sm__inst_executed_pipe_tensor.sum
  const auto run = testing::analyze({write_trace(dir.path, kResnetLike, false)}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = summary_of(dir.path / "out");
  ASSERT_TRUE(s.contains("uncounted_tensor_work")) << s.dump(1);
  EXPECT_TRUE(s["uncounted_tensor_work"].is_null());
  EXPECT_EQ(run.err.find(kWarning), std::string::npos) << run.err;
  const auto k = CsvTable::read(dir.path / "out" / "kernels.csv");
  ASSERT_EQ(k.column("tensor_pipe_inst") + 1, k.header.size());
  ASSERT_EQ(k.rows.size(), kResnetLike.size());
  for (size_t r = 0; r < k.rows.size(); ++r) {
    EXPECT_EQ(k.rows[r].size(), k.header.size());
    EXPECT_EQ(k.cell(r, "tensor_pipe_inst"), "");
  }
}

TEST(UncountedTensorWork, NoTensorPipeInstructionsNoFlag) {
  TempDir dir;
  const auto run = testing::analyze(
      {write_trace(dir.path, {{"relu_kernel", 4000, 50, 0}, {"ffma_loop", 1000, 10, 0}}, true)}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = summary_of(dir.path / "out");
  ASSERT_TRUE(s.contains("uncounted_tensor_work")) << s.dump(1);
  EXPECT_TRUE(s["uncounted_tensor_work"].is_null());
  EXPECT_EQ(run.err.find(kWarning), std::string::npos) << run.err;
  const auto k = CsvTable::read(dir.path / "out" / "kernels.csv");
  EXPECT_EQ(k.cell(0, "tensor_pipe_inst"), "0");
}

TEST(UncountedTensorWork, LaunchMetricsFlagOnlyCountedPipeWorkWithoutTensorFlop) {
  auto eval = [](bool with_tensor_flop, double pipe) {
    std::vector<double> values(testing::roofline_metrics().size(), 0.0);
    values.push_back(pipe);
    if (with_tensor_flop) values.push_back(64);
    return MetricLayout(metrics(true, with_tensor_flop)).evaluate(values);
  };
  EXPECT_TRUE(eval(false, 1).uncounted_tensor_work());
  EXPECT_EQ(eval(false, 1).tensor_pipe_inst, 1.0);
  EXPECT_FALSE(eval(false, 0).uncounted_tensor_work());
  EXPECT_FALSE(eval(true, 1).uncounted_tensor_work());
  // NaN (not available) is absent, never a flag; the FLOP are the same with or without the metric.
  const LaunchMetrics nan = eval(false, std::numeric_limits<double>::quiet_NaN());
  EXPECT_FALSE(nan.tensor_pipe_inst);
  EXPECT_FALSE(nan.uncounted_tensor_work());
  EXPECT_EQ(eval(false, 5).total_flop(), 0.0);
  EXPECT_TRUE(MetricLayout(metrics(true, false)).uses(testing::roofline_metrics().size()));
}

TEST(UncountedTensorWork, WarningLineForOneLaunchWithoutAKnownShare) {
  const nlohmann::ordered_json entry = {{"launches", 1},
                                        {"gpu_time_ns", 0},
                                        {"share_of_gpu_time", nullptr},
                                        {"kernels", {"hmma\x1b[31m"}},
                                        {"hint", "x"}};
  EXPECT_EQ(uncounted_tensor_work_line(entry),
            "rfanalyze: warning: 1 launch " + std::string(kWarning) +
                " (e.g. hmma?[31m): their FLOP/s and roofline points leave tensor-core work out; collect with rfprof "
                "--set roofline-tensor to count it\n");
  EXPECT_EQ(uncounted_tensor_work_line(nullptr), "");
}

}  // namespace
}  // namespace rf::analyzer
