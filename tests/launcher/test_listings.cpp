// ncu's --list-sets, --list-sections and --list-metrics answered from rfprof's metric sets
// (listings.h), the layouts checked against Nsight Compute 2024.1.1's own output in data/.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "rfprof/collector/metric_set_names.h"
#include "rfprof/launcher/listings.h"
#include "rfprof/launcher/ncu_args.h"
#include "launcher_test_util.h"

namespace rf::launcher {
namespace {

using test_util::error_of;
using test_util::has;
using test_util::lines_of;

/// A file of data/ without its leading '#' comment lines.
std::vector<std::string> ncu_output(const std::string& name) {
  std::ifstream in(std::string(RFPROF_LAUNCHER_DATA) + "/" + name);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);)
    if (line.empty() || line[0] != '#') lines.push_back(line);
  return lines;
}

/// The cells of a table row, cut at the columns of its dash rule ("---- ------- ...").
std::vector<std::string> cells(const std::string& rule, const std::string& row) {
  std::vector<std::string> out;
  for (size_t start = 0; start < rule.size();) {
    size_t end = rule.find(' ', start);
    if (end == std::string::npos) end = rule.size();
    std::string cell = start < row.size() ? row.substr(start, end - start) : "";
    cell.erase(cell.find_last_not_of(' ') + 1);
    out.push_back(cell);
    start = end + 1;
  }
  return out;
}

std::string section_table(const std::vector<std::string>& enabled) {
  std::ostringstream out;
  write_section_table(out, enabled);
  return out.str();
}

TEST(Listings, SectionTableLaidOutAsNcus) {
  const auto ncu = ncu_output("ncu-2024.1.1-list-sections.txt");
  ASSERT_GT(ncu.size(), 8u);
  const auto ours = lines_of(section_table({"SpeedOfLight_RooflineChart"}));
  ASSERT_EQ(ours.size(), 3 + roofline_sections().size());
  // Rule, header, rule; one space between columns; every line as wide as the rule, as ncu's.
  EXPECT_EQ(ours[0], ours[2]);
  EXPECT_EQ(ours[0].find_first_not_of("- "), std::string::npos) << ours[0];  // dashes, as ncu's
  EXPECT_EQ(ncu[0].find_first_not_of("- "), std::string::npos) << ncu[0];
  EXPECT_EQ(cells(ours[0], ours[1]), cells(ncu[0], ncu[1]));  // Identifier, Display Name, Enabled, Filename
  EXPECT_EQ(ours[0].find(' '), ours[1].find("Display Name") - 1);
  for (const auto& line : ours) EXPECT_EQ(line.size(), ours[0].size()) << line;
  // Each roofline section as ncu names and shows it, in ncu's order.
  std::vector<std::string> ncu_ids;
  for (size_t r = 3; r < ncu.size(); ++r) {
    const auto row = cells(ncu[0], ncu[r]);
    if (find_roofline_section(row[0])) ncu_ids.push_back(row[0]);
  }
  ASSERT_EQ(ncu_ids.size(), roofline_sections().size());
  for (size_t i = 0; i < ncu_ids.size(); ++i) {
    const auto row = cells(ours[0], ours[3 + i]);
    EXPECT_EQ(row[0], ncu_ids[i]);
    for (size_t r = 3; r < ncu.size(); ++r)
      if (cells(ncu[0], ncu[r])[0] == row[0]) {
        EXPECT_EQ(row[1], cells(ncu[0], ncu[r])[1]) << row[0];
      }
    EXPECT_EQ(row[2], row[0] == "SpeedOfLight_RooflineChart" ? "yes" : "no");
    EXPECT_EQ(row[3], "(rfprof set " + find_roofline_section(row[0])->set + ")");
  }
}

TEST(Listings, EnabledSectionsFollowTheSetsNesting) {
  EXPECT_TRUE(sections_of_set("timing").empty());
  EXPECT_EQ(sections_of_set("roofline"), std::vector<std::string>{"SpeedOfLight_RooflineChart"});
  EXPECT_EQ(sections_of_set("roofline-tensor"),
            (std::vector<std::string>{"SpeedOfLight_HierarchicalTensorRooflineChart", "SpeedOfLight_RooflineChart"}));
  EXPECT_EQ(sections_of_set("hierarchical").size(), 5u);
  // Named sections are matched as ncu matches them, case-insensitively.
  const std::string t = section_table({"speedoflight_hierarchicalhalfrooflinechart"});
  for (const auto& line : lines_of(t))
    if (has(line, "(rfprof set")) {
      EXPECT_EQ(has(line, " yes "), has(line, "HierarchicalHalf")) << line;
    }
  EXPECT_EQ(find_roofline_section("SPEEDOFLIGHT_ROOFLINECHART")->set, "roofline");
  EXPECT_EQ(find_roofline_section("SpeedOfLight"), nullptr);
  EXPECT_EQ(find_roofline_section("SpeedOfLight_RooflineChartExtra"), nullptr);  // a section's name and more
  // --list-sections --section NAME: the named sections are the enabled ones, whatever the set.
  Listing l;
  l.kind = Listing::Kind::kSections;
  l.set = "hierarchical";
  l.sections = {"SpeedOfLight_HierarchicalHalfRooflineChart"};
  std::ostringstream out, err;
  ASSERT_EQ(run_listing(l, out, err), 0);
  size_t enabled = 0;
  for (const auto& line : lines_of(out.str()))
    if (has(line, " yes ")) {
      ++enabled;
      EXPECT_TRUE(has(line, "SpeedOfLight_HierarchicalHalfRooflineChart")) << line;
    }
  EXPECT_EQ(enabled, 1u) << out.str();
}

TEST(Listings, MetricListLaidOutAsNcus) {
  const auto ncu = ncu_output("ncu-2024.1.1-list-metrics.txt");
  ASSERT_EQ(ncu.size(), 16u);
  std::vector<std::string> names;
  for (size_t i = 0; i < ncu.size(); i += 2) names.push_back(ncu[i]);
  std::ostringstream out;
  write_metric_list(out, names);
  EXPECT_EQ(lines_of(out.str()), ncu);
}

int listing(const Listing& l, std::string& out, std::string& err) {
  std::ostringstream o, e;
  const int rc = run_listing(l, o, e);
  out = o.str();
  err = e.str();
  return rc;
}

TEST(ListingsHostApi, MetricsOfASetOnAChip) {
  Listing l;
  l.kind = Listing::Kind::kMetrics;
  l.set = "roofline-tensor";
  std::string gh100, ga100, err;
  l.chip = "gh100";
  ASSERT_EQ(listing(l, gh100, err), 0) << err;
  EXPECT_EQ(err, "");
  l.chip = "GA100";
  ASSERT_EQ(listing(l, ga100, err), 0) << err;
  // Hopper's warpgroup MMA (hgmma) is counted on GH100 only; both count FP32 FFMA and DRAM bytes.
  EXPECT_TRUE(has(gh100, "\nsm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum\n"));
  EXPECT_FALSE(has(ga100, "hgmma"));
  for (const auto* text : {&gh100, &ga100}) {
    const auto lines = lines_of(*text);
    ASSERT_EQ(lines.size() % 2, 0u);
    for (size_t i = 0; i < lines.size(); i += 2) EXPECT_EQ(lines[i + 1], " -" + lines[i]);
    EXPECT_TRUE(has(*text, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\n"));
    EXPECT_TRUE(has(*text, "dram__bytes_read.sum\n"));
  }
  l.set = "timing";  // no counters: nothing listed, and a note says why
  ASSERT_EQ(listing(l, gh100, err), 0);
  EXPECT_EQ(gh100, "");
  EXPECT_TRUE(has(err, "rfprof: note: set timing collects no metrics")) << err;
  l.quiet = true;  // --quiet: the list (empty) without the note
  err.clear();
  ASSERT_EQ(listing(l, gh100, err), 0);
  EXPECT_EQ(err, "");
  l.quiet = false;
  l.chip = "gh999";
  EXPECT_EQ(listing(l, gh100, err), 2);
  EXPECT_EQ(err, "rfprof: --chip gh999: not a chip CUPTI knows (rfprof --list-chips lists them)\n");
  l.kind = Listing::Kind::kSets;
  EXPECT_EQ(listing(l, gh100, err), 2);
  EXPECT_EQ(gh100, "");
}

TEST(ListingsHostApi, SetsListedPerChip) {
  Listing l;
  l.chip = "gh100";
  std::string out, err;
  ASSERT_EQ(listing(l, out, err), 0) << err;
  EXPECT_TRUE(has(out, "roofline: 2 pass(es), 15 metric(s) on GH100 -- " +
                           std::string(collector::metric_set_description("roofline")) + "\n"))
      << out;
  EXPECT_TRUE(has(out, "\nroofline-tensor: ")) << out;
  EXPECT_TRUE(has(out, "\n    dram__bytes_write.sum\n")) << out;
  // rfprof's own "roofline" set is not what the ncu flag --set roofline selects: said once, under it.
  const std::string note =
      "    note: this set is --section SpeedOfLight_RooflineChart (or RFPROF_METRIC_SET=roofline); --set roofline "
      "means ncu's roofline set, all its roofline charts: hierarchical below\n";
  const size_t at = out.find(note);
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_LT(out.find("\nroofline: "), at);
  EXPECT_GT(out.find("\nroofline-tensor: "), at);
  EXPECT_EQ(out.find(note, at + 1), std::string::npos) << out;
  // A set's notes follow its metrics: Ampere has no FP8 tensor math.
  l.chip = "ga100";
  ASSERT_EQ(listing(l, out, err), 0) << err;
  EXPECT_TRUE(has(out, "\n    note: no fp8 tensor math on GA100\n")) << out;
}

TEST(ListingsHostApi, QuietListsWithoutTheNote) {
  Listing l;
  l.kind = Listing::Kind::kMetrics;
  l.set = "roofline";
  l.quiet = true;
  std::string out, err;
  ASSERT_EQ(listing(l, out, err), 0) << err;
  EXPECT_EQ(err, "");
  EXPECT_TRUE(has(out, "dram__bytes_read.sum\n")) << out;
}

TEST(ListingsHostApi, WithoutAChipOrADeviceGH100WithANote) {
  // The binary, with no device visible: the driver (if any) reports none, so GH100 with one note.
  const std::string cmd = std::string("CUDA_VISIBLE_DEVICES= ") + RFPROF_BIN + " --list-metrics 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string text;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << text;
  const auto lines = lines_of(text);
  ASSERT_EQ(lines.size(), 1 + 2 * 15u) << text;  // the note, then roofline's 15 metrics on GH100
  EXPECT_TRUE(has(lines[0], "rfprof: note: listing for GH100")) << lines[0];
  EXPECT_TRUE(has(lines[0], "--chip CHIP")) << lines[0];
  EXPECT_EQ(lines[0].find("rfprof:", 1), std::string::npos) << "the reason's own prefix is dropped: " << lines[0];
  EXPECT_EQ(lines[1], "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum");
  // GH100's own metrics, not another chip's: Hopper's warpgroup MMA (hgmma) in roofline-tensor;
  // --quiet drops the note.
  const std::string tensor_cmd =
      std::string("CUDA_VISIBLE_DEVICES= ") + RFPROF_BIN + " --list-metrics --set roofline-tensor --quiet 2>&1";
  p = popen(tensor_cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  text.clear();
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) text.append(buf, n);
  EXPECT_EQ(pclose(p), 0) << text;
  EXPECT_EQ(text.find("rfprof:"), std::string::npos) << text;
  EXPECT_TRUE(has(text, "\nsm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum\n")) << text;
}

TEST(ListingsArgs, FlagsChooseTheListing) {
  Plan p = parse_args({"--list-sections"});
  ASSERT_TRUE(p.listing);
  EXPECT_EQ(p.listing->kind, Listing::Kind::kSections);
  EXPECT_EQ(p.listing->set, "roofline");  // rfprof's default set
  EXPECT_TRUE(p.listing->sections.empty());
  p = parse_args({"--list-sections", "--set", "roofline"});  // ncu's roofline set: the hierarchical charts
  EXPECT_EQ(p.listing->set, "hierarchical");
  p = parse_args({"--list-metrics", "--section", "SpeedOfLight_RooflineChart", "--section",
                  "SpeedOfLight_HierarchicalTensorRooflineChart", "--chip", "ga100", "--quiet"});
  EXPECT_EQ(p.listing->kind, Listing::Kind::kMetrics);
  EXPECT_EQ(p.listing->set, "roofline-tensor");  // the largest set the sections need
  EXPECT_EQ(p.listing->chip, "ga100");
  EXPECT_TRUE(p.listing->quiet);
  p = parse_args({"--list-sets", "--log-file", "sets.txt"});
  EXPECT_EQ(p.listing->kind, Listing::Kind::kSets);
  EXPECT_EQ(p.listing->chip, "");  // this machine's GPU, else GH100
  EXPECT_EQ(p.log_file, "sets.txt");
}

TEST(ListingsHostApi, MetricsFlagsCheckedAndCompletedAsForARun) {
  Plan p = parse_args({"--list-metrics", "--metrics", "gpu__time_duration", "--metrics", "dram__bytes_read.sum"});
  ASSERT_TRUE(p.listing);
  EXPECT_EQ(p.listing->metrics,
            (std::vector<std::string>{"gpu__time_duration.sum", "gpu__time_duration.avg", "gpu__time_duration.min",
                                      "gpu__time_duration.max", "dram__bytes_read.sum"}));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_TRUE(has(p.notes[0], "a base name")) << p.notes[0];
  std::string out, err;
  ASSERT_EQ(listing(*p.listing, out, err), 0);
  EXPECT_EQ(lines_of(out).size(), 10u);
  // A --chip beside --metrics is checked too.
  p.listing->chip = "nosuch";
  EXPECT_EQ(listing(*p.listing, out, err), 2);
  EXPECT_EQ(err, "rfprof: --chip nosuch: not a chip CUPTI knows (rfprof --list-chips lists them)\n");
  // Launch attributes are printed by a run, not collected: not listed, each with a note.
  p = parse_args({"--list-metrics", "--metrics", "launch__grid_size,dram__bytes_read.sum"});
  ASSERT_EQ(listing(*p.listing, out, err), 0);
  EXPECT_EQ(out, "dram__bytes_read.sum\n -dram__bytes_read.sum\n");
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_TRUE(has(p.notes[0], "--metrics launch__grid_size: printed from each launch's")) << p.notes[0];
  p = parse_args({"--list-metrics", "--metrics", "launch__grid_size"});
  ASSERT_EQ(listing(*p.listing, out, err), 0);
  EXPECT_EQ(out, "");  // not the default set's metrics
  try {
    (void)parse_args({"--list-metrics", "--metrics", "dram__bytes_reed.sum"});
    ADD_FAILURE() << "a misspelt metric was listed";
  } catch (const ArgsError& e) {
    EXPECT_TRUE(has(e.what(), "dram__bytes_read.sum")) << e.what();  // the closest names
  }
}

// --metrics beside --section (or --set): the set's metrics, then the listed ones it lacks, as a run
// collects them (ncu collects both).
TEST(ListingsHostApi, MetricsBesideASectionAreListedAfterItsMetrics) {
  const Plan set = parse_args({"--list-metrics", "--section", "SpeedOfLight_RooflineChart", "--chip", "GH100"});
  const Plan both = parse_args({"--list-metrics", "--section", "SpeedOfLight_RooflineChart", "--chip", "GH100",
                                "--metrics", "dram__bytes_read.sum,sm__cycles_elapsed.avg"});
  ASSERT_TRUE(set.listing && both.listing);
  std::string set_out, both_out, err;
  ASSERT_EQ(listing(*set.listing, set_out, err), 0) << err;
  ASSERT_EQ(listing(*both.listing, both_out, err), 0) << err;
  ASSERT_TRUE(has(set_out, "dram__bytes_read.sum\n"));  // in the set already: listed once
  EXPECT_EQ(both_out, set_out + "sm__cycles_elapsed.avg\n -sm__cycles_elapsed.avg\n");
}

// --list-chips lists every chip: the listing flags it would ignore are refused, as with --list-sets
// (a flag is never silently ignored); --log-file is honoured, as by the other listings.
TEST(ListingsArgs, ListChipsRefusesWhatItWouldIgnore) {
  for (const std::vector<std::string>& flags : {std::vector<std::string>{"--chips", "bogus"}, {"--csv"},
                                                {"--metrics", "x"}, {"--set", "roofline"},
                                                {"--section", "SpeedOfLight_RooflineChart"}}) {
    std::vector<std::string> args = {"--list-chips"};
    args.insert(args.end(), flags.begin(), flags.end());
    EXPECT_EQ(error_of(args), "rfprof: --list-chips lists every chip; drop --chips, --csv, --set, --section and "
                              "--metrics (or use --query-metrics)")
        << flags[0];
  }
  const Plan p = parse_args({"--list-chips", "--log-file", "chips.txt"});
  EXPECT_TRUE(p.list_chips);
  EXPECT_EQ(p.log_file, "chips.txt");
}

TEST(ListingsHostApi, ListChipsGoesToTheLogFile) {
  const std::string dir = ::testing::TempDir() + "rfprof-list-chips-" + std::to_string(::getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  const std::string cmd = "cd " + dir + " && " + RFPROF_BIN + " --list-chips --log-file chips.txt > out.txt";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::ifstream chips(dir + "/chips.txt"), out(dir + "/out.txt");
  const std::string listed((std::istreambuf_iterator<char>(chips)), std::istreambuf_iterator<char>()),
      printed((std::istreambuf_iterator<char>(out)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(has(listed, ", gh100, ")) << listed;
  EXPECT_EQ(printed, "");
  (void)std::system(("rm -rf " + dir).c_str());
}

TEST(ListingsArgs, RefusedCombinations) {
  EXPECT_EQ(error_of({"--list-metrics", "app"}), "rfprof: --list-metrics lists and exits; drop the application and -i");
  EXPECT_TRUE(has(error_of({"--list-sections", "-i", "t.rftrace"}), "--list-sections lists and exits"));
  EXPECT_EQ(error_of({"--list-sections", "--list-metrics"}),
            "rfprof: give one of --list-sets, --list-sections, --list-metrics, --list-chips and --query-metrics");
  EXPECT_TRUE(has(error_of({"--list-sections", "--query-metrics"}), "give one of"));
  EXPECT_TRUE(has(error_of({"--list-sets", "--list-chips"}), "give one of"));
  EXPECT_TRUE(has(error_of({"--list-metrics", "--query-metrics-mode", "all"}), "give one of"));
  EXPECT_TRUE(has(error_of({"--list-sections", "--chip", "gh100"}), "the same on every chip"));
  EXPECT_TRUE(has(error_of({"--list-metrics", "--chip", "gh100,ga100"}), "one chip at a time"));
  EXPECT_TRUE(has(error_of({"--list-sets", "--set", "roofline"}), "--list-sets lists every set"));
  EXPECT_TRUE(has(error_of({"--list-sets", "--section", "SpeedOfLight_RooflineChart"}), "--list-sets lists every set"));
  EXPECT_TRUE(has(error_of({"--list-sets", "--metrics", "dram__bytes_read.sum"}), "--list-sets lists every set"));
  EXPECT_TRUE(has(error_of({"--list-sections", "--metrics", "dram__bytes_read.sum"}), "drop --metrics"));
  EXPECT_TRUE(has(error_of({"--list-metrics", "--set", "timing", "--metrics", "dram__bytes_read.sum"}),
                  "the timing set collects no counters"));
  // A launch attribute is no counter: listed with the timing set as without a set.
  EXPECT_EQ(error_of({"--list-metrics", "--set", "timing", "--metrics", "launch__grid_size"}), "");
  EXPECT_TRUE(has(error_of({"--list-metrics", "--set", "basic"}), "--set basic"));
  EXPECT_TRUE(has(error_of({"--list-sections", "--section", "Occupancy"}), "--section Occupancy: not a roofline section"));
  EXPECT_TRUE(has(error_of({"--list-sections", "--set", "roofline", "--section", "SpeedOfLight_RooflineChart"}),
                  "--set with --section"));
}

}  // namespace
}  // namespace rf::launcher
