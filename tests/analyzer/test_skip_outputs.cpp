// rfanalyze --skip / --outputs (AnalyzeOptions::skip): a skipped output is not written, every
// other one is byte for byte what a full run writes, and bad names are refused (the command line:
// test_rfanalyze_exe.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::analyze;
using testing::slurp;
using testing::TempDir;

const std::set<std::string> kPerLaunch{"kernels.csv", "counters.csv", "trace.json"};

/// Every output name but `kept`.
std::set<std::string> all_but(const std::set<std::string>& kept) {
  std::set<std::string> skip;
  for (const auto& name : output_names())
    if (!kept.contains(name)) skip.insert(name);
  return skip;
}

const fs::path kNcuCsv = fs::path(RFPROF_ANALYZER_DATA) / "ncu_auto_units.csv";

/// Two traces (the shipped one twice, so trace.json's thread serves several) and an ncu CSV.
AnalyzeOptions inputs() {
  AnalyzeOptions opts;
  opts.import_ncu = {kNcuCsv};
  return opts;
}

TEST(SkipOutputs, SkippedOutputsAreNotWrittenAndTheOthersAreTheFullRunsBytes) {
  TempDir dir;
  const std::vector<fs::path> traces{testing::shipped_trace(), testing::shipped_trace()};
  ASSERT_EQ(analyze(traces, dir.path / "full", inputs()).status, kExitOk);
  for (const auto& skip : {kPerLaunch, all_but({"ranges.csv"}), all_but({"kernels.csv", "report.html"}),
                           std::set<std::string>{"trace.json", "summary.json"}}) {
    const fs::path out = dir.path / ("skip" + std::to_string(skip.size()));
    AnalyzeOptions opts = inputs();
    opts.skip = skip;
    const auto run = analyze(traces, out, opts);
    ASSERT_EQ(run.status, kExitOk) << run.err;
    // A fresh folder: nothing left from an earlier run to name; only the ncu CSV's auto units and
    // its device, which has no name and so no ceilings, are noted, as in the full run.
    EXPECT_EQ(run.err, "rfanalyze: note: " + kNcuCsv.string() + ": ncu printed dram__bytes_read.sum in Mbyte (its "
                       "default --print-units auto), which keeps two decimals: the imported values are rounded as "
                       "printed; ncu --print-units base exports exact ones\n"
                       "rfanalyze: note: no ceilings for device 0 of " + kNcuCsv.string() +
                           " (pid 31337, no name): their launches have no roofline bound; --device NAME takes a "
                           "datasheet entry for every device (rfanalyze ceilings --list names them), --ceilings "
                           "FILE your own\n");
    size_t written = 0;
    for (const auto& name : output_names()) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(fs::exists(dir.path / "full" / name));
      if (skip.contains(name)) {
        EXPECT_FALSE(fs::exists(out / name));
        EXPECT_FALSE(fs::exists(out / (name + ".partial")));
        continue;
      }
      ++written;
      ASSERT_TRUE(fs::exists(out / name));
      EXPECT_EQ(slurp(out / name), slurp(dir.path / "full" / name));
    }
    EXPECT_EQ(written, output_names().size() - skip.size());
    size_t files = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(out)) ++files;
    EXPECT_EQ(files, written);
  }
}

TEST(SkipOutputs, AnUnknownNameIsBadInputThatListsTheOutputs) {
  TempDir dir;
  AnalyzeOptions opts;
  opts.skip = {"trace.json", "kernel.csv"};
  const auto run = analyze({testing::shipped_trace()}, dir.path / "r", opts);
  EXPECT_EQ(run.status, kExitBadInput);
  EXPECT_NE(run.err.find("rfanalyze: --skip/--outputs: \"kernel.csv\" is not an output (expected one of: "
                         "kernels.csv, counters.csv, trace.json,"),
            std::string::npos)
      << run.err;
  EXPECT_EQ(std::count(run.err.begin(), run.err.end(), '\n'), 1) << run.err;
  EXPECT_FALSE(fs::exists(dir.path / "r"));  // refused before anything is created
}

TEST(SkipOutputs, AFailedRunThatSkipsLeavesNothingEither) {
  TempDir dir;
  const fs::path bad = dir.path / "bad.rftrace";
  std::ofstream(bad) << "not a trace at all";
  AnalyzeOptions opts;
  opts.skip = kPerLaunch;
  const auto run = analyze({testing::shipped_trace(), bad}, dir.path / "r", opts);
  EXPECT_EQ(run.status, kExitBadInput);
  size_t files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path / "r")) ++files;
  EXPECT_EQ(files, 0u) << run.err;
}

TEST(SkipOutputs, AFileAnEarlierRunLeftIsKeptAndNamedOnce) {
  TempDir dir;
  const fs::path out = dir.path / "r";
  ASSERT_EQ(analyze({testing::shipped_trace()}, out).status, kExitOk);
  std::ofstream(out / "trace.json", std::ios::trunc) << "an earlier run's";
  fs::remove(out / "counters.csv");
  fs::remove(out / "kernels.csv");
  AnalyzeOptions opts;
  opts.skip = kPerLaunch;
  const auto run = analyze({testing::shipped_trace()}, out, opts);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  EXPECT_EQ(run.err, "rfanalyze: note: " + out.string() +
                         " holds outputs this run skipped, left from an earlier run: trace.json\n");
  EXPECT_EQ(slurp(out / "trace.json"), "an earlier run's");  // kept: never removed by a run that skips it
  EXPECT_FALSE(fs::exists(out / "kernels.csv"));
  EXPECT_FALSE(fs::exists(out / "counters.csv"));
  EXPECT_TRUE(fs::exists(out / "ranges.csv"));
}


}  // namespace
}  // namespace rf::analyzer
