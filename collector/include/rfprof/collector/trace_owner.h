// Which process owns the trace, and who finishes it (pure POSIX, no CUPTI).
//
// The session starts in one process and registers an exit handler (std::atexit) and a
// pthread_atfork child handler. A forked child (a PyTorch DataLoader worker) inherits the session
// object, the trace writer with its unwritten chunk and its file descriptor, maybe a writer lock
// that another thread of the parent held at the fork, but none of the parent's threads. The child
// handler disables the session in the child: CUPTI callbacks and buffers see kDisabled and touch
// nothing, and at the child's exit (exit() running the atexit handlers, or _exit) begin_finish()
// refuses, so the child never writes, flushes, locks or renames the parent's trace. The parent
// finishes it exactly once. Shown by tests/collector/test_fork.cpp (a helper process forking 8
// children while its threads write).
#pragma once

#include <atomic>

namespace rf::collector {

/// The life-cycle state of a session and the process that owns its trace. Thread-safe.
class TraceOwner {
 public:
  /// kStarting until start succeeds; kFinishing while the owner finishes; kDisabled in a forked child.
  enum class State : int { kStarting, kRunning, kFinishing, kFinished, kDisabled };

  /// Start succeeded in this process: it owns the trace (its pid is recorded); state kRunning.
  void set_running() noexcept;
  /// pthread_atfork child handler: state kDisabled (async-signal-safe: one atomic store).
  void disable_in_child() noexcept { state_.store(State::kDisabled, std::memory_order_release); }
  /// Exit: true exactly once, only while running and only in the owning process; the caller then
  /// finishes the trace and calls set_finished(). False in a forked child, before start, after
  /// another finish.
  bool begin_finish() noexcept;
  /// The trace is finished (or finishing failed): state kFinished.
  void set_finished() noexcept { state_.store(State::kFinished, std::memory_order_release); }

  /// The current state.
  State state() const noexcept { return state_.load(std::memory_order_acquire); }
  /// True while records are collected (kRunning).
  bool running() const noexcept { return state() == State::kRunning; }

 private:
  std::atomic<State> state_{State::kStarting};
  std::atomic<int> owner_pid_{0};
};

/// Registers `at_exit` with std::atexit and `in_child` as the pthread_atfork child handler (both
/// plain functions reaching the owner through a global). Returns false if either failed.
bool install_exit_and_fork_handlers(void (*at_exit)(), void (*in_child)()) noexcept;

}  // namespace rf::collector
