// The rfanalyze executable: its command line (CLI11), exit codes, summary on stdout, --skip and
// --outputs; the analysis itself is tested through run_analysis (test_end_to_end.cpp).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "analyzer_samples.h"
#include "training_traces.h"

#ifdef RFANALYZE_PATH
namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::lines_of;
using testing::slurp;
using testing::TempDir;
using testing::write_timing_trace;
using testing::write_training_trace;

/// What a run of the rfanalyze executable gave: exit status, stdout, stderr.
struct ExeRun {
  int status;
  std::string out, err;
};

/// Runs rfanalyze with `args` (a shell word list) in `dir`'s files.
ExeRun run_exe(const std::string& args, const fs::path& dir) {
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  std::string cmd = RFANALYZE_PATH;  // appended, not a chain of +, which gcc 12 warns about (-Warray-bounds)
  for (const std::string& part : {std::string(" "), args, std::string(" >"), out.string(), std::string(" 2>"), err.string()})
    cmd += part;
  const int raw = std::system(cmd.c_str());
  return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, testing::slurp(out), testing::slurp(err)};
}

TEST(RfanalyzeExecutable, WritesTheReportAndExitCodes) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");
  const std::string trace = (dir.path / "t.rftrace").string();
  const fs::path out = dir.path / "report";
  ExeRun ok = run_exe(trace + " -o " + out.string(), dir.path);
  EXPECT_EQ(ok.status, 0) << ok.err;
  for (const char* f : {"kernels.csv", "counters.csv", "ranges.csv", "phases.csv", "summary.json"})
    EXPECT_TRUE(fs::exists(out / f)) << f;
  EXPECT_EQ(lines_of(out / "kernels.csv").size(), 6u);

  ExeRun forced = run_exe(trace + " -o " + (dir.path / "r2").string() + " --device 'V100 SXM2'", dir.path);
  EXPECT_EQ(forced.status, 0) << forced.err;
  std::ifstream in(dir.path / "r2" / "summary.json");
  EXPECT_EQ(nlohmann::json::parse(in)["devices"][0]["ceilings"]["datasheet_entry"], "V100 SXM2");

  ExeRun unknown = run_exe(trace + " -o " + (dir.path / "r3").string() + " --device 'Z9000'", dir.path);
  EXPECT_EQ(unknown.status, 2);
  EXPECT_NE(unknown.err.find("--device \"Z9000\": no such ceilings entry"), std::string::npos) << unknown.err;

  ExeRun missing = run_exe((dir.path / "nope.rftrace").string(), dir.path);
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("nope.rftrace: no such file"), std::string::npos) << missing.err;

  ExeRun no_args = run_exe("", dir.path);
  EXPECT_EQ(no_args.status, 2);

  std::ofstream(dir.path / "bad_map.json") << "{}";
  ExeRun bad_map = run_exe(trace + " --phase-map " + (dir.path / "bad_map.json").string(), dir.path);
  EXPECT_EQ(bad_map.status, 2);
  EXPECT_NE(bad_map.err.find("bad_map.json"), std::string::npos) << bad_map.err;
}

TEST(RfanalyzeExecutable, CommandLineErrorsVersionAndRepeatedImports) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");
  const std::string trace = (dir.path / "t.rftrace").string();
  // CLI11's errors read as every other message: one line, "rfanalyze: ...".
  ExeRun bogus = run_exe(trace + " --bogus", dir.path);
  EXPECT_EQ(bogus.status, 2);
  EXPECT_EQ(bogus.err.rfind("rfanalyze: ", 0), 0u) << bogus.err;
  EXPECT_EQ(std::count(bogus.err.begin(), bogus.err.end(), '\n'), 1) << bogus.err;
  EXPECT_NE(bogus.err.find("--bogus"), std::string::npos) << bogus.err;

  const std::string version_cmd = std::string(RFANALYZE_PATH) + " --version";
  FILE* p = ::popen(version_cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char line[128] = {};
  ASSERT_NE(std::fgets(line, sizeof line, p), nullptr);
  EXPECT_EQ(WEXITSTATUS(::pclose(p)), 0);
  EXPECT_EQ(std::string(line).rfind("rfanalyze 0.", 0), 0u) << line;

  // --import-ncu takes one file: a trace after it is a trace (it once took every path that followed).
  const fs::path csv = dir.path / "k.csv";
  std::ofstream(csv) << "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
                        "\"Block Size\",\"Grid Size\",\"Device\",\"CC\",\"gpu__time_duration.sum\"\n"
                        ",,,,,,,,,,,\"nsecond\"\n"
                        "\"0\",\"777\",\"app\",\"h\",\"k\",\"1\",\"7\",\"(1, 1, 1)\",\"(1, 1, 1)\",\"0\",\"9.0\",\"100\"\n";
  ExeRun both = run_exe("--import-ncu " + csv.string() + " " + trace + " -o " + (dir.path / "r").string(), dir.path);
  ASSERT_EQ(both.status, 0) << both.err;
  EXPECT_EQ(lines_of(dir.path / "r" / "kernels.csv").size(), 6u + 1u);  // the trace's 5, the CSV's 1
  ExeRun twice = run_exe("--import-ncu " + csv.string() + " --import-ncu " + csv.string() + " -o " +
                              (dir.path / "r2").string(), dir.path);
  ASSERT_EQ(twice.status, 0) << twice.err;
  EXPECT_EQ(lines_of(dir.path / "r2" / "kernels.csv").size(), 3u);
}

// The summary goes to stdout once the outputs are written; --quiet prints none; messages stay
// on stderr.
TEST(RfanalyzeExecutable, PrintsASummaryUnlessQuiet) {
  TempDir dir;
  write_training_trace(dir.path / "t.rftrace");
  const std::string base = std::string(RFANALYZE_PATH) + " " + (dir.path / "t.rftrace").string() + " -o " +
                           (dir.path / "r").string();
  auto stdout_of = [&](const std::string& cmd) {
    const fs::path out = dir.path / "stdout.txt";
    EXPECT_EQ(std::system((cmd + " >" + out.string() + " 2>/dev/null").c_str()), 0) << cmd;
    return testing::slurp(out);
  };
  const std::string summary = stdout_of(base);
  EXPECT_EQ(summary.rfind("rfanalyze: 1 trace(s), 5 launches, ", 0), 0u) << summary;
  EXPECT_NE(summary.find(" kernels by GPU time\n"), std::string::npos) << summary;
  EXPECT_NE(summary.find("forward"), std::string::npos) << summary;
  EXPECT_NE(summary.find("outputs in " + (dir.path / "r").string() + "/: report.html"), std::string::npos) << summary;
  EXPECT_EQ(stdout_of(base + " --quiet"), "");
  EXPECT_EQ(stdout_of(base + " -q"), "");
}

// `rfanalyze ceilings` passes its --device, --ceilings and -o on; `rfanalyze TRACE --ceilings` its
// file: a user entry named in both is what each prints and what summary.json names.
TEST(RfanalyzeExecutable, CeilingsFilesDevicesAndFoldersReachBothCommands) {
  TempDir dir;
  const fs::path user = dir.path / "lab.json";
  std::ofstream(user) << R"({"devices": [{"name": "Lab Board", "chip": null, "patterns": ["h100 80gb"],
                             "fp32_flop_per_s": 2.0e13, "dram_bytes_per_s": 1.0e12}]})";
  auto stdout_of = [&](const std::string& args) {
    const fs::path out = dir.path / "stdout.txt";
    const std::string cmd = std::string(RFANALYZE_PATH) + " " + args + " >" + out.string() + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd << "\n" << testing::slurp(out);
    return testing::slurp(out);
  };
  const std::string v100 = stdout_of("ceilings --device 'V100 SXM2' -o " + (dir.path / "svg").string());
  EXPECT_EQ(v100.rfind("ceilings of V100 SXM2\n", 0), 0u) << v100;
  EXPECT_TRUE(fs::exists(dir.path / "svg" / "roofline-V100-SXM2.svg"));
  const std::string lab = stdout_of("ceilings --ceilings " + user.string() + " --device 'Lab Board' -o " +
                                    (dir.path / "lab").string());
  EXPECT_EQ(lab.rfind("ceilings of Lab Board\n", 0), 0u) << lab;
  EXPECT_NE(lab.find("\nfp32,2e+13,FLOP/s,20,"), std::string::npos) << lab;  // ridge: 2e13 / 1e12
  EXPECT_TRUE(fs::exists(dir.path / "lab" / "roofline-Lab-Board.svg"));

  write_training_trace(dir.path / "t.rftrace");
  stdout_of((dir.path / "t.rftrace").string() + " -q --ceilings " + user.string() + " -o " + (dir.path / "r").string());
  const auto s = nlohmann::json::parse(std::ifstream(dir.path / "r" / "summary.json"));
  EXPECT_EQ(s["devices"][0]["ceilings"]["user_entry"], "Lab Board");
  EXPECT_EQ(s["devices"][0]["ceilings"]["dram_bytes_per_s"]["value"], 1.0e12);
}

TEST(RfanalyzeExecutable, DefaultOutputDirectoryIsRfprofReportInCwd) {
  TempDir dir;
  write_timing_trace(dir.path / "t.rftrace", 2);
  std::string cmd = "cd " + dir.path.string() + " && " + RFANALYZE_PATH + " t.rftrace 2>/dev/null";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(lines_of(dir.path / "rfprof-report" / "kernels.csv").size(), 3u);
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

}  // namespace
}  // namespace rf::analyzer
#endif
