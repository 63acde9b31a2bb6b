// Finishing the trace when the process is told to stop (SIGTERM from Slurm's time limit, SIGINT
// from Ctrl-C, SIGHUP), without CUPTI: pure POSIX, tested with a helper process.
//
// The handlers do only async-signal-safe work: write() a byte to wake a watcher thread, poll() and
// read() for its answer (bounded by a timeout), sigaction(), raise(). The watcher thread does the
// real work. When the signal's previous disposition was the default action (the process is about
// to die), the handler waits for `finish` (the trace gets its end record and its final name), then
// restores the default action and re-raises the signal: the process dies of it as it would have.
// When the application had installed its own handler (Python turns SIGINT into
// KeyboardInterrupt), the handler wakes the watcher to run `flush` and calls the application's
// handler at once: the application decides whether it exits (then the exit handler finishes the
// trace). An ignored signal stays ignored. In a forked child (which inherits the handlers but not
// the watcher thread) the handler restores the previous disposition and re-raises: the child
// behaves as without rfprof and never touches the parent's trace. Limits: handlers the application installs after us
// replace ours (its own handling then applies). `finish` runs on a thread of its own: if it has
// not returned `last_resort_margin_ms` before the timeout (blocked in CUPTI, or on a lock the
// interrupted thread holds), the watcher runs `last_resort` (the session ends the trace with what
// it has) and answers the handler. If that blocks too, the handler gives up at the timeout (the
// trace keeps its flushed chunks, readable as truncated).
#pragma once

#include <functional>
#include <vector>

namespace rf::collector {

/// Installs the handlers for `signals` (once per process; later calls return false and change
/// nothing). `flush` runs on a watcher thread, `finish` on a thread the watcher starts; a dying
/// handler waits at most `timeout_ms` (ms). When `last_resort` is set and `finish` is still
/// running `timeout_ms - last_resort_margin_ms` after the signal, the watcher runs `last_resort`
/// and answers the handler (it must be safe to call while `finish` runs). Returns true when
/// installed; false when already installed or when the pipe or thread cannot be created (nothing
/// is installed then). Never throws.
bool install_signal_finish(const std::vector<int>& signals, std::function<void()> finish,
                           std::function<void()> flush, int timeout_ms,
                           std::function<void()> last_resort = nullptr,
                           int last_resort_margin_ms = 800) noexcept;

/// The signals whose handler finishes the trace: SIGTERM, SIGINT, SIGHUP. The writer blocks them
/// on a thread while it holds its shared lock (trace::WriterOptions::signals_blocked_while_locked),
/// so that the finish never waits for a lock held by the thread the handler interrupted.
const std::vector<int>& finish_signals() noexcept;

/// Blocks SIGTERM, SIGINT and SIGHUP in the calling thread, and SIGXFSZ and SIGPIPE. rfprof's own
/// threads (the watcher, the session's flush threads, the threads that finish the trace) are
/// created with the first three blocked (trace::ThreadSignalsBlocked around the creation: a thread
/// inherits its creator's mask) and call it first, so that the kernel delivers these signals to an
/// application thread: a handler running on the watcher would wait for itself, and one running
/// on a flush thread would make finish() wait to join it, each until the timeout. SIGXFSZ (a
/// trace write past `ulimit -f`) and SIGPIPE (a `.part` that is a pipe whose reader left) are
/// raised on the writing thread itself: blocked there, the write fails with EFBIG or EPIPE and
/// rfprof stops writing, where their default action killed the process. Never throws.
void block_own_thread_signals() noexcept;

}  // namespace rf::collector
