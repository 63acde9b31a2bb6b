// Running the application (run.h) and the rfprof binary end to end without a GPU: exit status,
// environment, signals, output pattern matching, import of a trace as CSV.
#include "rfprof/launcher/run.h"

#include <gtest/gtest.h>
#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
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
  bool started = true;
  EXPECT_EQ(run_application(plan_for({"/no/such/program"}), env, err, &started), 127);
  EXPECT_FALSE(started);
  EXPECT_NE(err.str().find("rfprof: cannot run /no/such/program: No such file or directory"), std::string::npos);
  EXPECT_EQ(run_application(plan_for({"sh", "-c", "exit 127"}), env, err, &started), 127);
  EXPECT_TRUE(started);  // the application's own 127
  std::ostringstream none;
  EXPECT_EQ(run_application(plan_for({}), env, none, &started), 127);  // nothing to run
  EXPECT_FALSE(started);
  EXPECT_EQ(none.str(), "rfprof: no application to run\n");
}

// The forwarded signals (SIGINT, SIGTERM, SIGHUP, SIGUSR1, ...) are forwarded while the application
// runs, and the caller's handlers are back afterwards.
TEST(Run, SignalHandlersAreRestoredAfterTheRun) {
  constexpr int kSignals = 10;
  struct sigaction ignore {}, before[kSignals] {}, after {};
  ignore.sa_handler = SIG_IGN;
  const int signals[kSignals] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU};
  for (int i = 0; i < kSignals; ++i) ASSERT_EQ(::sigaction(signals[i], &ignore, &before[i]), 0);
  std::ostringstream err;
  auto env = application_environment(plan_for({}), "/x/librfinject.so", environ);
  EXPECT_EQ(run_application(plan_for({"true"}), env, err), 0) << err.str();
  for (int i = 0; i < kSignals; ++i) {
    ASSERT_EQ(::sigaction(signals[i], &before[i], &after), 0);
    EXPECT_EQ(after.sa_handler, SIG_IGN) << "signal " << signals[i];
  }
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

TEST(Run, TheInheritedEnvironmentIsPassedOnAsItIs) {
  std::string home = "HOME=/home/u", eq = "OPTS=a=b", empty = "EMPTY=", mode = "RFPROF_MODE=x=y", bare = "NOEQ";
  char* current[] = {home.data(), eq.data(), empty.data(), mode.data(), bare.data(), nullptr};
  Plan plan;
  plan.env["RFPROF_MODE"] = "timing";
  const std::vector<std::string> env = application_environment(plan, "/x/librfinject.so", current);
  for (const char* kv : {"HOME=/home/u", "OPTS=a=b", "EMPTY=", "RFPROF_MODE=timing"})
    EXPECT_NE(std::find(env.begin(), env.end(), kv), env.end()) << kv;
  // The name ends at the first '=': the plan's value replaces the inherited one whole. An entry
  // without '=' is no variable.
  for (const auto& kv : env) {
    EXPECT_NE(kv, "RFPROF_MODE=x=y");
    EXPECT_NE(kv.rfind("NOEQ", 0), 0u) << kv;
  }
}

// rfprof under rfprof (or a job script that exported it): the inherited RFPROF_ROOT_PID is not
// passed on beside the child's own, which C's getenv would not see (it returns the first).
TEST(Run, AnInheritedRootPidIsReplacedNotRepeated) {
  std::string root = "RFPROF_ROOT_PID=1", home = "HOME=/home/u";
  char* current[] = {root.data(), home.data(), nullptr};
  const std::vector<std::string> env = application_environment(plan_for({}), "/x/librfinject.so", current);
  for (const auto& kv : env) EXPECT_NE(kv.rfind("RFPROF_ROOT_PID=", 0), 0u) << kv;  // the child adds its own
  EXPECT_NE(std::find(env.begin(), env.end(), "HOME=/home/u"), env.end());
}

// A flag given decides its variables over rfprof's own environment, at ncu's default too: set to
// the default, or removed where "unset" is the default (RFPROF_METRICS beside --set).
TEST(Run, FlagsGivenDecideOverTheInheritedEnvironment) {
  std::vector<std::string> inherited = {"RFPROF_LAUNCH_SKIP=5", "RFPROF_REPLAY=step", "RFPROF_FILTER_MODE=per-gpu",
                                        "RFPROF_MEMORY=1", "RFPROF_METRICS=dram__bytes_read.sum", "RFPROF_MODE=timing",
                                        "RFPROF_LAUNCH_SKIP_BEFORE_MATCH=3", "HOME=/home/u"};
  std::vector<char*> current;
  for (auto& kv : inherited) current.push_back(kv.data());
  current.push_back(nullptr);
  const Plan p = parse_args({"-s", "0", "--replay-mode", "kernel", "--filter-mode", "global", "--cuda-memory-usage",
                             "false", "--set", "roofline", "--launch-skip-before-match", "0", "app"});
  const std::vector<std::string> env = application_environment(p, "/x/librfinject.so", current.data());
  for (const char* kv : {"RFPROF_LAUNCH_SKIP=0", "RFPROF_REPLAY=kernel", "RFPROF_FILTER_MODE=global", "RFPROF_MEMORY=0",
                         "RFPROF_METRIC_SET=hierarchical", "RFPROF_LAUNCH_SKIP_BEFORE_MATCH=0", "HOME=/home/u"})
    EXPECT_NE(std::find(env.begin(), env.end(), kv), env.end()) << kv;
  for (const auto& kv : env) {
    EXPECT_NE(kv.rfind("RFPROF_METRICS=", 0), 0u) << kv;  // --set alone: the set, nothing besides
    EXPECT_NE(kv.rfind("RFPROF_MODE=", 0), 0u) << kv;
  }
}

TEST(Run, NullStdinGivesTheApplicationAnEmptyInput) {
  TempDir dir;
  const auto out = dir.path / "read.txt";
  // This process's standard input, for the run, is a pipe holding "typed".
  int in[2];
  ASSERT_EQ(::pipe(in), 0);
  ASSERT_EQ(::write(in[1], "typed", 5), 5);
  ::close(in[1]);
  const int saved = ::dup(0);
  ::dup2(in[0], 0);
  ::close(in[0]);
  Plan p = plan_for({"sh", "-c", "cat > " + out.string()});
  p.null_stdin = true;
  auto env = application_environment(p, "/x/librfinject.so", environ);
  std::ostringstream err;
  const int null_rc = run_application(p, env, err);
  const std::string null_read = slurp(out);
  p.null_stdin = false;
  const int rc = run_application(p, env, err);
  ::dup2(saved, 0);
  ::close(saved);
  EXPECT_EQ(null_rc, 0);
  EXPECT_EQ(null_read, "") << "--null-stdin: the application reads /dev/null";
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(slurp(out), "typed") << "without it, rfprof's own standard input";
}

TEST(Run, TracesListedAreTheRunsOwnEachOnce) {
  TempDir dir;
  for (const char* f : {"a.rftrace", "a.rftrace.part", "b.rftrace", "c.rftrace.part", "stale.rftrace"})
    std::ofstream(dir.path / f) << "x";
  std::filesystem::create_directories(dir.path / "d.rftrace");  // a folder of the name is no trace
  const auto list = dir.path / "list";
  std::ofstream(list) << (dir.path / "b.rftrace").string() << "\n"
                      << (dir.path / "a.rftrace").string() << "\n"
                      << (dir.path / "b.rftrace").string() << "\n"   // listed twice: printed once
                      << (dir.path / "c.rftrace").string() << "\n"   // killed: only its .part exists
                      << (dir.path / "gone.rftrace").string() << "\n"  // neither exists
                      << (dir.path / "d.rftrace").string() << "\n"
                      << "\n";
  const ListedTraces t = traces_listed(list);
  ASSERT_EQ(t.finished.size(), 2u);
  EXPECT_EQ(t.finished[0].filename(), "b.rftrace");
  EXPECT_EQ(t.finished[1].filename(), "a.rftrace");
  ASSERT_EQ(t.unfinished.size(), 1u);
  EXPECT_EQ(t.unfinished[0].filename(), "c.rftrace.part");
  EXPECT_TRUE(traces_listed(dir.path / "no-such-list").finished.empty());
}

TEST(Run, InjectionLibraryIsFoundNextToTheBinaryOrInLib) {
  TempDir dir;
  std::filesystem::create_directories(dir.path / "bin");
  std::filesystem::create_directories(dir.path / "lib");
  EXPECT_FALSE(find_inject_library(dir.path / "bin" / "rfprof"));
  std::filesystem::create_directories(dir.path / "bin" / "librfinject.so");  // a folder: not the library
  std::ofstream(dir.path / "lib" / "librfinject.so") << "";
  EXPECT_EQ(*find_inject_library(dir.path / "bin" / "rfprof"),
            std::filesystem::weakly_canonical(dir.path / "lib" / "librfinject.so"));  // without "bin/.."
  std::filesystem::remove(dir.path / "bin" / "librfinject.so");
  std::ofstream(dir.path / "bin" / "librfinject.so") << "";
  EXPECT_EQ(*find_inject_library(dir.path / "bin" / "rfprof"), std::filesystem::weakly_canonical(dir.path / "bin" / "librfinject.so"));
}

TEST(RfprofBinary, RunsTheApplicationAndReturnsItsStatusWithoutAGpu) {
  // No GPU here: librfinject is loaded by nobody (sh uses no CUDA); rfprof still runs the command.
  const std::string cmd = std::string(RFPROF_BIN) + " --target-process all sh -c 'exit 3'";
  const int rc = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 3);
  const int bad = std::system((std::string(RFPROF_BIN) + " --clock-control high true 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(bad), 2);
  // What rfprof does anyway is accepted: no flush, no clock change.
  const int none = std::system((std::string(RFPROF_BIN) + " --clock-control none --cache-control none true").c_str());
  EXPECT_EQ(WEXITSTATUS(none), 0);
}

/// A timing trace of pid `pid` with one kernel named `kernel`.
void write_one_kernel_trace(const std::filesystem::path& path, uint32_t pid, const std::string& kernel) {
  analyzer::testing::TraceBuilder t(path);
  t.process(pid, trace::CollectionMode::kTiming);
  t.launch(1, 0, 100, 1000);
  t.kernel(1, 2000, 3000, kernel);
  t.finish();
}

// rfprof --csv prints the traces this run's processes listed in RFPROF_TRACE_LIST, not every file
// that matches -o (it once printed another run's trace copied there, or a stale one). No GPU here:
// the application plays librfinject's part and lists its trace itself.
TEST(RfprofBinary, CsvPrintsOnlyTheTracesThisRunListed) {
  TempDir dir;
  write_one_kernel_trace(dir.path / "mine.src", 11, "mine()");
  write_one_kernel_trace(dir.path / "r_999.rftrace", 22, "stale()");  // matches -o r_%p, not this run's
  const std::string rfprof = "cd " + dir.path.string() + " && " + RFPROF_BIN + " --csv --page raw -o 'r_%p' ";
  const std::string lists =
      "sh -c 'cp mine.src r_5.rftrace && echo $PWD/r_5.rftrace >> \"$RFPROF_TRACE_LIST\"' > out.csv 2> err.txt";
  ASSERT_EQ(std::system((rfprof + lists).c_str()), 0) << slurp(dir.path / "err.txt");
  const std::string out = slurp(dir.path / "out.csv");
  EXPECT_NE(out.find("\"mine()\""), std::string::npos) << out;
  EXPECT_EQ(out.find("stale()"), std::string::npos) << out;
  // Each listed trace is named at the end (ncu's "==PROF== Report:"), and only those.
  const std::string err = slurp(dir.path / "err.txt");
  EXPECT_NE(err.find("rfprof: trace: " + (dir.path / "r_5.rftrace").string() + "\n"), std::string::npos) << err;
  EXPECT_EQ(err.find("r_999"), std::string::npos) << err;
  // --log-file stdout is the standard output, not a file named "stdout".
  ASSERT_EQ(std::system((rfprof + "--log-file stdout --quiet " + lists).c_str()), 0);
  EXPECT_NE(slurp(dir.path / "out.csv").find("\"mine()\""), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir.path / "stdout"));
  EXPECT_EQ(slurp(dir.path / "err.txt"), "");  // --quiet: no trace line
  // --log-file stderr: the results go to the standard error instead.
  ASSERT_EQ(std::system((rfprof + "--log-file stderr --quiet " + lists).c_str()), 0);
  EXPECT_EQ(slurp(dir.path / "out.csv"), "");
  EXPECT_NE(slurp(dir.path / "err.txt").find("\"mine()\""), std::string::npos);

  // A run that lists nothing prints nothing, whatever matches the pattern.
  ASSERT_EQ(std::system((rfprof + "sh -c 'cp mine.src r_6.rftrace' > out2.csv 2> err2.txt").c_str()), 0);
  EXPECT_EQ(slurp(dir.path / "out2.csv"), "");
  EXPECT_NE(slurp(dir.path / "err2.txt").find("rfprof: no trace was written"), std::string::npos);
  // With -o alone (nothing printed after the run) too, as ncu's "No kernels were profiled".
  const std::string export_only = "cd " + dir.path.string() + " && " + RFPROF_BIN + " -o 'r_%p' true 2> err4.txt";
  ASSERT_EQ(std::system(export_only.c_str()), 0);
  EXPECT_NE(slurp(dir.path / "err4.txt").find("rfprof: no trace was written"), std::string::npos);
  // A command that could not be started is said once, without a second line about traces.
  const std::string missing =
      "cd " + dir.path.string() + " && " + RFPROF_BIN + " -o 'r_%p' /no/such/program 2> err5.txt";
  EXPECT_EQ(WEXITSTATUS(std::system(missing.c_str())), 127);
  EXPECT_EQ(slurp(dir.path / "err5.txt"), "rfprof: cannot run /no/such/program: No such file or directory\n");

  // A killed process leaves NAME.part: printed, and said to be truncated.
  std::string bytes = slurp(dir.path / "mine.src");
  std::ofstream(dir.path / "r_7.rftrace.part", std::ios::binary) << bytes.substr(0, bytes.size() - 40);
  ASSERT_EQ(std::system((rfprof + "sh -c 'echo $PWD/r_7.rftrace >> \"$RFPROF_TRACE_LIST\"' > out3.csv 2> err3.txt")
                            .c_str()),
            0);
  EXPECT_NE(slurp(dir.path / "err3.txt").find("r_7.rftrace.part is truncated at byte"), std::string::npos)
      << slurp(dir.path / "err3.txt");
}

/// rfprof `flags` running `sh -c` that writes its pid to `pid_file` and sleeps 30 s, started with
/// the signals in `defaults` at their default action (as from a terminal) and no core dumps.
/// Returns rfprof's pid, or -1 when fork failed.
pid_t start_rfprof_with_sleeper(const std::vector<std::string>& flags, const std::filesystem::path& pid_file,
                                const std::vector<int>& defaults) {
  const pid_t rfprof = ::fork();
  if (rfprof != 0) return rfprof;
  for (int s : defaults) ::signal(s, SIG_DFL);
  const struct rlimit no_core = {0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);  // SIGQUIT and SIGXCPU dump the application's core
  const std::string script = "echo $$ > " + pid_file.string() + ".tmp && mv " + pid_file.string() + ".tmp " +
                             pid_file.string() + " && exec sleep 30";
  std::vector<std::string> args = {RFPROF_BIN};
  args.insert(args.end(), flags.begin(), flags.end());
  for (const char* a : {"sh", "-c"}) args.emplace_back(a);
  args.push_back(script);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(RFPROF_BIN, argv.data());
  ::_exit(126);
}

// The signals that would end rfprof and leave the application running without it (Ctrl-C, Slurm's
// time limit, a closed terminal, kill -QUIT; SIGUSR1/2 with --forward-signals) go on to the
// application, which ends as it would without rfprof; rfprof waits for it and returns 128 + the
// signal. Without --forward-signals rfprof ignores SIGUSR1/2 (it died of them, leaving the
// application running without it; forwarded always, a checkpoint signal Slurm also sends the
// application itself ran its handler twice).
TEST(RfprofBinary, SignalsAreForwardedToTheApplication) {
  const std::vector<int> forwarded = {SIGINT,  SIGTERM, SIGHUP,    SIGQUIT, SIGUSR1,
                                      SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU};
  for (int sig : forwarded) {
    const bool user = sig == SIGUSR1 || sig == SIGUSR2;
    TempDir dir;
    const auto pid_file = dir.path / "pid";
    const pid_t rfprof = start_rfprof_with_sleeper(
        user ? std::vector<std::string>{"--quiet", "--forward-signals"} : std::vector<std::string>{"--quiet"}, pid_file,
        forwarded);
    ASSERT_GE(rfprof, 0);
    for (int i = 0; i < 500 && !std::filesystem::exists(pid_file); ++i) ::usleep(10 * 1000);
    ASSERT_TRUE(std::filesystem::exists(pid_file)) << "the application did not start";
    const pid_t app = std::stoi(slurp(pid_file));
    ASSERT_EQ(::kill(rfprof, sig), 0);
    int status = 0;
    for (int i = 0; i < 500 && ::waitpid(rfprof, &status, WNOHANG) == 0; ++i) ::usleep(10 * 1000);
    const bool app_gone = ::kill(app, 0) != 0;
    if (!app_gone) ::kill(app, SIGKILL);
    if (::waitpid(rfprof, &status, WNOHANG) == 0) {
      ::kill(rfprof, SIGKILL);
      ::waitpid(rfprof, &status, 0);
    }
    EXPECT_TRUE(app_gone) << "signal " << sig << " did not reach the application";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + sig)
        << "signal " << sig << ": rfprof should return the application's 128 + signal, wait status " << status;
  }
}

// Without --forward-signals, SIGUSR1 and SIGUSR2 sent to rfprof end neither rfprof nor the
// application; SIGTERM afterwards still ends both.
TEST(RfprofBinary, UserSignalsAreIgnoredWithoutForwardSignals) {
  for (int sig : {SIGUSR1, SIGUSR2}) {
    TempDir dir;
    const auto pid_file = dir.path / "pid";
    const pid_t rfprof = start_rfprof_with_sleeper({"--quiet"}, pid_file, {sig, SIGTERM});
    ASSERT_GE(rfprof, 0);
    for (int i = 0; i < 500 && !std::filesystem::exists(pid_file); ++i) ::usleep(10 * 1000);
    ASSERT_TRUE(std::filesystem::exists(pid_file)) << "the application did not start";
    const pid_t app = std::stoi(slurp(pid_file));
    ASSERT_EQ(::kill(rfprof, sig), 0);
    ::usleep(300 * 1000);
    int status = 0;
    EXPECT_EQ(::waitpid(rfprof, &status, WNOHANG), 0) << "signal " << sig << " ended rfprof";
    EXPECT_EQ(::kill(app, 0), 0) << "signal " << sig << " ended the application";
    ::kill(rfprof, SIGTERM);
    for (int i = 0; i < 500 && ::waitpid(rfprof, &status, WNOHANG) == 0; ++i) ::usleep(10 * 1000);
    if (::kill(app, 0) == 0) ::kill(app, SIGKILL);
    if (::waitpid(rfprof, &status, WNOHANG) == 0) {
      ::kill(rfprof, SIGKILL);
      ::waitpid(rfprof, &status, 0);
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << "wait status " << status;
  }
}

// Ctrl-C at a terminal: the kernel sends SIGINT (si_code SI_KERNEL) to the foreground process
// group. An application in rfprof's group gets it from the kernel, and a forwarded copy made it
// twice (a KeyboardInterrupt handler's cleanup cut short); one in a group of its own (`rfprof
// timeout 10 app`: timeout makes one) gets it only through rfprof. Either way: exactly once.
TEST(RfprofBinary, TerminalSignalsReachTheApplicationOnce) {
  for (const bool own_group : {false, true}) {
    TempDir dir;
    const std::string marks = (dir.path / "marks").string(), ready = (dir.path / "ready").string();
    const std::string script = "trap 'echo INT >> " + marks + "' INT; touch " + ready +
                               "; i=0; while [ $i -lt 15 ]; do sleep 0.1; i=$((i+1)); done; exit 3";
    int master = -1;
    const pid_t rfprof = ::forkpty(&master, nullptr, nullptr, nullptr);  // rfprof on a terminal
    ASSERT_GE(rfprof, 0);
    if (rfprof == 0) {
      ::signal(SIGINT, SIG_DFL);
      if (own_group)
        ::execl(RFPROF_BIN, RFPROF_BIN, "--quiet", "timeout", "10", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      else
        ::execl(RFPROF_BIN, RFPROF_BIN, "--quiet", "sh", "-c", script.c_str(), static_cast<char*>(nullptr));
      ::_exit(126);
    }
    ::fcntl(master, F_SETFL, ::fcntl(master, F_GETFL) | O_NONBLOCK);
    for (int i = 0; i < 500 && !std::filesystem::exists(ready); ++i) ::usleep(10 * 1000);
    ASSERT_TRUE(std::filesystem::exists(ready)) << "the application did not start";
    ASSERT_EQ(::write(master, "\x03", 1), 1);  // ^C: the terminal's SIGINT
    int status = 0;
    for (int i = 0; i < 1000 && ::waitpid(rfprof, &status, WNOHANG) == 0; ++i) {
      char drain[256];
      (void)!::read(master, drain, sizeof drain);  // the terminal's output, so that nothing blocks
      ::usleep(10 * 1000);
    }
    if (::waitpid(rfprof, &status, WNOHANG) == 0) {
      ::kill(rfprof, SIGKILL);
      ::waitpid(rfprof, &status, 0);
    }
    ::close(master);
    EXPECT_EQ(slurp(marks), "INT\n") << (own_group ? "in a group of its own" : "in rfprof's group");
  }
}

// As ncu: without --csv and without -o the results are printed as text after the run (ncu's
// details page); with -o only the traces are named; -i without --csv prints the text too.
TEST(RfprofBinary, WithoutCsvOrOutputPrintsNcusText) {
  TempDir dir;
  write_one_kernel_trace(dir.path / "mine.src", 11, "mine()");
  const std::string lists = "sh -c 'cp mine.src t.rftrace && echo $PWD/t.rftrace >> \"$RFPROF_TRACE_LIST\"'";
  auto run = [&](const std::string& flags) {
    const std::string cmd = "cd " + dir.path.string() + " && " + RFPROF_BIN + " " + flags + " " + lists +
                            " > out.txt 2> err.txt";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(dir.path / "err.txt");
    return slurp(dir.path / "out.txt");
  };
  const std::string text = run("");
  EXPECT_EQ(text.rfind("[11] python3@node01\n  mine() (1024, 1, 1)x(256, 1, 1), Context 0, Stream 7, Device 0", 0),
            0u)
      << text;
  EXPECT_NE(text.find("    Section: Command line profiler metrics\n"), std::string::npos) << text;
  EXPECT_NE(text.find("gpu__time_duration.sum          ns        1,000\n"), std::string::npos) << text;
  EXPECT_EQ(run("-f -o rep"), "");  // -o: the trace is the result, nothing printed
  EXPECT_NE(slurp(dir.path / "err.txt").find("rfprof: trace: "), std::string::npos);
  // ... unless a summary is asked for by name: --print-summary per-kernel prints it with -o too.
  const std::string summary = run("-f -o rep --print-summary per-kernel");
  EXPECT_EQ(summary.rfind("[11] python3@node01\n  mine() (1024, 1, 1)x(256, 1, 1), Context 0, Stream 7, Device 0", 0),
            0u)
      << summary;
  EXPECT_NE(summary.find(", Invocations 1"), std::string::npos) << summary;
  EXPECT_EQ(run("-f -o rep --print-summary none"), "");
  // -i prints the text page without --csv, and ncu's CSV with it.
  const std::string import = "cd " + dir.path.string() + " && " + RFPROF_BIN + " -i t.rftrace";
  ASSERT_EQ(std::system((import + " > i.txt").c_str()), 0);
  EXPECT_EQ(slurp(dir.path / "i.txt"), text);
  ASSERT_EQ(std::system((import + " --csv > i.csv").c_str()), 0);
  EXPECT_EQ(slurp(dir.path / "i.csv").rfind("\"ID\",\"Process ID\"", 0), 0u);
  // Nothing selected: said, as ncu's "No kernels were profiled".
  ASSERT_EQ(std::system((import + " -k nothing_like_it > n.txt 2> n.err").c_str()), 0);
  EXPECT_EQ(slurp(dir.path / "n.txt"), "");
  EXPECT_EQ(slurp(dir.path / "n.err"), "rfprof: warning: no kernels were profiled\n");
}

// Settings librfinject would refuse inside the application (which would then run unprofiled) are
// refused before it starts, naming the flag; an unwritable --log-file too.
TEST(RfprofBinary, RefusesBeforeRunningWhatTheCollectorWouldRefuse) {
  TempDir dir;
  const auto marker = dir.path / "ran";
  auto run = [&](const std::string& flags) {
    const std::string cmd = std::string(RFPROF_BIN) + " " + flags + " touch " + marker.string() + " 2> " +
                            (dir.path / "err").string();
    const int rc = std::system(cmd.c_str());
    return std::make_pair(WEXITSTATUS(rc), slurp(dir.path / "err"));
  };
  for (const auto& [flags, expected] : std::vector<std::pair<std::string, std::string>>{
           {"--metrics a,,b", "rfprof: --metrics: RFPROF_METRICS=\"a,,b\""},
           {"-o x_%z", "rfprof: -o/--export x_%z: expected placeholders"},
           {"--replay-mode step --profile-from-start on", "--replay-mode step needs --profile-from-start off"},
           {"--replay-mode step -k regex:x", "--replay-mode step profiles every kernel of a step"},
           {"-s -1", "expected a whole number of launches below 2^64, got -1"},
           {"-c 0", "expected at least 1 launch, got 0"},
           {"--devices gpu1", "rfprof: --devices: RFPROF_DEVICES=\"gpu1\": expected CUDA device ordinals"},
           {"--profile-from-start off --disable-profiler-start-stop",
            "rfprof: --disable-profiler-start-stop: RFPROF_DISABLE_PROFILER_START_STOP=\"1\": expected "
            "RFPROF_PROFILE_FROM_START=on with it"},
           {"--log-file /no/such/dir/x.csv --csv", "rfprof: cannot write --log-file /no/such/dir/x.csv"}}) {
    auto [status, err] = run(flags);
    EXPECT_EQ(status, 2) << flags << ": " << err;
    EXPECT_NE(err.find(expected), std::string::npos) << flags << ": " << err;
    EXPECT_FALSE(std::filesystem::exists(marker)) << flags << " ran the application";
  }
  // -o with %q{VAR}: VAR may be set by a launcher inside the command (torchrun): not refused.
  auto [status, err] = run("-o 'x_%q{RFPROF_TEST_SURELY_UNSET}'");
  EXPECT_EQ(status, 0) << err;
  EXPECT_TRUE(std::filesystem::exists(marker));
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
  // A timing-mode trace: no metric columns, but ncu's launch attributes (launch__grid_size, ...).
  std::vector<std::vector<std::string>> rows;
  std::istringstream csv(slurp(dir.path / "x.csv"));
  for (std::string line; std::getline(csv, line);) {
    ASSERT_GE(line.size(), 2u);
    std::vector<std::string> fields;
    const std::string inner = line.substr(1, line.size() - 2);  // "a","b" -> a","b
    for (size_t start = 0;;) {
      const size_t end = inner.find("\",\"", start);
      fields.push_back(inner.substr(start, end - start));
      if (end == std::string::npos) break;
      start = end + 3;
    }
    rows.push_back(fields);
  }
  ASSERT_EQ(rows.size(), 3u);  // header, units, one launch
  EXPECT_EQ(std::vector<std::string>(rows[0].begin(), rows[0].begin() + 11),
            (std::vector<std::string>{"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                                      "Stream", "Block Size", "Grid Size", "Device", "CC"}));
  EXPECT_EQ(std::vector<std::string>(rows[2].begin(), rows[2].begin() + 11),
            (std::vector<std::string>{"0", "7", "python3", "node01", "k()", "0", "7", "(256, 1, 1)", "(1024, 1, 1)",
                                      "0", ""}));
  const auto column = [&](const std::string& name) {
    const auto it = std::find(rows[0].begin(), rows[0].end(), name);
    return it == rows[0].end() ? std::string("(missing)") : rows[2][static_cast<size_t>(it - rows[0].begin())];
  };
  EXPECT_EQ(column("launch__grid_size"), "1,024");
  EXPECT_EQ(column("launch__thread_count"), "262,144");
  EXPECT_EQ(column("launch__stream_id"), "7");
  EXPECT_EQ(rows[1].size(), rows[0].size());
  EXPECT_EQ(rows[2].size(), rows[0].size());
  const int missing = std::system((std::string(RFPROF_BIN) + " -i /no/such.rftrace --csv 2>/dev/null").c_str());
  EXPECT_EQ(WEXITSTATUS(missing), 2);
  // --metrics chooses the printed metrics; one the trace lacks: exit 2, its name, an empty log file.
  const std::string selected = std::string(RFPROF_BIN) + " -i " + (dir.path / "t.rftrace").string() +
                               " --metrics gpu__time_duration --log-file " + (dir.path / "x.txt").string();
  ASSERT_EQ(std::system(selected.c_str()), 0);
  EXPECT_NE(slurp(dir.path / "x.txt").find("gpu__time_duration.sum          ns        1,000\n"), std::string::npos)
      << slurp(dir.path / "x.txt");
  const int lacking = std::system((std::string(RFPROF_BIN) + " -i " + (dir.path / "t.rftrace").string() +
                                   " --csv --metrics dram__bytes_read.sum --log-file " + (dir.path / "x.csv").string() +
                                   " 2>" + (dir.path / "err.txt").string()).c_str());
  EXPECT_EQ(WEXITSTATUS(lacking), 2);
  EXPECT_NE(slurp(dir.path / "err.txt").find("rfprof: --metrics dram__bytes_read.sum: no such metric in "),
            std::string::npos) << slurp(dir.path / "err.txt");
  EXPECT_EQ(slurp(dir.path / "x.csv"), "");
}

}  // namespace
}  // namespace rf::launcher
