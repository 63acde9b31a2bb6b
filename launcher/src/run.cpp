// Running the application (rfprof/launcher/run.h).
#include "rfprof/launcher/run.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <fstream>
#include <string>

namespace rf::launcher {
namespace fs = std::filesystem;

namespace {
volatile sig_atomic_t g_child = 0;
volatile sig_atomic_t g_session_leader = 0;  // rfprof leads its session (ssh -t, a tmux pane)
// Set while the signals that waited blocked around the fork are delivered: one of them may have
// come before the application existed, so it is forwarded whatever sent it.
volatile sig_atomic_t g_forward_all = 0;
extern "C" void forward_signal(int sig, siginfo_t* info, void*) {
  if (g_child <= 0) return;
  const auto child = static_cast<pid_t>(g_child);
  // A signal the kernel sent (si_code SI_KERNEL: Ctrl-C, a hangup) to rfprof's foreground process
  // group reached the application too when it is still in that group: forwarded, it arrived twice
  // (a KeyboardInterrupt handler's cleanup interrupted by the second SIGINT). A hangup the kernel
  // sends only to the session leader, and any signal when the application left the group
  // (`rfprof timeout 8 app`, setsid), is forwarded. getpgid is a bare system call.
  if (!g_forward_all && info && info->si_code == SI_KERNEL && ::getpgid(child) == ::getpgrp() &&
      !(sig == SIGHUP && g_session_leader))
    return;
  ::kill(child, sig);
}
// The signals forwarded to the application (run.h): those whose default action would end rfprof
// and leave the application running without it, that other processes send (a terminal, a batch
// system's SIGXCPU warning, kill). SIGUSR1 and SIGUSR2 only with --forward-signals, else ignored by
// rfprof: Slurm's --signal=USR1@N signals every process of the step, and a forwarded copy ran the
// application's handler (a checkpoint) twice. Not SIGPIPE (ignored: ignore_sigpipe), SIGCHLD, the
// job-control signals (a stop cannot be caught) nor the faults of rfprof's own code.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF, SIGXCPU};
constexpr size_t kForwardedCount = sizeof kForwarded / sizeof kForwarded[0];
struct sigaction g_pipe_before {};  // SIGPIPE's disposition before ignore_sigpipe()
bool g_pipe_saved = false;
}  // namespace

void ignore_sigpipe() noexcept {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  g_pipe_saved = ::sigaction(SIGPIPE, &ignore, &g_pipe_before) == 0;
}

std::optional<fs::path> find_inject_library(const fs::path& self) {
  const fs::path dir = self.parent_path();
  for (const fs::path& p : {dir / "librfinject.so", dir / ".." / "lib" / "librfinject.so"}) {
    std::error_code ec;
    if (fs::is_regular_file(p, ec)) return fs::weakly_canonical(p, ec);
  }
  return std::nullopt;
}

std::vector<std::string> application_environment(const Plan& plan, const fs::path& inject, char** current) {
  std::map<std::string, std::string> env;
  for (char** e = current; e && *e; ++e) {
    std::string kv = *e;
    const auto eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  // Set per child by run_application: an inherited one (rfprof under rfprof) would come first.
  env.erase("RFPROF_ROOT_PID");
  for (const auto& k : plan.env_unset) env.erase(k);
  for (const auto& [k, v] : plan.env) env[k] = v;
  env["CUDA_INJECTION64_PATH"] = inject.string();
  env["NVTX_INJECTION64_PATH"] = inject.string();
  std::vector<std::string> out;
  for (const auto& [k, v] : env) out.push_back(k + "=" + v);
  return out;
}

int run_application(const Plan& plan, const std::vector<std::string>& environment, std::ostream& err,
                    bool* started) {
  if (started) *started = false;
  if (plan.command.empty()) {
    err << "rfprof: no application to run\n";
    return 127;
  }
  int exec_error[2];
  if (::pipe2(exec_error, O_CLOEXEC) != 0) {
    err << "rfprof: cannot run " << plan.command[0] << ": pipe: " << std::strerror(errno) << "\n";
    return 127;
  }
  // The forwarded signals wait, blocked, from before the fork until the handlers that forward
  // them are in place: one that came while the application started (Slurm's SIGTERM, a test's)
  // killed rfprof and left the application running without it.
  sigset_t forwarded, before;
  ::sigemptyset(&forwarded);
  for (int sig : kForwarded) ::sigaddset(&forwarded, sig);
  ::sigprocmask(SIG_BLOCK, &forwarded, &before);
  const pid_t child = ::fork();
  if (child < 0) {
    const int fork_errno = errno;
    ::sigprocmask(SIG_SETMASK, &before, nullptr);
    err << "rfprof: cannot run " << plan.command[0] << ": fork: " << std::strerror(fork_errno) << "\n";
    return 127;
  }
  if (child == 0) {
    ::sigprocmask(SIG_SETMASK, &before, nullptr);  // the application gets them as rfprof would have
    ::close(exec_error[0]);
    if (plan.null_stdin) {  // --null-stdin
      const int null_fd = ::open("/dev/null", O_RDONLY);
      if (null_fd >= 0 && null_fd != 0) {
        ::dup2(null_fd, 0);
        ::close(null_fd);
      }
    }
    // An ignored signal stays ignored across exec: the application gets SIGPIPE as rfprof got it.
    if (g_pipe_saved) ::sigaction(SIGPIPE, &g_pipe_before, nullptr);
    std::vector<std::string> envs = environment;
    envs.push_back("RFPROF_ROOT_PID=" + std::to_string(::getpid()));
    std::vector<char*> argv, envp;
    for (const auto& a : plan.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    ::execvpe(argv[0], argv.data(), envp.data());
    const int e = errno;
    (void)!::write(exec_error[1], &e, sizeof e);
    ::_exit(127);
  }
  ::close(exec_error[1]);
  g_child = child;
  g_session_leader = ::getsid(0) == ::getpid() ? 1 : 0;
  struct sigaction sa {}, old[kForwardedCount] {};
  sa.sa_sigaction = forward_signal;
  sa.sa_flags = SA_SIGINFO;
  ::sigemptyset(&sa.sa_mask);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigemptyset(&ignore.sa_mask);
  for (size_t i = 0; i < kForwardedCount; ++i) {
    const bool user = kForwarded[i] == SIGUSR1 || kForwarded[i] == SIGUSR2;
    ::sigaction(kForwarded[i], user && !plan.forward_signals ? &ignore : &sa, &old[i]);
  }
  // One that waited is forwarded now, even from the terminal: it may have come before the fork
  // (a Ctrl-C then reached rfprof alone, and was dropped as one the application had too).
  g_forward_all = 1;
  ::sigprocmask(SIG_SETMASK, &before, nullptr);  // pending signals are delivered before it returns
  g_forward_all = 0;
  int e = 0;
  ssize_t got = 0;
  // A forwarded signal (no SA_RESTART) interrupts the read: asked again, or a failed exec would
  // pass for a started application.
  while ((got = ::read(exec_error[0], &e, sizeof e)) < 0 && errno == EINTR) {
  }
  const bool exec_failed = got == static_cast<ssize_t>(sizeof e);
  ::close(exec_error[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  for (size_t i = 0; i < kForwardedCount; ++i) ::sigaction(kForwarded[i], &old[i], nullptr);
  g_child = 0;
  if (exec_failed) {
    err << "rfprof: cannot run " << plan.command[0] << ": " << std::strerror(e) << "\n";
    return 127;
  }
  if (started) *started = true;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

ListedTraces traces_listed(const fs::path& list) {
  ListedTraces out;
  std::ifstream in(list);
  std::string line;
  std::vector<std::string> seen;
  while (std::getline(in, line)) {
    if (line.empty() || std::find(seen.begin(), seen.end(), line) != seen.end()) continue;
    seen.push_back(line);
    std::error_code ec;
    if (fs::is_regular_file(line, ec)) out.finished.emplace_back(line);
    else if (fs::is_regular_file(line + ".part", ec)) out.unfinished.emplace_back(line + ".part");
  }
  return out;
}

}  // namespace rf::launcher
