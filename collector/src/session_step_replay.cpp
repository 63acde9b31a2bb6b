// Replay across steps in the session: the Range Profiler in user replay, one pass per profiling
// window, the group's counters attached to its uninstrumented timing window (the decisions are
// StepReplayCollector's, step_replay_collector.h; docs/step-replay.md).
// Lock order: the step context's ContextProfiler::mutex(), then step_mutex_. The profiler mutex is
// only ever waited for with a time limit here, so a launch whose exit callback never comes cannot
// hang a window change.
#include <chrono>
#include <cstdio>
#include <thread>

#include "driver_shim.h"
#include "session_impl.h"

namespace rf::collector {
namespace {

constexpr std::chrono::seconds kLockWait{10};
/// How long a pass waits for launches that entered before its window opened: a launch call
/// returns in microseconds, so only a launch blocked in the driver waits this long.
constexpr std::chrono::milliseconds kUnlockedLaunchWait{500};

}  // namespace

void Session::step_failed(const std::string& detail, int cupti_result) noexcept {
  if (step_off_.exchange(true)) return;
  step_role_.store(WindowRole::kDone);
  counters_unavailable(0, classify_counters_failure(cupti_result),
                       "replay across steps: " + detail + "; windows are recorded without counters");
}

void Session::open_plain_window_locked(uint32_t cbid) {
  if (launch_log_.open_window(now_ns(), cbid)) step_plain_window_ = true;  // nullopt: a duplicate
}

void Session::close_plain_window_locked(uint32_t cbid) {
  if (!step_plain_window_) return;
  step_plain_window_ = false;
  if (const std::optional<uint32_t> id = launch_log_.close_window())
    write(trace::ProfilingWindow{*id, false, now_ns(), cbid});
}

void Session::step_open_window(uint32_t cbid, CUcontext ctx) {
  step_windows_opened_.fetch_add(1, std::memory_order_relaxed);
  std::shared_ptr<ContextProfiler> cp;
  {
    std::lock_guard lock(step_mutex_);
    cp = step_cp_;
  }
  if (!cp && ctx && !step_off_.load()) cp = profiler_for(ctx);
  if (!cp || step_off_.load()) {  // no counters on this context: an ordinary recorded window
    std::lock_guard lock(step_mutex_);
    open_plain_window_locked(cbid);
    return;
  }
  std::unique_lock<std::timed_mutex> cp_lock(cp->mutex(), std::defer_lock);
  if (!cp_lock.try_lock_for(kLockWait)) {
    step_failed("a kernel launch held the context for " + std::to_string(kLockWait.count()) +
                    " s while a window opened",
                0);
    std::lock_guard lock(step_mutex_);
    open_plain_window_locked(cbid);
    return;
  }
  std::lock_guard lock(step_mutex_);
  if (step_off_.load()) {
    open_plain_window_locked(cbid);
    return;
  }
  if (!step_) {
    step_ = std::make_unique<StepReplayCollector>(static_cast<uint32_t>(cp->num_passes()),
                                                  options_.replay_groups, cp->max_ranges());
    step_cp_ = cp;
    step_ctx_.store(cp->context());
    step_start_at_open_ = options_.step_pass_start == StepPassStart::kWindowOpen;
  }
  const WindowRole role = step_->open_window();  // a second callback of the same start: unchanged
  if (role.kind == WindowRole::kTiming) (void)launch_log_.open_window(now_ns(), cbid);
  // Published before the pass starts, under the profiler's lock: a launch on another thread that
  // sees the window open waits for the lock and then finds the pass started. Published after the
  // Start, it could enter the started pass unlocked and make a range rfprof does not count.
  step_role_.store(role.kind);
  if (role.kind == WindowRole::kPass && step_start_at_open_ && !cp->started()) {
    // As NVIDIA's range_profiling sample orders it: Start, then the launches. The opening
    // thread (cudaProfilerStart, an NVTX push) need not have the step context current.
    const std::string where =
        "cuptiRangeProfilerStart on device " + std::to_string(cp->device_id()) + " (" + cp->chip() + ") when a window opened: ";
    step_wait_for_unlocked_launches();
    try {
      driver::ScopedContext scope(cp->context());
      cp->start(0);
    } catch (const CuptiError& e) {
      step_failed(where + detail_of(e), static_cast<int>(e.result()));  // the role becomes kDone
    } catch (const std::exception& e) {
      step_failed(where + detail_of(e), 0);
    }
  }
}

void Session::step_wait_for_unlocked_launches() noexcept {
  const auto deadline = std::chrono::steady_clock::now() + kUnlockedLaunchWait;
  for (int spins = 0; step_unlocked_launches_.load() > 0 && std::chrono::steady_clock::now() < deadline; ++spins) {
    if (spins < 64) std::this_thread::yield();
    else std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

std::shared_ptr<ContextProfiler> Session::step_launch_enter(CUcontext ctx, bool& unlocked) {
  unlocked = false;
  if (step_off_.load()) return nullptr;
  // Another context's kernel runs in no pass of the step's: not counted, so a thread launching
  // steadily on a second GPU never holds a pass start for kUnlockedLaunchWait.
  if (const CUcontext step_ctx = step_ctx_.load(); step_ctx && step_ctx != ctx) {
    // Said at the end if no group was collected (tensors on another GPU than the current one).
    // Loaded first: one store per run, no contention on a second GPU's launches.
    if (step_role_.load(std::memory_order_relaxed) != WindowRole::kDone &&
        !step_other_context_launch_.load(std::memory_order_relaxed))
      step_other_context_launch_.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  // Counted before the role is read, as a window's opener publishes the role before it reads the
  // count (both sequentially consistent): either this launch sees the window open and takes the
  // lock, or the pass waits for this launch's exit before it starts.
  step_unlocked_launches_.fetch_add(1);
  unlocked = true;
  if (step_role_.load() == WindowRole::kDone || step_off_.load()) return nullptr;
  std::shared_ptr<ContextProfiler> cp = step_cp_;  // written once, before any role but kDone
  if (!cp) return nullptr;
  step_unlocked_launches_.fetch_sub(1);
  unlocked = false;
  if (cp->context() != ctx) return nullptr;  // the step's context became known after the check above
  cp->mutex().lock();
  const int role = step_role_.load();  // the window may have closed while this thread waited
  if (role == WindowRole::kDone || step_off_.load()) {
    // Counted again before the lock is released: the next window's pass starts under this lock,
    // after its opener published the role, so it waits for this launch instead of letting its
    // kernel make a range no launch of the pass accounts for.
    step_unlocked_launches_.fetch_add(1);
    unlocked = true;
    cp->mutex().unlock();
    return nullptr;
  }
  if (role == WindowRole::kPass && !cp->started()) {
    // Built only on failure: the pass starts in a launch callback, which allocates nothing.
    auto where = [&] {
      return "cuptiRangeProfilerStart on device " + std::to_string(cp->device_id()) + " (" + cp->chip() + "): ";
    };
    step_wait_for_unlocked_launches();
    try {
      cp->start(0);  // in the launch's entry callback: its context is current
    } catch (const CuptiError& e) {
      cp->mutex().unlock();
      step_failed(where() + detail_of(e), static_cast<int>(e.result()));
      return nullptr;
    } catch (const std::exception& e) {
      cp->mutex().unlock();
      step_failed(where() + detail_of(e), 0);
      return nullptr;
    }
  }
  return cp;
}

void Session::step_launch_exit(const LaunchIdentity& launch, uint32_t correlation_id, uint64_t thread) {
  std::lock_guard lock(step_mutex_);
  if (step_) step_->on_launch(launch, correlation_id, thread);
}

void Session::step_stop_abandoned_pass(ContextProfiler& cp) noexcept {
  if (step_off_.load() && cp.started()) cp.disable();  // cuptiRangeProfilerStop, then Disable
}

void Session::step_close_window(uint32_t cbid) {
  std::shared_ptr<ContextProfiler> cp;
  {
    std::lock_guard lock(step_mutex_);
    cp = step_cp_;
    if (!cp) {
      close_plain_window_locked(cbid);
      return;
    }
  }
  std::unique_lock<std::timed_mutex> cp_lock(cp->mutex(), std::defer_lock);
  if (!cp_lock.try_lock_for(kLockWait)) {
    step_failed("a kernel launch held the context for " + std::to_string(kLockWait.count()) +
                    " s while a window closed",
                0);
    std::lock_guard lock(step_mutex_);
    close_plain_window_locked(cbid);
    if (step_ && step_->current().kind == WindowRole::kTiming) {
      (void)step_->close_window();
      if (const std::optional<uint32_t> id = launch_log_.close_window())
        write(trace::ProfilingWindow{*id, false, now_ns(), cbid});
    }
    return;
  }
  std::lock_guard lock(step_mutex_);
  const std::string device = "device " + std::to_string(cp->device_id()) + " (" + cp->chip() + ")";
  auto stop_and_disable = [&]() {
    driver::ScopedContext scope(cp->context());  // as the samples disable: the context current
    try {
      if (cp->started()) (void)cp->stop_pass();
    } catch (...) {
    }
    cp->disable();
  };
  if (step_plain_window_ || !step_) {  // opened after replay across steps stepped aside
    close_plain_window_locked(cbid);
    if (step_off_.load()) stop_and_disable();
    return;
  }
  if (step_off_.load()) {
    // Stepped aside while this window was open (its pass could not start, say): its launches
    // were not followed, so its verdict would be a false "discarded". Its timing window, if it
    // was one, is closed as recorded.
    const bool timing = step_->current().kind == WindowRole::kTiming;
    if (step_->close_window().verdict.kind != WindowVerdict::kIgnored && timing)
      if (const std::optional<uint32_t> id = launch_log_.close_window())
        write(trace::ProfilingWindow{*id, false, now_ns(), cbid});
    stop_and_disable();
    return;
  }
  const WindowRole role = step_->current();
  // The pass is stopped first (always, so no pass is left running): CUPTI's isAllPassSubmitted,
  // not the host API's plan, decides whether the group's passes are complete, as NVIDIA's
  // range_profiling sample loops Start/Stop until it is set.
  std::optional<bool> all_submitted;
  try {
    driver::ScopedContext scope(cp->context());
    if (cp->started()) all_submitted = cp->stop_pass();
  } catch (const CuptiError& e) {
    step_failed("ending pass " + std::to_string(role.pass) + " on " + device + ": " + detail_of(e),
                static_cast<int>(e.result()));
  }
  // Only now, the pass stopped: a launch on another thread that saw the window open waits for the
  // profiler's lock (held here) and then sees no window. Before the Stop it could slip into the
  // pass unlocked and make a range rfprof does not count.
  step_role_.store(WindowRole::kDone);
  StepWindowClosed closed = step_->close_window(all_submitted);
  if (closed.verdict.kind == WindowVerdict::kIgnored) return;  // the second callback of one stop
  std::optional<uint32_t> timing_window;
  if (role.kind == WindowRole::kTiming) timing_window = launch_log_.close_window();
  // What CUPTI said of the passes, as it said it: whether passIndex is the pass just ended or the
  // next one is undocumented for the Range Profiler (docs/step-replay.md).
  auto cupti_passes = [&] {
    return "cuptiRangeProfilerStop after pass window " + std::to_string(role.pass + 1) + " (" +
           std::to_string(step_->replay().planned_passes()) + " planned) reported passIndex " +
           std::to_string(cp->last_stop_pass_index()) + ", isAllPassSubmitted " +
           (all_submitted.value_or(false) ? "1" : "0");
  };
  if (!closed.verdict.passes_note.empty())
    write_error(trace::ErrorCode::kRangeLaunchMismatch, 0, step_->replay().planned_passes(), role.pass + 1,
                "replay across steps on " + device + ", group " + std::to_string(role.group) + ": " +
                    closed.verdict.passes_note + " (" + cupti_passes() + ")");

  try {
    driver::ScopedContext scope(cp->context());
    if (!step_off_.load() && closed.decode) {
      // DecodeData only once CUPTI says every pass was submitted; then the Range Profiler is
      // disabled, as NVIDIA's range_profiling sample ends a user-replay session, and the timing
      // window runs without it. The next group's pass 0 enables it again.
      std::string why;
      // Read before counters_decoded, which restarts the group (and forgets its launches) on a
      // mismatch: the record's expected = launches, actual = ranges, as for kernel replay.
      const size_t launches = step_->replay().reference_size();
      size_t ranges = 0;
      if (all_submitted.value_or(false)) {
        DecodedImage image = cp->decode_passes(/*prepare_next=*/false);
        ranges = image.ranges.size();
        why = step_->counters_decoded(std::move(image.ranges), true, image.dropped_ranges);
        cp->disable();
      } else {
        why = step_->counters_decoded({}, false) + " (" + cupti_passes() + ")";
      }
      if (!why.empty()) {
        // One range short with the pass started in the first launch's entry callback: that launch
        // may have run before the pass took it. The next groups start their passes when the window
        // opens, as NVIDIA's range_profiling sample does (no document says which order user
        // replay needs; both are valid, so the switch costs nothing if another cause was at work).
        if (!step_start_at_open_ && all_submitted.value_or(false) && ranges + 1 == launches &&
            closed.give_up.empty() && step_->give_up_reason().empty()) {
          step_start_at_open_ = true;
          why += "; passes now start when the window opens, as with RFPROF_STEP_PASS_START=window";
        }
        write_error(trace::ErrorCode::kRangeLaunchMismatch, 0, launches, ranges,
                    "replay across steps on " + device + ", group " + std::to_string(role.group) + ": " + why);
        cp->disable();  // the next pass 0 starts on a fresh Range Profiler
        if (closed.give_up.empty()) closed.give_up = step_->give_up_reason();
      }
    }
    if (closed.reset_profiler) cp->disable();
  } catch (const CuptiError& e) {
    step_failed("decoding the passes on " + device + ": " + detail_of(e), static_cast<int>(e.result()));
  } catch (const std::exception& e) {
    step_failed("decoding the passes on " + device + ": " + detail_of(e), 0);
  }
  if (closed.verdict.kind == WindowVerdict::kDiscarded) {
    const std::string what =
        "a " + (role.kind == WindowRole::kPass ? "pass " + std::to_string(role.pass) : std::string("timing")) +
        " window was discarded: " + closed.verdict.message;
    if (!closed.verdict.empty && step_mismatched_++ == 0) step_first_mismatch_ = what;  // end-of-run line
    write_error(trace::ErrorCode::kRangeLaunchMismatch, timing_window.value_or(0),
                step_->replay().reference_size(), 0, "replay across steps on " + device + ": " + what);
  }
  if (!closed.give_up.empty()) step_failed(closed.give_up, 0);
  for (StepRangeCounters& c : closed.counters) {
    trace::RangeCounters rc;
    rc.config_id = cp->config_id();
    rc.window_id = timing_window.value_or(0);
    rc.range_index = c.range_index;
    rc.correlation_id = c.correlation_id;
    rc.range_name = intern(c.range.range_name);
    rc.values = std::move(c.range.values);
    write(rc);
  }
  if (timing_window) write(trace::ProfilingWindow{*timing_window, false, now_ns(), cbid});
  // Every group collected, or stepped aside: the Range Profiler is not needed any more.
  if (step_->replay().done() || step_off_.load()) stop_and_disable();
}

void Session::step_context_destroyed(const ContextProfiler& cp) noexcept {
  // Called with cp's mutex held (drop_context).
  bool was_step_context = false;
  {
    std::lock_guard lock(step_mutex_);
    was_step_context = step_cp_.get() == &cp;
  }
  if (was_step_context) step_failed("the CUDA context of the steps was destroyed", 0);
}

void Session::step_finish() noexcept {
  try {
    std::lock_guard lock(step_mutex_);
    if (step_off_.load()) return;
    if (step_ && step_->replay().groups_done() > 0) {
      // Counters were collected; windows discarded on the way because their kernels differed are
      // said once, here, as the trace's kRangeLaunchMismatch records say each of them (windows
      // without kernels, such as warm-up steps outside the training loop, are not).
      if (step_mismatched_ > 0)
        print_line(step_discarded_line(step_mismatched_, step_->replay().groups_done(), step_first_mismatch_));
      // RFPROF_REPLAY_GROUPS > 1 and the run ended inside a later group: said, not dropped silently.
      const StepReplay& replay = step_->replay();
      if (!replay.done()) {
        const std::string line = step_incomplete_group_line(replay.groups_done(), replay.passes_kept(),
                                                            replay.passes(), step_->counters_pending());
        if (!line.empty()) {
          print_line(line);
          write_error(trace::ErrorCode::kCountersUnavailable, 0, replay.passes(), replay.passes_kept(), line);
        }
      }
      return;
    }
    StepEndState end;
    end.windows_opened = step_windows_opened_.load();
    end.replay_range = step_range_ ? options_.replay_range : std::string();
    end.nvtx_calls_seen = step_range_ ? step_range_->ranges_seen() : 0;
    if (step_cp_) end.step_device = step_cp_->device_id();
    end.other_context_launches = step_other_context_launch_.load();
    if (step_) end.group = StepEndState::Group{step_->replay().passes(), step_->replay().discarded()};
    else if (end.windows_opened > 0 && counters_message_printed_.load()) return;  // counters_unavailable said why
    const std::string line = step_no_counters_line(end);
    if (!counters_message_printed_.exchange(true)) print_line(line);
    write_error(trace::ErrorCode::kCountersUnavailable, 0, 0, 0, line);
  } catch (...) {
  }
}

}  // namespace rf::collector
