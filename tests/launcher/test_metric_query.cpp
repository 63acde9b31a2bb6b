// ncu's --query-metrics and --list-chips (metric_query.h): units and suffixes as ncu prints them,
// checked against the listing of Nsight Compute 2024.1.1 in data/, and the text and CSV layouts.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "rfprof/collector/host_metrics.h"
#include "rfprof/launcher/metric_query.h"
#include "rfprof/launcher/ncu_args.h"
#include "launcher_test_util.h"

namespace rf::launcher {
namespace {

using test_util::error_of;
using test_util::has;
using test_util::lines_of;

/// ncu 2024.1.1's rows in data/ncu-2024.1.1-query-metrics-gh100.tsv: name -> {type, unit}.
std::map<std::string, std::pair<std::string, std::string>> ncu_listing() {
  std::map<std::string, std::pair<std::string, std::string>> rows;
  std::ifstream in(std::string(RFPROF_LAUNCHER_DATA) + "/ncu-2024.1.1-query-metrics-gh100.tsv");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t a = line.find('\t'), b = line.find('\t', a + 1);
    rows[line.substr(0, a)] = {line.substr(a + 1, b - a - 1), line.substr(b + 1)};
  }
  return rows;
}

TEST(MetricQuery, UnitsAreNcusShortNames) {
  EXPECT_EQ(ncu_unit("byte"), "byte");
  EXPECT_EQ(ncu_unit("instruction"), "inst");
  EXPECT_EQ(ncu_unit("nanosecond"), "nsecond");
  EXPECT_EQ(ncu_unit("percent"), "%");
  EXPECT_EQ(ncu_unit("l2_sector/l1tex_request"), "sector/request");
  EXPECT_EQ(ncu_unit("dram_cycle"), "cycle");
  // Products: a count summed over cycles is the count; other factors are joined by '*'.
  EXPECT_EQ(ncu_unit("gpc_cyclewarp"), "warp");
  EXPECT_EQ(ncu_unit("ctagpc_cycle"), "block");
  EXPECT_EQ(ncu_unit("gpc_cycleinstruction/warp"), "inst/warp");
  EXPECT_EQ(ncu_unit("bytesysl2_sector/l2_sector"), "byte*sector/sector");
  // Factors ncu leaves blank keep CUPTI's name; one CUPTI 13.0 never used is kept whole.
  EXPECT_EQ(ncu_unit("l1tex_wavefront"), "l1tex_wavefront");
  EXPECT_EQ(ncu_unit("quantum_flux"), "quantum_flux");
  EXPECT_EQ(ncu_unit(""), "");
  EXPECT_EQ(ncu_unit("lrc_req"), "request");  // "_req" is a request too
}

TEST(MetricQuery, SuffixUnitsAndMeanings) {
  EXPECT_EQ(suffix_unit("Counter", "byte", ".sum"), "byte");
  EXPECT_EQ(suffix_unit("Counter", "byte", ".sum.per_second"), "byte/second");
  EXPECT_EQ(suffix_unit("Counter", "byte", ".avg.peak_sustained"), "byte/cycle");
  EXPECT_EQ(suffix_unit("Counter", "byte", ".avg.peak_sustained_elapsed"), "byte");
  EXPECT_EQ(suffix_unit("Counter", "byte", ".max.peak_sustained_active.per_second"), "byte/second");
  EXPECT_EQ(suffix_unit("Counter", "byte", ".avg.pct_of_peak_sustained_elapsed"), "%");
  EXPECT_EQ(suffix_unit("Counter", "gpc_cyclewarp", ".avg.per_cycle_active"), "warp");  // average warps
  EXPECT_EQ(suffix_unit("Counter", "gpc_cycle", ".avg.per_cycle_elapsed"), "");         // cycles per cycle
  EXPECT_EQ(suffix_unit("Counter", "", ".sum.per_second"), "1/second");
  EXPECT_EQ(suffix_unit("Ratio", "", ".pct"), "%");
  EXPECT_EQ(suffix_unit("Ratio", "", ".ratio"), "");
  EXPECT_EQ(suffix_unit("Throughput", "percent", ".avg.pct_of_peak_sustained_elapsed"), "%");
  EXPECT_EQ(suffix_meaning(".sum"), "sum over the unit's instances");
  EXPECT_EQ(suffix_meaning(".avg.per_second"), "average over the unit's instances, per second");
  EXPECT_EQ(suffix_meaning(".pct"), "as a percentage");
  EXPECT_EQ(suffix_meaning(".sum.peak_sustained_frame"), "");  // unknown: no words rather than wrong ones
  EXPECT_EQ(suffix_meaning(".max_rate"), "the largest value the ratio can take");  // not the .max rollup
}

TEST(MetricQuery, ChipListIsLowerCaseSortedAndUnique) {
  EXPECT_EQ(chip_list({"GH100", "GA100", "TU102", "gh100"}), "ga100, gh100, tu102");
  EXPECT_EQ(chip_list({}), "");
}

TEST(MetricQuery, TextTableWrapsDescriptionsUnderTheirColumn) {
  const std::string long_name(80, 'n');
  const std::string description =
      "a description that is long enough to need a second line because it goes past seventy characters";
  std::ostringstream out;
  write_metric_table(out, "Chip gh100",
                     {{"dram__bytes_read", "Counter", "byte", "# of bytes read from DRAM"},
                      {long_name, "Ratio", "", description}});
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 7u) << out.str();
  EXPECT_EQ(lines[0], "Chip gh100");
  const size_t name_width = 80;  // the longest name; at least 75
  EXPECT_EQ(lines[1], std::string(name_width, '-') + " " + std::string(15, '-') + " " + std::string(15, '-') + " " +
                          std::string(70, '-'));
  EXPECT_EQ(lines[2].find("Metric Type"), name_width + 1);
  EXPECT_EQ(lines[2].find("Metric Unit"), name_width + 17);
  EXPECT_EQ(lines[2].find("Metric Description"), name_width + 33);
  EXPECT_EQ(lines[4].substr(name_width + 1), std::string("Counter") + std::string(9, ' ') + "byte" +
                                                 std::string(12, ' ') + "# of bytes read from DRAM");
  EXPECT_EQ(lines[5].find("Ratio"), name_width + 1);
  // The description is cut at a space before column 70 and goes on under its own column.
  const std::string first = lines[5].substr(name_width + 33), second = lines[6].substr(name_width + 33);
  EXPECT_LE(first.size(), 70u);
  EXPECT_EQ(lines[6].find_first_not_of(' '), name_width + 33);
  EXPECT_EQ(first + " " + second, description);
  for (const auto& l : lines) EXPECT_TRUE(l.empty() || l.back() != ' ') << "[" << l << "]";
}

// A word longer than the description column is cut at the column; an empty description leaves the
// row ending at its unit.
TEST(MetricQuery, TextTableCutsLongWordsAndKeepsEmptyDescriptions) {
  const std::string word(100, 'w');
  std::ostringstream out;
  write_metric_table(out, "Chip gh100", {{"a__b", "Counter", "byte", "see " + word}, {"c__d", "Counter", "byte", ""}});
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 8u) << out.str();
  const size_t column = 75 + 33;
  EXPECT_EQ(lines[4].substr(column), "see");
  EXPECT_EQ(lines[5], std::string(column, ' ') + word.substr(0, 70));
  EXPECT_EQ(lines[6], std::string(column, ' ') + word.substr(70));
  EXPECT_EQ(lines[7], "c__d" + std::string(72, ' ') + "Counter" + std::string(9, ' ') + "byte");
}

// A unit longer than its column's 15 characters widens the column; blanks around a description's
// words leave no blank at the end of a line.
TEST(MetricQuery, TextTableWidensTheUnitColumnAndTrimsBlanks) {
  const std::string unit = "byte/second/cycle";  // 17 characters
  std::ostringstream out;
  write_metric_table(out, "Chip gh100",
                     {{"a__b", "Counter", unit, "  two words  "},
                      {"c__d", "Counter", "byte", std::string(60, 'x') + " and a second line  "}});
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 7u) << out.str();
  EXPECT_EQ(lines[6], std::string(75 + 1 + 15 + 1 + 17 + 1, ' ') + "second line");
  for (const auto& l : lines) EXPECT_TRUE(l.empty() || l.back() != ' ') << "[" << l << "]";
  EXPECT_EQ(lines[1], std::string(75, '-') + " " + std::string(15, '-') + " " + std::string(17, '-') + " " +
                          std::string(70, '-'));
  EXPECT_EQ(lines[2].find("Metric Description"), 75 + 1 + 15 + 1 + 17 + 1);
  EXPECT_EQ(lines[4], "a__b" + std::string(72, ' ') + "Counter" + std::string(9, ' ') + unit + " two words");
}

TEST(MetricQuery, CsvHasOneColumnPerChipAndEveryFieldQuoted) {
  std::ostringstream out;
  write_metric_csv(out, {"ga100", "gh100"},
                   {{{"b__x", "Counter", "byte", "x"}, {"a__y", "Ratio", "", "say \"y\""}},
                    {{"b__x", "Counter", "byte", "x on gh100"}, {"c__z", "Throughput", "%", "z"}}});
  EXPECT_EQ(out.str(),
            "\"Metric name\",\"Metric type\",\"Metric unit\",\"Metric description\",\"ga100\",\"gh100\"\n"
            "\"a__y\",\"Ratio\",\"\",\"say \"\"y\"\"\",\"1\",\"\"\n"
            "\"b__x\",\"Counter\",\"byte\",\"x\",\"1\",\"1\"\n"
            "\"c__z\",\"Throughput\",\"%\",\"z\",\"\",\"1\"\n");
}

// *HostApi: CUPTI's profiler host API, so not in the sanitizer build (scripts/run-tests).
TEST(MetricQueryHostApi, BaseNamesTypesAndUnitsAgreeWithNcu) {
  const collector::MetricHost host("GH100");
  std::vector<std::string> unknown;
  const auto rows = metric_rows(host, MetricQuery{}, unknown);
  EXPECT_TRUE(unknown.empty());
  ASSERT_EQ(rows.size(), host.base_metrics().size());
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end(),
                             [](const MetricRow& a, const MetricRow& b) { return a.name < b.name; }));
  const auto ncu = ncu_listing();
  size_t compared = 0, same_unit = 0, missing = 0;
  std::map<std::string, MetricRow> ours;
  for (const auto& r : rows) ours[r.name] = r;
  for (const auto& [name, type_unit] : ncu) {
    if (name.find('.', name.find("__")) != std::string::npos) continue;  // full names: the next test
    const auto it = ours.find(name);
    if (it == ours.end()) {
      ++missing;  // CUPTI 13.0 no longer lists it (ctc__rx__cycles_active, ...)
      continue;
    }
    ++compared;
    EXPECT_EQ(it->second.type, type_unit.first) << name;
    if (type_unit.second.empty()) continue;  // ncu prints no unit; rfprof prints CUPTI's
    // ncu prints "cycle" for a CGA count summed over GPC cycles (cgagpc_cycle); rfprof "cga".
    if (host.base_properties(name).dim_unit == "cgagpc_cycle") continue;
    EXPECT_EQ(it->second.unit, type_unit.second) << name;
    same_unit += it->second.unit == type_unit.second;
  }
  EXPECT_GT(compared, 3300u);
  EXPECT_LE(missing, 5u);
  EXPECT_GT(same_unit, 3000u);
  EXPECT_EQ(ours.at("dram__bytes_read").description, "# of bytes read from DRAM");
  EXPECT_EQ(ours.at("sm__throughput").type, "Throughput");
  EXPECT_EQ(ours.at("lts__t_sector_hit_rate").type, "Ratio");
}

TEST(MetricQueryHostApi, FullNamesInCuptisOrderWithNcusUnits) {
  const collector::MetricHost host("GH100");
  MetricQuery q;
  q.mode = "suffix";
  q.metrics = {"sm__warps_active", "dram__bytes_read", "gpu__time_duration", "sm__throughput",
               "lts__t_sector_hit_rate", "smsp__inst_executed", "dram__bytes_read.sum", "dram__bytes_reed"};
  std::vector<std::string> unknown;
  const auto rows = metric_rows(host, q, unknown);
  EXPECT_EQ(unknown, std::vector<std::string>{"dram__bytes_reed"});
  // Names sorted; under each its suffixes as CUPTI lists them (= ncu's text order); a full name one row.
  ASSERT_EQ(rows.size(), 4 * 44u + 1 + 3 + 8);  // four counters, one full name, a ratio, a throughput
  EXPECT_EQ(rows[0].name, "dram__bytes_read.avg");
  EXPECT_EQ(rows[1].name, "dram__bytes_read.avg.peak_sustained");
  EXPECT_EQ(rows[44].name, "dram__bytes_read.sum");
  EXPECT_EQ(rows[44].description, "# of bytes read from DRAM (sum over the unit's instances)");
  for (const auto& r : rows) EXPECT_TRUE(host.is_valid(r.name)) << r.name;
  const auto ncu = ncu_listing();
  size_t compared = 0;
  for (const auto& r : rows) {
    const auto it = ncu.find(r.name);
    if (it == ncu.end()) continue;
    ++compared;
    EXPECT_EQ(r.type, it->second.first) << r.name;
    // ncu prints gpu__time_duration's rollups in "second"; its values are nanoseconds.
    if (r.name.rfind("gpu__time_duration.", 0) == 0 && it->second.second == "second") {
      EXPECT_EQ(r.unit, "nsecond") << r.name;
      continue;
    }
    EXPECT_EQ(r.unit, it->second.second) << r.name;
  }
  EXPECT_EQ(compared, rows.size());

  // --query-metrics-mode all without --metrics: every base name with each of its suffixes.
  MetricQuery all;
  all.mode = "all";
  std::vector<std::string> none;
  const auto every = metric_rows(host, all, none);
  EXPECT_GT(every.size(), 10 * host.base_metrics().size());
  EXPECT_NE(std::find_if(every.begin(), every.end(),
                         [](const MetricRow& r) { return r.name == "dram__bytes_read.sum.per_second"; }),
            every.end());
  EXPECT_EQ(std::find_if(every.begin(), every.end(), [](const MetricRow& r) { return r.name == "dram__bytes_read"; }),
            every.end());  // no base name alone
}

TEST(MetricQueryHostApi, RunPrintsTablesAndRefusesUnknownChipsAndNames) {
  MetricQuery q;
  q.chips = {"GH100", "ga100"};
  q.metrics = {"dram__bytes_read.sum"};
  std::ostringstream out, err;
  EXPECT_EQ(run_metric_query(q, out, err), 0) << err.str();
  auto lines = lines_of(out.str());
  // Tables in chip order (ga100 first), headed by the chip as typed, a blank line between.
  ASSERT_EQ(lines.size(), 11u) << out.str();
  EXPECT_EQ(lines[0], "Chip ga100");
  EXPECT_EQ(lines[4].substr(0, 20), "dram__bytes_read.sum");
  EXPECT_EQ(lines[5], "");
  EXPECT_EQ(lines[6], "Chip GH100");
  EXPECT_EQ(err.str(), "");
  // One chip named twice: one table.
  q.chips = {"gh100", "GH100"};
  out.str("");
  EXPECT_EQ(run_metric_query(q, out, err), 0);
  EXPECT_EQ(lines_of(out.str()).size(), 5u) << out.str();
  q.chips = {"GH100", "ga100"};

  q.csv = true;
  out.str("");
  EXPECT_EQ(run_metric_query(q, out, err), 0);
  EXPECT_EQ(lines_of(out.str()),
            (std::vector<std::string>{
                "\"Metric name\",\"Metric type\",\"Metric unit\",\"Metric description\",\"ga100\",\"GH100\"",
                "\"dram__bytes_read.sum\",\"Counter\",\"byte\",\"# of bytes read from DRAM (sum over the unit's "
                "instances)\",\"1\",\"1\""}));

  // A chip CUPTI does not know: refused before anything is printed.
  q.chips = {"gh100", "sm_90"};
  out.str("");
  err.str("");
  EXPECT_EQ(run_metric_query(q, out, err), 2);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str(), "rfprof: --chips sm_90: not a chip CUPTI knows (rfprof --list-chips lists them)\n");

  // A name no chip knows: the others are printed, then the error with the closest names.
  q.chips = {"gh100"};
  q.csv = false;
  q.metrics = {"dram__bytes_read.sum", "dram__bytes_reed.sum"};
  err.str("");
  EXPECT_EQ(run_metric_query(q, out, err), 2);
  EXPECT_TRUE(has(out.str(), "dram__bytes_read.sum ")) << out.str();
  EXPECT_TRUE(has(err.str(), "rfprof: --metrics dram__bytes_reed.sum: neither a base nor a full metric name on "
                             "gh100\n"))
      << err.str();
  EXPECT_TRUE(has(err.str(), "closest to dram__bytes_reed.sum on gh100: dram__bytes_read.sum, ")) << err.str();
  {  // three closest names
    const std::string e = err.str(), from = "closest to dram__bytes_reed.sum on gh100: ";
    const std::string names = e.substr(e.find(from) + from.size());
    EXPECT_EQ(std::count(names.begin(), names.begin() + names.find('\n'), ','), 2) << names;
  }

  // A name only some chips have: a note; closest names only for the name no chip has.
  q.chips = {"ga100", "gh100"};
  q.metrics = {"ctc__rx_bytes", "zz__top"};
  err.str("");
  EXPECT_EQ(run_metric_query(q, out, err), 2);
  EXPECT_TRUE(has(err.str(), "rfprof: note: --metrics ctc__rx_bytes: not a metric of ga100\n")) << err.str();
  EXPECT_TRUE(has(err.str(), "rfprof: --metrics zz__top: neither")) << err.str();
  EXPECT_TRUE(has(err.str(), "closest to zz__top on ga100")) << err.str();
  EXPECT_FALSE(has(err.str(), "closest to ctc__rx_bytes")) << err.str();
  q.quiet = true;
  q.metrics = {"ctc__rx_bytes"};
  err.str("");
  EXPECT_EQ(run_metric_query(q, out, err), 0);
  EXPECT_EQ(err.str(), "");  // --quiet: no notes
}

/// Runs `command` in sh; returns its exit status and its standard output.
std::pair<int, std::string> run(const std::string& command) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) return {-1, out};
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  const int rc = pclose(p);
  return {WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, out};
}

TEST(MetricQueryHostApi, TheBinaryListsChipsAndNeedsChipsWithoutADevice) {
  const std::string bin = RFPROF_BIN;
  auto [rc, chips] = run(bin + " --list-chips");
  EXPECT_EQ(rc, 0);
  EXPECT_TRUE(has(chips, "ga10b, gb100, ")) << chips;
  EXPECT_TRUE(has(chips, ", gh100, ")) << chips;
  ASSERT_FALSE(chips.empty());
  EXPECT_EQ(chips.back(), '\n');
  // No device visible (here no driver either): one message naming --chips, exit 2, nothing printed.
  auto [no_device, message] = run("CUDA_VISIBLE_DEVICES= " + bin + " --query-metrics 2>&1");
  EXPECT_EQ(no_device, 2);
  EXPECT_EQ(message.rfind("rfprof: ", 0), 0u) << message;
  EXPECT_TRUE(has(message, "; name the chips with --chips (rfprof --list-chips lists them)\n")) << message;
  EXPECT_EQ(std::count(message.begin(), message.end(), '\n'), 1) << message;
  auto [csv_rc, csv] = run(bin + " --query-metrics --csv --chips gh100 --metrics sm__throughput 2>&1");
  EXPECT_EQ(csv_rc, 0);
  EXPECT_EQ(lines_of(csv).size(), 1u + 8) << csv;  // the header and a throughput's eight full names
}

TEST(MetricQueryArgs, FlagsAsNcuReadsThem) {
  Plan p = parse_args({"--query-metrics", "--chips", "gh100,ga100"});
  ASSERT_TRUE(p.metric_query);
  EXPECT_EQ(p.metric_query->mode, "base");
  EXPECT_EQ(p.metric_query->chips, (std::vector<std::string>{"gh100", "ga100"}));
  p = parse_args({"--query-metrics-m", "suffix", "--metrics", "dram__bytes_read", "--metrics", "a,b", "--csv",
                  "--chi", "gh100"});  // the mode implies --query-metrics; unique prefixes as in ncu
  ASSERT_TRUE(p.metric_query);
  EXPECT_EQ(p.metric_query->mode, "suffix");
  EXPECT_TRUE(p.metric_query->csv);
  EXPECT_EQ(p.metric_query->metrics, (std::vector<std::string>{"dram__bytes_read", "a", "b"}));
  p = parse_args({"--query-metrics", "--devices", "0,2"});
  EXPECT_EQ(p.metric_query->devices, (std::vector<uint32_t>{0, 2}));
  EXPECT_TRUE(p.metric_query->chips.empty());
  EXPECT_TRUE(parse_args({"--list-chips"}).list_chips);
  // The mode or the collection alone implies --query-metrics, whatever its value (ncu).
  EXPECT_TRUE(parse_args({"--query-metrics-mode", "base", "--chips", "gh100"}).metric_query);
  EXPECT_TRUE(parse_args({"--query-metrics-collection", "profiling"}).metric_query);
  p = parse_args({"--query-metrics", "--quiet", "--log-file", "q.txt"});
  EXPECT_TRUE(p.metric_query->quiet);
  EXPECT_EQ(p.log_file, "q.txt");
  // --chips decides over --devices, as in ncu: a note, the devices not asked.
  p = parse_args({"--query-metrics", "--chips", "gh100", "--devices", "1"});
  EXPECT_TRUE(p.metric_query->devices.empty());
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_TRUE(has(p.notes[0], "--devices 1: --chips gh100 names the chips")) << p.notes[0];

  EXPECT_TRUE(has(error_of({"--query-metrics-mode", "suffix", "--chips", "gh100"}), "name them with --metrics"));
  EXPECT_TRUE(has(error_of({"--query-metrics-mode", "bases"}), "--query-metrics-mode"));
  EXPECT_TRUE(has(error_of({"--query-metrics-collection", "pmsampling"}), "rfprof has no PM sampling"));
  EXPECT_TRUE(has(error_of({"--query-metrics-collection", "launch"}), "expected profiling"));
  // The mode or the collection alone lists and exits too: an application with them is refused.
  EXPECT_TRUE(has(error_of({"--query-metrics-mode", "base", "app"}), "lists and exits"));
  EXPECT_TRUE(has(error_of({"--query-metrics-collection", "profiling", "-i", "t.rftrace"}), "lists and exits"));
  EXPECT_TRUE(has(error_of({"--query-metrics", "app"}), "drop the application"));
  EXPECT_TRUE(has(error_of({"--list-chips", "app"}), "rfprof: --list-chips lists and exits; drop the application"));
  EXPECT_TRUE(has(error_of({"--list-sets", "--chip", "GH100", "app"}), "rfprof: --list-sets lists and exits"));
  EXPECT_TRUE(has(error_of({"--query-metrics", "--chips", "gh100", "--devices", "abc"}), "--devices abc"));
  EXPECT_TRUE(has(error_of({"--chips", "gh100", "app"}), "goes with --query-metrics"));
  EXPECT_TRUE(has(error_of({"--list-sets", "--chip", "GH100,GA100"}), "one chip at a time"));
  EXPECT_TRUE(has(error_of({"--query-metrics", "--devices", "x"}), "--devices x"));
  EXPECT_TRUE(has(error_of({"--query-metrics", "--chips", ","}), "--chips ,: expected chip names such as gh100"));
}

}  // namespace
}  // namespace rf::launcher
