// SIGTERM / SIGINT finish the trace, then the default action or the application's handler runs
// (signal_finish.h), checked on a helper process writing through the real trace::Writer.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "rfprof/trace/reader.h"

namespace {

namespace fs = std::filesystem;

#if defined(__SANITIZE_THREAD__)
constexpr bool kThreadSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kThreadSanitizer = true;
#else
constexpr bool kThreadSanitizer = false;
#endif
#else
constexpr bool kThreadSanitizer = false;
#endif

struct TempDir {
  fs::path path;
  TempDir() {
    std::string p = (fs::temp_directory_path() / "rfsig-XXXXXX").string();
    path = ::mkdtemp(p.data());
  }
  ~TempDir() { fs::remove_all(path); }
};

/// Starts the helper, waits for its "ready" line; returns its pid. `first_line` gets the line
/// before "ready" when the helper prints one ("child N"). The helper starts with SIGHUP, SIGINT,
/// SIGQUIT and SIGTERM at their default action, as from a terminal, except those in `ignored`.
pid_t start_helper(const std::vector<std::string>& args, std::string* first_line = nullptr,
                   const std::vector<int>& ignored = {}) {
  int out[2];
  if (::pipe(out) != 0) return -1;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::close(out[0]);
    // The helper starts as from a terminal: a test run under nohup, or as a background job of a
    // shell, inherits SIGHUP, SIGINT and SIGQUIT ignored, and rfprof rightly leaves an ignored
    // signal alone, so the helper would never end at the signal the test sends.
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTERM}) ::signal(sig, SIG_DFL);
    for (int sig : ignored) ::signal(sig, SIG_IGN);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<char*> argv{const_cast<char*>(RFPROF_SIGNAL_HELPER)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(RFPROF_SIGNAL_HELPER, argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char c;
  while (text.find("ready\n") == std::string::npos && ::read(out[0], &c, 1) == 1) text += c;
  ::close(out[0]);
  if (first_line) *first_line = text.substr(0, text.find('\n'));
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

/// Kernel correlation ids in a finished trace (empty when it is missing or not finished).
std::vector<uint32_t> finished_kernel_ids(const fs::path& trace) {
  if (finished_kernels(trace) < 0) return {};
  rf::trace::Reader r(trace);
  rf::trace::Record rec;
  std::vector<uint32_t> ids;
  while (r.next(rec))
    if (auto* k = std::get_if<rf::trace::KernelActivity>(&rec)) ids.push_back(k->correlation_id);
  return ids;
}

/// How a helper that ends by itself ended: its wait status and how long it ran from its start.
struct Ended {
  bool ran = false;  ///< started and waited for
  int status = 0;
  std::chrono::nanoseconds took{};
};

/// Starts the helper with `args` and waits for it to end.
Ended run_helper(const std::vector<std::string>& args) {
  Ended e;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = start_helper(args);
  if (pid <= 0 || ::waitpid(pid, &e.status, 0) != pid) return e;
  e.took = std::chrono::steady_clock::now() - t0;
  e.ran = true;
  return e;
}

// The signal lands on a thread that holds its own writer buffer (inside append_buffered): the
// watcher cannot collect that buffer until the handler returns, and the handler waits for the
// watcher. The finish leaves the buffer out after its 200 ms and finishes the rest in time.
TEST(SignalFinish, ASignalInsideAnAppendStillFinishesTheTrace) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  const Ended e = run_helper({trace.string(), "held-buffer"});
  ASSERT_TRUE(e.ran);
  const int status = e.status;
  const auto took = e.took;
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_LT(took, std::chrono::milliseconds(2900)) << "the handler's 3 s timeout ran out";
  // Finished and renamed; the shared record is in, the held buffer's record is left out.
  EXPECT_EQ(finished_kernel_ids(trace), std::vector<uint32_t>{1});
  EXPECT_FALSE(fs::exists(trace.string() + ".part"));
}

// The signal lands on the thread holding the writer's shared lock, which the finish and the last
// resort both need. The writer blocks the finish signals while it holds the lock (as the
// collector configures it), so the handler runs after the lock is released and finishes in time;
// without that ("unguarded") the handler's 3 s run out and the trace stays a .part.
TEST(SignalFinish, ASignalInsideTheWritersLockWaitsUntilItIsReleased) {
  for (const bool guarded : {true, false}) {
    TempDir dir;
    const fs::path trace = dir.path / "t.rftrace";
    const Ended e = guarded ? run_helper({trace.string(), "held-lock"})
                            : run_helper({trace.string(), "held-lock", "unguarded"});
    ASSERT_TRUE(e.ran);
    const int status = e.status;
    const auto took = e.took;
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGTERM);
    if (guarded) {
      EXPECT_LT(took, std::chrono::milliseconds(2000)) << "the finish waited for the lock";
      EXPECT_EQ(finished_kernel_ids(trace), std::vector<uint32_t>{1});
      EXPECT_FALSE(fs::exists(trace.string() + ".part"));
    } else {
      EXPECT_GE(took, std::chrono::milliseconds(2900)) << "unguarded, the handler should have timed out";
      EXPECT_TRUE(finished_kernel_ids(trace).empty());
      EXPECT_TRUE(fs::exists(trace.string() + ".part"));
    }
  }
}

// A finish blocked for good (in CUPTI, or on a lock the interrupted thread holds): the watcher
// runs the last resort 800 ms before the handler's 3 s, which ends the trace with what it has.
TEST(SignalFinish, ABlockedFinishIsReplacedByTheLastResortInTime) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  const pid_t pid = start_helper({trace.string(), "stuck-finish"});
  ASSERT_GT(pid, 0);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_GE(took, std::chrono::milliseconds(2000)) << "the last resort ran before the finish had its time";
  EXPECT_LT(took, std::chrono::milliseconds(2950)) << "the handler's 3 s timeout ran out";
  EXPECT_GT(finished_kernels(trace), 0) << "the trace was not finished";
  EXPECT_FALSE(fs::exists(trace.string() + ".part"));
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
  // Its handler let it go on, so the trace was not finished at the signal: the kernel it recorded
  // afterwards is in it (the helper's kAfterTheHandler), the last before TraceEnd.
  const std::vector<uint32_t> ids = finished_kernel_ids(trace);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.back(), 999999u);
}

// rfprof's handler stands between the application and its own handler: the application's calls
// interrupted by the signal go on as with its handler alone (signal() asks for SA_RESTART: a
// read() is restarted, not failed with EINTR), and the interrupted code finds errno as it left it.
TEST(SignalFinish, TheInterruptedApplicationCodeGoesOnAsBefore) {
  for (const char* mode : {"interrupted-read", "errno"}) {
    TempDir dir;
    const pid_t pid = start_helper({(dir.path / "t.rftrace").string(), mode});
    ASSERT_GT(pid, 0);
    ASSERT_EQ(::kill(pid, SIGINT), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << mode;
    EXPECT_EQ(WEXITSTATUS(status), 0) << mode << (WEXITSTATUS(status) == 4   ? ": read() failed with EINTR"
                                                  : WEXITSTATUS(status) == 5 ? ": errno changed"
                                                                             : "");
  }
}

// A second stop signal while the first one's finish is under way (Ctrl-C pressed again, a SIGINT
// after Slurm's SIGTERM) ends the process at once by its default action, instead of waiting
// for the finish again.
TEST(SignalFinish, ASecondSignalDuringTheFinishEndsTheProcessAtOnce) {
  if (kThreadSanitizer) GTEST_SKIP() << "ThreadSanitizer delivers a signal that arrives in a handler after it returns";
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  const pid_t pid = start_helper({trace.string(), "stuck-finish"});
  ASSERT_GT(pid, 0);
  ASSERT_EQ(::kill(pid, SIGTERM), 0);
  ::usleep(300 * 1000);  // the handler waits for the finish, which is stuck
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  const auto took = std::chrono::steady_clock::now() - t0;
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_EQ(WTERMSIG(status), SIGINT);
  EXPECT_LT(took, std::chrono::milliseconds(1000)) << "the second signal waited for the finish";
}

/// Kernel records readable from a trace still being written (its `.part`).
long readable_kernels(const fs::path& part) {
  if (!fs::exists(part)) return 0;
  rf::trace::Reader r(part);
  rf::trace::Record rec;
  long n = 0;
  while (r.next(rec)) n += std::holds_alternative<rf::trace::KernelActivity>(rec);
  return n;
}

/// Waits up to 2 s for `done`.
template <class F>
bool within_2s(F done) {
  for (int i = 0; i < 200 && !done(); ++i) ::usleep(10 * 1000);
  return done();
}

// An SA_SIGINFO application handler that lets the application go on after a SIGINT (a training
// loop finishing its step): the handler runs with its siginfo, and rfprof flushes the records so
// far without finishing the trace.
TEST(SignalFinish, AnApplicationThatGoesOnHasItsHandlerRunAndItsTraceFlushed) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  const fs::path part = trace.string() + ".part";
  const fs::path marker = dir.path / "siginfo-handler-ran";
  const pid_t pid = start_helper({trace.string(), "app-siginfo-continue", marker.string()});
  ASSERT_GT(pid, 0);
  EXPECT_EQ(readable_kernels(part), 0) << "the helper's writer holds its first MiB until a flush";
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  EXPECT_TRUE(within_2s([&] { return fs::exists(marker); })) << "the application's handler did not run";
  EXPECT_TRUE(within_2s([&] { return readable_kernels(part) > 0; })) << "the signal flushed nothing";
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "the application chose to go on";
  EXPECT_FALSE(fs::exists(trace)) << "the trace is not finished while the application runs";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
}

TEST(SignalFinish, ForkedChildDiesAsWithoutRfprofAndLeavesTheParentsTrace) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  std::string line;
  const pid_t pid = start_helper({trace.string(), "fork-child"}, &line);
  ASSERT_GT(pid, 0);
  ASSERT_EQ(line.rfind("child ", 0), 0u) << line;
  const pid_t child = static_cast<pid_t>(std::stoi(line.substr(6)));
  // The child is not our child: poll its /proc entry after SIGTERM.
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  bool died = false;
  for (int i = 0; i < 200 && !(died = ::kill(child, 0) != 0); ++i) {
    std::string stat;
    if (FILE* f = std::fopen(("/proc/" + std::to_string(child) + "/stat").c_str(), "r")) {
      char buf[256] = {};
      (void)!std::fread(buf, 1, sizeof buf - 1, f);
      std::fclose(f);
      stat = buf;
    }
    if ((died = stat.find(") Z") != std::string::npos)) break;  // dead (a zombie of the helper)
    ::usleep(10 * 1000);
  }
  // Under ThreadSanitizer the forked child of the multi-threaded helper keeps SIGTERM caught and
  // lives on (6 of 6 runs, 2026-11-28, also when it sleeps in usleep() instead of pause()): what
  // the sanitizer does with a signal there, not rfprof (the plain and ASan builds check it).
  if (!kThreadSanitizer) {
    EXPECT_TRUE(died) << "the forked child outlived its SIGTERM by 2 s";
  }
  ::usleep(300 * 1000);
  EXPECT_TRUE(fs::exists(trace.string() + ".part")) << "the child's SIGTERM must not finish the parent's trace";
  EXPECT_FALSE(fs::exists(trace));
  ASSERT_EQ(::kill(pid, SIGTERM), 0);  // now the parent: finished as usual
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
  EXPECT_GT(finished_kernels(trace), 0);
  // Never leave the child behind holding the test's output (under ThreadSanitizer it lives on).
  ::kill(child, SIGKILL);
}

// rfprof's own thread blocks the stop signals, so a SIGTERM sent to the process reaches an
// application thread: run on the watcher, the handler would wait for the watcher itself.
TEST(SignalFinish, WatcherThreadBlocksTheStopSignals) {
  TempDir dir;
  std::string masks;
  const pid_t pid = start_helper({(dir.path / "t.rftrace").string(), "thread-masks"}, &masks);
  ASSERT_GT(pid, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  // Every thread but main: the watcher (and, in a sanitizer build, the sanitizer's own thread).
  int blocking = -1, others = -1;
  ASSERT_EQ(std::sscanf(masks.c_str(), "masks %d/%d", &blocking, &others), 2) << masks;
  EXPECT_GE(others, 1);
  EXPECT_EQ(blocking, others) << masks;
}

TEST(SignalFinish, IgnoredSignalStaysIgnored) {
  TempDir dir;
  const fs::path trace = dir.path / "t.rftrace";
  // The helper inherits SIGTERM ignored (as nohup-style launchers leave it): rfprof keeps it so.
  const pid_t pid = start_helper({trace.string()}, nullptr, {SIGTERM});
  ASSERT_GT(pid, 0);
  ::kill(pid, SIGTERM);
  ::usleep(100 * 1000);
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, WNOHANG), 0) << "an ignored SIGTERM must not stop it";
  // Ignored, not caught by a handler that ignores it: a child the application execs inherits an
  // ignored signal, and a caught one is reset to the default action (which kills) by exec.
  std::ifstream proc_status("/proc/" + std::to_string(pid) + "/status");
  unsigned long long ignored = 0;
  for (std::string line; std::getline(proc_status, line);)
    if (line.rfind("SigIgn:", 0) == 0) ignored = std::stoull(line.substr(7), nullptr, 16);
  EXPECT_TRUE((ignored >> (SIGTERM - 1)) & 1) << "SIGTERM is no longer ignored in the helper";
  ::kill(pid, SIGKILL);
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

}  // namespace
