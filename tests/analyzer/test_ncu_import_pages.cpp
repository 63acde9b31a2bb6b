// rfanalyze --import-ncu beyond one raw page of one process: ncu's details page (what `ncu --csv`
// prints without --page raw), numbers written in another locale than C, byte order marks, two
// runs in one file, and several processes in one CSV (ncu profiles child processes by default).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "ncu_import_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/ncu_import.h"

namespace rf::analyzer {
namespace {

using testing::CsvTable;
using testing::TempDir;

const std::filesystem::path kData = RFPROF_ANALYZER_DATA;
const std::filesystem::path kFfma = kData / ".." / ".." / "data" / "h100-2026-11-23" / "examples" / "ffma.ncu.csv";

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string join(const std::vector<std::string>& fields) {
  std::string out;
  for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + quoted(fields[i]);
  return out;
}

/// The details page of the raw page `raw` (header, units row, records; other lines dropped), as
/// ncu writes it: a row per launch and metric, "Section Name", "Metric Name", "Metric Unit",
/// "Metric Value" after "CC". With `rules`, each launch ends with a rule's row (no metric name).
std::string details_of(const std::filesystem::path& raw, bool rules = false) {
  std::ifstream in(raw);
  std::string line, out;
  std::vector<std::string> header, units;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] != '"') continue;
    std::vector<std::string> f = split_csv_record(line, "raw");
    if (header.empty()) {
      header = f;
      std::vector<std::string> h(f.begin(), f.begin() + 11);
      for (const char* c : {"Section Name", "Metric Name", "Metric Unit", "Metric Value"}) h.push_back(c);
      if (rules)
        for (const char* c : {"Rule Name", "Rule Type", "Rule Description"}) h.push_back(c);
      out += join(h) + "\n";
      continue;
    }
    if (f[0].empty()) {
      units = f;
      continue;
    }
    std::vector<std::string> ident(f.begin(), f.begin() + 11);
    for (size_t i = 11; i < f.size(); ++i) {
      std::vector<std::string> row = ident;
      for (const std::string& c : {std::string("Command line profiler metrics"), header[i],
                                   units.empty() ? std::string() : units[i], f[i]})
        row.push_back(c);
      if (rules) row.insert(row.end(), {"", "", ""});
      out += join(row) + "\n";
    }
    if (rules) {
      std::vector<std::string> row = ident;
      row.insert(row.end(), {"SpeedOfLight", "", "", "", "SOLBottleneck", "OPT", "This kernel ..."});
      out += join(row) + "\n";
    }
  }
  return out;
}

void write(const std::filesystem::path& p, const std::string& text) { testing::write_text(p, text); }
std::string error_of(const std::filesystem::path& p) { return testing::import_error_of(p); }

// Until 2026-11-29 the details page's header passed as a raw page's, and each metric row became a
// launch without FLOP, bytes or duration (56 for ffma.ncu.csv's one launch), exit 0.
TEST(NcuImportPages, TheDetailsPageGivesTheRawPagesLaunches) {
  TempDir dir;
  for (const std::filesystem::path& raw : {kFfma, kData / "ncu_auto_units.csv"}) {
    for (bool rules : {false, true}) {
      write(dir.path / "details.csv", details_of(raw, rules));
      const NcuImport a = read_ncu_csv(raw);
      const NcuImport b = read_ncu_csv(dir.path / "details.csv");
      ASSERT_EQ(b.rows.size(), a.rows.size()) << raw;
      EXPECT_EQ(b.metric_names, a.metric_names);  // the rows' names in order of appearance
      for (size_t i = 0; i < a.rows.size(); ++i) {
        EXPECT_EQ(b.rows[i].id, a.rows[i].id);
        EXPECT_EQ(b.rows[i].kernel, a.rows[i].kernel);
        EXPECT_EQ(b.rows[i].grid, a.rows[i].grid);
        EXPECT_EQ(b.rows[i].block, a.rows[i].block);
        EXPECT_EQ(b.rows[i].duration_ns, a.rows[i].duration_ns);
        EXPECT_EQ(b.rows[i].metrics.fp32_flop, a.rows[i].metrics.fp32_flop);
        EXPECT_EQ(b.rows[i].metrics.fp64_flop, a.rows[i].metrics.fp64_flop);
        EXPECT_EQ(b.rows[i].metrics.dram_read_bytes, a.rows[i].metrics.dram_read_bytes);
        EXPECT_EQ(b.rows[i].metrics.dram_write_bytes, a.rows[i].metrics.dram_write_bytes);
        ASSERT_EQ(b.values[i].size(), a.values[i].size());
        for (size_t m = 0; m < a.values[i].size(); ++m)
          if (!std::isnan(a.values[i][m])) {
            EXPECT_EQ(b.values[i][m], a.values[i][m]) << a.metric_names[m];
          }
      }
      ASSERT_EQ(b.processes.size(), 1u);
      EXPECT_EQ(b.processes[0].devices.at(0).name, a.processes[0].devices.at(0).name);
      EXPECT_EQ(b.scaled_metric, a.scaled_metric);
      EXPECT_EQ(b.scaled_unit, a.scaled_unit);
    }
  }
  // The real one's launch has FLOP and a duration, as from the raw page.
  const NcuImport real = read_ncu_csv(kFfma);
  ASSERT_TRUE(real.rows[0].duration_ns);
  EXPECT_GT(*real.rows[0].duration_ns, 0u);
  EXPECT_GT(real.rows[0].metrics.fp32_flop.value_or(0), 0);
}

/// `csv` (ncu's raw or details page) as `ncu --nvtx` writes it: two NVTX columns between
/// "Host Name" and "Kernel Name" (the header's names as ncu 2024's; empty in the units row).
std::string with_nvtx_columns(const std::string& csv) {
  std::istringstream in(csv);
  std::string line, out;
  bool header = true;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] != '"') {
      out += line + "\n";
      continue;
    }
    std::vector<std::string> f = split_csv_record(line, "csv");
    const std::vector<std::string> nvtx =
        header ? std::vector<std::string>{"thread Domain:Push/Pop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg",
                                          "Id:Domain:Start/Stop_Range:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:Msg"}
        : f[0].empty() ? std::vector<std::string>{"", ""}
                       : std::vector<std::string>{"1 <default domain>:step:none:none:none:none:ascii:step", ""};
    f.insert(f.begin() + 4, nvtx.begin(), nvtx.end());
    header = false;
    out += join(f) + "\n";
  }
  return out;
}

// With ncu's --nvtx (the usual way to use --nvtx-include), NVTX columns come between "Host Name"
// and "Kernel Name": both pages were refused as "not ncu's raw or details page header". They read
// as without them (the NVTX columns are not read).
TEST(NcuImportPages, NvtxColumnsOfNcusNvtxFlagAreSkipped) {
  TempDir dir;
  std::ifstream raw_in(kFfma);
  const std::string raw((std::istreambuf_iterator<char>(raw_in)), std::istreambuf_iterator<char>());
  write(dir.path / "raw.csv", with_nvtx_columns(raw));
  write(dir.path / "details.csv", with_nvtx_columns(details_of(kFfma, true)));
  const NcuImport a = read_ncu_csv(kFfma);
  for (const char* name : {"raw.csv", "details.csv"}) {
    const NcuImport b = read_ncu_csv(dir.path / name);
    ASSERT_EQ(b.rows.size(), a.rows.size()) << name;
    EXPECT_EQ(b.metric_names, a.metric_names) << name;
    EXPECT_EQ(b.rows[0].kernel, a.rows[0].kernel) << name;
    EXPECT_EQ(b.rows[0].grid, a.rows[0].grid) << name;
    EXPECT_EQ(b.rows[0].device, a.rows[0].device) << name;
    EXPECT_EQ(b.rows[0].duration_ns, a.rows[0].duration_ns) << name;
    EXPECT_EQ(b.rows[0].metrics.fp32_flop, a.rows[0].metrics.fp32_flop) << name;
    EXPECT_EQ(b.processes[0].devices.at(0).cc_major, a.processes[0].devices.at(0).cc_major) << name;
  }
}

TEST(NcuImportPages, ADetailsLaunchsRowsComeTogether) {
  TempDir dir;
  std::string text = details_of(kData / "ncu_auto_units.csv");
  // Launch 0's first metric row moved after launch 1's rows.
  std::istringstream lines(text);
  std::string header, first, line, rest;
  std::getline(lines, header);
  std::getline(lines, first);
  while (std::getline(lines, line)) rest += line + "\n";
  write(dir.path / "x.csv", header + "\n" + rest + first + "\n");
  EXPECT_NE(error_of(dir.path / "x.csv").find(":25:1: ID \"0\" again, after other launches"), std::string::npos)
      << error_of(dir.path / "x.csv");
}

// Each launch with metrics of its own would make a launches x metrics table from a file of
// launches rows (a hostile one: 1,100 rows, 1.2 M values): refused, naming the counts.
TEST(NcuImportPages, ADetailsPageWhoseLaunchesNameOtherMetricsIsRefused) {
  TempDir dir;
  std::string text = join({"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
                           "Block Size", "Grid Size", "Device", "CC", "Section Name", "Metric Name", "Metric Unit",
                           "Metric Value"}) + "\n";
  for (int i = 0; i < 1100; ++i)
    text += join({std::to_string(i), "1", "p", "h", "k", "1", "7", "(1, 1, 1)", "(1, 1, 1)", "0", "9.0", "s",
                  "m" + std::to_string(i) + ".sum", "", "1"}) + "\n";
  write(dir.path / "wide.csv", text);
  EXPECT_NE(error_of(dir.path / "wide.csv").find("the details page's 1100 launches name 1100 different metrics in only 1100 rows"),
            std::string::npos) << error_of(dir.path / "wide.csv");
  // ncu's own shape, every launch with the same metrics, is read however many launches there are.
  std::string same = text.substr(0, text.find('\n') + 1);
  for (int i = 0; i < 1100; ++i)
    for (const char* m : {"gpu__time_duration.sum", "dram__bytes_read.sum"})
      same += join({std::to_string(i), "1", "p", "h", "k", "1", "7", "(1, 1, 1)", "(1, 1, 1)", "0", "9.0", "s", m, "", "1"}) + "\n";
  write(dir.path / "same.csv", same);
  EXPECT_EQ(read_ncu_csv(dir.path / "same.csv").rows.size(), 1100u);
}

TEST(NcuImportPages, NumbersAreReadAsNcuWritesThemInTheCLocale) {
  EXPECT_EQ(ncu_cell_value("1,234,567.5", "byte", "w"), 1234567.5);
  EXPECT_EQ(ncu_cell_value("-1,234", "byte", "w"), -1234.0);
  EXPECT_EQ(ncu_cell_value("+5", "byte", "w"), 5.0);
  EXPECT_EQ(ncu_cell_value("1.5e3", "byte", "w"), 1500.0);
  EXPECT_EQ(ncu_cell_value("1,024", "Kbyte", "w"), 1024e3);
  for (const char* bad : {"1,23", "12,3456", "1,2345", "1234,567", "1,234,56", ",123", "1.", ".5", "1e", "1,234.", "--1"})
    EXPECT_THROW(ncu_cell_value(bad, "byte", "w"), NcuImportError) << bad;
  for (const char* other : {"65,77", "367.084,80", "27.595.520", "1.287.680", "-3,5", "1.234.567,5"})
    EXPECT_TRUE(other_locale_number(other)) << other;
  for (const char* c : {"1,234", "1,234,567.5", "156.448", "535.104.05", "12.4.1", "9.0", "n/a", "NVIDIA", "",
                        "1.2.3", "(1, 1, 1)", "1234.567.890"})
    EXPECT_FALSE(other_locale_number(c)) << c;
}

// A file written in another locale is refused whole, even where the telling cell is in a column no
// formula uses: its other numbers ("156.448" ns for 156,448) would be read 1000 times too small.
TEST(NcuImportPages, AFileInAnotherLocaleIsRefused) {
  TempDir dir;
  std::ifstream in(kData / "ncu_auto_units.csv");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string cell = "\"12.29\"";  // launch 0's gpu__time_duration.sum, in usecond
  ASSERT_NE(text.find(cell), std::string::npos);
  text.replace(text.find(cell), cell.size(), "\"12,29\"");
  write(dir.path / "de.csv", text);
  const std::string e = error_of(dir.path / "de.csv");
  EXPECT_NE(e.find("de.csv:6:14: \"12,29\" is a number in another locale's format"), std::string::npos) << e;
  EXPECT_NE(e.find("LC_ALL=C"), std::string::npos) << e;
  // In the details page too, and in a metric no formula uses.
  std::string details = details_of(kData / "ncu_auto_units.csv");
  const std::string row_end = "\"inst\",\"0\"\n";
  ASSERT_NE(details.find(row_end), std::string::npos);
  details.replace(details.find(row_end), row_end.size(), "\"inst\",\"1.287.680\"\n");
  write(dir.path / "de-details.csv", details);
  EXPECT_NE(error_of(dir.path / "de-details.csv").find("\"1.287.680\" is a number in another locale's format"),
            std::string::npos);
}

TEST(NcuImportPages, ByteOrderMarksAndSecondHeaders) {
  TempDir dir;
  std::ifstream in(kData / "ncu_auto_units.csv");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  write(dir.path / "bom.csv", "\xef\xbb\xbf" + text.substr(text.find("\"ID\"")));
  EXPECT_EQ(read_ncu_csv(dir.path / "bom.csv").rows.size(), 2u);
  write(dir.path / "utf16.csv", std::string("\xff\xfe\"\0I\0D\0\"\0", 10));
  EXPECT_NE(error_of(dir.path / "utf16.csv").find("utf16.csv:1:1: UTF-16 text"), std::string::npos);
  write(dir.path / "twice.csv", text + text);
  EXPECT_NE(error_of(dir.path / "twice.csv").find(":13:1: a second ncu header"), std::string::npos)
      << error_of(dir.path / "twice.csv");
}

// ncu profiles every process of the command (--target-processes all): each process is a trace
// of its own in processes.csv and summary.json, as rfprof's traces are (until 2026-11-29 all its
// launches were put in the first record's process).
TEST(NcuImportPages, EachProcessIsATraceOfItsOwn) {
  TempDir dir;
  const std::string header =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block Size\","
      "\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n,,,,,,,,,,,\"nsecond\"\n";
  auto row = [](int id, int pid, const char* name, int device, const char* cc, int ns) {
    return "\"" + std::to_string(id) + "\",\"" + std::to_string(pid) + "\",\"" + name + "\",\"node1\",\"k\",\"1\",\"7\","
           "\"(1, 1, 1)\",\"(1, 1, 1)\",\"" + std::to_string(device) + "\",\"" + cc + "\",\"" + std::to_string(ns) + "\"\n";
  };
  write(dir.path / "two.csv", header + row(0, 100, "main", 0, "9.0", 1000) + row(1, 200, "worker", 1, "8.0", 50) +
                                  row(2, 100, "main", 0, "9.0", 3000) + row(3, 200, "worker", 1, "8.0", 70));
  AnalyzeOptions o;
  o.import_ncu = {dir.path / "two.csv"};
  o.device = "H100 SXM5";
  const testing::AnalysisRun run = testing::analyze({}, dir.path / "r", o);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable p = CsvTable::read(dir.path / "r" / "processes.csv");
  ASSERT_EQ(p.rows.size(), 2u);
  EXPECT_EQ(p.cell(0, "pid"), "100");
  EXPECT_EQ(p.cell(0, "launches"), "2");
  EXPECT_EQ(p.cell(0, "duration_ns"), "4000");
  EXPECT_EQ(p.cell(1, "pid"), "200");
  EXPECT_EQ(p.cell(1, "launches"), "2");
  EXPECT_EQ(p.cell(1, "duration_ns"), "120");
  const auto s = nlohmann::json::parse(std::ifstream(dir.path / "r" / "summary.json"));
  ASSERT_EQ(s["traces"].size(), 2u);
  EXPECT_EQ(s["traces"][1]["process_name"], "worker");
  EXPECT_EQ(s["totals"]["launches"], 4);
  ASSERT_EQ(s["devices"].size(), 2u) << s["devices"];  // each process's own device
  EXPECT_EQ(s["devices"][1]["compute_capability"], "8.0");
}

// A device without ceilings (here: a details page without device__attribute_display_name, as
// `ncu --csv --metrics ...` writes it) is said once on stderr, naming the device and the way
// out; --device gives it ceilings and no note.
TEST(NcuImportPages, ADeviceWithoutCeilingsIsNamedOnce) {
  TempDir dir;
  write(dir.path / "details.csv", details_of(kData / "ncu_auto_units.csv"));
  for (const bool forced : {false, true}) {
    AnalyzeOptions o;
    o.import_ncu = {dir.path / "details.csv"};
    if (forced) o.device = "H100 SXM5";
    const testing::AnalysisRun run = testing::analyze({}, dir.path / ("r" + std::to_string(forced)), o);
    ASSERT_EQ(run.status, kExitOk) << run.err;
    const std::string note = "rfanalyze: note: no ceilings for device 0 of " + (dir.path / "details.csv").string() +
                             " (pid 31337, no name): their launches have no roofline bound; --device NAME";
    if (forced) {
      EXPECT_EQ(run.err.find("no ceilings"), std::string::npos) << run.err;
    } else {
      EXPECT_NE(run.err.find(note), std::string::npos) << run.err;
    }
  }
}

// ncu's default auto units keep two decimals ("1.05 Mbyte"): the first metric a formula uses that
// is in a scaled unit is named once, with the way to exact values; base units, as the recorded H100
// exports, say nothing.
TEST(NcuImportPages, AutoUnitsAreNamedOnce) {
  TempDir dir;
  write(dir.path / "details.csv", details_of(kData / "ncu_auto_units.csv"));
  for (const std::filesystem::path& csv : {kData / "ncu_auto_units.csv", dir.path / "details.csv"}) {
    const NcuImport imp = read_ncu_csv(csv);
    EXPECT_EQ(imp.scaled_metric, "dram__bytes_read.sum") << csv;  // "Mbyte", the first scaled one
    EXPECT_EQ(imp.scaled_unit, "Mbyte") << csv;
    AnalyzeOptions o;
    o.import_ncu = {csv};
    const testing::AnalysisRun run = testing::analyze({}, dir.path / "auto", o);
    ASSERT_EQ(run.status, kExitOk) << run.err;
    const std::string note = "rfanalyze: note: " + csv.string() +
                             ": ncu printed dram__bytes_read.sum in Mbyte (its default --print-units auto)";
    EXPECT_NE(run.err.find(note), std::string::npos) << run.err;
    EXPECT_EQ(run.err.find("ncu printed"), run.err.rfind("ncu printed")) << "said once: " << run.err;
  }
  const NcuImport base = read_ncu_csv(kFfma);
  EXPECT_EQ(base.scaled_metric, "");
  AnalyzeOptions o;
  o.import_ncu = {kFfma};
  const testing::AnalysisRun run = testing::analyze({}, dir.path / "base", o);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  EXPECT_EQ(run.err.find("ncu printed"), std::string::npos) << run.err;
}

// A raw page of ncu's SpeedOfLight_RooflineChart section holds rates (the SASS counts per elapsed
// cycle, DRAM bytes per second), not the counts rfanalyze sums: the import gave launches without
// FLOP, exit 0, and said nothing. It says so (the details page too); with the counts, nothing.
TEST(NcuImportPages, RooflineSectionRatesWithoutCountsAreSaid) {
  TempDir dir;
  const std::string ident = "\"0\",\"4463\",\"a\",\"h\",\"k(float*)\",\"1\",\"7\",\"(256, 1, 1)\",\"(1024, 1, 1)\",\"0\",\"9.0\"";
  const std::string head = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
                           "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\","
                           "\"sm__cycles_elapsed.avg.per_second\",";
  write(dir.path / "section.csv",
        head + "\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed\"\n" +
            "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"ns\",\"cycle/second\",\"inst/cycle\"\n" + ident +
            ",\"12,288\",\"1,755,000,000\",\"778.2\"\n");
  const NcuImport imp = read_ncu_csv(dir.path / "section.csv");
  EXPECT_EQ(imp.rate_metric, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed");
  write(dir.path / "details.csv", details_of(dir.path / "section.csv"));
  EXPECT_EQ(read_ncu_csv(dir.path / "details.csv").rate_metric, imp.rate_metric);
  AnalyzeOptions o;
  o.import_ncu = {dir.path / "section.csv"};
  const testing::AnalysisRun run = testing::analyze({}, dir.path / "out", o);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  EXPECT_NE(run.err.find("rfanalyze: note: " + (dir.path / "section.csv").string() +
                         ": it has smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed, a rate "
                         "ncu's roofline sections collect, without the count rfanalyze sums"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(read_ncu_csv(kFfma).rate_metric, "");  // counts: nothing to say
}

}  // namespace
}  // namespace rf::analyzer
