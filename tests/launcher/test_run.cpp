// Running the application (run.h) and the rfprof binary end to end without a GPU: exit status,
// environment, signals, output pattern matching, import of a trace as CSV.
#include "rfprof/launcher/run.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <thread>

#include "../analyzer/analyzer_samples.h"

extern char** environ;

namespace rf::launcher {
namespace {

using analyzer::testing::slurp;
using analyzer::testing::TempDir;

Plan plan_for(std::vector<std::string> command) {
  Plan p;
  p.command = std::move(command);
  p.env["RFPROF_MODE"] = "timing";
  return p;
}

TEST(Run, ExitStatusIsTheApplications) {
  std::ostringstream err;
  auto env = application_environment(plan_for({}), "/x/librfinject.so", environ);
  EXPECT_EQ(run_application(plan_for({"sh", "-c", "exit 7"}), env, err), 7);
  EXPECT_EQ(run_application(plan_for({"sh", "-c", "kill -TERM $$"}), env, err), 128 + 15);
  EXPECT_EQ(run_application(plan_for({"/no/such/program"}), env, err), 127);
  EXPECT_NE(err.str().find("rfprof: cannot run /no/such/program: No such file or directory"), std::string::npos);
}

TEST(Run, ApplicationGetsTheInjectionAndItsPid) {
  TempDir dir;
  const auto out = dir.path / "env.txt";
  Plan p = plan_for({"sh", "-c", "env > " + out.string() + "; echo $$ > " + (dir.path / "pid").string()});
  auto env = application_environment(p, "/opt/rfprof/lib/librfinject.so", environ);
  std::ostringstream err;
  ASSERT_EQ(run_application(p, env, err), 0) << err.str();
  const std::string e = slurp(out);
  EXPECT_NE(e.find("CUDA_INJECTION64_PATH=/opt/rfprof/lib/librfinject.so\n"), std::string::npos);
  EXPECT_NE(e.find("NVTX_INJECTION64_PATH=/opt/rfprof/lib/librfinject.so\n"), std::string::npos);
  EXPECT_NE(e.find("RFPROF_MODE=timing\n"), std::string::npos);
  std::string pid = slurp(dir.path / "pid");
  pid.pop_back();
  EXPECT_NE(e.find("RFPROF_ROOT_PID=" + pid + "\n"), std::string::npos);
}

TEST(Run, PatternRegexAndTracesWritten) {
  EXPECT_EQ(pattern_regex("run_%p.rftrace"), "run_[0-9]+\\.rftrace");
  EXPECT_EQ(pattern_regex("r%q{SLURM_PROCID}_%h_%i%%.rftrace"), "r[^/]*_[^/]*_[0-9]+%\\.rftrace");
  TempDir dir;
  for (const char* f : {"run_12.rftrace", "run_13.rftrace", "run_x.rftrace", "run_12.rftrace.part", "other.rftrace"})
    std::ofstream(dir.path / f) << "x";
  auto found = traces_written((dir.path / "run_%p.rftrace").string(), std::filesystem::file_time_type::min());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].filename(), "run_12.rftrace");
  EXPECT_EQ(found[1].filename(), "run_13.rftrace");
  EXPECT_TRUE(traces_written((dir.path / "run_%p.rftrace").string(), std::filesystem::file_time_type::max()).empty());
}

TEST(Run, InjectionLibraryIsFoundNextToTheBinaryOrInLib) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "bin");
  std::filesystem::create_directories(dir.path / "lib");
  EXPECT_FALSE(find_inject_library(dir.path / "bin" / "rfprof"));
  std::ofstream(dir.path / "lib" / "librfinject.so") << "";
  EXPECT_EQ(find_inject_library(dir.path / "bin" / "rfprof")->filename(), "librfinject.so");
  std::ofstream(dir.path / "bin" / "librfinject.so") << "";
  EXPECT_EQ(*find_inject_library(dir.path / "bin" / "rfprof"), std::filesystem::weakly_canonical(dir.path / "bin" / "librfinject.so"));
}

TEST(RfprofBinary, RunsTheApplicationAndReturnsItsStatusWithoutAGpu) {
  // No GPU here: librfinject is loaded by nobody (sh uses no CUDA); rfprof still runs the command.
  const std::string cmd = std::string(RFPROF_BIN) + " --target-process all sh -c 'exit 3'";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 3);
  const int bad = std::system((std::string(RFPROF_BIN) + " --clock-control none true 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(bad), 2);
}

TEST(RfprofBinary, ImportPrintsTheRawPage) {
  TempDir dir;
  {
    analyzer::testing::TraceBuilder t(dir.path / "t.rftrace");
    t.process(7, trace::CollectionMode::kTiming);
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 3000, "k()");
    t.finish();
  }
  const std::string cmd = std::string(RFPROF_BIN) + " -i " + (dir.path / "t.rftrace").string() +
                          " --csv --page raw --log-file " + (dir.path / "x.csv").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  EXPECT_EQ(slurp(dir.path / "x.csv"),
            "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
            "\"Block Size\",\"Grid Size\",\"Device\",\"CC\"\n"
            "\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\",\"\"\n"
            "\"0\",\"7\",\"python3\",\"node01\",\"k()\",\"0\",\"7\",\"(256, 1, 1)\",\"(1024, 1, 1)\",\"0\",\"\"\n");
  const int missing = std::system((std::string(RFPROF_BIN) + " -i /no/such.rftrace --csv 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(missing), 2);
}

}  // namespace
}  // namespace rf::launcher
