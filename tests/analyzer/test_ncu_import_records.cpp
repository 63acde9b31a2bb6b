// rfanalyze --import-ncu, record by record: what a CSV's lines may hold and what is refused (an
// unquoted record, a record over lines, a raw-page ID twice, a metric column twice, a duration or
// a grid that cannot be summed or held), and the notes on a file that gives nothing to analyze.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "analyzer_samples.h"
#include "ncu_import_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/ncu_csv.h"
#include "rfprof/analyzer/ncu_import.h"

namespace rf::analyzer {
namespace {

using testing::TempDir;

/// A raw page's header (identifying columns, then `metrics`) and units row (`units`, one per
/// metric), as ncu quotes them.
std::string raw_head(const std::vector<std::string>& metrics, const std::vector<std::string>& units) {
  std::string h = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
                  "\"Block Size\",\"Grid Size\",\"Device\",\"CC\"";
  std::string u = "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"";
  for (const auto& m : metrics) h += ",\"" + m + "\"";
  for (const auto& x : units) u += ",\"" + x + "\"";
  return h + "\n" + u + "\n";
}

/// The metrics of most records below: time, FFMA and DRAM read bytes.
const std::vector<std::string> kMetrics = {"gpu__time_duration.sum",
                                           "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
                                           "dram__bytes_read.sum"};
const std::vector<std::string> kUnits = {"ns", "inst", "byte"};

/// One quoted record of kernel "k" with ID `id`, grid `grid`, duration `ns`.
std::string record(const std::string& id, const std::string& ns = "1,000", const std::string& grid = "(1, 1, 1)") {
  return "\"" + id + "\",\"100\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(256, 1, 1)\",\"" + grid + "\",\"0\",\"9.0\",\"" + ns +
         "\",\"500\",\"100\"\n";
}

void write(const std::filesystem::path& p, const std::string& text) { testing::write_text(p, text); }
std::string error_of(const std::filesystem::path& p) { return testing::import_error_of(p); }

/// rfanalyze --import-ncu `csv` into `dir`/out.
testing::AnalysisRun import(const std::filesystem::path& csv, const std::filesystem::path& dir) {
  AnalyzeOptions o;
  o.import_ncu = {csv};
  return testing::analyze({}, dir / "out", o);
}

// Until 2026-11-29 a line not starting with '"' was skipped whatever it held, so a record whose
// quotes a tool stripped vanished: its launch was missing from every output, exit 0. Such a line
// (the header's field count, a number in the ID column) is refused; the application's lines are
// still skipped, a CSV-like one with another field count too.
TEST(NcuImportRecords, AnUnquotedRecordIsRefusedAndApplicationLinesAreSkipped) {
  TempDir dir;
  const std::string unquoted = "1,100,p,h,k,1,7,\"(256, 1, 1)\",\"(1, 1, 1)\",0,9.0,\"1,000\",500,100\n";
  write(dir.path / "unq.csv", raw_head(kMetrics, kUnits) + record("0") + unquoted + record("2"));
  EXPECT_EQ(error_of(dir.path / "unq.csv").rfind((dir.path / "unq.csv").string() + ":4:1: unquoted record", 0), 0u)
      << error_of(dir.path / "unq.csv");
  const testing::AnalysisRun run = import(dir.path / "unq.csv", dir.path);
  EXPECT_EQ(run.status, kExitBadInput);
  EXPECT_NE(run.err.find("unq.csv:4:1: unquoted record"), std::string::npos) << run.err;

  write(dir.path / "app.csv", raw_head(kMetrics, kUnits) + record("0") + "==PROF== Disconnected\n" +
                                  "epoch 1, loss 0.25, lr 1e-3\n" + "a,b,c,d,e,f,g,h,i,j,k,l,m,n\n" +
                                  "step,1,2,3,4,5,6,7,8,9,10,11,12,13\n\n" + record("1"));
  const NcuImport imp = read_ncu_csv(dir.path / "app.csv");
  ASSERT_EQ(imp.rows.size(), 2u);
  EXPECT_EQ(imp.rows[1].id, 1u);
}

// rfprof -i TRACE --csv --page raw quotes a kernel name with a newline over two lines (RFC 4180);
// until 2026-11-29 the import refused it ("unterminated quoted field"). A record's lines are
// joined while a quote is open, up to 1 MiB.
TEST(NcuImportRecords, AQuotedNewlineIsReadAndAnEndlessQuoteIsRefused) {
  TempDir dir;
  {
    testing::TraceBuilder t(dir.path / "t.rftrace");
    t.process(9, trace::CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    testing::Counts c;
    c.ffma = 1000;
    c.gpu_time = 4096;
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 6096, "k\nwith \"a\" newline");
    t.counters(1, 1, c.values());
    t.launch(2, 0, 100, 7000);
    t.kernel(2, 8000, 9000, "plain");
    t.counters(1, 2, c.values());
    t.finish();
  }
  {
    std::ofstream f(dir.path / "raw.csv", std::ios::binary);
    write_ncu_csv(f, {dir.path / "t.rftrace"}, "raw", {});
  }
  const NcuImport imp = read_ncu_csv(dir.path / "raw.csv");
  ASSERT_EQ(imp.rows.size(), 2u);
  EXPECT_EQ(imp.rows[0].kernel, "k\nwith \"a\" newline");
  EXPECT_EQ(imp.rows[0].metrics.fp32_flop, 2000.0);
  EXPECT_EQ(imp.rows[1].kernel, "plain");
  EXPECT_EQ(import(dir.path / "raw.csv", dir.path).status, kExitOk);

  // A quote that never closes: refused at the record's first line once it passes 1 MiB.
  std::string endless = raw_head(kMetrics, kUnits) + record("0") + "\"1\",\"100\",\"p\",\"h\",\"k\n";
  for (int i = 0; i < 20000; ++i) {
    endless.append(99, 'x');
    endless += '\n';
  }
  write(dir.path / "endless.csv", endless);
  const std::string e = error_of(dir.path / "endless.csv");
  EXPECT_EQ(e.rfind((dir.path / "endless.csv").string() + ":4:1: a record longer than 1048576 bytes", 0), 0u) << e;
  // One that closes nowhere before the end of the file: the field is named.
  write(dir.path / "open.csv", raw_head(kMetrics, kUnits) + "\"1\",\"100\",\"p\",\"h\",\"k\nmore\n");
  EXPECT_NE(error_of(dir.path / "open.csv").find("open.csv:3:"), std::string::npos);
  EXPECT_NE(error_of(dir.path / "open.csv").find("unterminated quoted field"), std::string::npos);
}

// Until 2026-11-29 a raw page's ID given twice was summed twice, exit 0 (the details page refused it).
TEST(NcuImportRecords, ARawPageIdGivenTwiceIsRefused) {
  TempDir dir;
  write(dir.path / "dup.csv", raw_head(kMetrics, kUnits) + record("0") + record("1") + record("0"));
  EXPECT_EQ(error_of(dir.path / "dup.csv"), (dir.path / "dup.csv").string() +
                                                ":5:1: ID \"0\" again: a raw page has one record per launch");
  EXPECT_EQ(import(dir.path / "dup.csv", dir.path).status, kExitBadInput);
}

// Until 2026-11-29 a metric named by two columns gave the duration from the last and the formulas
// from the first.
TEST(NcuImportRecords, AMetricColumnGivenTwiceIsRefused) {
  TempDir dir;
  write(dir.path / "dupcol.csv", raw_head({"gpu__time_duration.sum", "dram__bytes_read.sum", "gpu__time_duration.sum"},
                                          {"ns", "byte", "ns"}) +
                                     "\"0\",\"100\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\","
                                     "\"9.0\",\"1,000\",\"1\",\"5,000\"\n");
  EXPECT_EQ(error_of(dir.path / "dupcol.csv"),
            (dir.path / "dupcol.csv").string() +
                ":1:14: column \"gpu__time_duration.sum\" again (first column 12): each metric must have one column");
}

// Until 2026-11-29 durations up to 9.2e18 ns were taken, and the uint64_t sums of a few wrapped
// (a kernel group's GPU time smaller than one launch's); negative and infinite ones left the
// launch untimed. A duration must be 0 to 2^53 ns; none ("n/a", empty) is still an untimed launch.
TEST(NcuImportRecords, DurationsFrom2To53NsAreRefused) {
  TempDir dir;
  for (const std::string bad : {"9,007,199,254,740,992", "5e18", "inf", "-5"}) {
    write(dir.path / "big.csv", raw_head(kMetrics, kUnits) + record("0") + record("1", bad));
    EXPECT_EQ(error_of(dir.path / "big.csv"), (dir.path / "big.csv").string() + ":4:12: gpu__time_duration.sum \"" +
                                                  bad + "\" is not a duration (expected 0 to 2^53 ns, "
                                                        "9,007,199,254,740,992)");
  }
  write(dir.path / "ok.csv", raw_head(kMetrics, kUnits) + record("0", "9,007,199,254,740,991") + record("1", "n/a") +
                                 record("2", ""));
  const NcuImport imp = read_ncu_csv(dir.path / "ok.csv");
  ASSERT_EQ(imp.rows.size(), 3u);
  EXPECT_EQ(imp.rows[0].duration_ns, 9007199254740991u);
  EXPECT_FALSE(imp.rows[1].duration_ns);
  EXPECT_FALSE(imp.rows[2].duration_ns);
  // The details page's cell is named by its own line and the value's column.
  write(dir.path / "det.csv",
        "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
        "\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
        "\"0\",\"100\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"S\","
        "\"dram__bytes_read.sum\",\"byte\",\"1\"\n"
        "\"0\",\"100\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"S\","
        "\"gpu__time_duration.sum\",\"second\",\"1e7\"\n");
  EXPECT_EQ(error_of(dir.path / "det.csv"),
            (dir.path / "det.csv").string() +
                ":3:15: gpu__time_duration.sum \"1e7\" is not a duration (expected 0 to 2^53 ns, 9,007,199,254,740,992)");
}

// Until 2026-11-29 a grid or block part above INT32_MAX wrapped to a negative number
// (3,000,000,000 -> -1,294,967,296) and one above UINT32_MAX was silently no grid.
TEST(NcuImportRecords, GridAndBlockPartsAboveInt32MaxAreRefused) {
  TempDir dir;
  for (const std::string grid : {"(3000000000, 1, 1)", "(1, 4,294,967,295, 1)", "(1, 1, 99999999999999999999)"}) {
    write(dir.path / "dims.csv", raw_head(kMetrics, kUnits) + record("0", "1", grid));
    EXPECT_EQ(error_of(dir.path / "dims.csv"), (dir.path / "dims.csv").string() + ":3:9: \"" + grid +
                                                   "\" has a part above 2,147,483,647 (INT32_MAX), which no launch has");
  }
  write(dir.path / "max.csv", raw_head(kMetrics, kUnits) + record("0", "1", "(2,147,483,647, 65535, 65535)"));
  const NcuImport imp = read_ncu_csv(dir.path / "max.csv");
  ASSERT_EQ(imp.rows.size(), 1u);
  EXPECT_EQ(imp.rows[0].grid, (std::array<int32_t, 3>{2147483647, 65535, 65535}));
}

// Until 2026-11-29 a CSV without any metric the formulas use (names written as labels, a
// --section page of display names), or without launches, gave empty outputs, exit 0, and said
// nothing. Each is one note; the exit status stays 0.
TEST(NcuImportRecords, AFileWithoutUsedMetricsOrWithoutLaunchesIsSaid) {
  TempDir dir;
  write(dir.path / "labels.csv", raw_head({"Duration", "DRAM Throughput"}, {"usecond", "%"}) +
                                     "\"0\",\"100\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\","
                                     "\"9.0\",\"131.81\",\"45.2\"\n");
  testing::AnalysisRun run = import(dir.path / "labels.csv", dir.path);
  EXPECT_EQ(run.status, kExitOk);
  EXPECT_NE(run.err.find("rfanalyze: note: " + (dir.path / "labels.csv").string() +
                         ": none of its columns is a metric rfanalyze uses (gpu__time_duration.sum, the FLOP counts, "
                         "dram__bytes_*)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("no launches"), std::string::npos) << run.err;

  write(dir.path / "empty.csv", raw_head(kMetrics, kUnits) + "==PROF== Disconnected from process 100\n");
  run = import(dir.path / "empty.csv", dir.path);
  EXPECT_EQ(run.status, kExitOk);
  EXPECT_NE(run.err.find("rfanalyze: note: " + (dir.path / "empty.csv").string() +
                         ": no launches (an ncu run that profiled no kernel?)"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(run.err.find("none of its columns"), std::string::npos) << run.err;

  write(dir.path / "good.csv", raw_head(kMetrics, kUnits) + record("0"));
  run = import(dir.path / "good.csv", dir.path);
  EXPECT_EQ(run.status, kExitOk);
  EXPECT_EQ(run.err.find("note: " + (dir.path / "good.csv").string()), std::string::npos) << run.err;
}

// Until 2026-11-29 summary.json wrote what an ncu CSV does not hold as 0: start_ns 0,
// format_version "0.0", a device of 0 SMs, 0 kHz, 0 bytes of memory and L2, 0 bytes/s.
TEST(NcuImportRecords, WhatTheCsvDoesNotHoldIsNullInSummaryJson) {
  TempDir dir;
  write(dir.path / "a.csv", raw_head(kMetrics, kUnits) + record("0"));
  ASSERT_EQ(import(dir.path / "a.csv", dir.path).status, kExitOk);
  const auto s = nlohmann::json::parse(std::ifstream(dir.path / "out" / "summary.json"));
  const auto& t = s["traces"][0];
  EXPECT_TRUE(t["start_ns"].is_null()) << t;
  EXPECT_TRUE(t["format_version"].is_null()) << t;
  const auto& d = s["devices"][0];
  EXPECT_EQ(d["compute_capability"], "9.0");  // the CSV's "CC"
  for (const char* key : {"sm_count", "core_clock_khz", "memory_clock_khz", "memory_bus_width_bits",
                          "global_memory_bytes", "l2_cache_bytes", "reported_memory_bandwidth_bytes_per_s"})
    EXPECT_TRUE(d[key].is_null()) << key << ": " << d[key];
}

// From the review of 3f2ca56. A record with every quote stripped (ncu's "(256, 1, 1)" and
// "1,000" then split into more fields than the header's) was still skipped; a quoted field's
// lines in a CRLF file kept their '\r'; a details cell's position was its record's last line.
TEST(NcuImportRecords, StrippedQuotesCrlfAndDetailsPositions) {
  TempDir dir;
  std::string stripped = record("1");
  stripped.erase(std::remove(stripped.begin(), stripped.end(), '"'), stripped.end());
  write(dir.path / "stripped.csv", raw_head(kMetrics, kUnits) + record("0") + stripped);
  EXPECT_EQ(error_of(dir.path / "stripped.csv").rfind((dir.path / "stripped.csv").string() + ":4:1: unquoted record", 0),
            0u)
      << error_of(dir.path / "stripped.csv");

  std::string crlf = raw_head(kMetrics, kUnits) + "\"0\",\"100\",\"p\",\"h\",\"my\nkernel\",\"1\",\"7\","
                     "\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"1,000\",\"500\",\"100\"\n";
  std::string with_cr;
  for (char c : crlf) with_cr += c == '\n' ? std::string("\r\n") : std::string(1, c);
  write(dir.path / "crlf.csv", with_cr);
  const NcuImport imp = read_ncu_csv(dir.path / "crlf.csv");
  ASSERT_EQ(imp.rows.size(), 1u);
  EXPECT_EQ(imp.rows[0].kernel, "my\nkernel");
}

// A line longer than 1 MiB: an application's (a progress bar redrawn with \r and no \n) is
// skipped, a record's is refused, and neither is held in memory whole (the cap applied only after
// a whole line was read: 200 MB for a 100 MB line).
TEST(NcuImportRecords, LinesPastTheCapAreSkippedOrRefusedUnread) {
  TempDir dir;
  const std::string big(3u << 20, 'x');
  write(dir.path / "bar.csv", "progress " + big + "\n" + raw_head(kMetrics, kUnits) + record("0") + big + "\n" + record("1"));
  EXPECT_EQ(read_ncu_csv(dir.path / "bar.csv").rows.size(), 2u);
  write(dir.path / "long.csv", raw_head(kMetrics, kUnits) + "\"0\",\"" + big + "\"\n");
  EXPECT_EQ(error_of(dir.path / "long.csv").rfind((dir.path / "long.csv").string() + ":3:1: a record longer than 1048576 bytes", 0), 0u)
      << error_of(dir.path / "long.csv").substr(0, 200);
}

// The raw page's device__attribute_* columns are the device's SMs, clocks, bus width and L2 in
// summary.json (null before: "not in an ncu CSV", though the raw page has them).
TEST(NcuImportRecords, DeviceAttributesOfTheRawPageAreRead) {
  TempDir dir;
  const std::vector<std::string> metrics = {"device__attribute_clock_rate", "device__attribute_multiprocessor_count",
                                            "device__attribute_l2_cache_size", "gpu__time_duration.sum"};
  write(dir.path / "dev.csv", raw_head(metrics, {"", "", "", "ns"}) +
                                  "\"0\",\"100\",\"p\",\"h\",\"k\",\"1\",\"7\",\"(256, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\","
                                  "\"1,980,000\",\"132\",\"52,428,800\",\"1,000\"\n");
  const testing::AnalysisRun run = import(dir.path / "dev.csv", dir.path);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "out" / "summary.json"));
  const auto& d = s["devices"][0];
  EXPECT_EQ(d["sm_count"], 132);
  EXPECT_EQ(d["core_clock_khz"], 1980000);
  EXPECT_EQ(d["l2_cache_bytes"], 52428800);
  EXPECT_TRUE(d["memory_clock_khz"].is_null());  // not in this file
}

// Durations each below 2^53 ns still add up past 2^64: the sum saturates instead of wrapping to a
// small number (2,049 launches of 2^53 - 1 ns gave 9,007,199,254,738,943 ns in all).
TEST(NcuImportRecords, SummedDurationsSaturate) {
  TempDir dir;
  std::string csv = raw_head(kMetrics, kUnits);
  for (int i = 0; i < 2049; ++i) csv += record(std::to_string(i), "9007199254740991");
  write(dir.path / "wrap.csv", csv);
  const testing::AnalysisRun run = import(dir.path / "wrap.csv", dir.path);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "out" / "summary.json"));
  EXPECT_EQ(s["totals"]["duration_ns"].get<uint64_t>(), UINT64_MAX);
}

}  // namespace
}  // namespace rf::analyzer
