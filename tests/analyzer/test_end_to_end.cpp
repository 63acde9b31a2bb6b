// End to end: traces written with rf::trace::Writer, analyzed by run_analysis; checks the rows, sums,
// summary.json, above-roof errors, truncated and corrupt traces (the executable: test_rfanalyze_exe.cpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "training_traces.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/csv.h"
#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::analyze;
using testing::AnalysisRun;
using testing::Counts;
using testing::CsvTable;
using testing::lines_of;
using testing::TempDir;
using testing::TraceBuilder;
using trace::CollectionMode;
using trace::ErrorCode;
using testing::kAutograd;
using testing::kMain;
using testing::kNaN;
using testing::kReduce;
using testing::write_timing_trace;
using testing::write_training_trace;

TEST(EndToEnd, KernelRowsJoinCountersAndNvtx) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  auto k = lines_of(dir.path / "report" / "kernels.csv");
  ASSERT_EQ(k.size(), 6u);
  const CsvTable kt = CsvTable::read(dir.path / "report" / "kernels.csv");
  EXPECT_EQ(kt.header, kernels_csv_header());
  // Every row has every column.
  for (const auto& row : kt.rows) EXPECT_EQ(row.size(), kt.header.size());
  auto expect_row = [&](size_t row, const std::vector<std::pair<std::string, std::string>>& cells) {
    for (const auto& [col, value] : cells) EXPECT_EQ(kt.cell(row, col), value) << "row " << row << ", column " << col;
  };
  // ffma = 1000 -> 2000 FP32 FLOP; 1000 DRAM bytes -> AI 2; 2000 FLOP in 1000 ns -> 2e9 FLOP/s.
  expect_row(0, {{"id", "1101"}, {"pid", "4242"}, {"device", "0"}, {"stream", "7"},
                 {"kernel", "ffma_loop(float*, int)"}, {"grid", "1024,1,1"}, {"block", "256,1,1"},
                 {"duration_ns", "1000"}, {"fp64_flop", "0"}, {"fp32_flop", "2000"}, {"fp16_flop", "0"},
                 {"dram_read_bytes", "600"}, {"dram_write_bytes", "400"}, {"arithmetic_intensity", "2"},
                 {"flop_per_s", "2000000000"}, {"nvtx", "iteration/forward"}, {"phase", "forward"},
                 {"tensor_tf32_flop", ""}, {"l2_bytes", ""}, {"l2_arithmetic_intensity", ""}});
  // FP64 2*10, FP32 100 + 2*500, FP16 4*5 (half2 weights); autograd thread -> main's backward.
  const double total = 20 + 1100 + kFp16Weights.fma * 5;
  expect_row(1, {{"id", "102"}, {"kernel", kReduce}, {"duration_ns", "2000"}, {"fp64_flop", "20"},
                 {"fp32_flop", "1100"}, {"fp16_flop", format_number(kFp16Weights.fma * 5)},
                 {"dram_read_bytes", "1000"}, {"dram_write_bytes", "100"},
                 {"arithmetic_intensity", format_number(total / 1100)},
                 {"flop_per_s", format_number(total / 2e-6)}, {"nvtx", "iteration/backward"},
                 {"phase", "backward"}});
  EXPECT_EQ(kt.cell(kt.find("id", "103"), "phase"), "optimizer");
  // Unavailable metrics leave their columns and everything derived from them empty.
  ASSERT_EQ(kt.rows[3].size(), kt.header.size());
  for (size_t c = 0; c < kt.header.size(); ++c) {
    const std::string& col = kt.header[c];
    const std::string want = col == "id" ? "104" : col == "pid" ? "4242" : col == "device" ? "0"
                           : col == "stream" ? "7" : col == "kernel" ? "ffma_loop(float*, int)"
                           : col == "grid" ? "1024,1,1" : col == "block" ? "256,1,1"
                           : col == "duration_ns" ? "500" : col == "dram_read_bytes" ? "64"
                           : col == "phase" ? "other" : "";
    EXPECT_EQ(kt.rows[3][c], want) << "launch 104, column " << col;
  }
  expect_row(4, {{"id", "999"}, {"kernel", "orphan()"}, {"duration_ns", "300"}, {"fp32_flop", ""},
                 {"dram_read_bytes", ""}, {"nvtx", ""}, {"phase", "other"}});

  auto counters = lines_of(dir.path / "report" / "counters.csv");
  EXPECT_EQ(counters[0], "id,kernel,metric,value,pid,window");  // pid and window after the first four
  EXPECT_EQ(counters.size(), 1u + 4 * 12);  // 4 launches with counters, 12 metrics each
  EXPECT_NE(std::find(counters.begin(), counters.end(),
                      "1101,\"ffma_loop(float*, int)\",smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,1000,4242,0"),
            counters.end());
  EXPECT_NE(std::find(counters.begin(), counters.end(),
                      "103,\"ffma_loop(float*, int)\",smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,1000000000,4242,0"),
            counters.end());
  EXPECT_NE(std::find(counters.begin(), counters.end(),
                      "104,\"ffma_loop(float*, int)\",smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,,4242,0"),
            counters.end());
}

// Phases across threads: a start/end range is open on every thread (an "optimizer" range
// started on the main thread holds the launches of another thread inside its own push/pop
// range), and a launch whose own path names no phase takes the phase of what other threads hold
// around it (a custom autograd Function's range on the autograd thread, inside "backward").
TEST(EndToEnd, PhasesOfLaunchesOnOtherThreads) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, CollectionMode::kTiming);
    t.push(1, kMain, 1000, "backward");
    t.push(2, kAutograd, 2000, "attention");
    t.launch(11, 0, kAutograd, 2500);  // its own "attention", inside main's "backward"
    t.pop(2, kAutograd, 3000);
    t.launch(12, 0, kAutograd, 3500);  // no range of its own: main's "backward"
    t.pop(1, kMain, 5000);
    t.push(3, kMain, 6000, "Optimizer.step#Adam.step", trace::NvtxRangeStyle::kStartEnd);
    t.push(4, kAutograd, 6100, "aten::add_");
    t.launch(13, 0, kAutograd, 6200);  // inside the process range and its own push/pop range
    t.pop(4, kAutograd, 6300);
    t.pop(3, kAutograd, 7000, trace::NvtxRangeStyle::kStartEnd);  // ended on another thread
    for (uint32_t id : {11u, 12u, 13u}) t.kernel(id, id * 1000, id * 1000 + 500);
    t.finish();
  }
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const CsvTable kt = CsvTable::read(dir.path / "report" / "kernels.csv");
  ASSERT_EQ(kt.rows.size(), 3u);
  EXPECT_EQ(kt.cell(kt.find("id", "11"), "nvtx"), "attention");
  EXPECT_EQ(kt.cell(kt.find("id", "11"), "phase"), "backward");  // was other
  EXPECT_EQ(kt.cell(kt.find("id", "12"), "nvtx"), "backward");
  EXPECT_EQ(kt.cell(kt.find("id", "12"), "phase"), "backward");
  EXPECT_EQ(kt.cell(kt.find("id", "13"), "nvtx"), "Optimizer.step#Adam.step/aten::add_");  // was aten::add_
  EXPECT_EQ(kt.cell(kt.find("id", "13"), "phase"), "optimizer");
}

// The fallback applies only where no phase rule matched: a --phase-map rule whose phase is
// "other" decides (it was replaced by the main thread's phase). And a path's memory peak counts
// for the path's own phase, not for the phase a launch in it took from other threads (forward
// showed the 1 GiB allocated only in backward, through a side thread's "prefetch").
TEST(EndToEnd, PhaseFallbackLeavesMatchedRulesAndMemoryPeaksAlone) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, CollectionMode::kTiming);
    t.memory(true, 900, 0x1000, 1 << 20);  // 1 MiB in use throughout
    t.push(1, kMain, 1000, "forward");
    t.launch(13, 0, kMain, 1200);
    t.push(2, kAutograd, 1500, "prefetch");
    t.launch(11, 0, kAutograd, 1550);
    t.pop(2, kAutograd, 1600);
    t.pop(1, kMain, 2000);
    t.push(3, kMain, 3000, "backward");
    t.launch(14, 0, kMain, 3200);
    t.push(4, kAutograd, 3500, "prefetch");
    t.memory(true, 3520, 0x100000000, 1ull << 30);
    t.launch(12, 0, kAutograd, 3550);
    t.memory(false, 3580, 0x100000000, 1ull << 30);
    t.pop(4, kAutograd, 3600);
    t.pop(3, kMain, 4000);
    for (uint32_t id : {11u, 12u, 13u, 14u}) t.kernel(id, id * 1000, id * 1000 + 500);
    t.finish();
  }
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  CsvTable kt = CsvTable::read(dir.path / "report" / "kernels.csv");
  EXPECT_EQ(kt.cell(kt.find("id", "11"), "phase"), "forward");
  EXPECT_EQ(kt.cell(kt.find("id", "12"), "phase"), "backward");
  const CsvTable phases = CsvTable::read(dir.path / "report" / "phases.csv");
  EXPECT_EQ(phases.cell(phases.find("phase", "forward"), "peak_memory_bytes"), std::to_string(1 << 20));
  EXPECT_EQ(phases.cell(phases.find("phase", "backward"), "peak_memory_bytes"), std::to_string((1ull << 30) + (1 << 20)));

  std::ofstream(dir.path / "map.json") << R"([{"regex": "prefetch", "phase": "other"},
    {"regex": "forward", "phase": "forward"}, {"regex": "backward", "phase": "backward"}])";
  AnalyzeOptions o;
  o.phase_map = dir.path / "map.json";
  r = analyze({dir.path / "t.rftrace"}, dir.path / "mapped", o);
  ASSERT_EQ(r.status, kExitOk) << r.err;
  kt = CsvTable::read(dir.path / "mapped" / "kernels.csv");
  EXPECT_EQ(kt.cell(kt.find("id", "11"), "phase"), "other");
  EXPECT_EQ(kt.cell(kt.find("id", "12"), "phase"), "other");
}

// Counters mode on an H100: the replayed kernel's activity record has no timestamps, so its
// duration (and FLOP/s) comes from gpu__time_duration.sum; a kernel with timestamps keeps them.
// Each kernels.csv row says where its launch sits under its device's roofline (roof.h).
TEST(EndToEnd, KernelRowsSayWhichRoofBoundsThem) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");  // one "NVIDIA H100 80GB HBM3" device
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "report" / "summary.json"));
  const double dram = s["devices"][0]["ceilings"]["dram_bytes_per_s"]["value"].get<double>();
  const double fp32 = s["devices"][0]["ceilings"]["fp32_flop_per_s"]["value"].get<double>();
  ASSERT_GT(dram, 0.0);
  ASSERT_GT(fp32 / dram, 2.0);  // the ridge point lies right of row 0's intensity
  const CsvTable kt = CsvTable::read(dir.path / "report" / "kernels.csv");
  // Row 0: 2000 FP32 FLOP over 1000 DRAM bytes (AI 2) in 1000 ns: memory-bound, its roof is
  // 2 x the DRAM bandwidth, and it reaches 2e9 FLOP/s of it.
  EXPECT_EQ(kt.cell(0, "bound"), "memory");
  EXPECT_NEAR(std::stod(kt.cell(0, "attainable_flop_per_s")), 2 * dram, 2 * dram * 1e-6);
  EXPECT_NEAR(std::stod(kt.cell(0, "roof_fraction")), 2e9 / (2 * dram), 1e-9);
  // Every FP32-only row with an intensity: memory-bound left of the FP32 ridge, compute-bound
  // right of it, with a fraction when it also has a rate.
  size_t checked = 0;
  for (size_t i = 0; i < kt.rows.size(); ++i) {
    if (kt.cell(i, "arithmetic_intensity").empty() || kt.cell(i, "fp64_flop") != "0" ||
        kt.cell(i, "fp16_flop") != "0")
      continue;
    const double ai = std::stod(kt.cell(i, "arithmetic_intensity"));
    if (ai <= 0.0) continue;
    EXPECT_EQ(kt.cell(i, "bound"), ai * dram < fp32 ? "memory" : "compute") << "row " << i;
    if (!kt.cell(i, "flop_per_s").empty()) {
      EXPECT_FALSE(kt.cell(i, "roof_fraction").empty()) << "row " << i;
    }
    ++checked;
  }
  EXPECT_GE(checked, 1u);
  // summary.json totals.by_bound: the same launches and GPU time as the rows, by their bound.
  std::map<std::string, std::pair<uint64_t, uint64_t>> rows_by_bound;  // launches, duration_ns
  for (size_t i = 0; i < kt.rows.size(); ++i) {
    auto& share = rows_by_bound[kt.cell(i, "bound").empty() ? "unknown" : kt.cell(i, "bound")];
    ++share.first;
    if (!kt.cell(i, "duration_ns").empty()) share.second += std::stoull(kt.cell(i, "duration_ns"));
  }
  const auto& by_bound = s["totals"]["by_bound"];
  for (const char* b : {"memory", "compute", "unknown"}) {
    EXPECT_EQ(by_bound[b]["launches"].get<uint64_t>(), rows_by_bound[b].first) << b;
    EXPECT_EQ(by_bound[b]["duration_ns"].get<uint64_t>(), rows_by_bound[b].second) << b;
  }
  EXPECT_GE(by_bound["memory"]["launches"].get<uint64_t>(), 1u);
  // phases.csv: each phase's GPU time by bound, as its kernels.csv rows give it.
  std::map<std::string, std::pair<uint64_t, uint64_t>> phase_time;  // memory, compute (ns)
  for (size_t i = 0; i < kt.rows.size(); ++i) {
    if (kt.cell(i, "duration_ns").empty()) continue;
    const uint64_t ns = std::stoull(kt.cell(i, "duration_ns"));
    if (kt.cell(i, "bound") == "memory") phase_time[kt.cell(i, "phase")].first += ns;
    if (kt.cell(i, "bound") == "compute") phase_time[kt.cell(i, "phase")].second += ns;
  }
  const CsvTable phases = CsvTable::read(dir.path / "report" / "phases.csv");
  ASSERT_FALSE(phases.rows.empty());
  uint64_t memory_ns = 0;
  for (size_t i = 0; i < phases.rows.size(); ++i) {
    const auto& expected = phase_time[phases.cell(i, "phase")];
    EXPECT_EQ(phases.cell(i, "memory_bound_ns"), std::to_string(expected.first)) << phases.cell(i, "phase");
    EXPECT_EQ(phases.cell(i, "compute_bound_ns"), std::to_string(expected.second)) << phases.cell(i, "phase");
    memory_ns += expected.first;
  }
  EXPECT_EQ(memory_ns, by_bound["memory"]["duration_ns"].get<uint64_t>());
}

TEST(EndToEnd, CountersModeDurationFallsBackToGpuTimeDuration) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, CollectionMode::kCounters);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.config(1, testing::roofline_metrics());
    Counts c;
    c.ffma = 1000;
    c.read = 500;
    c.gpu_time = 4000;
    t.counters(1, 11, c.values());
    t.counters(1, 12, c.values());
    t.launch(11, 0, kMain, 100);
    t.launch(12, 0, kMain, 200);
    t.kernel(11, 0, 0);
    t.kernel(12, 1000, 3000);
    t.finish();
  }
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const CsvTable kt = CsvTable::read(dir.path / "report" / "kernels.csv");
  ASSERT_EQ(kt.rows.size(), 2u);
  EXPECT_EQ(kt.cell(0, "id"), "11");
  EXPECT_EQ(kt.cell(0, "duration_ns"), "4000");
  EXPECT_EQ(kt.cell(0, "flop_per_s"), "500000000");  // 2000 FLOP in 4000 ns
  EXPECT_EQ(kt.cell(1, "duration_ns"), "2000");
}

TEST(EndToEnd, RangesPhasesAndSummary) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;

  const CsvTable ranges = CsvTable::read(dir.path / "report" / "ranges.csv");
  ASSERT_EQ(ranges.rows.size(), 4u);
  EXPECT_EQ(ranges.header, range_csv_header("nvtx"));
  auto expect_cells = [](const CsvTable& t, size_t row, const std::vector<std::pair<std::string, std::string>>& cells) {
    ASSERT_LT(row, t.rows.size());
    EXPECT_EQ(t.rows[row].size(), t.header.size());
    for (const auto& [col, value] : cells) EXPECT_EQ(t.cell(row, col), value) << "row " << row << ", column " << col;
  };
  // Launches 104 and 999 are outside every range: 500 + 300 ns, only 104's read bytes known.
  const std::vector<std::pair<std::string, std::string>> outside = {
      {"launches", "2"}, {"duration_ns", "800"}, {"fp64_flop", ""}, {"fp32_flop", ""}, {"fp16_flop", ""},
      {"dram_read_bytes", "64"}, {"dram_write_bytes", ""}, {"arithmetic_intensity", ""}, {"flop_per_s", ""}};
  const std::vector<std::pair<std::string, std::string>> forward = {
      {"launches", "1"}, {"duration_ns", "1000"}, {"fp64_flop", "0"}, {"fp32_flop", "2000"},
      {"fp16_flop", "0"}, {"dram_read_bytes", "600"}, {"dram_write_bytes", "400"},
      {"arithmetic_intensity", "2"}, {"flop_per_s", "2000000000"}, {"tensor_fp16_flop", ""}, {"l1_bytes", ""}};
  expect_cells(ranges, 0, outside);
  EXPECT_EQ(ranges.cell(0, "nvtx"), "");
  expect_cells(ranges, ranges.find("nvtx", "iteration/forward"), forward);
  const CsvTable phases = CsvTable::read(dir.path / "report" / "phases.csv");
  ASSERT_EQ(phases.rows.size(), 4u);
  EXPECT_EQ(phases.header, range_csv_header("phase"));
  EXPECT_EQ(phases.cell(0, "phase"), "backward");
  EXPECT_EQ(phases.cell(0, "launches"), "1");
  expect_cells(phases, phases.find("phase", "forward"), forward);
  expect_cells(phases, phases.find("phase", "other"), outside);

  // roofline.svg: one chart (one device), a point per kernel group (kernel x phase) that has AI and
  // FLOP/s; each group of this trace holds one launch, so points = drawable kernels.csv rows.
  const std::string svg = testing::slurp(dir.path / "report" / "roofline.svg");
  EXPECT_NE(svg.find("device 0: NVIDIA H100 80GB HBM3"), std::string::npos);
  size_t points = 0;
  for (size_t p = svg.find("class=\"point\""); p != std::string::npos; p = svg.find("class=\"point\"", p + 1)) ++points;
  const CsvTable kernels = CsvTable::read(dir.path / "report" / "kernels.csv");
  size_t drawable = 0;
  for (size_t row = 0; row < kernels.rows.size(); ++row)
    drawable += !kernels.cell(row, "arithmetic_intensity").empty() && !kernels.cell(row, "flop_per_s").empty();
  EXPECT_EQ(points, drawable);  // one launch per kernel group in this trace
  EXPECT_GE(points, 2u);

  std::ifstream in(dir.path / "report" / "summary.json");
  nlohmann::json s = nlohmann::json::parse(in);
  ASSERT_EQ(s["traces"].size(), 1u);
  EXPECT_EQ(s["traces"][0]["pid"], 4242);
  EXPECT_EQ(s["traces"][0]["truncated"], false);
  EXPECT_TRUE(s["traces"][0]["truncated_at_byte"].is_null());
  EXPECT_EQ(s["traces"][0]["mode"], "counters");
  EXPECT_EQ(s["traces"][0]["launches"], 5);
  EXPECT_EQ(s["traces"][0]["join"]["rows_without_launch"], 1);
  ASSERT_EQ(s["devices"].size(), 1u);
  EXPECT_EQ(s["devices"][0]["sm_count"], 132);
  EXPECT_EQ(s["devices"][0]["memory_clock_khz"], 2619000);
  EXPECT_EQ(s["devices"][0]["memory_bus_width_bits"], 5120);
  EXPECT_EQ(s["devices"][0]["ceilings"]["datasheet_entry"], "H100 SXM5");
  EXPECT_EQ(s["devices"][0]["ceilings"]["fp32_flop_per_s"]["source"].get<std::string>().rfind(
                "datasheet: H100 SXM5 (", 0),
            0u);
  EXPECT_EQ(s["totals"]["launches"], 5);
  EXPECT_EQ(s["totals"]["launches_with_counters"], 3);  // 101-103; 104 has a NaN term, 999 no counters
  EXPECT_EQ(s["totals"]["tensor"], nlohmann::json::object());  // no tensor metric in the trace
  EXPECT_TRUE(s["devices"][0]["ceilings"]["user_entry"].is_null());  // no --ceilings file
  EXPECT_EQ(s["totals"]["fp32_flop"], 2000 + 1100 + 2e9);
  EXPECT_EQ(s["totals"]["duration_ns"], 1000 + 2000 + 10 + 500 + 300);
  EXPECT_EQ(s["collector_error_count"], 3);
  ASSERT_EQ(s["collector_errors"].size(), 2u);
  EXPECT_EQ(s["collector_errors"][0]["code_name"], "range_launch_mismatch");
  EXPECT_EQ(s["collector_errors"][0]["count"], 2);
  EXPECT_EQ(s["collector_errors"][0]["message"], "2 ranges for 3 launches");
  EXPECT_EQ(s["collector_errors"][1]["count"], 1);
}

TEST(EndToEnd, PointAboveTheRoofIsAnError) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_NE(r.err.find("1 kernel launch(es) lie above their roof"), std::string::npos) << r.err;
  std::ifstream in(dir.path / "report" / "summary.json");
  nlohmann::json s = nlohmann::json::parse(in);
  EXPECT_EQ(s["above_roof_count"], 1);
  ASSERT_EQ(s["above_roof"].size(), 1u);
  const auto& a = s["above_roof"][0];
  EXPECT_EQ(a["id"], 103);
  EXPECT_EQ(a["severity"], "error");
  EXPECT_DOUBLE_EQ(a["flop_per_s"].get<double>(), 2e9 / 10e-9);
  EXPECT_LT(a["attainable_flop_per_s"].get<double>(), a["flop_per_s"].get<double>());
  EXPECT_NE(r.err.find("error; see above_roof in " + (dir.path / "report" / "summary.json").string() + "\n"),
            std::string::npos)
      << r.err;
  // With summary.json skipped (--skip), the warning does not send the user to a file not written.
  AnalyzeOptions no_summary;
  no_summary.skip = {"summary.json"};
  AnalysisRun skipped = analyze({dir.path / "t.rftrace"}, dir.path / "report3", no_summary);
  ASSERT_EQ(skipped.status, kExitOk) << skipped.err;
  EXPECT_NE(skipped.err.find("1 kernel launch(es) lie above their roof (attainable = min(peak FLOP/s, AI * DRAM "
                             "bandwidth)): a measurement or formula error (listed in summary.json, which this run "
                             "skipped)\n"),
            std::string::npos)
      << skipped.err;

  // The same trace against a user ceiling high enough: nothing above the roof.
  auto ceil = dir.path / "ceilings.json";
  std::ofstream(ceil) << R"({"devices": [{"name": "fantasy", "patterns": ["H100"],
      "fp64_flop_per_s": 1e20, "fp32_flop_per_s": 1e20, "fp16_flop_per_s": 1e20, "dram_bytes_per_s": 1e20}]})";
  AnalyzeOptions o;
  o.ceilings = ceil;
  AnalysisRun r2 = analyze({dir.path / "t.rftrace"}, dir.path / "report2", o);
  ASSERT_EQ(r2.status, kExitOk) << r2.err;
  EXPECT_EQ(r2.err.find("above their roof"), std::string::npos) << r2.err;
  std::ifstream in2(dir.path / "report2" / "summary.json");
  nlohmann::json s2 = nlohmann::json::parse(in2);
  EXPECT_EQ(s2["above_roof_count"], 0);
  EXPECT_EQ(s2["devices"][0]["ceilings"]["fp32_flop_per_s"]["source"], "user file: " + ceil.string());
}

TEST(EndToEnd, MeasuredCeilingsOutsideTheirBandAreReported) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");  // one "NVIDIA H100 80GB HBM3" device
  std::ofstream(dir.path / "m.json") << R"json({"devices": [{"name": "H100 (measured)", "measured": true,
      "patterns": ["H100 80GB HBM3"], "dram_bytes_per_s": 3.2e12, "fp32_flop_per_s": 70e12,
      "citation": "measured by rfbench"}]})json";
  AnalyzeOptions o;
  o.ceilings = dir.path / "m.json";
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report", o);
  ASSERT_EQ(r.status, kExitOk) << r.err;
  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "report" / "summary.json"));
  const auto& c = s["devices"][0]["ceilings"];
  EXPECT_EQ(c["user_entry"], "H100 (measured)");
  EXPECT_EQ(c["dram_bytes_per_s"]["value"], 3.2e12);
  EXPECT_EQ(c["dram_bytes_per_s"]["datasheet_value"], 3.35e12);
  EXPECT_EQ(c["fp64_flop_per_s"]["source"].get<std::string>().rfind("datasheet: H100 SXM5", 0), 0u);
  EXPECT_EQ(c["tensor_fp16_flop_per_s"]["value"], 989.4e12);
  // 3.2 / 3.35 = 96 % is within 80-100 %; 70 / 67 = 104 % is not.
  ASSERT_EQ(s["ceiling_checks"].size(), 1u);
  EXPECT_EQ(s["ceiling_checks"][0]["ceiling"], "fp32_flop_per_s");
  EXPECT_DOUBLE_EQ(s["ceiling_checks"][0]["ratio_to_datasheet"].get<double>(), 70.0 / 67.0);
  EXPECT_EQ(s["ceiling_checks"][0]["message"],
            "fp32_flop_per_s measured at 104 % of the datasheet value (expected 80-100 %)");
}

TEST(EndToEnd, ForcedDeviceCoversTracesWithoutDeviceRecords) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(5, CollectionMode::kCounters);  // no DeviceInfo record
    t.config(1, testing::roofline_metrics());
    Counts c;
    c.ffma = 1e9;  // 2e9 FLOP in 10 ns
    c.read = 1;
    c.write = 1;
    t.launch(1, 0, 9, 100);
    t.kernel(1, 1000, 1010);
    t.counters(1, 1, c.values());
    t.finish();
  }
  AnalysisRun plain = analyze({dir.path / "t.rftrace"}, dir.path / "r1");
  ASSERT_EQ(plain.status, kExitOk) << plain.err;
  nlohmann::json s1 = nlohmann::json::parse(std::ifstream(dir.path / "r1" / "summary.json"));
  EXPECT_EQ(s1["above_roof_count"], 0);
  EXPECT_EQ(s1["totals"]["launches_without_ceilings"], 1);

  AnalyzeOptions o;
  o.device = "H100 SXM5";
  AnalysisRun forced = analyze({dir.path / "t.rftrace"}, dir.path / "r2", o);
  ASSERT_EQ(forced.status, kExitOk) << forced.err;
  nlohmann::json s2 = nlohmann::json::parse(std::ifstream(dir.path / "r2" / "summary.json"));
  EXPECT_EQ(s2["above_roof_count"], 1);
  EXPECT_EQ(s2["totals"]["launches_without_ceilings"], 0);
}

TEST(EndToEnd, TruncatedTraceIsAnalyzedAsFarAsReadable) {
  TempDir dir;
  write_timing_trace(dir.path / "full.rftrace", 200, 512);
  std::string bytes = testing::slurp(dir.path / "full.rftrace");
  const fs::path cut = dir.path / "cut.rftrace";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);

  AnalysisRun r = analyze({cut}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  EXPECT_NE(r.err.find("rfanalyze: " + cut.string() + " is truncated at byte "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; analyzing the complete part"), std::string::npos) << r.err;
  auto k = lines_of(dir.path / "report" / "kernels.csv");
  EXPECT_GT(k.size(), 10u);
  EXPECT_LT(k.size(), 201u);
  const CsvTable kt = CsvTable::read(dir.path / "report" / "kernels.csv");
  for (size_t c = 0; c < kt.header.size(); ++c) {
    const std::string& col = kt.header[c];
    const std::string want = col == "id" ? "10" : col == "pid" ? "777" : col == "device" ? "0"
                           : col == "stream" ? "7" : col == "kernel" ? "ffma_loop(float*, int)"
                           : col == "grid" ? "1024,1,1" : col == "block" ? "256,1,1"
                           : col == "duration_ns" ? "50" : col == "nvtx" || col == "phase" ? "forward" : "";
    EXPECT_EQ(kt.cell(0, col), want) << "column " << col;
  }
  std::ifstream in(dir.path / "report" / "summary.json");
  nlohmann::json s = nlohmann::json::parse(in);
  EXPECT_EQ(s["traces"][0]["truncated"], true);
  const auto at = s["traces"][0]["truncated_at_byte"].get<uint64_t>();
  EXPECT_LE(at, bytes.size() / 2);
  EXPECT_GT(at, bytes.size() / 4);  // the end of the last whole chunk (of 512 bytes) before the cut
  EXPECT_NE(r.err.find("truncated at byte " + std::to_string(at) + ";"), std::string::npos);
  // How far in time the readable part reaches: launch i's kernel ends at 1070 + 100 i ns; the
  // last row may be a launch whose kernel record was cut off (its call ended at 1013 + 100 i).
  const auto rows = static_cast<uint64_t>(k.size() - 1);
  const auto last = s["traces"][0]["last_event_ns"].get<uint64_t>();
  EXPECT_GE(last, 1070 + 100 * (rows - 2));
  EXPECT_LT(last, 1070 + 100 * rows);
  EXPECT_EQ(s["traces"][0]["start_ns"], 0);  // TraceBuilder's ProcessInfo

  // Cut inside its first chunk (killed before the first flush): nothing was recorded, which is an
  // error, not an empty report presented as success.
  const fs::path header_only = dir.path / "header_only.rftrace";
  std::ofstream(header_only, std::ios::binary) << bytes.substr(0, 40);
  AnalysisRun empty = analyze({header_only}, dir.path / "report2");
  EXPECT_EQ(empty.status, kExitBadInput);
  EXPECT_NE(empty.err.find("before its first record"), std::string::npos) << empty.err;
  EXPECT_FALSE(fs::exists(dir.path / "report2" / "kernels.csv"));
}

// A counters trace cut before any kernel record or gpu__time_duration value (a killed run):
// no launch has a duration, and the totals say so with null, not 0 ns.
TEST(EndToEnd, NoTimedLaunchGivesNullDurationNotZero) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    t.launch(101, 0, 100, 200);
    std::vector<double> v = Counts{}.values();
    v.back() = kNaN;  // gpu__time_duration.sum not available
    t.counters(1, 101, v);
    t.finish();
  }
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  std::ifstream in(dir.path / "report" / "summary.json");
  nlohmann::json s = nlohmann::json::parse(in);
  EXPECT_EQ(s["totals"]["launches"], 1);
  EXPECT_TRUE(s["totals"]["duration_ns"].is_null()) << s["totals"]["duration_ns"];
  EXPECT_EQ(CsvTable::read(dir.path / "report" / "phases.csv").cell(0, "duration_ns"), "");
}

TEST(EndToEnd, SummarySaysWhenTheTraceStartsAndItsLastEvent) {
  TempDir dir;
  write_timing_trace(dir.path / "t.rftrace", 5);  // the last kernel ends at 1000 + 4 * 100 + 70 ns
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "report" / "summary.json"));
  EXPECT_EQ(s["traces"][0]["start_ns"], 0);
  EXPECT_EQ(s["traces"][0]["last_event_ns"], 1470);
}

TEST(EndToEnd, CorruptOrMissingTraceFailsWithoutOutputs) {
  TempDir dir;
  write_timing_trace(dir.path / "good.rftrace", 5);
  std::string bytes = testing::slurp(dir.path / "good.rftrace");
  bytes.replace(16, 4, "XXXX");  // the first chunk's magic
  const fs::path bad = dir.path / "bad.rftrace";
  std::ofstream(bad, std::ios::binary) << bytes;

  AnalysisRun r = analyze({dir.path / "good.rftrace", bad}, dir.path / "report");
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_NE(r.err.find("rfanalyze: " + bad.string() + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(" at byte 16"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::is_empty(dir.path / "report"));  // no partial outputs left behind

  AnalysisRun m = analyze({dir.path / "missing.rftrace"}, dir.path / "report");
  EXPECT_EQ(m.status, kExitBadInput);
  EXPECT_NE(m.err.find("missing.rftrace: no such file"), std::string::npos) << m.err;
}

TEST(EndToEnd, SeveralTracesAndCustomPhases) {
  TempDir dir;
  write_training_trace(dir.path / "a.rftrace");
  write_timing_trace(dir.path / "b.rftrace", 3);
  auto map = dir.path / "phases.json";
  std::ofstream(map) << R"([{"regex": "^iteration$", "phase": "step"}])";
  AnalyzeOptions o;
  o.phase_map = map;
  AnalysisRun r = analyze({dir.path / "a.rftrace", dir.path / "b.rftrace"}, dir.path / "report", o);
  ASSERT_EQ(r.status, kExitOk) << r.err;
  const CsvTable k = CsvTable::read(dir.path / "report" / "kernels.csv");
  ASSERT_EQ(k.rows.size(), 5u + 3);
  EXPECT_EQ(k.cell(0, "phase"), "step");  // iteration/forward -> step
  EXPECT_EQ(k.cell(5, "id"), "10");
  EXPECT_EQ(k.cell(5, "pid"), "777");
  EXPECT_EQ(k.cell(5, "phase"), "other");  // forward no longer maps
  std::ifstream in(dir.path / "report" / "summary.json");
  nlohmann::json s = nlohmann::json::parse(in);
  ASSERT_EQ(s["traces"].size(), 2u);
  EXPECT_EQ(s["traces"][1]["mode"], "timing");
  ASSERT_EQ(s["devices"].size(), 2u);
  EXPECT_EQ(s["devices"][1]["ceilings"]["datasheet_entry"], "A100 SXM4 80GB");
}


#ifdef RFPROF_PYTHON
TEST(EndToEnd, PandasReadsTheCsvFiles) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");
  AnalysisRun r = analyze({dir.path / "t.rftrace"}, dir.path / "report");
  ASSERT_EQ(r.status, kExitOk) << r.err;
  std::string cmd = std::string(RFPROF_PYTHON) + " " + RFPROF_PANDAS_CHECK + " " + (dir.path / "report").string();
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}
#endif

}  // namespace
}  // namespace rf::analyzer
