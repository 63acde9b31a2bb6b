// Helper process of test_signal_finish: writes a trace through rf::trace::Writer with the signal
// handlers of signal_finish.h installed, prints "ready", appends records until a signal arrives.
//   signal_finish_helper TRACE [app-handler MARKER | fork-child | thread-masks | held-buffer |
//                               stuck-finish | held-lock [unguarded]]
// With app-handler, an application SIGINT handler (installed before rfprof's, as Python's is)
// writes MARKER and makes the loop stop: the process then exits normally, finishing the trace.
// With thread-masks, it prints "masks BLOCKING/OTHERS": of the threads other than main (the
// watcher), how many block SIGTERM, SIGINT and SIGHUP (from /proc/self/task/*/status), and exits.
// With held-buffer, main appends kernel 1 to the shared stream and kernel 2 to its own buffer,
// then sends itself SIGTERM while it holds that buffer (as a signal landing inside
// append_buffered): the finish must go on without the buffer. The finish does what Session's
// does for a fatal signal: bound_buffer_waits(200 ms) first.
// With held-lock, main sends its process SIGTERM while it holds the writer's shared lock (as a
// signal landing inside append()), then holds it 300 ms more: the writer blocks the finish signals
// there (as the collector sets it), so the handler runs once the lock is released and finishes.
// "unguarded" makes the writer block nothing: the finish and the last resort then wait for the
// lock, and the handler's 3 s run out (the test shows the guard is what helps).
// With stuck-finish, the finish blocks for good (as one waiting in CUPTI would): the last resort
// (the writer's finish, as Session::end_trace_now) must end the trace before the handler's 3 s.
// With interrupted-read, an application SIGINT handler installed with signal() (SA_RESTART) lets
// main go on; main blocks in read() on a pipe that another thread writes 100 ms after the
// handler ran (or after 2 s): exit 0 when the read was restarted and got its byte, 4 when it
// failed with EINTR.
// With errno, the application's SIGINT handler fails a call (errno EBADF) while main spins
// without system calls: exit 0 when main finds its errno as it left it, 5 when not.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "rfprof/collector/signal_finish.h"
#include "rfprof/trace/writer.h"

namespace {
std::atomic<bool> g_stop{false};
/// The correlation id of the kernel app-handler mode records after its SIGINT handler returned.
constexpr uint32_t kAfterTheHandler = 999999;
std::atomic<bool> g_stuck_finish{false};
const char* g_marker = nullptr;
extern "C" void app_siginfo_handler(int, siginfo_t*, void*) {  // creates the marker, goes on
  const int fd = ::open(g_marker, O_CREAT | O_WRONLY, 0644);
  if (fd >= 0) ::close(fd);
}
std::atomic<bool> g_app_handler_ran{false};
extern "C" void app_flag_handler(int) { g_app_handler_ran = true; }
extern "C" void app_errno_handler(int) {
  (void)::close(-1);  // a failing call: EBADF
  g_app_handler_ran = true;
}
extern "C" void app_handler(int) {
  if (g_marker) {
    const int fd = ::open(g_marker, O_CREAT | O_WRONLY, 0644);
    if (fd >= 0) ::close(fd);
  }
  g_stop = true;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  if (argc == 4 && std::strcmp(argv[2], "app-handler") == 0) {
    g_marker = argv[3];
    ::signal(SIGINT, app_handler);
  }
  if (argc == 4 && std::strcmp(argv[2], "app-siginfo-continue") == 0) {
    g_marker = argv[3];
    struct sigaction sa {};
    sa.sa_sigaction = app_siginfo_handler;
    sa.sa_flags = SA_SIGINFO;
    ::sigaction(SIGINT, &sa, nullptr);
  }
  const bool interrupted_read = argc == 3 && std::strcmp(argv[2], "interrupted-read") == 0;
  const bool keeps_errno = argc == 3 && std::strcmp(argv[2], "errno") == 0;
  if (interrupted_read) ::signal(SIGINT, app_flag_handler);
  if (keeps_errno) ::signal(SIGINT, app_errno_handler);
  // Never destroyed, as rfprof's Session: the watcher thread may still be flushing it (after a
  // SIGINT the application handler lets main finish and exit) when static destructors run.
  const bool unguarded = argc == 4 && std::strcmp(argv[3], "unguarded") == 0;
  rf::trace::WriterOptions options{.force_overwrite = true};
  if (!unguarded) options.signals_blocked_while_locked = rf::collector::finish_signals();
  static rf::trace::Writer& writer = *new rf::trace::Writer(argv[1], options);
  rf::collector::install_signal_finish(
      {SIGTERM, SIGINT, SIGHUP},
      [] {
        writer.bound_buffer_waits(std::chrono::milliseconds(200));
        while (g_stuck_finish) ::usleep(10 * 1000);
        writer.finish();
      },
      [] { writer.flush(); }, 3000, [] { writer.finish(); }, 800);
  if (argc == 3 && std::strcmp(argv[2], "stuck-finish") == 0) g_stuck_finish = true;
  if (interrupted_read) {
    int p[2];
    if (::pipe(p) != 0) return 2;
    std::thread feeder;
    {
      rf::trace::ThreadSignalsBlocked blocked(rf::collector::finish_signals());  // the signal goes to main
      feeder = std::thread([&] {
        // At most 2 s: ThreadSanitizer runs the handler only once the read returns.
        for (int i = 0; i < 2000 && !g_app_handler_ran; ++i) ::usleep(1000);
        ::usleep(100 * 1000);
        (void)!::write(p[1], "x", 1);
      });
    }
    std::printf("ready\n");
    std::fflush(stdout);
    char c = 0;
    const ssize_t n = ::read(p[0], &c, 1);
    const int e = errno;
    feeder.join();
    return n == 1 ? 0 : e == EINTR ? 4 : 6;
  }
  if (keeps_errno) {
    std::printf("ready\n");
    std::fflush(stdout);
    errno = 0;
    const auto t0 = std::chrono::steady_clock::now();
    while (!g_app_handler_ran && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    }
    const int e = errno;
    return !g_app_handler_ran ? 6 : e == 0 ? 0 : 5;
  }
  if (argc == 3 && std::strcmp(argv[2], "held-buffer") == 0) {
    rf::trace::KernelActivity shared, buffered;
    shared.correlation_id = 1;
    buffered.correlation_id = 2;
    writer.append(shared);
    writer.append_buffered(buffered);
    std::printf("ready\n");
    std::fflush(stdout);
    writer.with_thread_buffer_locked([] {
      // To this thread, as a process-directed signal lands on the main thread; the handler runs
      // here (under ThreadSanitizer at the sleep, where TSan delivers it) and never returns.
      (void)::syscall(SYS_tgkill, ::getpid(), static_cast<pid_t>(::syscall(SYS_gettid)), SIGTERM);
      ::sleep(10);
    });
    return 3;  // not reached: SIGTERM's default action ends the process
  }
  if (argc >= 3 && std::strcmp(argv[2], "held-lock") == 0) {
    rf::trace::KernelActivity k;
    k.correlation_id = 1;
    writer.append(k);
    std::printf("ready\n");
    std::fflush(stdout);
    writer.with_shared_lock_held([] {
      ::kill(::getpid(), SIGTERM);  // process-directed, as Slurm's; rfprof's threads block it
      ::usleep(300 * 1000);
    });
    ::sleep(10);  // the handler runs here (or, unguarded, ran inside the lock and never returned)
    return 3;     // not reached: SIGTERM's default action ends the process
  }
  if (argc == 3 && std::strcmp(argv[2], "thread-masks") == 0) {
    ::usleep(100 * 1000);  // the watcher thread has started
    int others = 0, blocking = 0;
    for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
      if (task.path().filename() == std::to_string(::getpid())) continue;
      ++others;
      std::ifstream status(task.path() / "status");
      for (std::string line; std::getline(status, line);)
        if (line.rfind("SigBlk:", 0) == 0) {
          const unsigned long long mask = std::stoull(line.substr(7), nullptr, 16);
          bool all = true;
          for (int s : {SIGTERM, SIGINT, SIGHUP}) all = all && ((mask >> (s - 1)) & 1);
          blocking += all;
        }
    }
    std::printf("masks %d/%d\nready\n", blocking, others);
    std::fflush(stdout);
    return 0;
  }
  if (argc == 3 && std::strcmp(argv[2], "fork-child") == 0) {
    const pid_t child = ::fork();  // a DataLoader-like worker: inherits the handlers
    if (child == 0) {
      for (;;) ::pause();
    }
    std::printf("child %d\n", static_cast<int>(child));
  }
  std::printf("ready\n");
  std::fflush(stdout);
  uint32_t corr = 0;
  while (!g_stop) {
    rf::trace::KernelActivity k;
    k.correlation_id = ++corr;
    k.start_ns = corr * 1000ull;
    k.end_ns = k.start_ns + 500;
    writer.append(k);  // the writer blocks the finish signals while it holds its lock
    ::usleep(1000);
  }
  if (g_marker) {  // the application goes on after its handler decided not to die
    rf::trace::KernelActivity last;
    last.correlation_id = kAfterTheHandler;
    writer.append(last);
  }
  writer.finish();
  return 0;
}
