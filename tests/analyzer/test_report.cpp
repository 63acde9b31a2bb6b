// The Report's sums over a run of several traces (report.h): per-trace counts in summary.json and
// processes.csv, devices that do not leak from one trace to the next, the above-roof list, the
// counters.csv cells, and memory peaks per range and phase.
#include "rfprof/analyzer/report.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <nlohmann/json.hpp>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::CsvTable;
using testing::TempDir;
using testing::TraceBuilder;
using trace::CollectionMode;

nlohmann::json summary_of(const fs::path& out) { return nlohmann::json::parse(std::ifstream(out / "summary.json")); }

// Trace a: an H100 with counters; trace b: no ProcessInfo and no DeviceInfo, its kernel on device 0
// like a's; trace c: a device no datasheet knows, with the bandwidth its driver reported.
TEST(ReportTraces, EachTraceIsSummedApartAndKeepsItsOwnDevices) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "a.rftrace");
    t.process(4242, CollectionMode::kCounters);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.config(1, testing::roofline_metrics());
    t.config(3, {"gpu__time_duration.sum", "sm__cycles_elapsed.avg"}, 1);  // no launch used it
    testing::Counts c;
    c.ffma = 1000;
    c.read = 1000;
    for (uint32_t id = 1; id <= 2; ++id) {
      t.launch(id, 0, 5, 100 * id);
      t.kernel(id, 100 * id + 10, 100 * id + 60);
      t.counters(1, id, c.values());
    }
    t.pop(7, 5, 400);  // an end without a start
    t.push(8, 5, 410, "twice");
    t.push(8, 5, 420, "twice");  // a second start of an open id
    t.pop(8, 5, 430);
    t.push(9, 5, 450, "backwards");
    t.pop(9, 5, 440);  // ends before it starts
    t.window(0, false, 500);
    t.finish();
  }
  {
    TraceBuilder t(dir.path / "b.rftrace");
    t.launch(1, 0, 5, 100);
    t.kernel(1, 110, 160);
    t.finish();
  }
  {
    TraceBuilder t(dir.path / "c.rftrace");
    t.process(77, CollectionMode::kTiming);
    t.device(0, "Mystery GPU", "GX999", /*bandwidth_kbps=*/2'000'000'000);
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run =
      testing::analyze({dir.path / "a.rftrace", dir.path / "b.rftrace", dir.path / "c.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const nlohmann::json s = summary_of(out);
  ASSERT_EQ(s["traces"].size(), 3u);
  const TraceContext a = read_context(dir.path / "a.rftrace");
  EXPECT_EQ(s["traces"][0]["launches"], 2);
  EXPECT_EQ(s["traces"][1]["launches"], 1);  // its own, not the run's so far
  EXPECT_EQ(s["traces"][0]["mode"], "counters");
  EXPECT_EQ(s["traces"][1]["mode"], "unknown");
  EXPECT_EQ(s["traces"][2]["mode"], "timing");
  EXPECT_EQ(s["traces"][0]["format_version"],
            std::to_string(trace::kFormatMajor) + "." + std::to_string(trace::kFormatMinor));
  EXPECT_EQ(a.version_major, trace::kFormatMajor);
  // Each MetricConfig: its metrics and the passes the Range Profiler needed (TraceBuilder: 2).
  EXPECT_EQ(s["traces"][0]["metric_configs"],
            nlohmann::json::parse(R"([{"config_id": 1, "metrics": )" +
                                  std::to_string(testing::roofline_metrics().size()) +
                                  R"(, "passes": 2}, {"config_id": 3, "metrics": 2, "passes": 1}])"));
  EXPECT_EQ(s["traces"][1]["metric_configs"], nlohmann::json::array());
  EXPECT_EQ(s["traces"][0]["records"], a.records);
  EXPECT_GT(a.records, 10u);
  EXPECT_EQ(s["traces"][0]["nvtx_unmatched_ends"], 1);
  EXPECT_EQ(s["traces"][1]["nvtx_unmatched_ends"], 0);
  EXPECT_EQ(s["traces"][0]["nvtx_duplicate_starts"], 1);
  EXPECT_EQ(s["traces"][0]["nvtx_backwards_ranges"], 1);
  EXPECT_EQ(s["traces"][0]["nvtx_ranges"], 1);  // "twice" once; "backwards" dropped
  EXPECT_EQ(s["traces"][1]["nvtx_duplicate_starts"], 0);
  EXPECT_EQ(s["traces"][1]["nvtx_backwards_ranges"], 0);
  // Trace b's device 0 is not trace a's H100: its launch has no ceilings.
  EXPECT_EQ(s["totals"]["launches_without_ceilings"], 1);
  ASSERT_EQ(s["devices"].size(), 2u);
  EXPECT_EQ(s["devices"][1]["ceilings"]["dram_bytes_per_s"]["value"], 2e12);  // 2e9 kB/s
  const CsvTable p = CsvTable::read(out / "processes.csv");
  ASSERT_EQ(p.rows.size(), 3u);
  EXPECT_EQ(p.cell(0, "hostname"), "node01");
  EXPECT_EQ(p.cell(1, "hostname"), "");
}

// --device names a user entry without a DRAM value: each device that has a DeviceInfo record
// takes the bandwidth its driver reported, so its launches have a memory roof.
TEST(ReportTraces, AForcedEntryWithoutDramTakesTheReportedBandwidth) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, CollectionMode::kCounters);
    t.device(0, "Mystery GPU", "GX999", /*bandwidth_kbps=*/1'000'000'000);  // 1e12 bytes/s
    t.config(1, testing::roofline_metrics());
    testing::Counts c;
    c.ffma = 1000;  // 2000 FLOP over 1e6 bytes: AI 0.002
    c.read = 1e6;
    t.launch(1, 0, 5, 100);
    t.kernel(1, 110, 1110);
    t.counters(1, 1, c.values());
    t.window(0, false, 2000);
    t.finish();
  }
  std::ofstream(dir.path / "lab.json") << R"json({"devices": [{"name": "Lab GPU", "fp32_flop_per_s": 1e12,
      "citation": "lab notes"}]})json";
  AnalyzeOptions o;
  o.ceilings = dir.path / "lab.json";
  o.device = "Lab GPU";
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, out, o);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable k = CsvTable::read(out / "kernels.csv");
  ASSERT_EQ(k.rows.size(), 1u);
  EXPECT_EQ(k.cell(0, "bound"), "memory");
  EXPECT_EQ(k.cell(0, "attainable_flop_per_s"), "2000000000");  // 0.002 x 1e12
}

// summary.json lists the first kMaxAboveRoofListed launches above their roof and counts them all;
// each entry names its trace and its arithmetic intensity.
TEST(ReportTraces, AboveRoofListIsBoundedAndNamesTraceAndIntensity) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  const uint32_t n = static_cast<uint32_t>(kMaxAboveRoofListed) + 1;
  {
    TraceBuilder t(trace);
    t.process(1, CollectionMode::kCounters);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.config(1, testing::roofline_metrics());
    testing::Counts c;
    c.ffma = 1e9;  // 2e9 FLOP in 10 ns: far above any roof
    c.read = 4e6;  // AI 500
    for (uint32_t id = 1; id <= n; ++id) {
      t.launch(id, 0, 5, 100 * id);
      t.kernel(id, 100 * id + 10, 100 * id + 20);
      t.counters(1, id, c.values());
    }
    t.window(0, false, 100 * (n + 1));
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({trace}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const nlohmann::json s = summary_of(out);
  EXPECT_EQ(s["above_roof_count"], n);
  ASSERT_EQ(s["above_roof"].size(), kMaxAboveRoofListed);
  EXPECT_EQ(s["above_roof"][0]["trace"], trace.string());
  EXPECT_DOUBLE_EQ(s["above_roof"][0]["arithmetic_intensity"].get<double>(), 500.0);
}

// A RangeCounters record with fewer values than its config has metrics (a hostile trace): one
// counters.csv row per metric, the missing values empty rather than 0.
TEST(ReportTraces, CountersCsvLeavesMissingValuesEmpty) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    t.launch(1, 0, 5, 100);
    t.kernel(1, 110, 160);
    t.counters(1, 1, {3, 4, 5});
    t.window(0, false, 500);
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable c = CsvTable::read(out / "counters.csv");
  const auto metrics = testing::roofline_metrics();
  ASSERT_EQ(c.rows.size(), metrics.size());
  EXPECT_EQ(c.cell(2, "metric"), metrics[2]);
  EXPECT_EQ(c.cell(2, "value"), "5");
  EXPECT_EQ(c.cell(3, "metric"), metrics[3]);
  EXPECT_EQ(c.cell(3, "value"), "");
}

// Two processes' traces reuse correlation ids (CUPTI's restart per process), and replay across
// steps with RFPROF_REPLAY_GROUPS > 1 gives each group's timing window its own id: counters.csv
// names each launch's pid and window (LaunchApi.window_id; empty without a launch record), after
// the four columns readers take by position.
TEST(ReportTraces, CountersCsvNamesEachLaunchsProcessAndWindow) {
  TempDir dir;
  for (uint32_t pid : {101u, 202u}) {
    TraceBuilder t(dir.path / ("p" + std::to_string(pid) + ".rftrace"));
    t.process(pid, CollectionMode::kCounters);
    t.config(1, {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"});
    t.launch(12, 0, 5, 100, /*window=*/1);
    t.kernel(12, 110, 160);
    t.counters(1, 12, {7}, 1);
    t.launch(13, 0, 5, 200, /*window=*/2);
    t.kernel(13, 210, 260);
    t.counters(1, 13, {8}, 2);
    t.counters(1, 14, {9}, 2);  // no launch record: no window
    t.window(1, false, 300);
    t.window(2, false, 400);
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "p101.rftrace", dir.path / "p202.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable t = CsvTable::read(out / "counters.csv");
  EXPECT_EQ(t.header, (std::vector<std::string>{"id", "kernel", "metric", "value", "pid", "window"}));
  ASSERT_EQ(t.rows.size(), 6u);
  std::set<std::string> seen;
  for (size_t r = 0; r < t.rows.size(); ++r)
    seen.insert(t.cell(r, "pid") + "/" + t.cell(r, "id") + ":" + t.cell(r, "window") + "=" + t.cell(r, "value"));
  EXPECT_EQ(seen, (std::set<std::string>{"101/12:1=7", "101/13:2=8", "101/14:=9", "202/12:1=7", "202/13:2=8",
                                         "202/14:=9"}));
}

// Report writes a metric list's names escaped once, then per launch. The next trace's list may
// live where the last one's did: the same vector, refilled, must give the new names.
TEST(ReportTraces, CountersCsvNamesTheNextTracesMetricsAtTheSameAddress) {
  std::ostringstream kernels, counters;
  CeilingSources sources;
  sources.datasheet = &CeilingDb::builtin();
  Report report(sources, kernels, counters);
  std::vector<std::string> names = {"a.sum", "needs,quotes"};
  const std::vector<double> values = {1, 2};
  TraceContext ctx;
  LaunchOutput l;
  l.row.kernel = "k";
  l.metric_names = &names;
  l.metric_values = &values;
  report.begin_trace(ctx);
  l.row.id = 1;
  l.row.pid = 77;
  l.row.window = 12;
  report.add_launch(l);
  l.row.id = 2;
  l.row.window.reset();  // no launch record: the window empty, the last launch's not kept
  report.add_launch(l);
  names = {"b.sum", "c.max"};
  report.begin_trace(ctx);
  l.row.id = 3;
  l.row.pid = 8;
  l.row.window = 0;
  report.add_launch(l);
  EXPECT_EQ(counters.str(),
            "id,kernel,metric,value,pid,window\n"
            "1,k,a.sum,1,77,12\n1,k,\"needs,quotes\",2,77,12\n"
            "2,k,a.sum,1,77,\n2,k,\"needs,quotes\",2,77,\n"
            "3,k,b.sum,1,8,0\n3,k,c.max,2,8,0\n");
}

// Launches of two metric lists in one trace, in turn (two MetricConfigs): each row names its own.
TEST(ReportTraces, CountersCsvNamesEachLaunchsOwnMetricListInOneTrace) {
  std::ostringstream kernels, counters;
  CeilingSources sources;
  sources.datasheet = &CeilingDb::builtin();
  Report report(sources, kernels, counters);
  const std::vector<std::string> a = {"a.sum"}, b = {"b.sum", "b.max"};
  const std::vector<double> values = {7, 8};
  TraceContext ctx;
  report.begin_trace(ctx);
  uint32_t id = 0;
  for (const auto* names : {&a, &b, &a}) {
    LaunchOutput l;
    l.row.id = ++id;
    l.row.kernel = "k";
    l.metric_names = names;
    l.metric_values = &values;
    report.add_launch(l);
  }
  EXPECT_EQ(counters.str(),
            "id,kernel,metric,value,pid,window\n"
            "1,k,a.sum,7,0,\n"
            "2,k,b.sum,7,0,\n2,k,b.max,8,0,\n"
            "3,k,a.sum,7,0,\n");
}

// Memory in use: 4 GiB from t=100; 2 GiB more during the first "forward" (6 GiB); 1 GiB more at
// 600 (5 GiB). A range's peak is the highest of its occurrences, a phase's the highest of its
// paths; a range never ended lasts to the last memory event ("open", 5 GiB), or, started after it,
// holds what was in use at its start ("tail"); a zero-length range at the top level is no range
// (launches outside every range have no peak).
TEST(ReportMemoryPeaks, PerRangeAndPhaseTheHighestOccurrence) {
  TempDir dir;
  constexpr uint64_t GiB = 1ull << 30;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, CollectionMode::kTiming);
    uint32_t corr = 0;
    auto launch = [&](uint64_t at) {
      ++corr;
      t.launch(corr, 0, 5, at);
      t.kernel(corr, at + 5, at + 10);
    };
    launch(50);  // outside every range
    t.memory(true, 100, 0xA000, 4 * GiB);
    t.push(1, 5, 200, "forward");
    launch(210);
    t.memory(true, 250, 0xB000, 2 * GiB);
    t.memory(false, 280, 0xB000, 2 * GiB);
    t.pop(1, 5, 300);
    t.push(2, 5, 400, "forward");
    t.push(3, 5, 420, "conv");
    launch(450);
    t.pop(3, 5, 480);
    t.pop(2, 5, 500);
    t.push(4, 5, 520, "blip");
    t.pop(4, 5, 520);
    t.push(6, 6, 550, "open");  // never ended, on another thread: it lasts to the last memory event
    t.launch(++corr, 0, 6, 560);
    t.kernel(corr, 565, 570);
    t.memory(true, 600, 0xC000, 1 * GiB);
    t.push(5, 5, 900, "tail");  // never ended
    launch(950);
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable r = CsvTable::read(out / "ranges.csv");
  auto peak = [&](const std::string& key) {
    const size_t row = r.find("nvtx", key);
    return row < r.rows.size() ? r.cell(row, "peak_memory_bytes") : "(no row " + key + ")";
  };
  EXPECT_EQ(peak("forward"), std::to_string(6 * GiB));
  EXPECT_EQ(peak("forward/conv"), std::to_string(4 * GiB));
  EXPECT_EQ(peak("tail"), std::to_string(5 * GiB));
  EXPECT_EQ(peak("open"), std::to_string(5 * GiB));
  EXPECT_EQ(peak(""), "");
  const CsvTable ph = CsvTable::read(out / "phases.csv");
  const size_t fwd = ph.find("phase", "forward");
  ASSERT_LT(fwd, ph.rows.size());
  EXPECT_EQ(ph.cell(fwd, "peak_memory_bytes"), std::to_string(6 * GiB));
  const nlohmann::json s = summary_of(out);
  EXPECT_EQ(s["traces"][0]["nvtx_ranges"], 6);  // the six pushes, "blip", "open" and "tail" included
  EXPECT_EQ(s["traces"][0]["memory"]["events"], 4);
}

}  // namespace
}  // namespace rf::analyzer
