// Session life cycle: start, the flush thread, process exit, fork; the public entry points.
#include <limits.h>
#include <pthread.h>
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>

#include "cupti_call.h"
#include "rfprof/collector/signal_finish.h"
#include "driver_shim.h"
#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/messages.h"
#include "rfprof/trace/utf8.h"
#include "session_impl.h"

#ifndef RFPROF_VERSION
#define RFPROF_VERSION "unknown"
#endif

// Exported by libcupti but not declared in its headers (CUPTI documentation, "NVTX injection").
extern "C" CUptiResult CUPTIAPI cuptiNvtxInitialize2(void* pfnGetExportTable);

namespace rf::collector {
namespace {

std::atomic<Session*> g_session{nullptr};

void CUPTIAPI callback_trampoline(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                  const void* data) {
  static_cast<Session*>(userdata)->on_callback(domain, cbid, data);
}

/// Before the signal handler's timeout, the time left to the last resort (Session::end_trace_now):
/// enough for the writer's last flush with a thread buffer left out (200 ms) and the rename.
constexpr std::chrono::milliseconds kLastResortMargin{800};
/// A write blocked this long when the last resort runs is taken for a stalled file: ending the
/// trace would wait for it too.
constexpr std::chrono::milliseconds kLastResortWriteStall{1000};

void exit_handler() {
  if (Session* s = g_session.load()) s->finish();
}

void fork_child_handler() {
  if (Session* s = g_session.load()) s->disable_in_child();
}

std::string read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}


}  // namespace

Session* current_session() noexcept { return g_session.load(); }

Session::Session(SessionOptions options)
    : options_(std::move(options)),
      launch_log_(options_.profile_from_start,
                  LaunchSink{[this](const trace::Record& r) { write(r); },
                             [this](std::string_view s) { return intern(s, /*cached=*/true); },
                             [this](const trace::Record& r) { write(r, /*buffered=*/true); }}),
      kernel_names_([this](std::string_view s) { return intern(s); }) {
  if (options_.metrics.empty() && options_.metric_set.empty()) {
    options_.metrics = default_metrics();
    default_metrics_ = true;  // per chip, packed FP32 besides (set_up_profiler)
  }
  if (options_.call_stacks) call_stacks_ = std::make_unique<CallStackTable>();
  // Throws FilterError for a bad regex or NVTX rule (inject/config.cpp checks them first).
  auto filter = std::make_unique<LaunchFilter>(options_.filter);
  if (filter->active()) launch_filter_ = std::move(filter);
  if (!options_.filter.devices.empty() || options_.filter_mode == FilterMode::kPerGpu)
    device_filter_ = std::make_unique<DeviceFilter>(options_.filter.devices, [](const void* ctx) -> std::optional<uint32_t> {
      uint32_t device = 0;
      if (cuptiGetDeviceId(static_cast<CUcontext>(const_cast<void*>(ctx)), &device) != CUPTI_SUCCESS) return std::nullopt;
      return device;
    });
  LaunchSelectionOptions selection{options_.filter_mode, options_.kernel_id, options_.launch_skip_before_match,
                                   options_.launch_skip, options_.launch_count};
  if (selection.needs_selection()) {  // -s/-c counted there, per --filter-mode
    selection_ = std::make_unique<LaunchSelection>(std::move(selection));  // throws FilterError
    if (options_.kernel_id && !options_.kernel_id->kernel_name.empty()) {
      LaunchFilterOptions names;
      names.kernel_name = options_.kernel_id->kernel_name;
      names.kernel_name_base = options_.filter.kernel_name_base;
      kernel_id_names_ = std::make_unique<LaunchFilter>(names);
    }
  } else {
    launch_log_.set_launch_range(options_.launch_skip, options_.launch_count);
  }
  // Not device_filter_: a launch it refuses returns before any Range Profiler is touched, on a
  // context that never has one (session_callbacks.cpp).
  filters_set_ = launch_filter_ || selection_ || options_.launch_skip > 0 || options_.launch_count.has_value();
  // Throws std::invalid_argument for a bad rule (inject/config.cpp checks it first).
  if (step_mode() && !options_.replay_range.empty())
    step_range_ = std::make_unique<StepRangeWindows>(options_.replay_range);
}

uint64_t Session::now_ns() noexcept {
  uint64_t ts = 0;
  if (cuptiGetTimestamp(&ts) != CUPTI_SUCCESS) return 0;
  return ts;
}

void Session::start() {
  ScopedOverhead timed(process_overhead(), OverheadPhase::kSessionStart);
  // First CUPTI call that can be refused: another client, or no usable driver. Callbacks and
  // buffers that arrive before the state is kRunning are ignored, so the trace is created last and
  // nothing is left on disk when CUPTI refuses.
  subscriber_ = SubscriberGuard(callback_trampoline, this, &other_client_);
  RF_CUPTI_CALL(cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM));
  enable_activity();
  enable_callbacks();

  trace::WriterOptions wo;
  wo.force_overwrite = options_.force_overwrite;
  // Full chunks wait for the flush thread, woken at once, so launching threads (and CUPTI's) do no
  // file I/O, ever: a write to a stalled file (NFS) would hold them, and the application, for good.
  // Memory stays bounded: what passes 8 chunks and 8 MiB waiting is dropped and counted.
  wo.max_pending_chunks = 8;
  wo.appending_threads_never_write = true;
  // A write blocked 500 ms is a stalled file, not a slow one (1 MiB in 500 ms is 2 MB/s): only then
  // do appending threads past the bound stop waiting for the flush thread and drop.
  wo.stalled_write = std::chrono::milliseconds(500);
  wo.on_chunk_pending = [this] { request_flush(); };
  // Past the bound, while the flush thread is stuck in a write (a stalled file system), records
  // are dropped rather than waited for by the application's threads: said once.
  wo.on_stalled = [this] { report_write_stall(); };
  // A fatal signal's handler finishes the trace: it must not run on a thread holding the writer's
  // lock, which its finish (and the last resort) would wait for until the handler's timeout.
  wo.signals_blocked_while_locked = finish_signals();
  // A name a live process is writing (two processes given one name, or a %i index both took:
  // trace::TraceInUseError), or one that exists (TraceExistsError): the next name output_in_use
  // gives, if it gives one; never the other process's .part.
  for (uint32_t attempt = 1;; ++attempt) {
    try {
      writer_ = std::make_unique<trace::Writer>(options_.output, wo);
      break;
    } catch (const trace::WriteError& e) {
      const bool live = dynamic_cast<const trace::TraceInUseError*>(&e) != nullptr;
      if (!live && !dynamic_cast<const trace::TraceExistsError*>(&e)) throw;
      std::filesystem::path next;
      if (options_.output_in_use && attempt <= kMaxOutputAttempts)
        next = options_.output_in_use(options_.output, attempt, live);
      if (next.empty()) throw;
      options_.output = std::move(next);
    }
  }
  write_process_info();
  (void)launch_log_.process_start(now_ns());
  try {
    trace::ThreadSignalsBlocked inherited(finish_signals());  // born blocking them (signal_finish.h)
    flush_thread_ = std::thread([this] { flush_loop(); });
    activity_flush_thread_ = std::thread([this] { activity_flush_loop(); });
  } catch (...) {  // EAGAIN under a pids limit: a joinable thread must not reach ~Session
    stop_flush_threads();
    throw;
  }
  owner_.set_running();  // this process owns the trace
}

void Session::stop_flush_threads() noexcept {
  {
    std::lock_guard lock(flush_mutex_);
    flush_stop_ = true;
  }
  flush_cv_.notify_all();
  if (flush_thread_.joinable()) flush_thread_.join();
  if (activity_flush_thread_.joinable()) activity_flush_thread_.join();
}

void Session::flush_writer(std::optional<std::chrono::nanoseconds> buffer_wait) noexcept {
  if (!writer_ || write_failed_.load(std::memory_order_relaxed)) return;
  try {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kWriterFlush);
    writer_->flush(buffer_wait);
  } catch (const std::exception& e) {
    report_write_failure(e);
  }
}

void Session::write_process_info() noexcept {
  trace::ProcessInfo p;
  p.pid = static_cast<uint32_t>(::getpid());
  p.ppid = static_cast<uint32_t>(::getppid());
  p.start_ns = now_ns();
  p.wall_clock_ns = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                              std::chrono::system_clock::now().time_since_epoch())
                                              .count());
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) == 0) p.hostname = intern(host);
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) p.process_name = intern(exe.filename().string());
  std::string cmdline = read_file("/proc/self/cmdline");
  while (!cmdline.empty() && cmdline.back() == '\0') cmdline.pop_back();
  for (char& c : cmdline)
    if (c == '\0') c = ' ';
  p.command_line = intern(cmdline);
  p.rfprof_version = intern(RFPROF_VERSION);
  p.mode = options_.mode;
  uint32_t v = 0;
  if (cuptiGetVersion(&v) == CUPTI_SUCCESS) p.cupti_version = v;
  p.driver_version = static_cast<uint32_t>(driver::version());
  write(p);
}

void Session::write(const trace::Record& record, bool buffered) noexcept {
  if (!writer_ || write_failed_.load(std::memory_order_relaxed)) {
    dropped_records_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  try {
    if (buffered)
      writer_->append_buffered(record);
    else
      writer_->append(record);
  } catch (const std::exception& e) {
    dropped_records_.fetch_add(1, std::memory_order_relaxed);
    report_write_failure(e);
  }
}

void Session::report_write_failure(const std::exception& e) noexcept {
  if (!write_failed_.exchange(true))
    print_line(std::string(e.what()) + "; rfprof stops writing (the trace keeps what was written)");
}

trace::StringId Session::intern(std::string_view s, bool cached) noexcept {
  if (!writer_ || write_failed_.load(std::memory_order_relaxed)) return 0;
  try {
    return cached ? writer_->intern_cached(s) : writer_->intern(s);
  } catch (const std::exception& e) {
    report_write_failure(e);
    return 0;
  }
}

trace::StringId Session::marker_name(std::string_view s) noexcept {
  if (!writer_ || write_failed_.load(std::memory_order_relaxed)) return 0;
  try {
    if (auto it = marker_names_.find(s); it != marker_names_.end()) return it->second;
    if (marker_names_.size() >= kMarkerNames) marker_names_.clear();  // bounded: see session_impl.h
    const trace::StringId id = writer_->define(s);
    marker_names_.emplace(std::string(s), id);
    return id;
  } catch (const std::exception& e) {
    report_write_failure(e);
    return 0;
  }
}

void Session::write_error(trace::ErrorCode code, uint32_t window, uint64_t expected, uint64_t actual,
                          const std::string& message) noexcept {
  write(trace::CollectorError{code, window, now_ns(), expected, actual, intern(message)});
}

void Session::write_call_stacks() noexcept {
  if (!call_stacks_) return;
  try {
    for (const auto& [id, frames] : call_stacks_->symbolize(is_launch_machinery)) {
      trace::CallStack cs;
      cs.stack_id = id;
      for (const auto& f : frames) {
        cs.functions.push_back(intern(f.function));
        cs.modules.push_back(intern(f.module));
      }
      write(cs);
    }
    if (uint64_t lost = call_stacks_->overflowed())
      write_error(trace::ErrorCode::kCallStacksDropped, 0, call_stacks_->size(), lost,
                  std::to_string(lost) + " launches have no call stack: more than " +
                      std::to_string(call_stacks_->size()) + " distinct stacks");
  } catch (const std::exception& e) {
    print_line(std::string("rfprof: could not write the launch call stacks: ") + e.what());
  }
}

void Session::write_overhead(bool periodic) noexcept {
  try {
    for (const OverheadChange& c : process_overhead().changes(/*skip_if_only_flushes=*/periodic))
      write(trace::ProfilerOverhead{intern(overhead_phase_name(c.phase)), c.totals.count,
                                    c.totals.total_ns, c.totals.max_ns});
  } catch (const std::exception& e) {
    report_write_failure(e);
  }
}

void Session::flush_loop() noexcept {
  // Writes what was appended at least every flush_ms, whatever CUPTI does: on an H100 under a
  // busy PyTorch loop, a SIGKILL after 13 s left only the first second's records when this loop
  // also waited in cuptiActivityFlushAll (now on its own thread, activity_flush_loop).
  block_own_thread_signals();
  trace::Writer::writes_on_this_thread();  // its own appends past the bound never wait for itself
  const auto period = std::chrono::milliseconds(options_.flush_ms);
  std::unique_lock lock(flush_mutex_);
  for (;;) {
    flush_cv_.wait_for(lock, period, [this] { return flush_stop_ || flush_now_; });
    if (flush_stop_) break;
    flush_now_ = false;
    lock.unlock();
    if (!write_failed_.load(std::memory_order_relaxed)) {
      write_overhead(/*periodic=*/true);
      flush_writer(kFlushBufferWait);
    }
    lock.lock();
  }
}

void Session::activity_flush_loop() noexcept {
  // Every flush_ms, CUPTI hands over the activity buffers whose records are all complete
  // (cuptiActivityFlushAll(0), cupti_activity.h); their records reach the writer, which the
  // loop above writes out, woken at once so that they wait no second period.
  block_own_thread_signals();
  const auto period = std::chrono::milliseconds(options_.flush_ms);
  std::unique_lock lock(flush_mutex_);
  for (;;) {
    flush_cv_.wait_for(lock, period, [this] { return flush_stop_; });
    if (flush_stop_) break;
    lock.unlock();
    {
      ScopedOverhead timed(process_overhead(), OverheadPhase::kActivityFlush);
      RF_CUPTI_TRY(cuptiActivityFlushAll(0));
    }
    // Counter images no launch holds now: decoded here, or a context that stopped launching
    // (evaluation on the CPU, a checkpoint, waiting for data) would keep its last counters until
    // exit and a SIGKILL meanwhile would lose them (docs/failure-modes.md). A kernel that hangs
    // hangs inside its launch call, which holds the image: that one stays undecoded.
    if (running()) decode_waiting_images();  // finishing decodes every image itself
    request_flush();
    lock.lock();
  }
}

void Session::request_flush() noexcept {
  // Wakes the writer's flush thread early (a full chunk waits, or a signal asks for a flush).
  {
    std::lock_guard lock(flush_mutex_);
    flush_now_ = true;
  }
  flush_cv_.notify_all();
}

void Session::report_write_stall() noexcept {
  print_line("rfprof: the trace file " + options_.output.string() +
             ".part is not keeping up (a stalled or slow file system?): rather than make the "
             "application wait for it, rfprof drops what does not fit in 8 MiB and counts it in the "
             "trace's end");
}

void Session::finish(FinishFrom from) noexcept {
  if (!owner_.begin_finish()) return;  // once, and a forked child never writes
  finish_owned(from);
}

bool Session::exit_io(FinishFrom from, const std::function<void()>& io) noexcept {
  if (from != FinishFrom::kExit) {  // a signal's watcher: its own deadlines apply
    io();
    return true;
  }
  struct Done {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
  };
  auto state = std::make_shared<Done>();  // outlives a thread left behind
  std::thread runner;
  try {
    trace::ThreadSignalsBlocked inherited(finish_signals());  // born blocking them (signal_finish.h)
    runner = std::thread([io, state] {
      block_own_thread_signals();
      io();
      std::lock_guard lock(state->m);
      state->done = true;
      state->cv.notify_all();
    });
  } catch (...) {
    io();  // no thread (a pids limit): as before, on this one
    return true;
  }
  std::unique_lock lock(state->m);
  while (!state->cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return state->done; })) {
    const auto blocked = writer_ ? writer_->write_blocked_for() : std::chrono::nanoseconds(0);
    if (blocked < kExitWriteStall) continue;
    lock.unlock();
    runner.detach();  // blocked in the write (or waiting for it); gone with the process
    if (!write_failed_.exchange(true))  // nothing more enters the writer
      print_line("rfprof: a write to the trace file " + options_.output.string() + ".part has not returned for " +
                 std::to_string(std::chrono::duration_cast<std::chrono::seconds>(blocked).count()) +
                 " s (a stalled file system?): the trace is left unfinished there, with what reached it (" +
                 std::to_string(writer_->dropped_while_stalled()) +
                 " records dropped while it stalled), and the application exits");
    return false;
  }
  lock.unlock();
  runner.join();
  return true;
}

void Session::finish_owned(FinishFrom from) noexcept {
  const auto finish_began = std::chrono::steady_clock::now();
  const bool signal = from == FinishFrom::kSignal;
  // The thread the signal interrupted may hold its own writer buffer: every collection from here
  // on leaves a buffer busy past kSignalBufferWait out instead of waiting for it.
  if (signal && writer_) writer_->bound_buffer_waits(kSignalBufferWait);
  try {
    if (step_mode()) {
      step_finish();
      // No pass starts from here on: a launch waiting for the step context's lock while the
      // images are flushed below would otherwise find a pass window open and start a pass that
      // nothing would ever stop.
      step_role_.store(WindowRole::kDone);
    }
    // Counted before LaunchLog closes, never uncounted: a launch that enters before the state
    // reads finishing and gets a ticket outside the closed window stops its context's image first
    // (stop_image_for_outside_launch); later ones go to on_launch_enter_finishing.
    windows_closing_.fetch_add(1);
    const std::optional<uint32_t> closed = launch_log_.close_window();
    flush_all_images(/*at_exit=*/true, signal ? kSignalLaunchWait : kExitLaunchWait, closed.value_or(0));
    if (closed) write(trace::ProfilingWindow{*closed, false, now_ns(), 0});
    // Each step of finishing can be cut short (a SIGKILL after SIGTERM's grace time, the signal
    // handler's timeout): what it produced is written out before the next one starts.
    // At exit the file writes (and the join of the flush thread, which may be in one) go on a
    // thread of their own, given up when the file stalls (exit_io); CUPTI calls stay here.
    exit_io(from, [this] { flush_writer(); });
    if (!exit_io(from, [this] { stop_flush_threads(); })) {  // the flush thread is stuck in a write
      owner_.set_finished();
      return;
    }
    // No flush thread now: the forced flush's records past the bound are written by their
    // appending thread, not dropped after waiting for a flush that would never come.
    if (writer_) writer_->allow_inline_writes();
    // Forced flush: every buffer, also those with incomplete records (at-exit use per CUPTI docs).
    RF_CUPTI_TRY(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
    write_pending_devices(/*all=*/true);
    exit_io(from, [this] { flush_writer(); });
    write_call_stacks();
    // session.finish ends here: what follows is writing the last records themselves.
    process_overhead().add(OverheadPhase::kFinish,
                           static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                     std::chrono::steady_clock::now() - finish_began)
                                                     .count()));
    write_overhead(/*periodic=*/false);
    owner_.set_finished();
    exit_io(from, [this] {
      try {
        if (!write_failed_.load()) writer_->finish(now_ns(), dropped_records_.load());
      } catch (const std::exception& e) {
        print_line(std::string("rfprof: could not finish the trace: ") + e.what());
      }
    });
    if (writer_ && writer_->buffers_left_out() > 0)
      print_line("rfprof: the trace was finished without the last records of a thread that held its "
                 "buffer when the signal arrived (at most 64 KiB of its launches)");
  } catch (const std::exception& e) {
    owner_.set_finished();
    print_line(std::string("rfprof: could not finish the trace: ") + e.what());
  } catch (...) {
    owner_.set_finished();
    print_line("rfprof: could not finish the trace (unknown error)");
  }
}

void Session::end_trace_now(uint64_t waited_ms) noexcept {
  if (!writer_ || write_failed_.load()) return;
  // Finishing waits for a write to the trace file that makes no progress: ending the trace would
  // wait for it too. The .part keeps what reached it.
  if (const auto blocked = writer_->write_blocked_for(); blocked >= kLastResortWriteStall) {
    if (!write_failed_.exchange(true))
      print_line("rfprof: a write to the trace file " + options_.output.string() + ".part has not returned for " +
                 std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(blocked).count()) +
                 " ms (a stalled file system?): the trace is left unfinished there, with what reached it");
    return;
  }
  try {
    write_error(trace::ErrorCode::kFinishCutShort, 0, waited_ms, 0,
                "finishing the trace after the signal was still blocked after " + std::to_string(waited_ms) +
                    " ms (in a CUDA or CUPTI call, or on a lock the interrupted thread holds): the trace "
                    "ends here, without what finishing had not written yet (the last kernel records, "
                    "counter images or call stacks)");
    writer_->finish(now_ns(), dropped_records_.load());
    print_line("rfprof: finishing the trace was blocked for " + std::to_string(waited_ms) +
               " ms after the signal; the trace was ended with what it had");
  } catch (const std::exception& e) {
    print_line(std::string("rfprof: could not finish the trace: ") + e.what());
  } catch (...) {
  }
}

// ---- public entry points (session.h) ----

bool start_session(const SessionOptions& options) noexcept {
  static std::mutex m;
  static int result = -1;  // -1: not attempted, 0: failed, 1: running
  std::lock_guard lock(m);
  if (result >= 0) return result == 1;
  result = 0;
  Session* s = nullptr;
  try {
    s = new Session(options);
    s->start();
  } catch (const CuptiError& e) {
    if (e.result() == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
      print_line(another_client_message(s ? s->other_client() : std::string()));
    else
      print_line(cannot_attach_message(
          detail_of(e) + ((e.result() == CUPTI_ERROR_UNKNOWN || e.result() == CUPTI_ERROR_NOT_INITIALIZED)
                              ? "; is an NVIDIA driver installed and a GPU visible?"
                              : "")));
    delete s;
    return false;
  } catch (const std::exception& e) {
    print_line("rfprof: " + detail_of(e) + "; rfprof is disabled");
    delete s;
    return false;
  } catch (...) {
    print_line("rfprof: unknown error while starting; rfprof is disabled");
    delete s;
    return false;
  }
  g_session.store(s);  // never deleted: callbacks and the exit handler may run until the very end
  install_exit_and_fork_handlers(exit_handler, fork_child_handler);
  // SIGTERM (Slurm's time limit), SIGINT, SIGHUP: finish the trace before the default action
  // kills the process; with the application's own handler, flush and let it decide (signal_finish.h).
  install_signal_finish(
      finish_signals(),
      [] {
        if (Session* live = g_session.load()) live->finish(Session::FinishFrom::kSignal);
      },
      [] {
        if (Session* live = g_session.load()) live->request_flush();
      },
      static_cast<int>(Session::kSignalFinishTimeout.count()),
      [] {
        if (Session* live = g_session.load())
          live->end_trace_now(static_cast<uint64_t>((Session::kSignalFinishTimeout - kLastResortMargin).count()));
      },
      static_cast<int>(kLastResortMargin.count()));
  result = 1;
  return true;
}

std::filesystem::path session_output() noexcept {
  Session* s = g_session.load();
  if (!s) return {};
  try {
    return s->output();
  } catch (...) {
    return {};
  }
}

bool session_running() noexcept {
  Session* s = g_session.load();
  return s && s->running();
}

int forward_nvtx_injection(const void* nvtx_get_export_table) noexcept {
  // The CUPTI 13.0 GA guard: CUPTI has been initialized by start_session before NVTX reaches it.
  if (!session_running() || !nvtx_get_export_table) return 0;
  CUptiResult r = cuptiNvtxInitialize2(const_cast<void*>(nvtx_get_export_table));
  if (r == CUPTI_SUCCESS) return 1;
  print_line("rfprof: NVTX ranges will not be recorded (cuptiNvtxInitialize2: " +
             cupti_result_string(r) + ")");
  return 0;
}

}  // namespace rf::collector
