// summary.json (analyzer/src/summary.cpp) on one constructed trace that has every term the other
// end-to-end traces leave out: tensor FLOP dense and sparse, L2 and L1 bytes, a graph launch with
// counters, a kernel ending before it starts, records the collector dropped, a cut-short finish,
// kernels above a datasheet and a measured ceiling, and a measured ceiling below 80 % of its datasheet.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/ceilings.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::TraceBuilder;
using trace::CollectionMode;
using trace::ErrorCode;

constexpr uint64_t kThread = 100;

/// Index of each extra metric after roofline_metrics()'s 12.
const std::vector<std::string> kExtra = {"sm__ops_path_tensor_src_fp16_sparsity_off.sum",
                                         "sm__ops_path_tensor_src_fp16_sparsity_on.sum", "lts__t_bytes.sum",
                                         "l1tex__t_bytes.sum"};

/// roofline_metrics() values (ffma, DRAM read and write, the rest 0) then kExtra's.
std::vector<double> values(double ffma, double read, double write, std::vector<double> extra) {
  testing::Counts c;
  c.ffma = ffma;
  c.read = read;
  c.write = write;
  std::vector<double> v = c.values();
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

/// The trace described at the top, on an "NVIDIA H100 80GB HBM3" (datasheet entry H100 SXM5).
void write_trace(const fs::path& path) {
  TraceBuilder t(path);
  t.process(31, CollectionMode::kCounters);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
  std::vector<std::string> metrics = testing::roofline_metrics();
  metrics.insert(metrics.end(), kExtra.begin(), kExtra.end());
  t.config(1, metrics);
  // 1: FP16 tensor 1000 dense + 300 sparse FLOP, 4000 L2 and 16000 L1 bytes, 100 DRAM bytes, 1 us.
  t.launch(1, 0, kThread, 1000);
  t.kernel(1, 2000, 3000);
  t.counters(1, 1, values(0, 60, 40, {1000, 300, 4000, 16000}));
  // 2: no FLOP, 1.7e6 DRAM bytes in 1 us = 1.7e12 bytes/s: above a measured 1.6e12 by 6 %.
  t.launch(2, 0, kThread, 4000);
  t.kernel(2, 5000, 6000);
  t.counters(1, 2, values(0, 1.7e6, 0, {0, 0, 0, 0}));
  // 3: 2e9 FP32 FLOP and 1e6 DRAM bytes in 10 ns: above the datasheet FP32 and the measured DRAM.
  t.launch(3, 0, kThread, 7000);
  t.kernel(3, 8000, 8010);
  t.counters(1, 3, values(1e9, 5e5, 5e5, {0, 0, 0, 0}));
  // 4: a graph launch with counters (a graph has no per-kernel counters: dropped and counted).
  t.launch(4, 0, kThread, 9000, 0, /*graph=*/true);
  t.counters(1, 4, values(1, 1, 1, {0, 0, 0, 0}));
  // 5: a kernel that ends before it starts.
  t.launch(5, 0, kThread, 10000);
  t.kernel(5, 12000, 11000);
  t.error(ErrorCode::kFinishCutShort, "finish cut short after 1000 ms");
  t.writer().finish(20000, /*dropped_records=*/5);
}

/// A measured (rfbench) entry for the device: DRAM 1.6e12 bytes/s, 48 % of the datasheet's 3.35e12.
void write_measured_ceilings(const fs::path& path) {
  std::ofstream(path) << R"json({"devices": [{"name": "H100 (measured)", "measured": true,
      "patterns": ["H100 80GB HBM3"], "dram_bytes_per_s": 1.6e12, "citation": "measured by rfbench"}]})json";
}

class SummaryJson : public ::testing::Test {
 protected:
  void SetUp() override {
    write_trace(dir_.path / "t.rftrace");
    write_measured_ceilings(dir_.path / "m.json");
    AnalyzeOptions o;
    o.ceilings = dir_.path / "m.json";
    const testing::AnalysisRun run = testing::analyze({dir_.path / "t.rftrace"}, dir_.path / "report", o);
    ASSERT_EQ(run.status, kExitOk) << run.err;
    err_ = run.err;
    s_ = nlohmann::json::parse(std::ifstream(dir_.path / "report" / "summary.json"));
  }
  /// The above_roof entry of launch `id`; fails the test and returns null when none.
  nlohmann::json above(uint64_t id) const {
    for (const auto& a : s_["above_roof"])
      if (a["id"] == id) return a;
    ADD_FAILURE() << "no above_roof entry for launch " << id << " in " << s_["above_roof"];
    return nullptr;
  }
  TempDir dir_;
  nlohmann::json s_;
  std::string err_;  ///< what the analysis wrote to its error stream
};

TEST_F(SummaryJson, TensorTotalsKeepDenseAndSparseApart) {
  EXPECT_EQ(s_["totals"]["tensor"], nlohmann::json::parse(R"({"fp16": {"dense": 1000.0, "sparse": 300.0}})"));
}

TEST_F(SummaryJson, EachLevelsIntensityUsesItsOwnBytes) {
  // Launches 1-3 have counters; FLOP: 1300 tensor + 2e9 FP32; L2 and L1 bytes only on launch 1.
  const double flop = 1300 + 2e9;
  const auto& t = s_["totals"];
  EXPECT_EQ(t["l2_bytes"], 4000.0);
  EXPECT_EQ(t["l1_bytes"], 16000.0);
  EXPECT_DOUBLE_EQ(t["l2_arithmetic_intensity"].get<double>(), flop / 4000);
  EXPECT_DOUBLE_EQ(t["l1_arithmetic_intensity"].get<double>(), flop / 16000);
  EXPECT_DOUBLE_EQ(t["arithmetic_intensity"].get<double>(), flop / (100 + 1.7e6 + 1e6));
}

TEST_F(SummaryJson, TraceCountsWhatTheJoinDroppedAndTheCollectorLost) {
  const auto& tr = s_["traces"][0];
  EXPECT_EQ(tr["dropped_records"], 5);
  EXPECT_EQ(tr["join"]["graph_counter_ranges"], 1);
  EXPECT_EQ(tr["join"]["duplicate_counter_ranges"], 0);
  EXPECT_EQ(tr["join"]["kernels_with_negative_duration"], 1);
  ASSERT_EQ(s_["collector_errors"].size(), 1u);
  EXPECT_EQ(s_["collector_errors"][0]["code"], 7);
  EXPECT_EQ(s_["collector_errors"][0]["code_name"], "finish_cut_short");
  EXPECT_EQ(s_["collector_error_count"], 1);
}

TEST_F(SummaryJson, ACeilingWithoutAValueHasNoSource) {
  const auto& c = s_["devices"][0]["ceilings"];
  EXPECT_TRUE(c["l2_bytes_per_s"]["value"].is_null());  // the H100 SXM5 datasheet gives none
  EXPECT_TRUE(c["l2_bytes_per_s"]["source"].is_null()) << c["l2_bytes_per_s"];
  EXPECT_FALSE(c["l2_bytes_per_s"].contains("datasheet_value"));  // not measured
  EXPECT_FALSE(c["fp32_flop_per_s"]["source"].is_null());
  // A measured ceiling carries the datasheet's value beside it and their ratio.
  EXPECT_EQ(c["dram_bytes_per_s"]["datasheet_value"], 3.35e12);
  EXPECT_DOUBLE_EQ(c["dram_bytes_per_s"]["ratio_to_datasheet"].get<double>(), 1.6 / 3.35);
}

TEST_F(SummaryJson, AMeasuredCeilingBelowEightyPercentIsChecked) {
  ASSERT_EQ(s_["ceiling_checks"].size(), 1u) << s_["ceiling_checks"];
  const auto& c = s_["ceiling_checks"][0];
  EXPECT_EQ(c["ceiling"], "dram_bytes_per_s");
  EXPECT_EQ(c["measured"], 1.6e12);
  EXPECT_EQ(c["datasheet"], 3.35e12);
  EXPECT_DOUBLE_EQ(c["ratio_to_datasheet"].get<double>(), 1.6 / 3.35);
  EXPECT_EQ(c["message"], "dram_bytes_per_s measured at 48 % of the datasheet value (expected 80-100 %)");
}

// The launch above a measured ceiling only is a note on stderr; the one above a datasheet
// ceiling a warning.
TEST_F(SummaryJson, AboveMeasuredCeilingsIsANoteAboveTheDatasheetAWarning) {
  const std::string at = (dir_.path / "report" / "summary.json").string();
  EXPECT_NE(err_.find("rfanalyze: note: 1 kernel launch(es) lie slightly above measured ceilings (at most 10 %): "
                      "rfbench did not reach the hardware's peak there; see above_roof in " + at + "\n"),
            std::string::npos) << err_;
  EXPECT_NE(err_.find("rfanalyze: warning: 1 kernel launch(es) lie above their roof"), std::string::npos) << err_;
}

TEST_F(SummaryJson, AboveRoofReasonNamesEachExceededCeiling) {
  EXPECT_EQ(s_["above_roof_count"], 2);
  EXPECT_EQ(s_["above_roof_errors"], 1);  // launch 2 only exceeds a measured ceiling: a warning
  const nlohmann::json memory = above(2);
  EXPECT_EQ(memory["severity"], "warning");
  EXPECT_DOUBLE_EQ(memory["excess"].get<double>(), 1.7 / 1.6);
  EXPECT_DOUBLE_EQ(memory["dram_bytes_per_s"].get<double>(), 1.7e12);
  EXPECT_EQ(memory["reason"],
            "DRAM bytes/s above the DRAM bandwidth ceiling (measured ceilings, exceeded by at most 10 %: "
            "the benchmark did not reach the hardware's peak)");
  const nlohmann::json both = above(3);
  EXPECT_EQ(both["severity"], "error");
  EXPECT_EQ(both["device"], 0);
  EXPECT_EQ(both["compute_peak_flop_per_s"], 67e12);  // H100 SXM5's FP32: all of launch 3's FLOP are FP32
  EXPECT_EQ(both["reason"],
            "FLOP/s above the compute ceiling of its precision mix; DRAM bytes/s above the DRAM bandwidth ceiling");
}

// The totals' FLOP and byte columns, each summed over the launches that have it (launches 1-3 have
// counters; 4, a graph's, is dropped; 5 has none). FLOP/s counts launches with FLOP and a duration.
TEST_F(SummaryJson, TotalsSumEachColumnOverTheLaunchesThatHaveIt) {
  const auto& t = s_["totals"];
  EXPECT_EQ(t["launches"], 5);
  EXPECT_EQ(t["launches_with_counters"], 3);
  EXPECT_EQ(t["fp64_flop"], 0.0);
  EXPECT_EQ(t["fp32_flop"], 2e9);
  EXPECT_EQ(t["fp16_flop"], 0.0);
  EXPECT_EQ(t["dram_read_bytes"], 60 + 1.7e6 + 5e5);
  EXPECT_EQ(t["dram_write_bytes"], 40 + 5e5);
  // (1300 + 0 + 2e9) FLOP in (1000 + 1000 + 10) ns.
  ASSERT_TRUE(t["flop_per_s"].is_number()) << t;
  EXPECT_DOUBLE_EQ(t["flop_per_s"].get<double>(), (1300 + 2e9) * 1e9 / 2010);
}

// Each device lists every ceiling under its key, in one order: the CUDA cores', the tensor cores'
// per precision, DRAM, L2 bandwidth and L2 size.
TEST_F(SummaryJson, EveryCeilingIsListedUnderItsKey) {
  std::vector<std::string> expected = {"datasheet_entry", "user_entry", "fp64_flop_per_s", "fp32_flop_per_s",
                                       "fp16_flop_per_s"};
  expected.insert(expected.end(), kTensorCeilingKeys.begin(), kTensorCeilingKeys.end());
  expected.insert(expected.end(), {"dram_bytes_per_s", "l2_bytes_per_s", "l2_bytes"});
  const auto ordered = nlohmann::ordered_json::parse(std::ifstream(dir_.path / "report" / "summary.json"));
  std::vector<std::string> keys;
  for (const auto& [key, value] : ordered["devices"][0]["ceilings"].items()) keys.push_back(key);
  EXPECT_EQ(keys, expected);
  EXPECT_EQ(s_["devices"][0]["ceilings"]["l2_bytes"]["value"], 50.0 * 1024 * 1024);  // H100 SXM5: 50 MiB
}

// A trace without memory events has no peak: null, not 0 bytes at 0 ns.
TEST_F(SummaryJson, NoMemoryEventsMeanNoPeak) {
  const auto& m = s_["traces"][0]["memory"];
  EXPECT_EQ(m["events"], 0);
  EXPECT_TRUE(m["peak_bytes"].is_null()) << m;
  EXPECT_TRUE(m["peak_timestamp_ns"].is_null()) << m;
}

// Every collector error code has its name in summary.json; errors of one code and message are one
// entry with their count and the first one's window and numbers.
TEST(SummaryJsonErrors, EveryCodeHasItsNameAndRepeatsAreCountedOnce) {
  const std::vector<std::pair<ErrorCode, std::string>> codes = {
      {ErrorCode::kUnknown, "unknown"},
      {ErrorCode::kRangeLaunchMismatch, "range_launch_mismatch"},
      {ErrorCode::kCuptiCall, "cupti_call"},
      {ErrorCode::kCountersUnavailable, "counters_unavailable"},
      {ErrorCode::kDroppedRecords, "dropped_records"},
      {ErrorCode::kDecodeFailed, "decode_failed"},
      {ErrorCode::kCallStacksDropped, "call_stacks_dropped"},
      {ErrorCode::kFinishCutShort, "finish_cut_short"}};
  TempDir dir;
  {
    TraceBuilder t(dir.path / "e.rftrace");
    t.process(32, CollectionMode::kCounters);
    for (size_t i = 0; i < codes.size(); ++i)
      t.error(codes[i].first, codes[i].second + " happened", static_cast<uint32_t>(10 + i), 100 + i, 200 + i);
    t.error(ErrorCode::kCuptiCall, "cupti_call happened", 99, 999, 998);  // counted, not listed again
    t.writer().finish(1000, 0);
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "e.rftrace"}, dir.path / "report");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = nlohmann::json::parse(std::ifstream(dir.path / "report" / "summary.json"));
  EXPECT_EQ(s["collector_error_count"], codes.size() + 1);
  const auto& errors = s["collector_errors"];
  ASSERT_EQ(errors.size(), codes.size()) << errors;
  for (size_t i = 0; i < codes.size(); ++i) {
    const auto& e = errors[i];
    EXPECT_EQ(e["code"], static_cast<uint32_t>(codes[i].first)) << e;
    EXPECT_EQ(e["code_name"], codes[i].second) << e;
    EXPECT_EQ(e["message"], codes[i].second + " happened");
    EXPECT_EQ(e["count"], codes[i].first == ErrorCode::kCuptiCall ? 2 : 1) << e;
    EXPECT_EQ(e["first_window_id"], 10 + i);
    EXPECT_EQ(e["first_expected"], 100 + i);
    EXPECT_EQ(e["first_actual"], 200 + i);
    EXPECT_EQ(e["pid"], 32);
  }
}

// gpu__time_duration.sum stands in for a missing duration, counted under two keys: a kernel record
// without time stamps (kernel replay) in durations_from_gpu_time_duration, no kernel record at all
// (a replay-across-steps trace cut before its timing window's activity buffer was written: the
// value is an instrumented pass's) in durations_from_gpu_time_without_kernel_record.
TEST(SummaryJsonJoin, DurationsFromGpuTimeWithoutAKernelRecordAreCountedApart) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "d.rftrace");
    t.process(34, CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    testing::Counts c;
    c.gpu_time = 900;
    t.launch(1, 0, kThread, 1000, 1);  // the timing window's own run: its kernel's time stamps
    t.kernel(1, 2000, 2100);
    t.counters(1, 1, c.values(), 1);
    c.gpu_time = 700;
    t.launch(2, 0, kThread, 3000, 1);  // no kernel record
    t.counters(1, 2, c.values(), 1);
    c.gpu_time = 500;
    t.launch(3, 0, kThread, 4000, 1);
    t.kernel(3, 0, 0);  // no time stamps (kernel replay)
    t.counters(1, 3, c.values(), 1);
    t.window(1, false, 9000);
    t.writer().finish(10000, 0);
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "d.rftrace"}, dir.path / "report");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = nlohmann::json::parse(std::ifstream(dir.path / "report" / "summary.json"));
  const auto& j = s["traces"][0]["join"];
  EXPECT_EQ(j["durations_from_gpu_time_duration"], 1) << j;              // launch 3
  EXPECT_EQ(j["durations_from_gpu_time_without_kernel_record"], 1) << j;  // launch 2
  const testing::CsvTable k = testing::CsvTable::read(dir.path / "report" / "kernels.csv");
  EXPECT_EQ(k.cell(k.find("id", "1"), "duration_ns"), "100");
  EXPECT_EQ(k.cell(k.find("id", "2"), "duration_ns"), "700");
  EXPECT_EQ(k.cell(k.find("id", "3"), "duration_ns"), "500");
}

// Each of the join's counts under its own key in summary.json, on a trace that has one of each: a
// second counter range for a launch, counters of no launch (correlation id 0), counters of a metric
// config the trace never defined (for a correlation id with neither launch nor kernel), a launch
// without its kernel record, a kernel without its launch, and a launch whose counters never came.
// The device is one no ceilings entry knows.
TEST(SummaryJsonJoin, EachJoinCountHasItsKey) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "j.rftrace");
    t.process(33, CollectionMode::kCounters);
    t.device(0, "Mystery GPU", "GX999");
    t.config(1, testing::roofline_metrics());
    const std::vector<double> v = testing::Counts{}.values();
    t.launch(1, 0, kThread, 1000);
    t.counters(1, 1, v);
    t.counters(1, 1, v);  // a second range for launch 1, which waits for its kernel record
    t.kernel(1, 2000, 3000);
    t.counters(1, 0, v);  // no launch
    t.counters(2, 6, v);  // config 2 was never defined; no launch 6 nor its kernel: a row of its own
    t.launch(4, 0, kThread, 4000);  // no kernel record
    t.counters(1, 4, v);
    t.kernel(3, 5000, 6000);  // no launch record
    t.counters(1, 3, v);
    t.launch(5, 0, kThread, 7000);  // no counters
    t.kernel(5, 8000, 9000);
    t.writer().finish(10000, 0);
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "j.rftrace"}, dir.path / "report");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = nlohmann::json::parse(std::ifstream(dir.path / "report" / "summary.json"));
  const auto& j = s["traces"][0]["join"];
  EXPECT_EQ(j["duplicate_counter_ranges"], 1) << j;
  EXPECT_EQ(j["unmapped_counter_ranges"], 1) << j;
  EXPECT_EQ(j["counters_without_metric_config"], 1) << j;
  EXPECT_EQ(j["rows_without_kernel"], 2) << j;  // launch 4, the counters of 6
  EXPECT_EQ(j["rows_without_launch"], 2) << j;  // kernel 3, the counters of 6
  EXPECT_EQ(j["rows_without_counters"], 1) << j;
  EXPECT_EQ(j["graph_counter_ranges"], 0) << j;
  EXPECT_GE(j["max_buffered_records"], 1) << j;
  const auto& d = s["devices"][0];
  EXPECT_EQ(d["trace"], (dir.path / "j.rftrace").string());
  EXPECT_TRUE(d["ceilings"]["datasheet_entry"].is_null()) << d["ceilings"];
  EXPECT_TRUE(d["ceilings"]["user_entry"].is_null()) << d["ceilings"];
  EXPECT_TRUE(d["ceilings"]["fp32_flop_per_s"]["value"].is_null()) << d["ceilings"];
}

}  // namespace
}  // namespace rf::analyzer
