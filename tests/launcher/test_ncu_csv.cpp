// ncu's CSV pages from a constructed trace (ncu_csv.h): golden files, number formatting, filters,
// and a pandas script written for ncu reading the raw page.
#include "rfprof/analyzer/ncu_csv.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "../analyzer/analyzer_samples.h"
#include "rfprof/trace/reader.h"

namespace rf::analyzer {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

/// A counters-mode trace of pid 4242 on an H100: three launches with the roofline metrics, the
/// last one's kernel a template with a comma in its name; one launch without counters.
void write_trace(const std::filesystem::path& p) {
  TraceBuilder t(p);
  t.process(4242, trace::CollectionMode::kCounters);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
  t.config(1, testing::roofline_metrics());
  testing::Counts a;
  a.ffma = 10240000;
  a.read = 1234567.5;
  a.write = 0;
  a.gpu_time = 2048;
  t.launch(1, 0, 100, 1000);
  t.kernel(1, 2000, 4048, "ffma_loop(float*, int)");
  t.counters(1, 1, a.values());
  testing::Counts b;
  b.dfma = 3;
  t.launch(2, 0, 100, 5000);
  t.kernel(2, 6000, 7000, "reduce<float, 2>(float const*, float*)");
  t.counters(1, 2, b.values());
  t.launch(3, 0, 100, 8000);
  t.kernel(3, 9000, 9500, "ffma_loop(float*, int)");
  t.counters(1, 3, a.values());
  t.launch(4, 0, 100, 10000);
  t.kernel(4, 11000, 11100, "memset_kernel");
  t.window(0, false, 20000);
  t.finish();
}

/// The golden file `name`; with RFPROF_UPDATE_GOLDEN=1 in the environment it is first rewritten
/// with `actual` (then review the diff before committing it).
std::string golden(const std::string& name, const std::string& actual) {
  const auto path = std::filesystem::path(RFPROF_LAUNCHER_DATA) / name;
  if (const char* u = std::getenv("RFPROF_UPDATE_GOLDEN"); u && std::string(u) == "1") std::ofstream(path) << actual;
  return testing::slurp(path);
}

TEST(NcuCsv, NumbersAsNcuPrintsThem) {
  EXPECT_EQ(ncu_number(10240000), "10,240,000");
  EXPECT_EQ(ncu_number(999), "999");
  EXPECT_EQ(ncu_number(1000), "1,000");
  EXPECT_EQ(ncu_number(1234567.5), "1,234,567.5");
  EXPECT_EQ(ncu_number(-4321), "-4,321");
  EXPECT_EQ(ncu_number(0), "0");
  EXPECT_EQ(ncu_number(NAN), "");
  EXPECT_EQ(ncu_unit("dram__bytes_read.sum"), "byte");
  EXPECT_EQ(ncu_unit("gpu__time_duration.sum"), "ns");
  EXPECT_EQ(ncu_unit("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"), "inst");
  EXPECT_EQ(ncu_number(-432), "-432");  // the sign is not a digit to group
  EXPECT_EQ(ncu_number(-432100), "-432,100");
  EXPECT_EQ(ncu_number(1e300), "1e+300");  // an exponent form is left as it is
  EXPECT_EQ(ncu_unit("lts__t_sectors.sum"), "sector");
  EXPECT_EQ(ncu_unit("sm__cycles_elapsed.avg"), "cycle");
}

// Until 2026-11-29 the unit ignored the rollup's suffix: dram__bytes_read.sum.per_second was
// "byte", an .avg.pct_of_peak_sustained_elapsed "sector" or "", a .per_cycle_elapsed count "inst".
// As ncu prints them (and as rfprof --list-metrics gives them, launcher's suffix_unit):
TEST(NcuCsv, UnitsOfRatesAndPercentages) {
  EXPECT_EQ(ncu_unit("dram__bytes_read.sum.per_second"), "byte/second");
  EXPECT_EQ(ncu_unit("dram__bytes.sum.per_second"), "byte/second");
  EXPECT_EQ(ncu_unit("sm__cycles_elapsed.avg.per_second"), "cycle/second");
  EXPECT_EQ(ncu_unit("gpu__time_duration.sum"), "ns");
  EXPECT_EQ(ncu_unit("lts__t_sectors.avg.pct_of_peak_sustained_elapsed"), "%");
  EXPECT_EQ(ncu_unit("sm__throughput.avg.pct_of_peak_sustained_elapsed"), "%");
  EXPECT_EQ(ncu_unit("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed"), "inst/cycle");
  EXPECT_EQ(ncu_unit("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_active"), "inst/cycle");
  EXPECT_EQ(ncu_unit("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"), "inst/cycle");
  EXPECT_EQ(ncu_unit("lts__t_sectors.sum.peak_sustained_elapsed"), "sector");
  EXPECT_EQ(ncu_unit("sm__cycles_active.avg.per_cycle_elapsed"), "");  // cycles per cycle
  // A base unit not known from the name: unknown, not a made-up rate (ncu prints "warp" for
  // sm__warps_active.avg.per_cycle_active, a count summed over cycles).
  EXPECT_EQ(ncu_unit("smsp__warps_launched.sum.per_second"), "");
  EXPECT_EQ(ncu_unit("sm__warps_active.avg.per_cycle_active"), "");
  // The rollup alone keeps the base unit, whatever the name's end looks like.
  EXPECT_EQ(ncu_unit("dram__bytes_read.max"), "byte");
  EXPECT_EQ(ncu_unit("smsp__inst_executed.sum"), "inst");
}

TEST(NcuCsv, RawPageMatchesTheGoldenFile) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  std::ostringstream out;
  EXPECT_EQ(write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", {}), 4u);
  EXPECT_EQ(out.str(), golden("raw.csv", out.str()));
}

// ncu's raw page shows each launch's launch__* and device__attribute_* values among the metrics,
// sorted by name; `-i --metrics` selects them as it selects metrics, on the raw page only.
TEST(NcuCsv, LaunchAttributesAreColumnsOfTheRawPage) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  std::ostringstream out;
  NcuFilter f;
  f.metrics = {"launch__thread_count", "dram__bytes_read.sum", "device__attribute_display_name", "launch__grid_dim_x"};
  f.launch_count = 1;
  EXPECT_EQ(write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", f), 1u);
  const std::string ident = "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
                            "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",";
  EXPECT_EQ(out.str(), ident + "\"device__attribute_display_name\",\"dram__bytes_read.sum\",\"launch__grid_dim_x\","
                               "\"launch__thread_count\"\n"
                               "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"byte\",\"\",\"thread\"\n"
                               "\"0\",\"4242\",\"python3\",\"node01\",\"ffma_loop(float*, int)\",\"0\",\"7\","
                               "\"(256, 1, 1)\",\"(1024, 1, 1)\",\"0\",\"0.0\",\"NVIDIA H100 80GB HBM3\",\"1,234,567.5\","
                               "\"1,024\",\"262,144\"\n");
  // Every attribute is one of ncu's launch or device attributes (the names are checked against
  // ncu's own raw page in tests/recorded) and is in the page when no --metrics is given.
  std::ostringstream all;
  write_ncu_csv(all, {dir.path / "t.rftrace"}, "raw", {});
  const std::string header = all.str().substr(0, all.str().find('\n'));
  for (const auto& a : ncu_attributes()) {
    EXPECT_TRUE(a.name.rfind("launch__", 0) == 0 || a.name.rfind("device__attribute_", 0) == 0) << a.name;
    EXPECT_NE(header.find("\"" + a.name + "\""), std::string::npos) << a.name;
  }
  // The details page and the text show the attributes asked for as rows after the metrics.
  NcuFilter asked;
  asked.metrics = {"launch__grid_size", "dram__bytes_read.sum"};
  asked.launch_count = 1;
  std::ostringstream details;
  EXPECT_EQ(write_ncu_csv(details, {dir.path / "t.rftrace"}, "details", asked), 1u);
  const std::string launch = "\"0\",\"4242\",\"python3\",\"node01\",\"ffma_loop(float*, int)\",\"0\",\"7\","
                             "\"(256, 1, 1)\",\"(1024, 1, 1)\",\"0\",\"0.0\",\"Command line profiler metrics\",";
  const std::string rules = ",\"\",\"\",\"\",\"\",\"\"";  // ncu's five rule columns, empty on metric rows
  EXPECT_NE(details.str().find("\n" + launch + "\"dram__bytes_read.sum\",\"byte\",\"1,234,567.5\"" + rules + "\n" +
                               launch + "\"launch__grid_size\",\"\",\"1,024\"" + rules + "\n"),
            std::string::npos)
      << details.str();
  NcuFilter run;  // after a run: the --metrics attributes beside every metric collected
  run.attributes = {"launch__registers_per_thread", "not_an_attribute"};
  run.launch_count = 1;
  std::ostringstream text;
  EXPECT_EQ(write_ncu_text(text, {dir.path / "t.rftrace"}, run), 1u);
  EXPECT_NE(text.str().find("    launch__registers_per_thread                        register/thread            0\n"),
            std::string::npos)
      << text.str();
  EXPECT_EQ(text.str().find("not_an_attribute"), std::string::npos);
  // A metric the trace lacks is still refused, naming what it holds: its metrics, not attributes.
  NcuFilter lacking;
  lacking.metrics = {"lts__t_sectors.sum"};
  std::ostringstream none;
  try {
    write_ncu_csv(none, {dir.path / "t.rftrace"}, "raw", lacking);
    ADD_FAILURE() << "a metric the trace lacks was printed";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("it holds: smsp__"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("launch__"), std::string::npos) << e.what();
  }
  EXPECT_EQ(none.str(), "");
}

// Grid and block products at any size, exact, and empty rather than wrapped past 64 bits.
TEST(NcuCsv, LaunchAttributeProductsNeverWrap) {
  KernelRow r;
  r.grid = std::array<int32_t, 3>{2147483647, 65535, 65535};
  r.block = std::array<int32_t, 3>{1024, 1, 1};
  const DeviceRecord* device = nullptr;
  auto value = [&](const std::string& name) {
    for (const auto& a : ncu_attributes())
      if (a.name == name) return a.value(r, device);
    return std::string("(no such attribute)");
  };
  EXPECT_EQ(value("launch__grid_size"), "9,223,090,559,730,712,575");  // above 2^53: exact
  EXPECT_EQ(value("launch__block_size"), "1,024");
  EXPECT_EQ(value("launch__thread_count"), "");  // 9.4e21 threads: past 64 bits
  r.grid = std::array<int32_t, 3>{-1, 1, 1};  // a hostile trace
  EXPECT_EQ(value("launch__grid_size"), "");
  EXPECT_EQ(value("launch__grid_dim_x"), "");
  EXPECT_EQ(value("device__attribute_display_name"), "");  // no device record
  EXPECT_EQ(ncu_whole_number(18446744073709551615ull), "18,446,744,073,709,551,615");
  r.grid = std::array<int32_t, 3>{1, 1, -1};  // any negative component
  EXPECT_EQ(value("launch__grid_size"), "");
  EXPECT_EQ(value("launch__grid_dim_z"), "");
  EXPECT_EQ(value("launch__grid_dim_x"), "1");
  r.grid = std::array<int32_t, 3>{1, -1, 1};  // -1 as 64 bits times 1 would not overflow
  EXPECT_EQ(value("launch__grid_size"), "");
  r.grid = std::array<int32_t, 3>{1, 0, 1};  // a 0 is a value, not a missing one
  EXPECT_EQ(value("launch__grid_dim_y"), "0");
  EXPECT_EQ(value("launch__grid_size"), "0");
  r.grid = std::array<int32_t, 3>{2147483647, 2147483647, 2147483647};  // x * y * z past 2^64
  EXPECT_EQ(value("launch__grid_size"), "");
  r.grid = std::array<int32_t, 3>{2147483647, 2147483647, 5};  // x * y fits, times z does not
  EXPECT_EQ(value("launch__grid_size"), "");
  r.grid = std::array<int32_t, 3>{2147483647, 2147483647, 3};  // 1.38e19 < 2^64
  EXPECT_EQ(value("launch__grid_size"), "13,835,058,042,397,261,827");
  // The device index is the launch's device, and only where the trace has that device's record.
  EXPECT_EQ(value("launch__device_id"), "");  // not in the trace: empty, not 0
  EXPECT_EQ(value("launch__stream_id"), "");
  r.device = 3;
  EXPECT_EQ(value("launch__device_id"), "3");
  EXPECT_EQ(value("device__attribute_device_index"), "");
  DeviceRecord record;
  record.name = "NVIDIA H100 80GB HBM3";
  device = &record;
  EXPECT_EQ(value("device__attribute_device_index"), "3");
  EXPECT_EQ(value("device__attribute_display_name"), "NVIDIA H100 80GB HBM3");
  r.grid = std::array<int32_t, 3>{2, 1, 1};
  r.block = std::array<int32_t, 3>{-1, 1, 1};  // threads need both products
  EXPECT_EQ(value("launch__thread_count"), "");
  r.block = std::array<int32_t, 3>{32, 2, 1};
  EXPECT_EQ(value("launch__thread_count"), "128");
  // Attribute names are whole names, not prefixes.
  EXPECT_TRUE(is_ncu_attribute("launch__grid_size"));
  EXPECT_FALSE(is_ncu_attribute("launch__grid"));
  EXPECT_FALSE(is_ncu_attribute(""));
}

TEST(NcuCsv, DetailsPageMatchesTheGoldenFile) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  std::ostringstream out;
  NcuFilter f;
  f.kernel_name = "ffma_loop";  // the function name matches "ffma_loop(float*, int)"
  f.launch_count = 1;
  EXPECT_EQ(write_ncu_csv(out, {dir.path / "t.rftrace"}, "details", f), 1u);
  EXPECT_EQ(out.str(), golden("details.csv", out.str()));
}

// Without --csv, rfprof prints what ncu prints: a process line, then per launch its kernel line and
// a table of metric name, unit and value.
TEST(NcuText, PageMatchesTheGoldenFileAndNcusLayout) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  {
    TraceBuilder t(dir.path / "timing.rftrace");  // a second process, timing mode: no counters
    t.process(77, trace::CollectionMode::kTiming);
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 2750, "relu_kernel(float*)");
    t.finish();
  }
  std::ostringstream out;
  EXPECT_EQ(write_ncu_text(out, {dir.path / "t.rftrace", dir.path / "timing.rftrace"}, {}), 5u);
  const std::string text = out.str();
  EXPECT_EQ(text, golden("details.txt", text));

  std::vector<std::string> lines;
  for (std::istringstream in(text); std::getline(in, lines.emplace_back());) {
  }
  EXPECT_EQ(lines[0], "[4242] python3@node01");
  EXPECT_EQ(lines[1], "  ffma_loop(float*, int) (1024, 1, 1)x(256, 1, 1), Context 0, Stream 7, Device 0, CC 0.0");
  EXPECT_EQ(lines[2], "    Section: Command line profiler metrics");
  // Every row of a table is as wide as its rules; names left-aligned, units and values right.
  const size_t width = lines[3].size();
  EXPECT_EQ(lines[3].find_first_not_of(" -"), std::string::npos);
  for (size_t i = 4; i < lines.size() && lines[i] != lines[3]; ++i) EXPECT_EQ(lines[i].size(), width) << lines[i];
  EXPECT_NE(text.find("    smsp__sass_thread_inst_executed_op_ffma_pred_on.sum "), std::string::npos);
  EXPECT_NE(text.find(" inst   10,240,000\n"), std::string::npos) << text;
  // The timing-mode process: its own line, and the kernel's duration from the trace (750 ns).
  const size_t proc = text.find("[77] python3@node01\n  relu_kernel(float*) ");
  ASSERT_NE(proc, std::string::npos) << text;
  EXPECT_NE(text.find("gpu__time_duration.sum          ns          750\n", proc), std::string::npos) << text;
  // The launch without counters in the counters trace shows its duration too (100 ns).
  EXPECT_NE(text.find("gpu__time_duration.sum          ns          100\n"), std::string::npos) << text;
  // -k/-s/-c apply as to the CSV.
  NcuFilter f;
  f.kernel_name = "ffma_loop";
  f.launch_skip = 1;
  std::ostringstream one;
  EXPECT_EQ(write_ncu_text(one, {dir.path / "t.rftrace"}, f), 1u);
  EXPECT_EQ(one.str().find("reduce<"), std::string::npos);
}

// --print-summary per-kernel: one table per kernel line with the minimum, maximum and average.
TEST(NcuText, PerKernelSummaryGivesMinMaxAverageAndInvocations) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "s.rftrace");
    t.process(5, trace::CollectionMode::kTiming);
    uint32_t corr = 1;
    for (uint64_t d : {100, 600, 200}) {  // relu three times: 100, 600, 200 ns
      t.launch(corr, 0, 100, corr * 10000);
      t.kernel(corr, corr * 10000 + 10, corr * 10000 + 10 + d, "relu(float*)");
      ++corr;
    }
    t.launch(corr, 0, 100, corr * 10000);
    t.kernel(corr, corr * 10000 + 10, corr * 10000 + 60, "gemm(float*)");
    t.finish();
  }
  std::ostringstream out;
  EXPECT_EQ(write_ncu_summary_text(out, {dir.path / "s.rftrace"}, {}), 4u);
  const std::string text = out.str();
  EXPECT_EQ(text,
            "[5] python3@node01\n"
            "  relu(float*) (1024, 1, 1)x(256, 1, 1), Context 0, Stream 7, Device 0, CC , Invocations 3\n"
            "    Section: Command line profiler metrics\n"
            "    ---------------------- ----------- ------- ------- -------\n"
            "    Metric Name            Metric Unit Minimum Maximum Average\n"
            "    ---------------------- ----------- ------- ------- -------\n"
            "    gpu__time_duration.sum          ns     100     600     300\n"
            "    ---------------------- ----------- ------- ------- -------\n"
            "\n"
            "  gemm(float*) (1024, 1, 1)x(256, 1, 1), Context 0, Stream 7, Device 0, CC , Invocations 1\n"
            "    Section: Command line profiler metrics\n"
            "    ---------------------- ----------- ------- ------- -------\n"
            "    Metric Name            Metric Unit Minimum Maximum Average\n"
            "    ---------------------- ----------- ------- ------- -------\n"
            "    gpu__time_duration.sum          ns      50      50      50\n"
            "    ---------------------- ----------- ------- ------- -------\n"
            "\n");
  // -s applies before grouping: the first relu is skipped.
  NcuFilter f;
  f.launch_skip = 1;
  std::ostringstream skipped;
  write_ncu_summary_text(skipped, {dir.path / "s.rftrace"}, f);
  EXPECT_NE(skipped.str().find("Invocations 2\n"), std::string::npos) << skipped.str();
  EXPECT_NE(skipped.str().find("ns     200     600     400\n"), std::string::npos) << skipped.str();
}

TEST(NcuCsv, FiltersSkipCountAndRegex) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  std::ostringstream out;
  NcuFilter f;
  f.kernel_name = "regex:^ffma";
  f.launch_skip = 1;
  EXPECT_EQ(write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", f), 1u);  // the second ffma_loop only
  EXPECT_NE(out.str().find("\"0\",\"4242\",\"python3\",\"node01\",\"ffma_loop(float*, int)\""), std::string::npos);
  std::ostringstream none;
  f.kernel_name = "ffma";  // exact: no kernel is named just "ffma"
  EXPECT_EQ(write_ncu_csv(none, {dir.path / "t.rftrace"}, "raw", f), 0u);
  EXPECT_THROW(write_ncu_csv(none, {dir.path / "t.rftrace"}, "summary", {}), std::invalid_argument);
}

// `ncu -i REPORT --csv --page raw --metrics a,b`: only the named metrics are printed; a base name
// selects its rollups; a name the trace lacks is refused before anything is printed.
TEST(NcuCsv, MetricsSelectThePrintedColumns) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  const std::filesystem::path t = dir.path / "t.rftrace";
  NcuFilter f;
  f.metrics = {"dram__bytes_read.sum", "gpu__time_duration"};
  std::ostringstream raw;
  EXPECT_EQ(write_ncu_csv(raw, {t}, "raw", f), 4u);
  std::istringstream in(raw.str());
  std::string header, units, first;
  std::getline(in, header);
  std::getline(in, units);
  std::getline(in, first);
  // The trace's order (dram read before the duration), nothing else.
  EXPECT_TRUE(header.ends_with("\"CC\",\"dram__bytes_read.sum\",\"gpu__time_duration.sum\"")) << header;
  EXPECT_TRUE(units.ends_with(",\"\",\"byte\",\"ns\"")) << units;
  EXPECT_TRUE(first.ends_with("\"1,234,567.5\",\"2,048\"")) << first;

  std::ostringstream details;
  write_ncu_csv(details, {t}, "details", f);
  EXPECT_EQ(details.str().find("ffma_pred_on"), std::string::npos);
  EXPECT_NE(details.str().find("\"dram__bytes_read.sum\",\"byte\",\"1,234,567.5\""), std::string::npos);

  // Text: the selected rows only; the timing-mode duration counts as gpu__time_duration.sum.
  std::ostringstream text;
  NcuFilter dram;
  dram.metrics = {"dram__bytes_write.sum"};
  write_ncu_text(text, {t}, dram);
  EXPECT_NE(text.str().find("dram__bytes_write.sum"), std::string::npos);
  EXPECT_EQ(text.str().find("gpu__time_duration"), std::string::npos) << text.str();
  {
    TraceBuilder timing(dir.path / "timing.rftrace");
    timing.process(77, trace::CollectionMode::kTiming);
    timing.launch(1, 0, 100, 1000);
    timing.kernel(1, 2000, 2750, "relu_kernel(float*)");
    timing.finish();
  }
  NcuFilter duration;
  duration.metrics = {"gpu__time_duration.sum"};
  std::ostringstream timing_text;
  EXPECT_EQ(write_ncu_text(timing_text, {dir.path / "timing.rftrace"}, duration), 1u);
  EXPECT_NE(timing_text.str().find("gpu__time_duration.sum          ns          750\n"), std::string::npos)
      << timing_text.str();
  std::ostringstream timing_csv;
  EXPECT_THROW(write_ncu_csv(timing_csv, {dir.path / "timing.rftrace"}, "raw", duration), std::invalid_argument);
  EXPECT_EQ(timing_csv.str(), "");

  // A name the trace lacks: refused, naming it and what the trace holds, with nothing printed.
  NcuFilter typo;
  typo.metrics = {"dram__bytes_read.sum", "lts__t_bytes.sum"};
  std::ostringstream nothing;
  try {
    write_ncu_csv(nothing, {t}, "raw", typo);
    ADD_FAILURE() << "lts__t_bytes.sum is not in the trace";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--metrics lts__t_bytes.sum: no such metric in " + t.string()), std::string::npos) << what;
    EXPECT_NE(what.find("dram__bytes_write.sum"), std::string::npos) << what;
  }
  EXPECT_EQ(nothing.str(), "");
  EXPECT_THROW(write_ncu_text(nothing, {t}, typo), std::invalid_argument);
  EXPECT_EQ(nothing.str(), "");

  // A base name selects NAME.suffix, never another metric that merely starts with it.
  NcuFilter base;
  base.metrics = {"dram__bytes"};
  EXPECT_FALSE(base.prints_metric("dram__bytes_read.sum"));
  EXPECT_TRUE(base.prints_metric("dram__bytes.sum"));
  EXPECT_TRUE(NcuFilter{}.prints_metric("anything.sum"));
  // A full name selects itself only, not a longer name it begins.
  NcuFilter full;
  full.metrics = {"dram__bytes_read.sum"};
  EXPECT_TRUE(full.prints_metric("dram__bytes_read.sum"));
  EXPECT_FALSE(full.prints_metric("dram__bytes_read.sum.per_second"));
  EXPECT_THROW(write_ncu_csv(nothing, {t}, "raw", base), std::invalid_argument);
}

// A truncated trace (a killed process's) is said once, with the caller's prefix.
TEST(NcuCsv, ATruncatedTraceIsSaidOnceWithThePrefix) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "full.rftrace");
    t.process(11, trace::CollectionMode::kTiming);
    for (uint32_t corr = 1; corr <= 50; ++corr) {
      t.launch(corr, 0, 100, 1000 * corr);
      t.kernel(corr, 1000 * corr + 100, 1000 * corr + 200, "k(int)");
    }
    t.finish();
  }
  const std::string bytes = testing::slurp(dir.path / "full.rftrace");
  const std::filesystem::path cut = dir.path / "cut.rftrace";
  std::ofstream(cut, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  for (const std::string prefix : {"rfprof: ", "x: "}) {
    std::ostringstream out, warnings;
    write_ncu_csv(out, {cut}, "raw", {}, &warnings, prefix);
    const std::string said = warnings.str();
    EXPECT_EQ(said.rfind(prefix + cut.string() + " is truncated at byte ", 0), 0u) << said;
    EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
  }
}

// A graph launch whose kernels never came has no grid or block: empty cells, not (0, 0, 0).
// rfanalyze's first pass does not decode launch records (trace_pass.h); the pages do, so that a
// corrupt one in any trace stops them before anything is printed, as ncu_csv.h promises.
TEST(NcuCsv, ACorruptLaunchRecordStopsThePagesBeforeAnythingIsPrinted) {
  TempDir dir;
  const auto good = dir.path / "good.rftrace", bad = dir.path / "bad.rftrace";
  write_trace(good);
  std::string bytes = testing::slurp(good);
  // The first launch record: after the file header and the first chunk's header, skip records
  // until tag 5 (docs/trace-format.md).
  size_t at = 16 + 16;
  for (;;) {
    ASSERT_LT(at + 8, bytes.size());
    uint16_t tag = 0;
    uint32_t size = 0;
    std::memcpy(&tag, bytes.data() + at, 2);
    std::memcpy(&size, bytes.data() + at + 4, 4);
    if (tag == static_cast<uint16_t>(trace::RecordType::kLaunch)) break;
    at += 8 + size;
  }
  bytes[at + 8 + 8] = 9;  // the launch's API domain: 0 or 1
  std::ofstream(bad, std::ios::binary) << bytes;
  const std::string expected = "invalid launch.domain 9 (at byte " + std::to_string(at + 16) + ")";
  std::ostringstream printed;
  try {
    write_ncu_csv(printed, {good, bad}, "raw", NcuFilter{});  // the good trace first
    ADD_FAILURE() << "the corrupt launch was not reported";
  } catch (const trace::TraceError& e) {
    EXPECT_EQ(std::string(e.what()), expected);
  }
  EXPECT_EQ(printed.str(), "");
  EXPECT_THROW(write_ncu_text(printed, {good, bad}, NcuFilter{}), trace::TraceError);
  EXPECT_EQ(printed.str(), "");
}

TEST(NcuCsv, ALaunchWithoutGridOrBlockHasEmptyCells) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "g.rftrace");
    t.process(11, trace::CollectionMode::kCounters);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.launch(1, 0, 100, 1000, 0, true);
    t.finish();
  }
  std::ostringstream raw;
  ASSERT_EQ(write_ncu_csv(raw, {dir.path / "g.rftrace"}, "raw", {}), 1u) << raw.str();
  std::istringstream lines(raw.str());
  std::string header, units, row;
  std::getline(lines, header);
  std::getline(lines, units);
  std::getline(lines, row);
  EXPECT_NE(header.find("\"Context\",\"Stream\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\""), std::string::npos)
      << header;
  std::vector<std::string> fields;
  for (size_t at = 1, end; (end = row.find("\",\"", at)) != std::string::npos && fields.size() < 11; at = end + 3)
    fields.push_back(row.substr(at, end - at));
  ASSERT_EQ(fields.size(), 11u) << row;
  for (size_t i = 5; i <= 10; ++i) EXPECT_EQ(fields[i], "") << "field " << i << " of " << row;  // context .. CC
}

// Launch and device attributes named in --metrics: rows with their own units on the details
// page, and their device's values on the text page.
TEST(NcuText, AttributeRowsHaveTheirUnitsAndTheirDevicesValues) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(11, trace::CollectionMode::kTiming);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 3000, "k(int)", 0, "_Z1ki");
    t.finish();
  }
  NcuFilter f;
  f.metrics = {"launch__shared_mem_per_block_dynamic", "device__attribute_display_name"};
  std::ostringstream details, text;
  EXPECT_EQ(write_ncu_csv(details, {dir.path / "t.rftrace"}, "details", f), 1u);
  EXPECT_NE(details.str().find("\"launch__shared_mem_per_block_dynamic\",\"byte/block\","), std::string::npos)
      << details.str();
  EXPECT_EQ(write_ncu_text(text, {dir.path / "t.rftrace"}, f), 1u);
  EXPECT_NE(text.str().find("NVIDIA H100 80GB HBM3"), std::string::npos) << text.str();
}

// The text page's kernel line names the launch's context and device, each its own.
TEST(NcuText, TheKernelLineHasTheContextAndTheDevice) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(11, trace::CollectionMode::kTiming);
    t.device(1, "NVIDIA H100 80GB HBM3", "GH100");
    t.launch(1, 0, 100, 1000);
    trace::KernelActivity k;
    k.correlation_id = 1;
    k.device_id = 1;
    k.context_id = 5;
    k.stream_id = 7;
    k.start_ns = 2000;
    k.end_ns = 3000;
    k.grid[0] = 2; k.grid[1] = 1; k.grid[2] = 1;
    k.block[0] = 32; k.block[1] = 1; k.block[2] = 1;
    t.kernel(k, "k(int)", "_Z1ki");
    t.finish();
  }
  std::ostringstream text;
  EXPECT_EQ(write_ncu_text(text, {dir.path / "t.rftrace"}, {}), 1u);
  EXPECT_NE(text.str().find("  k(int) (2, 1, 1)x(32, 1, 1), Context 5, Stream 7, Device 1, CC 0.0"), std::string::npos)
      << text.str();
}

// Two processes' traces with the same kernel and metric list, a counter value that is not a
// number, a launch without kernel record (no device), a kernel without launch or symbol, and 14
// metrics, among them one named like a launch attribute.
TEST(NcuCsv, ProcessesNotANumberAndLaunchesWithoutRecords) {
  TempDir dir;
  std::vector<std::string> metrics = testing::roofline_metrics();
  metrics.push_back("lts__t_sectors.sum");
  metrics.push_back("launch__registers_per_thread");
  std::vector<double> values(metrics.size(), 8);
  std::vector<double> nan_read = values;
  nan_read[9] = NAN;  // dram__bytes_read.sum
  ASSERT_EQ(metrics[9], "dram__bytes_read.sum");
  for (uint32_t pid : {11u, 12u}) {
    TraceBuilder t(dir.path / (std::to_string(pid) + ".rftrace"));
    t.process(pid, trace::CollectionMode::kCounters);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.config(1, metrics);
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 3000, "relu(float*)");
    t.counters(1, 1, pid == 11 ? nan_read : values);
    if (pid == 11) {
      t.launch(2, 0, 100, 4000);
      t.kernel(2, 5000, 6000, "relu(float*)");
      t.counters(1, 2, values);
      t.launch(3, 0, 100, 7000);  // its kernel record never came
      t.kernel(9, 8000, 8500, "c_kernel", 0, "");  // no launch record, no symbol
    }
    t.window(0, false, 20000);
    t.finish();
  }
  const std::filesystem::path a = dir.path / "11.rftrace", b = dir.path / "12.rftrace";
  auto count = [](const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  };

  // Raw page of both traces: each metric once in the header, however many traces hold it.
  std::ostringstream raw;
  EXPECT_EQ(write_ncu_csv(raw, {a, b}, "raw", {}), 5u);
  const std::string header = raw.str().substr(0, raw.str().find('\n'));
  EXPECT_EQ(count(header, "\"dram__bytes_read.sum\""), 1u) << header;
  EXPECT_EQ(count(header, "\"launch__registers_per_thread\""), 1u) << header;

  // --devices 0 keeps the launch whose device is unknown; --print-kernel-base mangled prints a
  // kernel without symbol by its name.
  NcuFilter device;
  device.devices = {0};
  device.print_kernel_base = "mangled";
  std::ostringstream on_device;
  EXPECT_EQ(write_ncu_csv(on_device, {a}, "raw", device), 4u);
  EXPECT_EQ(count(on_device.str(), "\"c_kernel\""), 1u) << on_device.str();

  // Text: the value that is not a number prints as ncu's n/a.
  std::ostringstream text;
  write_ncu_text(text, {a}, {});
  EXPECT_EQ(count(text.str(), " n/a\n"), 1u) << text.str();
  EXPECT_LT(text.str().find("dram__bytes_read.sum "), text.str().find(" n/a\n"));

  // Summary: one group per process; the value that is not a number is left out of min, max and average.
  std::ostringstream summary;
  EXPECT_EQ(write_ncu_summary_text(summary, {a, b}, {}), 5u);
  const std::string s = summary.str();
  EXPECT_NE(s.find("[11] python3@node01\n  relu(float*)"), std::string::npos) << s;
  EXPECT_NE(s.find("[12] python3@node01\n  relu(float*)"), std::string::npos) << s;
  EXPECT_EQ(count(s, "Invocations 2\n"), 1u) << s;
  const size_t read_at = s.find("    dram__bytes_read.sum ");  // process 11's relu: 8, and the NaN
  ASSERT_NE(read_at, std::string::npos) << s;
  EXPECT_TRUE(s.substr(read_at, s.find('\n', read_at) - read_at).ends_with("byte       8       8       8")) << s;

  // A name the traces lack: the message names the first 12 metrics and how many more there are.
  NcuFilter typo;
  typo.metrics = {"nope.sum"};
  std::ostringstream nothing;
  try {
    write_ncu_csv(nothing, {a}, "raw", typo);
    ADD_FAILURE() << "nope.sum is not in the trace";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(" and 2 more)"), std::string::npos) << e.what();
  }
}

TEST(NcuCsv, PandasScriptWrittenForNcuReadsIt) {
#ifndef RFPROF_PANDAS_PYTHON
  GTEST_SKIP() << "python3 with pandas not found at configure time (scripts/install-deps installs python3-pandas)";
#else
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  {
    std::ofstream f(dir.path / "x.csv");
    f << "==PROF== Connected to process 4242 (/usr/bin/python3)\n";  // as ncu's log has
    write_ncu_csv(f, {dir.path / "t.rftrace"}, "raw", {});
  }
  const std::string cmd = std::string(RFPROF_PANDAS_PYTHON) + " " + RFPROF_LAUNCHER_DATA + "/read_ncu_csv.py " +
                          (dir.path / "x.csv").string() + " > " + (dir.path / "py.out").string() + " 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << testing::slurp(dir.path / "py.out");
  EXPECT_EQ(testing::slurp(dir.path / "py.out"), "kernels 4\nffma flop 40960000\ndram read 2469135\n");
#endif
}

}  // namespace
}  // namespace rf::analyzer
