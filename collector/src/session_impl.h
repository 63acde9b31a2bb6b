// The collector session of one process (internal; public entry points: session.h).
// Files: session.cpp (life cycle, exit, fork, flush thread), session_callbacks.cpp (CUPTI
// callbacks: launches, windows, contexts, NVTX), session_activity.cpp (activity buffers),
// session_counters.cpp (Range Profiler per context, RangeCounters), session_nvtx_filter.cpp (NVTX
// callbacks feeding the launch filter's NVTX rules), session_step_replay.cpp (replay across steps).
#pragma once

#include <cupti.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <unordered_map>
#include <vector>

#include "guards.h"
#include "rfprof/collector/call_stacks.h"
#include "rfprof/collector/context_table.h"
#include "rfprof/collector/device_filter.h"
#include "rfprof/collector/launch_filter.h"
#include "range_profiler.h"
#include "rfprof/collector/launch_log.h"
#include "rfprof/collector/launch_selection.h"
#include "rfprof/collector/messages.h"
#include "rfprof/collector/names.h"
#include "rfprof/collector/nvtx_style.h"
#include "rfprof/collector/overhead.h"
#include "rfprof/collector/session.h"
#include "rfprof/collector/step_range_windows.h"
#include "rfprof/collector/step_replay_collector.h"
#include "rfprof/collector/trace_owner.h"
#include "rfprof/trace/per_thread.h"
#include "rfprof/trace/writer.h"

namespace rf::collector {

/// The collector of one process: CUPTI subscription, callbacks, activity buffers, Range Profiler
/// per context, the trace writer and its flush threads, exit, fork and signal handling. One per
/// process, never deleted (callbacks may run until the very end); every entry point is noexcept
/// or caught at the CUPTI seam, so rfprof's failures never reach the application.
class Session {
 public:
  using State = TraceOwner::State;

  explicit Session(SessionOptions options);
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// Subscribes, opens the trace, enables activity and callbacks. Throws CuptiError or
  /// trace::WriteError; everything done so far is undone by the guards.
  void start();
  /// How long finish() waits, for all contexts together, for kernel launches in flight before it
  /// leaves the counter images of the contexts still busy undecoded (a CollectorError says so):
  /// at exit, 10 s; from a signal handler, which waits 3 s in all, 1 s (the signal may have
  /// interrupted that very launch, whose thread then holds the context until the handler returns).
  static constexpr std::chrono::milliseconds kExitLaunchWait{10000};
  static constexpr std::chrono::milliseconds kSignalLaunchWait{1000};
  /// How long a context's destruction waits for a launch or a decode holding its counter image.
  static constexpr std::chrono::milliseconds kDropContextWait{2000};
  /// How long a fatal signal's finish() waits for each thread's writer buffer: the interrupted
  /// thread may hold its own (inside append_buffered); its records are then left out.
  static constexpr std::chrono::milliseconds kSignalBufferWait{200};
  /// How long the periodic flush waits for a thread's writer buffer before leaving it for the
  /// next flush (so the flush thread, which finish() joins, never waits on a stopped thread).
  static constexpr std::chrono::milliseconds kFlushBufferWait{100};
  /// How long a fatal signal's handler waits for finish() before the signal's default action.
  static constexpr std::chrono::milliseconds kSignalFinishTimeout{3000};
  /// Who finishes the trace: the process's exit (waits as long as needed, up to kExitLaunchWait
  /// for launches, but not for a write to the trace file that makes no progress: kExitWriteStall),
  /// or a fatal signal's watcher thread (bounded waits, within kSignalFinishTimeout).
  enum class FinishFrom { kExit, kSignal };
  /// At exit, how long a write to the trace file may go without completing (a stalled NFS mount,
  /// a pipe nobody reads) before the exit goes on without the trace's end: one rfprof: line, the
  /// `.part` left with what was written.
  static constexpr std::chrono::milliseconds kExitWriteStall{5000};
  /// Closes the window, decodes counters, flushes activity, writes TraceEnd, renames the trace.
  /// From the exit: every CUPTI call on the exiting thread, as always (CUPTI may expect a
  /// context's Range Profiler to be stopped and decoded where it ran), but each file write
  /// (writer flushes, the flush thread's join, the trace's end) on a thread of its own, left behind
  /// once a write has been blocked for kExitWriteStall (exit_io).
  void finish(FinishFrom from = FinishFrom::kExit) noexcept;
  /// A fatal signal's last resort (signal_finish.h), while finish(kSignal) is blocked: writes a
  /// CollectorError (kFinishCutShort, `waited_ms`) and ends the trace with what it has. Safe while
  /// finish() runs (the writer is thread-safe; its finish is idempotent).
  void end_trace_now(uint64_t waited_ms) noexcept;
  /// Wakes the flush thread now (a signal the application handles: its records reach the file).
  void request_flush() noexcept;
  /// pthread_atfork child handler: the child must not touch the parent's CUPTI state or trace.
  void disable_in_child() noexcept {
    owner_.disable_in_child();
    if (writer_) writer_->abandon_in_forked_child();  // the parent alone holds the .part's lock
  }

  State state() const noexcept { return owner_.state(); }
  bool running() const noexcept { return owner_.running(); }
  /// The trace path being written (SessionOptions::output, or output_in_use's name); set by start().
  const std::filesystem::path& output() const noexcept { return options_.output; }
  /// Names output_in_use may give before the start gives up.
  static constexpr uint32_t kMaxOutputAttempts = 100;
  /// CUPTI's name of the subscriber that made start() fail, if CUPTI reported one.
  const std::string& other_client() const noexcept { return other_client_; }

  // CUPTI entry points (never throw).
  void on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept;
  /// Reads the records of a buffer CUPTI handed back; the caller frees it.
  void on_buffer_completed(uint8_t* buffer, size_t valid_size) noexcept;

 private:
  // session.cpp
  // `buffered`: the launch path's writes, into the calling thread's writer buffer (no shared lock).
  void write(const trace::Record& record, bool buffered = false) noexcept;
  // `cached`: the launch path's kernel names, through the calling thread's intern cache.
  trace::StringId intern(std::string_view s, bool cached = false) noexcept;
  // Drops the write after a failed one, reporting the first failure once (write, intern, ...).
  void report_write_failure(const std::exception& e) noexcept;
  /// The writer's on_stalled: one line, the first time records are dropped because the trace file
  /// does not keep up (trace::WriterOptions::max_pending_chunks).
  void report_write_stall() noexcept;
  /// finish()'s work, once begin_finish() said this process finishes.
  void finish_owned(FinishFrom from) noexcept;
  /// Runs `io` (file writes, or a join of a thread that may be writing): at exit (`from` kExit) on
  /// a thread of its own while the calling thread waits, for as long as it takes unless a write to
  /// the trace file has been blocked for kExitWriteStall; then one line, nothing more is written
  /// (the `.part` keeps what reached it; write_failed_) and it returns false, the thread left
  /// behind. On a signal's watcher thread (its own deadlines apply), or when no thread can be
  /// made, `io` runs here. Returns true when `io` ran to its end (whatever it wrote), false when
  /// it was left behind. `io` itself checks write_failed_ (flush_writer does).
  bool exit_io(FinishFrom from, const std::function<void()>& io) noexcept;
  void write_error(trace::ErrorCode code, uint32_t window, uint64_t expected, uint64_t actual,
                   const std::string& message) noexcept;
  void write_process_info() noexcept;
  /// Symbolizes the launch call stacks and writes one CallStack record per stack (finish()).
  void write_call_stacks() noexcept;
  /// One ProfilerOverhead record per phase that grew since the last call (process_overhead()).
  /// Called by the flush thread (`periodic`: nothing when only the flushes themselves grew), then
  /// by finish() once that thread is joined.
  void write_overhead(bool periodic) noexcept;
  void flush_loop() noexcept;           ///< writer_->flush() every flush_ms or on request
  void activity_flush_loop() noexcept;  ///< cuptiActivityFlushAll(0) every flush_ms
  /// Stops and joins the two flush threads (finish, or a failed start).
  void stop_flush_threads() noexcept;
  /// writer_->flush() now, timed as writer.flush; a failure is reported once and stops writing.
  void flush_writer(std::optional<std::chrono::nanoseconds> buffer_wait = std::nullopt) noexcept;
  static uint64_t now_ns() noexcept;

  // session_callbacks.cpp
  /// Subscribes and enables the runtime, driver, resource (and NVTX) callbacks. Throws CuptiError.
  void enable_callbacks();
  // CUPTI callbacks, dispatched by domain: launches (entry/exit), cudaProfilerStart/Stop windows,
  // context creation and destruction, NVTX ranges.
  void on_runtime_api(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void on_driver_api(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  /// A launch entry's first step: whatever this thread's previous launch left (a lock, a ticket,
  /// an unlocked step count) because its exit callback never came, released; t_launch reset.
  void forget_previous_launch();
  void on_launch_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  /// A launch outside every window on `ctx` while its image may be started (a launch filter
  /// refused it, or a window is closing): a started Range Profiler (auto range) would profile and
  /// replay this kernel as a range of the window and spoil that image's launch mapping. Takes the
  /// context's lock until the launch's exit (t_locked) and stops the image first (flush_image).
  /// `finishing`: waits at most kExitLaunchWait for the lock, then lets the launch go unlocked.
  void stop_image_for_outside_launch(CUcontext ctx, bool finishing = false);
  /// A launch entry (counters mode) once the session finishes or has finished: nothing is
  /// recorded, but an image the exit's window left started is stopped first.
  void on_launch_enter_finishing(const CUpti_CallbackData* cb);
  void on_launch_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* cb);
  void open_window(uint32_t cbid, CUcontext ctx);
  void close_window(uint32_t cbid);
  void on_resource(CUpti_CallbackId cbid, const void* data);
  void on_nvtx(CUpti_CallbackId cbid, const void* data);

  // session_nvtx_filter.cpp
  /// Subscribes the NVTX callbacks the launch filter's NVTX rules need (none without rules).
  void enable_nvtx_filter_callbacks();
  /// Feeds NVTX range calls to the launch filter's per-thread stacks and open start/end ranges,
  /// and to the step-range windows (opening and closing them).
  void feed_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* data);

  // session_activity.cpp
  /// Registers the activity buffer callbacks and enables kernel (and memory) activity. Throws CuptiError.
  void enable_activity();
  /// Converts one completed CUPTI activity record into trace records (kernel, NVTX marker,
  /// memory allocation, device).
  void handle_record(const CUpti_Activity* record);
  /// Writes the Device records of devices seen since the last call (`all`: every device, at finish).
  void write_pending_devices(bool all) noexcept;

  // session_step_replay.cpp: replay across steps (options_.replay_across_steps)
  bool step_mode() const noexcept {
    return options_.replay_across_steps && options_.mode == trace::CollectionMode::kCounters;
  }
  /// A window opens: a pass (Range Profiler, nothing recorded), the timing window (recorded), or
  /// nothing once every group is collected. Falls back to an ordinary recorded window when the
  /// context has no counters.
  void step_open_window(uint32_t cbid, CUcontext ctx);
  void step_close_window(uint32_t cbid);
  /// Releases the context lock this thread still holds from a launch whose exit callback never
  /// came (before a window change, which waits for the launches holding it).
  static void release_this_threads_stale_launch_lock() noexcept;
  /// At a launch's entry: the step context's profiler, locked until the exit callback (launch
  /// order = range order), the pass started if needed; null when the launch is not part of the
  /// step sequence (no window, another context). `unlocked` is set when the launch goes on without
  /// the lock and counts in step_unlocked_launches_ until step_unlocked_launch_exit.
  std::shared_ptr<ContextProfiler> step_launch_enter(CUcontext ctx, bool& unlocked);
  /// At the exit (or the lost exit) of a launch step_launch_enter let go on unlocked.
  void step_unlocked_launch_exit() noexcept { step_unlocked_launches_.fetch_sub(1); }
  /// Before a pass starts (the window's role already published): waits, at most
  /// kUnlockedLaunchWait, until every launch that entered unlocked has exited, so that none of
  /// their kernels runs inside the pass and makes a range no launch of the window accounts for.
  void step_wait_for_unlocked_launches() noexcept;
  /// At the exit of a successful launch taken by step_launch_enter.
  void step_launch_exit(const LaunchIdentity& launch, uint32_t correlation_id, uint64_t thread);
  /// At the exit of every launch taken by step_launch_enter, `cp` still locked and the launch's
  /// context current: if replay across steps stepped aside while this launch held the context (a
  /// window closed and waited kLockWait in vain), the pass it could not stop is stopped and the
  /// Range Profiler disabled here, so that CUPTI stops instrumenting and serializing the
  /// application's kernels now rather than at the next window close.
  void step_stop_abandoned_pass(ContextProfiler& cp) noexcept;
  /// Process exit: says so when no group was completed.
  void step_finish() noexcept;
  /// Steps aside for the rest of the run (one rfprof: line): later windows are recorded plainly.
  void step_failed(const std::string& detail, int cupti_result) noexcept;
  /// drop_context of `cp` (its mutex held): if it is the step context, step aside.
  void step_context_destroyed(const ContextProfiler& cp) noexcept;
  void open_plain_window_locked(uint32_t cbid);   // step_mutex_ held
  void close_plain_window_locked(uint32_t cbid);  // step_mutex_ held

  // session_counters.cpp
  /// The Range Profiler of `ctx`, set up on first use (nullptr: counters unavailable there, said once).
  std::shared_ptr<ContextProfiler> profiler_for(CUcontext ctx);
  /// Which thread decodes an image: the one holding the context's launches (a launch, a window
  /// end, the exit), or rfprof's flush thread (decode_waiting_images).
  enum class DecodeFrom { kLaunchPath, kFlushThread };
  /// Stops `cp`'s started image and writes one RangeCounters per range, mapped to the image's
  /// launches (kStep: only ends the pass). Caller holds cp.mutex(). A decode failure is written as a
  /// CollectorError; from the launch path it stops counters on that context, from the flush thread
  /// it loses only that image and turns decode_waiting_images off.
  /// `last`: the context's last image (exit, context destruction; the caller disables the Range
  /// Profiler next): no next image is prepared.
  void flush_image(ContextProfiler& cp, DecodeFrom from = DecodeFrom::kLaunchPath, bool last = false) noexcept;
  /// Decodes every context's image (window close); at exit also disables the Range Profiler and
  /// waits at most `launch_wait` for a launch in flight on a context (else skips it, saying so).
  /// `launch_wait` is one deadline for all contexts together; `exit_window` names the window in
  /// the CollectorError of a skipped context.
  void flush_all_images(bool at_exit, std::chrono::milliseconds launch_wait = kExitLaunchWait,
                        uint32_t exit_window = 0) noexcept;
  /// Kernel replay: decodes every started image that holds launches and that no launch holds
  /// now (try_lock only: a launch in flight decides at its next entry by age), so that a context
  /// that stops launching does not keep its last counters until exit (flush interval bound).
  void decode_waiting_images() noexcept;
  void drop_context(CUcontext ctx) noexcept;
  /// Counters of `ctx` (on CUDA device `device`) stop for good after a failing Range Profiler call.
  void counters_failed(CUcontext ctx, uint32_t device, uint32_t window, const std::string& detail,
                       int cupti_result) noexcept;
  /// Says once why counters are unavailable (and records it in the trace); for an unsupported
  /// `device` (its CUDA ordinal, when known), also whether the driver says it is shared through MPS.
  void counters_unavailable(uint32_t window, CountersFailure failure, const std::string& detail,
                            std::optional<uint32_t> device = std::nullopt) noexcept;
  /// Chip name of a device (cuptiDeviceGetChipName), asked once per device; "" if that failed.
  std::string chip_of(uint32_t device_id) noexcept;
  /// chip_of, but throws what asking for the device's chip threw (CuptiError), every time.
  std::string chip_for(uint32_t device_id);
  /// Sets up the Range Profiler object of `ctx` (CUPTI calls; no session lock held); nullptr
  /// after saying why (counters_unavailable).
  std::shared_ptr<ContextProfiler> set_up_profiler(CUcontext ctx);
  uint32_t config_id(const ContextProfiler& cp) noexcept;
  uint32_t current_window() noexcept;

  SessionOptions options_;
  bool default_metrics_ = false;  // options_.metrics are default_metrics(): no list or set was given
  TraceOwner owner_;   // state, and the process that may finish the trace (trace_owner.h)
  std::string other_client_;   // CUPTI's name of the subscriber that refused us, if any
  std::unique_ptr<trace::Writer> writer_;
  std::atomic<uint64_t> dropped_records_{0};   // activity records lost (CUPTI drops + write errors)
  std::atomic<bool> write_failed_{false};

  SubscriberGuard subscriber_;
  std::vector<CallbackGuard> callbacks_;
  std::vector<ActivityKindGuard> activity_kinds_;

  // Windows, the kernel-record filter and launch indices in timing mode (thread-safe).
  LaunchLog launch_log_;
  std::unique_ptr<CallStackTable> call_stacks_;  // options_.call_stacks: launch stacks -> ids
  std::unique_ptr<LaunchFilter> launch_filter_;  // -k, --nvtx-include/exclude (null: none set)
  std::unique_ptr<DeviceFilter> device_filter_;  // --devices, per-gpu's device (null: neither)
  // --kernel-id, --filter-mode, --launch-skip-before-match, with -s/-c (null: none set).
  std::unique_ptr<LaunchSelection> selection_;
  std::unique_ptr<LaunchFilter> kernel_id_names_;  // the kernel id's NAME, matched as -k (null: any)
  bool filters_set_ = false;  // a launch filter or -s/-c: in-window launches may be refused
  // Windows being closed (close_window, finish) whose images may still be started: from before
  // LaunchLog says "closed" until every image is stopped. A launch outside windows meanwhile
  // stops its context's image first (stop_image_for_outside_launch).
  std::atomic<uint32_t> windows_closing_{0};
  // NVTX domain names for the filter's rules (nvtxDomainCreateA): the session's table, and each
  // thread's copy of the names it asked for, refilled when a domain is created (the generation
  // changes), so that a range in a domain takes no lock shared between threads.
  std::mutex nvtx_domains_mutex_;
  std::unordered_map<const void*, std::string> nvtx_domains_;  // nvtxDomainHandle_t -> name
  std::atomic<uint64_t> nvtx_domains_generation_{0};           // domains created so far
  struct NvtxDomainNames {
    uint64_t generation = 0;
    std::vector<std::pair<const void*, std::string>> names;  // "" for a handle not created
  };
  trace::PerThread<NvtxDomainNames> nvtx_domain_names_;
  /// The name of NVTX domain `domain` ("" for the default domain or one never created), valid
  /// until the calling thread's next call. No shared lock once the thread has asked for it.
  std::string_view nvtx_domain_name(const void* domain);

  // Activity conversion state (activity_mutex_).
  std::mutex activity_mutex_;
  KernelNameCache kernel_names_;
  NvtxStyleTracker nvtx_styles_;
  std::vector<trace::DeviceInfo> pending_devices_;   // device records whose chip is not known yet
  /// NVTX marker names (and domains) written so far and their ids, at most kMarkerNames, emptied
  /// when full: emit_nvtx names every op call apart ("aten::mm, seq = N"), and the writer's own
  /// string table keeps every string it interns for the whole run (126 bytes a range); a name seen
  /// again after the cache was emptied is defined once more (Writer::define).
  struct MarkerNameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, trace::StringId, MarkerNameHash, std::equal_to<>> marker_names_;
  static constexpr size_t kMarkerNames = 8192;
  /// marker_names_'s id of `s`, defined when not there (caller holds activity_mutex_); 0 after a
  /// failed write.
  trace::StringId marker_name(std::string_view s) noexcept;

  // Counters. No session lock is held across a CUPTI call here: the profilers are set up outside
  // the table's lock (context_table.h). chips_mutex_ guards chips_, chip_errors_ and config_ids_
  // (the activity thread reads the first two for DEVICE records); config_id() also writes a chip's
  // MetricConfig under it, once per chip. Lock order: activity_mutex_, then chips_mutex_, then the
  // writer's locks. Each ContextProfiler has its own mutex.
  ContextTable<ContextProfiler> profilers_;
  std::mutex chips_mutex_;
  std::map<uint32_t, std::string> chips_;                  // device id -> chip name
  std::map<uint32_t, std::exception_ptr> chip_errors_;     // device id -> why its chip is unknown
  std::map<std::string, uint32_t> config_ids_;             // chip -> MetricConfig id
  std::atomic<bool> counters_message_printed_{false};
  std::atomic<bool> waiting_decodes_off_{false};  // a decode on the flush thread failed once

  // Replay across steps. Lock order: step_cp_->mutex(), then step_mutex_.
  std::unique_ptr<StepRangeWindows> step_range_;     // RFPROF_REPLAY_RANGE: NVTX-range windows (thread-safe)
  std::mutex step_mutex_;
  std::unique_ptr<StepReplayCollector> step_;        // created at the first window
  std::shared_ptr<ContextProfiler> step_cp_;         // the context whose kernels form the step
  std::atomic<CUcontext> step_ctx_{nullptr};         // step_cp_'s context, readable without a lock
  std::atomic<int> step_role_{WindowRole::kDone};    // role of the open window
  std::atomic<bool> step_off_{false};                // counters failed: windows are recorded plainly
  std::atomic<int64_t> step_unlocked_launches_{0};   // launches in flight that entered unlocked
  bool step_plain_window_ = false;                   // the open window is an ordinary recorded one
  // Passes start when the window opens (RFPROF_STEP_PASS_START=window, or after a group that
  // missed exactly one range with passes started in the first launch's callback); step_mutex_ held.
  bool step_start_at_open_ = false;
  // Windows discarded because their kernels differed from their group's first window (not those
  // that launched none), and the first one's message: the end-of-run line. step_mutex_ held.
  uint64_t step_mismatched_ = 0;
  std::string step_first_mismatch_;
  std::atomic<bool> step_other_context_launch_{false};  // another context's launch inside a window
  std::atomic<uint64_t> step_windows_opened_{0};     // window-opening callbacks seen (2 per runtime start)

  // Flush thread.
  std::thread flush_thread_;
  std::thread activity_flush_thread_;
  std::mutex flush_mutex_;
  std::condition_variable flush_cv_;
  bool flush_stop_ = false;
  bool flush_now_ = false;  // request_flush(): flush before the period ends
};

/// The session of this process (nullptr before start_session succeeded).
Session* current_session() noexcept;

}  // namespace rf::collector
