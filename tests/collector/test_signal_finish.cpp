// SIGTERM / SIGINT finish the trace, then the default action or the application's handler runs
// (signal_finish.h), checked on a helper process writing through the real trace::Writer.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include "rfprof/trace/reader.h"

namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() {
    std::string p = (fs::temp_directory_path() / "rfsig-XXXXXX").string();
    path = ::mkdtemp(p.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

/// Starts the helper, waits for its "ready" line; returns its pid.
pid_t start_helper(const std::vector<std::string>& args) {
  int out[2];
  if (::pipe(out) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    std::vector<char*> argv{const_cast<char*>(RFPROF_SIGNAL_HELPER)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(RFPROF_SIGNAL_HELPER, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  char buf[16] = {};
  (void)!::read(out[0], buf, 6);  // "ready\n"
  ::close(out[0]);
  ::usleep(50 * 1000);  // let it append a few records
  return pid;
}

/// Kernel records in a finished trace; -1 when the trace is missing or not finished.
long finished_kernels(const fs::path& trace) {
  if (!fs::exists(trace)) return -1;
  rf::trace::Reader r(trace);
  rf::trace::Record rec;
  long n = 0;
  bool ended = false;
  while (r.next(rec)) {
    n += std::holds_alternative<rf::trace::KernelActivity>(rec);
    ended |= std::holds_alternative<rf::trace::TraceEnd>(rec);
  }
  return ended && !r.truncated() ? n : -1;
}

TEST(SignalFinish, SigtermFinishesTheTraceThenKillsAsBefore) {
  for (int sig : {SIGTERM, SIGHUP}) {
    TempDir dir;
    const fs::path trace = dir.path / "t.rftrace";
    const pid_t pid = start_helper({trace.string()});
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, sig), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFSIGNALED(status)) << "signal " << sig;
    if (WIFSIGNALED(status)) {
      EXPECT_EQ(WTERMSIG(status), sig);  // the default action, as without rfprof
    }
    EXPECT_GT(finished_kernels(trace), 0) << "signal " << sig << ": the trace was not finished";
    EXPECT_FALSE(fs::exists(trace.string() + ".part"));
  }
}

TEST(SignalFinish, ApplicationHandlerStillRunsAndDecides) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  const fs::path marker = dir.path / "app-handler-ran";
  const pid_t pid = start_helper({trace.string(), "app-handler", marker.string()});
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);  // the application's handler chose to stop and exit normally
  EXPECT_TRUE(fs::exists(marker));
  EXPECT_GT(finished_kernels(trace), 0);
}

TEST(SignalFinish, IgnoredSignalStaysIgnored) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  // The helper inherits SIGTERM ignored (as nohup-style launchers leave it): rfprof keeps it so.
  struct sigaction ign {}, old {};
  ign.sa_handler = SIG_IGN;
  ::sigaction(SIGTERM, &ign, &old);
  const pid_t pid = start_helper({trace.string()});
  ::sigaction(SIGTERM, &old, nullptr);
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGTERM);
  ::usleep(100 * 1000);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "an ignored SIGTERM must not stop it";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

}  // namespace
