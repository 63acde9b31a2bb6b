// rfanalyze --import-ncu: ncu raw CSV with ==PROF== lines, auto units and thousands separators
// (ncu_import.h), and errors naming line and column.
#include "rfprof/analyzer/ncu_import.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/ncu_csv.h"

namespace rf::analyzer {
namespace {

using testing::CsvTable;
using testing::TempDir;

const std::filesystem::path kData = RFPROF_ANALYZER_DATA;

TEST(NcuImport, SplitsQuotedFields) {
  EXPECT_EQ(split_csv_record(R"("a","b, c","say ""hi""",,x)", "f:1"),
            (std::vector<std::string>{"a", "b, c", "say \"hi\"", "", "x"}));
  EXPECT_EQ(split_csv_record("", "f:1"), (std::vector<std::string>{""}));
  try {
    split_csv_record(R"("a","b)", "f.csv:3");
    FAIL();
  } catch (const NcuImportError& e) {
    EXPECT_STREQ(e.what(), "f.csv:3:5: unterminated quoted field");
  }
  EXPECT_THROW(split_csv_record(R"("a"x,"b")", "f:1"), NcuImportError);
}

TEST(NcuImport, CellValuesInBaseUnits) {
  EXPECT_EQ(ncu_cell_value("1,234,567", "byte", "w"), 1234567.0);
  EXPECT_EQ(ncu_cell_value("1.5", "Mbyte", "w"), 1.5e6);
  EXPECT_EQ(ncu_cell_value("12.5", "usecond", "w"), 12500.0);
  EXPECT_EQ(ncu_cell_value("3,264", "ns", "w"), 3264.0);  // ncu 2025.3's base time unit
  EXPECT_EQ(ncu_cell_value("1.5", "ms", "w"), 1.5e6);
  EXPECT_EQ(ncu_cell_value("2", "Ginst", "w"), 2e9);
  EXPECT_FALSE(ncu_cell_value("", "byte", "w"));
  EXPECT_FALSE(ncu_cell_value("n/a", "byte", "w"));
  // Every unit ncu prints for the roofline's metrics, to the base unit (K, M, G, T: 1e3 steps).
  for (const auto& [unit, scale] : std::vector<std::pair<std::string, double>>{
           {"Kbyte", 1e3}, {"Gbyte", 1e9}, {"Tbyte", 1e12}, {"nsecond", 1}, {"msecond", 1e6}, {"second", 1e9},
           {"us", 1e3}, {"s", 1e9}, {"inst", 1}, {"Kinst", 1e3}, {"Minst", 1e6}, {"sector", 1}, {"Ksector", 1e3},
           {"Msector", 1e6}, {"cycle", 1}, {"Kcycle", 1e3}, {"Mcycle", 1e6}, {"Gcycle", 1e9}, {"%", 1},
           {"math_op", 1}, {"Kmath_op", 1e3}, {"Mmath_op", 1e6}, {"Gmath_op", 1e9}, {"", 1}})
    EXPECT_EQ(ncu_cell_value("2", unit, "w"), 2 * scale) << unit;
  EXPECT_THROW(ncu_cell_value("1", "furlong", "w"), NcuImportError);
  EXPECT_THROW(ncu_cell_value("1.2.3", "byte", "w"), NcuImportError);
}

TEST(NcuImport, AutoUnitsAndProfLinesAreRead) {
  NcuImport imp = read_ncu_csv(kData / "ncu_auto_units.csv");
  ASSERT_EQ(imp.rows.size(), 2u);
  ASSERT_EQ(imp.processes.size(), 1u);
  EXPECT_EQ(imp.processes[0].pid, 31337u);
  EXPECT_EQ(imp.processes[0].name, "python3");
  const KernelRow& a = imp.rows[0];
  EXPECT_EQ(a.kernel, "ffma_loop(float*, int)");
  EXPECT_EQ(a.grid, (std::array<int32_t, 3>{1024, 1, 1}));
  EXPECT_EQ(a.block, (std::array<int32_t, 3>{256, 1, 1}));
  EXPECT_EQ(a.stream, 7u);
  EXPECT_EQ(a.duration_ns, 12290u);                 // 12.29 usecond
  EXPECT_DOUBLE_EQ(*a.metrics.fp32_flop, 2 * 16.78e6);  // 16.78 Minst of FFMA
  EXPECT_DOUBLE_EQ(*a.metrics.dram_read_bytes, 1.05e6);
  EXPECT_DOUBLE_EQ(*a.metrics.dram_write_bytes, 2.10e3);
  const KernelRow& b = imp.rows[1];
  EXPECT_DOUBLE_EQ(*b.metrics.fp64_flop, 4 + 1 + 2 * 2);
  EXPECT_DOUBLE_EQ(*b.metrics.fp32_flop, 100 + 2 * 500e6);  // the units row scales whole columns (Minst)
  EXPECT_DOUBLE_EQ(*b.metrics.fp16_flop, kFp16Weights.fma * 5);
}

TEST(NcuImport, ImpossibleDurationsAreRefused) {
  // A negative, infinite or huge gpu__time_duration.sum became ~1.8e19 ns (llround of -5 cast to
  // uint64_t) or an unspecified value; then the launch had no duration; since 2026-11-29 the cell
  // is refused, named (test_ncu_import_records.cpp has the 2^53 ns bound).
  std::ifstream in(kData / "ncu_auto_units.csv");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const char* bad : {"-5", "inf", "1e30"}) {
    std::string t = text;
    const std::string cell = "\"12.29\"";
    const size_t at = t.find(cell);
    ASSERT_NE(at, std::string::npos);
    t.replace(at, cell.size(), std::string("\"") + bad + "\"");
    TempDir dir;
    const auto path = dir.path / "bad.csv";
    {
      std::ofstream out(path);
      out << t;
    }
    try {
      read_ncu_csv(path);
      ADD_FAILURE() << bad << " was read";
    } catch (const NcuImportError& e) {
      EXPECT_NE(std::string(e.what()).find("gpu__time_duration.sum \"" + std::string(bad) + "\" is not a duration"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(NcuImport, ErrorsNameLineAndColumn) {
  try {
    read_ncu_csv(kData / "ncu_bad_cell.csv");
    FAIL();
  } catch (const NcuImportError& e) {
    EXPECT_EQ(std::string(e.what()), (kData / "ncu_bad_cell.csv").string() + ":3:12: \"lots\" is not a number");
  }
  TempDir dir;
  std::ofstream(dir.path / "app.log") << "no csv here\n";
  EXPECT_THROW(read_ncu_csv(dir.path / "app.log"), NcuImportError);
  std::ofstream(dir.path / "short.csv") << "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\","
                                           "\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"m.sum\"\n"
                                           "\"0\",\"1\"\n";
  try {
    read_ncu_csv(dir.path / "short.csv");
    FAIL();
  } catch (const NcuImportError& e) {
    EXPECT_NE(std::string(e.what()).find("short.csv:2:1: 2 fields, expected 12"), std::string::npos) << e.what();
  }
}

/// ncu_auto_units.csv's header and units row, then `rows` (each a whole quoted record).
std::string auto_units_with(const std::vector<std::string>& rows) {
  std::ifstream in(kData / "ncu_auto_units.csv");
  std::string out, line;
  int kept = 0;
  while (kept < 2 && std::getline(in, line))
    if (line.rfind("\"ID\",", 0) == 0 || (kept == 1 && line.rfind("\"\",", 0) == 0)) out += line + "\n", ++kept;
  for (const auto& r : rows) out += r + "\n";
  return out;
}

/// Values after "CC" for ncu_auto_units.csv's 12 metrics.
const std::string kValues = R"csv("1.05","2.10","12.29","0","0","0","0","16.78","0","0","0","0")csv";

// Launch attributes as ncu prints them, and what is not: grid and block are "(x, y, z)" with
// thousands separators, anything else no value; a number with text after it is no number; each
// process has its rows and devices; "8.6" is compute capability 8.6.
TEST(NcuImport, LaunchAttributesAreReadOnlyInNcusShape) {
  TempDir dir;
  const auto path = dir.path / "a.csv";
  std::ofstream(path) << auto_units_with(
      {R"csv("0","31","python3","node07","a","1","7","(1,024, 2, 3)","[256, 1, 1]","0","8.6",)csv" + kValues,
       R"csv("1","31","python3","node07","c","1","7","(1, 2, 3, 4)","256, 1, 1","0","8.6",)csv" + kValues,
       R"csv("2","32","other","node08","b","1","7x","(256, 1)","(256, x, 1)","1","9.0",)csv" + kValues,
       R"csv("3","32","other","node08","d","1","7","(12,3)","(1, 1, 1)","1","9.0",)csv" + kValues});
  NcuImport imp = read_ncu_csv(path);
  ASSERT_EQ(imp.rows.size(), 4u);
  // Two processes, each with its rows and devices, in order of their first row.
  ASSERT_EQ(imp.processes.size(), 2u);
  EXPECT_EQ(imp.processes[0].pid, 31u);
  EXPECT_EQ(imp.processes[0].name, "python3");
  EXPECT_EQ(imp.processes[0].host, "node07");
  EXPECT_EQ(imp.processes[0].rows, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(imp.processes[1].pid, 32u);
  EXPECT_EQ(imp.processes[1].name, "other");
  EXPECT_EQ(imp.processes[1].host, "node08");
  EXPECT_EQ(imp.processes[1].rows, (std::vector<size_t>{2, 3}));
  EXPECT_EQ(imp.rows[0].block, (std::array<int32_t, 3>{1024, 2, 3}));
  EXPECT_FALSE(imp.rows[0].grid) << "[256, 1, 1]";
  EXPECT_EQ(imp.rows[0].stream, 7u);
  EXPECT_FALSE(imp.rows[1].block) << "(1, 2, 3, 4)";
  EXPECT_FALSE(imp.rows[1].grid) << "256, 1, 1";
  EXPECT_FALSE(imp.rows[2].stream) << "7x";
  EXPECT_FALSE(imp.rows[2].block) << "(256, 1)";
  EXPECT_FALSE(imp.rows[2].grid) << "(256, x, 1)";
  EXPECT_FALSE(imp.rows[3].block) << "(12,3): parts are separated by \", \"";
  EXPECT_EQ(imp.rows[3].grid, (std::array<int32_t, 3>{1, 1, 1}));
  ASSERT_EQ(imp.processes[0].devices.size(), 1u);
  EXPECT_EQ(imp.processes[0].devices.at(0).cc_major, 8u);
  EXPECT_EQ(imp.processes[0].devices.at(0).cc_minor, 6u);
  ASSERT_EQ(imp.processes[1].devices.size(), 1u);
  EXPECT_EQ(imp.processes[1].devices.at(1).cc_major, 9u);
}

// The edges of a record and of a file: a trailing empty field, the column of text after a
// closing quote, an unknown unit named, a missing file, a file without header (its last line
// named), a CSV without units row (values in base units), a record without Process ID (a record,
// not the units row), a duration of 0 (timed, 0 ns).
TEST(NcuImport, EdgesOfRecordsAndFiles) {
  EXPECT_EQ(split_csv_record("a,", "f:1"), (std::vector<std::string>{"a", ""}));
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const NcuImportError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { split_csv_record(R"("a"x,"b")", "f.csv:2"); }), "f.csv:2:4: text after a closing quote");
  EXPECT_NE(message([] { ncu_cell_value("1", "furlong", "w"); }).find("w: unit \"furlong\" is not known"),
            std::string::npos);
  TempDir dir;
  EXPECT_EQ(message([&] { read_ncu_csv(dir.path / "missing.csv"); }),
            (dir.path / "missing.csv").string() + ":0:0: cannot be opened");
  std::ofstream(dir.path / "app.log") << "no csv here\nnor here\n";
  EXPECT_EQ(message([&] { read_ncu_csv(dir.path / "app.log"); }).rfind((dir.path / "app.log").string() + ":2:1: no ncu CSV header", 0),
            0u);

  std::string csv = auto_units_with({});
  csv.erase(csv.find("\n") + 1);  // the header only: no units row
  csv += R"csv("0","","python3","node07","a","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0",)csv" + kValues + "\n";
  csv += R"csv("1","31","python3","node07","b","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0",)csv" +
         std::string(R"csv("1.05","2.10","0","0","0","0","0","16.78","0","0","0","0")csv") + "\n";
  csv += R"csv("2","31","python3","node07","c","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0",)csv" +
         std::string(R"csv("1.05","2.10","2.5","0","0","0","0","16.78","0","0","0","0")csv") + "\n";
  std::ofstream(dir.path / "bare.csv") << csv;
  NcuImport imp = read_ncu_csv(dir.path / "bare.csv");
  ASSERT_EQ(imp.rows.size(), 3u);
  EXPECT_EQ(imp.rows[0].context, 1u);  // "Context", not "Stream"
  EXPECT_EQ(imp.rows[0].stream, 7u);
  EXPECT_EQ(imp.rows[2].duration_ns, 3u);  // 2.5 ns rounded, not cut
  ASSERT_EQ(imp.processes.size(), 2u);  // the first record's, with an empty pid, and 31's
  EXPECT_EQ(imp.processes[0].pid, 0u);
  EXPECT_EQ(imp.processes[0].rows, (std::vector<size_t>{0}));
  EXPECT_DOUBLE_EQ(*imp.rows[0].metrics.dram_read_bytes, 1.05);  // no units row: base units
  EXPECT_EQ(imp.rows[0].duration_ns, 12u);                       // 12.29 ns, rounded
  EXPECT_EQ(imp.rows[1].duration_ns, 0u);
}

// Windows line ends (ncu run on Windows, or a file passed through an editor) read the same.
TEST(NcuImport, CrlfLineEndsReadTheSame) {
  std::ifstream in(kData / "ncu_auto_units.csv");
  std::string crlf, line;
  while (std::getline(in, line)) crlf += line + "\r\n";
  TempDir dir;
  std::ofstream(dir.path / "crlf.csv") << crlf;
  NcuImport a = read_ncu_csv(kData / "ncu_auto_units.csv");
  NcuImport b = read_ncu_csv(dir.path / "crlf.csv");
  EXPECT_EQ(b.metric_names, a.metric_names);
  ASSERT_EQ(b.rows.size(), 2u);
  EXPECT_EQ(b.rows[1].metrics.fp32_flop, a.rows[1].metrics.fp32_flop);
  EXPECT_EQ(b.rows[1].duration_ns, 1500u);
}

// A header that is not ncu's raw page, a record longer than the header, an ID that is no number.
TEST(NcuImport, MalformedHeadersAndRecordsAreErrors) {
  TempDir dir;
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    std::ofstream(dir.path / "x.csv") << text;
    try {
      read_ncu_csv(dir.path / "x.csv");
      ADD_FAILURE() << "no error for " << text;
    } catch (const NcuImportError& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error("\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Name\",\"Context\",\"Stream\",\"Block Size\","
               "\"Grid Size\",\"Device\",\"CC\"\n",
               "x.csv:1:1: not ncu's raw or details page header");
  expect_error(auto_units_with({R"csv("0","31","python3","node07","a","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0",)csv" +
                                kValues + ",\"extra\""}),
               "x.csv:3:1: 24 fields, expected 23 as in the header");
  expect_error(auto_units_with({R"csv("zero","31","python3","node07","a","1","7","(1, 1, 1)","(1, 1, 1)","0","9.0",)csv" +
                                kValues}),
               "x.csv:3:1: ID \"zero\" is not a number");
}

// A raw CSV written by ncu 2025.3.1 on an H100 (tests/data/h100-2026-11-23): besides the metrics
// it has ~200 device__attribute_* columns, some of them text ("NVIDIA H100 80GB HBM3", "No-CC"),
// and units such as "ns", "block" and "register/thread"; the columns no formula uses are ignored.
TEST(NcuImport, RealNcuCsvWithTextAttributeColumns) {
  const auto path = kData / ".." / ".." / "data" / "h100-2026-11-23" / "examples" / "ffma.ncu.csv";
  NcuImport imp = read_ncu_csv(path);
  ASSERT_EQ(imp.rows.size(), 1u);
  auto col = [&](const std::string& name) {
    auto it = std::find(imp.metric_names.begin(), imp.metric_names.end(), name);
    EXPECT_NE(it, imp.metric_names.end()) << name;
    return static_cast<size_t>(it - imp.metric_names.begin());
  };
  EXPECT_TRUE(std::isnan(imp.values[0][col("device__attribute_display_name")]));  // text
  const double ffma = imp.values[0][col("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum")];
  EXPECT_EQ(ffma, 2147483648.0);  // the example's analytic count (ffma.expected.json)
  EXPECT_EQ(*imp.rows[0].metrics.fp32_flop, 2 * ffma);
  EXPECT_GT(*imp.rows[0].duration_ns, 0u);
  // The device: its name from device__attribute_display_name, compute capability from "CC".
  ASSERT_EQ(imp.processes.size(), 1u);
  const auto& devices = imp.processes[0].devices;
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices.at(0).name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(devices.at(0).cc_major, 9u);
  EXPECT_EQ(devices.at(0).cc_minor, 0u);
}

// The imported launches get their device's ceilings, from its name or from --device (both were
// ignored: summary.json listed no device and the roofline had no roofs).
TEST(NcuImport, DeviceCeilingsFromTheNameOrFromDevice) {
  const auto path = kData / ".." / ".." / "data" / "h100-2026-11-23" / "examples" / "ffma.ncu.csv";
  for (const std::optional<std::string>& forced : {std::optional<std::string>(), std::optional<std::string>("V100 SXM2")}) {
    TempDir dir;
    AnalyzeOptions o;
    o.import_ncu = {path};
    o.device = forced;
    const testing::AnalysisRun run = testing::analyze({}, dir.path / "r", o);
    ASSERT_EQ(run.status, kExitOk) << run.err;
    nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "r" / "summary.json"));
    ASSERT_EQ(s["devices"].size(), 1u);
    EXPECT_EQ(s["devices"][0]["name"], "NVIDIA H100 80GB HBM3");
    EXPECT_EQ(s["devices"][0]["ceilings"]["datasheet_entry"], forced.value_or("H100 SXM5"));
    EXPECT_NE(testing::slurp(dir.path / "r" / "roofline.svg").find("class=\"roof compute\""), std::string::npos);
    // The import is a counters run of its process, on its host, with its device's compute
    // capability; every metric value is in counters.csv and every launch in report.html's tables.
    const NcuImport imp = read_ncu_csv(path);
    ASSERT_EQ(imp.processes.size(), 1u);
    ASSERT_FALSE(imp.processes[0].host.empty());
    EXPECT_EQ(s["traces"][0]["mode"], "counters");
    EXPECT_EQ(s["devices"][0]["compute_capability"], "9.0");
    EXPECT_EQ(CsvTable::read(dir.path / "r" / "processes.csv").cell(0, "hostname"), imp.processes[0].host);
    EXPECT_EQ(CsvTable::read(dir.path / "r" / "counters.csv").rows.size(), imp.rows.size() * imp.metric_names.size());
    EXPECT_EQ(CsvTable::read(dir.path / "r" / "scaling.csv").cell(0, "launches"), std::to_string(imp.rows.size()));
  }
}

// An import's trace entry is the CSV (its path and process name) and its device keeps the CSV's
// device index and compute capability (an RTX 3090's 8.6 on device 1).
TEST(NcuImport, TheImportsPathProcessAndDeviceReachSummaryJson) {
  TempDir dir;
  const auto csv = dir.path / "ga102.csv";
  std::ofstream(csv) << "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
                        "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n"
                        ",,,,,,,,,,,\"nsecond\"\n"
                        "\"0\",\"4321\",\"train.py\",\"node7\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"1\","
                        "\"8.6\",\"100\"\n";
  AnalyzeOptions o;
  o.import_ncu = {csv};
  const testing::AnalysisRun run = testing::analyze({}, dir.path / "r", o);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const auto s = nlohmann::json::parse(std::ifstream(dir.path / "r" / "summary.json"));
  EXPECT_EQ(s["traces"][0]["path"], csv.string());
  EXPECT_EQ(s["traces"][0]["process_name"], "train.py");
  ASSERT_EQ(s["devices"].size(), 1u) << s["devices"];
  EXPECT_EQ(s["devices"][0]["device_id"], 1);
  EXPECT_EQ(s["devices"][0]["compute_capability"], "8.6");
  EXPECT_EQ(s["devices"][0]["trace"], csv.string());
  EXPECT_EQ(CsvTable::read(dir.path / "r" / "kernels.csv").cell(0, "device"), "1");
}

TEST(NcuImport, RfanalyzeWritesTheRooflineOutputsFromIt) {
  TempDir dir;
  AnalyzeOptions o;
  o.import_ncu = {kData / "ncu_auto_units.csv"};
  o.device = "H100 SXM5";
  const testing::AnalysisRun run = testing::analyze({}, dir.path / "r", o);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  CsvTable k = CsvTable::read(dir.path / "r" / "kernels.csv");
  ASSERT_EQ(k.rows.size(), 2u);
  EXPECT_EQ(k.cell(0, "kernel"), "ffma_loop(float*, int)");
  EXPECT_EQ(k.cell(0, "fp32_flop"), "33560000");
  EXPECT_EQ(k.cell(0, "duration_ns"), "12290");
  EXPECT_EQ(k.cell(0, "phase"), "other");
  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "r" / "summary.json"));
  EXPECT_EQ(s["traces"][0]["pid"], 31337);
  EXPECT_EQ(s["totals"]["launches"], 2);
  o.import_ncu = {kData / "ncu_bad_cell.csv"};
  const testing::AnalysisRun bad = testing::analyze({}, dir.path / "r", o);
  EXPECT_EQ(bad.status, kExitBadInput);
  EXPECT_NE(bad.err.find("ncu_bad_cell.csv:3:12:"), std::string::npos) << bad.err;
}

TEST(NcuImport, ReadsBackWhatRfprofWrites) {
  // rfprof --csv --page raw output of a constructed trace, imported: same FLOPs and bytes.
  TempDir dir;
  {
    testing::TraceBuilder t(dir.path / "t.rftrace");
    t.process(9, trace::CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    testing::Counts c;
    c.ffma = 1234567;
    c.read = 7654321;
    c.gpu_time = 4096;
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 6096);
    t.counters(1, 1, c.values());
    t.window(0, false, 9000);
    t.finish();
  }
  {
    std::ofstream f(dir.path / "x.csv");
    write_ncu_csv(f, {dir.path / "t.rftrace"}, "raw", {});
  }
  NcuImport imp = read_ncu_csv(dir.path / "x.csv");
  ASSERT_EQ(imp.rows.size(), 1u);
  EXPECT_EQ(imp.rows[0].metrics.fp32_flop, 2.0 * 1234567);
  EXPECT_EQ(imp.rows[0].metrics.dram_read_bytes, 7654321.0);
  EXPECT_EQ(imp.rows[0].duration_ns, 4096u);
  ASSERT_EQ(imp.processes.size(), 1u);
  EXPECT_EQ(imp.processes[0].pid, 9u);
}

}  // namespace
}  // namespace rf::analyzer
