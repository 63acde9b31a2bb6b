// profiler_overhead.csv and summary.json's "profiler_overhead" (overhead.h): the collector's cost
// per phase, from the last ProfilerOverhead record of each phase (cumulative totals, format 1.2).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/overhead.h"

namespace rf::analyzer {
namespace {

using nlohmann::json;
using testing::CsvTable;
using testing::TempDir;
using testing::TraceBuilder;

/// A counters-mode trace of 1 ms (ProcessInfo start 0, TraceEnd at 1,000,000 ns) whose collector
/// reported its cost twice: a flush interval, then exit. With `cut_copy`, also a copy of the
/// flushed `.part` file before the TraceEnd, as a SIGKILL leaves it.
void write_trace(const std::filesystem::path& path, const std::filesystem::path& cut_copy = {}) {
  TraceBuilder t(path);
  t.process(77, trace::CollectionMode::kCounters);
  trace::Writer& w = t.writer();
  w.append(trace::ProfilerOverhead{w.intern("launch.counters"), 3, 900, 400});
  w.append(trace::ProfilerOverhead{w.intern("counters.enable"), 1, 500000, 500000});
  w.append(trace::ProfilerOverhead{w.intern("launch.counters"), 5, 2000, 700});  // grew: replaces
  if (!cut_copy.empty()) {
    w.flush();
    std::filesystem::copy_file(path.string() + ".part", cut_copy);
  }
  w.finish(1000000, 0);
}

TEST(ProfilerOverhead, TheLastRecordOfEachPhaseIsItsRowWithMeanAndShareOfTracedTime) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable t = CsvTable::read(dir.path / "out" / "profiler_overhead.csv");
  EXPECT_EQ(t.header, overhead_csv_header());
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.cell(0, "phase"), "counters.enable");  // by name
  EXPECT_EQ(t.cell(0, "pid"), "77");
  EXPECT_EQ(t.cell(0, "share_of_traced_time"), "0.5");
  EXPECT_EQ(t.cell(1, "phase"), "launch.counters");
  EXPECT_EQ(t.cell(1, "count"), "5");
  EXPECT_EQ(t.cell(1, "total_ns"), "2000");
  EXPECT_EQ(t.cell(1, "mean_ns"), "400");
  EXPECT_EQ(t.cell(1, "max_ns"), "700");
  EXPECT_EQ(t.cell(1, "share_of_traced_time"), "0.002");

  std::ifstream in(dir.path / "out" / "summary.json");
  const json s = json::parse(in);
  const json& o = s["traces"][0]["profiler_overhead"];
  EXPECT_EQ(o["traced_ns"], 1000000);
  EXPECT_EQ(o["phases"]["launch.counters"]["count"], 5);
  EXPECT_EQ(o["phases"]["launch.counters"]["total_ns"], 2000);
  EXPECT_DOUBLE_EQ(o["phases"]["launch.counters"]["mean_ns"].get<double>(), 400.0);
  EXPECT_EQ(o["phases"]["counters.enable"]["max_ns"], 500000);
  EXPECT_EQ(o["phases"]["launch.counters"]["max_ns"], 700);
}

// A phase that never ran has no mean, and a trace that traced no time gives no share (not a
// division by zero).
TEST(ProfilerOverhead, NoMeanWithoutRunsAndNoShareOfZeroTime) {
  const std::map<std::string, OverheadPhaseTotals> phases = {{"never", {0, 0, 0}}, {"once", {1, 30, 30}}};
  std::ostringstream out;
  write_overhead_rows(out, "t.rftrace", 9, phases, uint64_t{0});
  EXPECT_EQ(out.str(), "t.rftrace,9,never,0,0,,0,\nt.rftrace,9,once,1,30,30,30,\n");
  const auto j = overhead_json(phases, uint64_t{0});
  EXPECT_EQ(j["traced_ns"], 0);
  EXPECT_TRUE(j["phases"]["never"]["mean_ns"].is_null()) << j;
  EXPECT_EQ(j["phases"]["once"]["mean_ns"], 30.0);
}

TEST(ProfilerOverhead, ATruncatedTraceKeepsItsLastTotalsWithoutAShare) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace", dir.path / "cut.rftrace");
  const testing::AnalysisRun run = testing::analyze({dir.path / "cut.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable t = CsvTable::read(dir.path / "out" / "profiler_overhead.csv");
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.cell(1, "total_ns"), "2000");
  EXPECT_EQ(t.cell(1, "share_of_traced_time"), "");
  std::ifstream in(dir.path / "out" / "summary.json");
  const json s = json::parse(in);
  EXPECT_TRUE(s["traces"][0]["profiler_overhead"]["traced_ns"].is_null());
}

TEST(ProfilerOverhead, ATraceWithoutOverheadRecordsHasOnlyTheHeader) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");  // as a format 1.1 collector wrote it
    t.process(1, trace::CollectionMode::kTiming);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable t = CsvTable::read(dir.path / "out" / "profiler_overhead.csv");
  EXPECT_EQ(t.header, overhead_csv_header());
  EXPECT_TRUE(t.rows.empty());
  std::ifstream in(dir.path / "out" / "summary.json");
  const json s = json::parse(in);
  EXPECT_TRUE(s["traces"][0]["profiler_overhead"]["phases"].empty());
}

}  // namespace
}  // namespace rf::analyzer
