// TraceOwner: the owning process finishes the trace once; forked children never touch it.
#include "rfprof/collector/trace_owner.h"

#include <pthread.h>
#include <unistd.h>

#include <cstdlib>

namespace rf::collector {

void TraceOwner::set_running() noexcept {
  owner_pid_.store(static_cast<int>(::getpid()), std::memory_order_relaxed);
  state_.store(State::kRunning, std::memory_order_release);
}

bool TraceOwner::begin_finish() noexcept {
  State expected = State::kRunning;
  if (!state_.compare_exchange_strong(expected, State::kFinishing)) return false;
  // A child forked without the atfork handler having run (vfork, clone) still never writes.
  return static_cast<int>(::getpid()) == owner_pid_.load(std::memory_order_relaxed);
}

bool install_exit_and_fork_handlers(void (*at_exit)(), void (*in_child)()) noexcept {
  const bool exit_ok = std::atexit(at_exit) == 0;
  const bool fork_ok = ::pthread_atfork(nullptr, nullptr, in_child) == 0;
  return exit_ok && fork_ok;
}

}  // namespace rf::collector
