// Signal handlers that finish the trace before the process dies (rfprof/collector/signal_finish.h).
#include "rfprof/collector/signal_finish.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "rfprof/trace/writer.h"

namespace rf::collector {
namespace {

constexpr int kMaxSignal = 65;
struct sigaction g_previous[kMaxSignal];
int g_wake[2] = {-1, -1};  // handler -> watcher: the signal number
int g_ack[2] = {-1, -1};   // watcher -> handler: finish done
int g_timeout_ms = 3000;
std::atomic<bool> g_finishing{false};
std::function<void()>* g_finish = nullptr;
std::function<void()>* g_flush = nullptr;
std::function<void()>* g_last_resort = nullptr;  // null: none
int g_last_resort_margin_ms = 800;
pid_t g_owner_pid = 0;  // the process that installed the handlers (a forked child inherits them)

bool dies_by_default(int sig) {
  const struct sigaction& p = g_previous[sig];
  return !(p.sa_flags & SA_SIGINFO) && p.sa_handler == SIG_DFL;
}

/// raise(sig) as the kernel does it (tgkill to this thread). ThreadSanitizer intercepts raise()
/// inside a handler and defers the signal to a handler table that now says SIG_DFL, where it was
/// lost: test_signal_finish's helper then ran on after SIGTERM (seen once in CI's TSan block).
void reraise(int sig) {
  (void)::syscall(SYS_tgkill, ::getpid(), static_cast<pid_t>(::syscall(SYS_gettid)), sig);
}

extern "C" void on_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  if (sig > 0 && sig < kMaxSignal && ::getpid() != g_owner_pid) {
    // A forked child (a DataLoader worker): the watcher thread and the trace are the parent's.
    // Behave as if rfprof had never installed a handler.
    ::sigaction(sig, &g_previous[sig], nullptr);
    reraise(sig);
    errno = saved_errno;
    return;
  }
  if (sig > 0 && sig < kMaxSignal) {
    const char byte = static_cast<char>(sig);
    if (dies_by_default(sig)) {
      if (!g_finishing.exchange(true)) {
        if (::write(g_wake[1], &byte, 1) == 1) {
          struct pollfd p = {g_ack[0], POLLIN, 0};
          if (::poll(&p, 1, g_timeout_ms) > 0) {
            char done;
            (void)!::read(g_ack[0], &done, 1);
          }
        }
      }
      ::sigaction(sig, &g_previous[sig], nullptr);  // the default action, as before us
      reraise(sig);                                  // delivered when this handler returns
    } else {
      (void)!::write(g_wake[1], &byte, 1);  // flush, without waiting
      const struct sigaction& p = g_previous[sig];
      if (p.sa_flags & SA_SIGINFO) {
        if (p.sa_sigaction) p.sa_sigaction(sig, info, context);
      } else if (p.sa_handler != SIG_IGN && p.sa_handler != SIG_DFL) {
        p.sa_handler(sig);
      }
    }
  }
  errno = saved_errno;
}

/// Runs g_finish; with a last resort, on a thread of its own, and runs the last resort instead
/// of waiting once the handler's timeout is `g_last_resort_margin_ms` away.
void finish_or_last_resort() {
  if (!g_last_resort) return (*g_finish)();
  struct Done {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
  };
  auto state = std::make_shared<Done>();  // outlives a finish thread left behind
  std::thread runner;
  try {
    runner = std::thread([state] {
      block_own_thread_signals();
      (*g_finish)();
      std::lock_guard lock(state->m);
      state->done = true;
      state->cv.notify_all();
    });
  } catch (...) {
    return (*g_finish)();  // no thread: as without a last resort
  }
  std::unique_lock lock(state->m);
  const auto wait = std::chrono::milliseconds(std::max(0, g_timeout_ms - g_last_resort_margin_ms));
  if (state->cv.wait_for(lock, wait, [&] { return state->done; })) {
    lock.unlock();
    runner.join();
    return;
  }
  lock.unlock();
  runner.detach();  // blocked; the process dies of the signal once the handler is answered
  (*g_last_resort)();
}

void watch() {
  block_own_thread_signals();
  for (;;) {
    char sig = 0;
    const ssize_t n = ::read(g_wake[0], &sig, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) return;
    if (sig > 0 && sig < kMaxSignal && dies_by_default(sig)) {
      finish_or_last_resort();
      const char done = 1;
      (void)!::write(g_ack[1], &done, 1);
    } else {
      (*g_flush)();
    }
  }
}

}  // namespace

const std::vector<int>& finish_signals() noexcept {
  // Never destroyed: the watcher and flush threads read it until the process ends.
  static const std::vector<int>* signals = new std::vector<int>{SIGTERM, SIGINT, SIGHUP};
  return *signals;
}

void block_own_thread_signals() noexcept {
  sigset_t set;
  ::sigemptyset(&set);
  for (int sig : finish_signals()) ::sigaddset(&set, sig);
  ::sigaddset(&set, SIGXFSZ);  // the trace's writes fail instead (trace::Writer)
  ::sigaddset(&set, SIGPIPE);
  (void)::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool install_signal_finish(const std::vector<int>& signals, std::function<void()> finish, std::function<void()> flush,
                           int timeout_ms, std::function<void()> last_resort, int last_resort_margin_ms) noexcept {
  static std::atomic<bool> installed{false};
  if (installed.exchange(true)) return false;
  try {
    if (::pipe2(g_wake, O_CLOEXEC) != 0) return false;
    if (::pipe2(g_ack, O_CLOEXEC) != 0) return false;
    g_finish = new std::function<void()>(std::move(finish));  // kept for the process's lifetime
    g_flush = new std::function<void()>(std::move(flush));
    g_timeout_ms = timeout_ms;
    if (last_resort) g_last_resort = new std::function<void()>(std::move(last_resort));  // kept
    g_last_resort_margin_ms = last_resort_margin_ms;
    g_owner_pid = ::getpid();
    // Born with the signals blocked (a thread inherits its creator's mask): blocking them as its
    // first step left a window in which a SIGTERM ran the handler on the watcher itself, which
    // then waited for itself until the timeout (SignalFinish.ASignalInsideTheWritersLock...).
    trace::ThreadSignalsBlocked inherited(finish_signals());
    std::thread(watch).detach();
  } catch (...) {
    return false;
  }
  for (int sig : signals) {
    if (sig <= 0 || sig >= kMaxSignal) continue;
    struct sigaction now {};
    if (::sigaction(sig, nullptr, &now) != 0) continue;
    if (!(now.sa_flags & SA_SIGINFO) && now.sa_handler == SIG_IGN) continue;  // stays ignored
    g_previous[sig] = now;
    struct sigaction ours {};
    ours.sa_sigaction = on_signal;
    ours.sa_flags = SA_SIGINFO | SA_RESTART;
    ::sigemptyset(&ours.sa_mask);
    ::sigaction(sig, &ours, nullptr);
  }
  return true;
}

}  // namespace rf::collector
