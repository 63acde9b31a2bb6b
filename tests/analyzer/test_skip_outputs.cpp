// rfanalyze --skip / --outputs (AnalyzeOptions::skip): a skipped output is not written, every
// other one is byte for byte what a full run writes, and bad names are refused.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
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
    EXPECT_EQ(run.err, "");  // a fresh folder: nothing left from an earlier run to name
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

#ifdef RFANALYZE_PATH
struct ExeRun {
  int status;
  std::string out, err;
};

ExeRun run_exe(const std::string& args, const fs::path& dir) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string cmd = RFANALYZE_PATH;  // appended, not a chain of +, which gcc 12 warns about (-Warray-bounds)
  for (const std::string& part : {std::string(" "), args, std::string(" >"), out.string(), std::string(" 2>"), err.string()})
    cmd += part;
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}

TEST(SkipOutputs, TheCommandLineTakesCommaSeparatedNamesAndRefusesBadOnes) {
  TempDir dir;
  const std::string trace = testing::shipped_trace().string();
  const fs::path only = dir.path / "only";
  const ExeRun outputs = run_exe(trace + " --outputs ranges.csv,summary.json -o " + only.string(), dir.path);
  ASSERT_EQ(outputs.status, 0) << outputs.err;
  std::set<std::string> files;
  for (const auto& e : fs::directory_iterator(only)) files.insert(e.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"ranges.csv", "summary.json"}));
  // The summary lists the outputs written, not the ones skipped.
  EXPECT_NE(outputs.out.find("\noutputs in " + only.string() + "/: ranges.csv, summary.json\n"), std::string::npos)
      << outputs.out;

  const fs::path skipped = dir.path / "skipped";
  const ExeRun skip = run_exe(trace + " -q --skip kernels.csv,counters.csv --skip trace.json -o " + skipped.string(),
                              dir.path);
  ASSERT_EQ(skip.status, 0) << skip.err;
  EXPECT_EQ(skip.out, "");
  EXPECT_FALSE(fs::exists(skipped / "kernels.csv"));
  EXPECT_FALSE(fs::exists(skipped / "trace.json"));
  EXPECT_TRUE(fs::exists(skipped / "report.html"));

  // One list per use: a trace after the option is a trace, not a name.
  const fs::path after = dir.path / "after";
  const ExeRun before = run_exe("-q --skip trace.json,kernels.csv " + trace + " -o " + after.string(), dir.path);
  ASSERT_EQ(before.status, 0) << before.err;
  EXPECT_FALSE(fs::exists(after / "trace.json"));
  EXPECT_FALSE(fs::exists(after / "kernels.csv"));
  EXPECT_TRUE(fs::exists(after / "counters.csv"));

  const ExeRun unknown = run_exe(trace + " --skip kernels.csv,tracejson -o " + (dir.path / "u").string(), dir.path);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.err, "rfanalyze: --skip: \"tracejson\" is not an output (expected one of: kernels.csv, "
                         "counters.csv, trace.json, memory.csv, ranges.csv, phases.csv, processes.csv, "
                         "profiler_overhead.csv, ops.csv, layers.csv, callsites_time.folded, callsites_flop.folded, "
                         "callsites.csv, summary.json, roofline.svg, scaling.csv, report.html)\n");
  EXPECT_FALSE(fs::exists(dir.path / "u"));
  const ExeRun empty = run_exe(trace + " --outputs '' -o " + (dir.path / "e").string(), dir.path);
  EXPECT_EQ(empty.status, 2);
  EXPECT_EQ(empty.err.rfind("rfanalyze: --outputs: \"\" is not an output (expected one of: ", 0), 0u) << empty.err;
  EXPECT_FALSE(fs::exists(dir.path / "e"));

  const ExeRun both = run_exe(trace + " --skip trace.json --outputs ranges.csv -o " + (dir.path / "b").string(),
                              dir.path);
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("--skip excludes --outputs"), std::string::npos) << both.err;
  EXPECT_FALSE(fs::exists(dir.path / "b"));
}
#endif

}  // namespace
}  // namespace rf::analyzer
