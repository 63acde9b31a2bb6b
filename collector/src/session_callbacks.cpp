// CUPTI callbacks: kernel launches (LaunchApi), profiling windows, contexts, NVTX range starts.
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "driver_shim.h"
#include "rfprof/collector/messages.h"
#include "rfprof/collector/thread_id.h"
#include "session_impl.h"

namespace rf::collector {
namespace {

// Driver launch APIs: one LaunchApi record each. Graph launches run many kernels per call.
constexpr CUpti_CallbackId kDriverLaunches[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
};

// Runtime launch APIs: only to learn the runtime correlation id of the driver launch they make
// (kernel records carry the runtime id when a kernel was launched through the runtime).
// __cudaLaunchKernel is what <<<...>>> compiles to with CUDA 13.
constexpr CUpti_CallbackId kRuntimeLaunches[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
};

// NVTX calls whose callbacks teach the push/pop versus start/end style (nvtx_style.h).
constexpr CUpti_CallbackId kNvtxStarts[] = {
    CUPTI_CBID_NVTX_nvtxRangeStartA, CUPTI_CBID_NVTX_nvtxRangeStartW,
    CUPTI_CBID_NVTX_nvtxRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx};
constexpr CUpti_CallbackId kNvtxPushes[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA, CUPTI_CBID_NVTX_nvtxRangePushW,
    CUPTI_CBID_NVTX_nvtxRangePushEx, CUPTI_CBID_NVTX_nvtxDomainRangePushEx};

template <size_t N>
bool in(const CUpti_CallbackId (&set)[N], CUpti_CallbackId cbid) {
  for (auto c : set)
    if (c == cbid) return true;
  return false;
}

bool is_graph(CUpti_CallbackId cbid) {
  return cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch ||
         cbid == CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz;
}

/// The launch of the current driver launch call of this thread, from API entry to exit.
struct ThreadLaunch {
  bool active = false;
  LaunchTicket ticket;  // LaunchLog's decision at entry (inside a window, which one)
  uint32_t correlation_id = 0;
  uint32_t runtime_correlation_id = 0;
  uint64_t start_ns = 0;
  bool step = false;  // part of the step sequence (replay across steps): identity at exit
  bool step_unlocked = false;  // counted in Session::step_unlocked_launches_ until its exit
  // When the entry callback's counters work (set-up, decode, enable, start) was done and the
  // driver's launch call, with the Range Profiler started, began (0: no counters).
  uint64_t counters_from_ns = 0;
};
thread_local ThreadLaunch t_launch;
// The context profiler whose mutex this thread holds from launch entry to exit (or null).
thread_local std::shared_ptr<ContextProfiler> t_locked;
// Correlation id of the runtime launch call this thread is in (0: none).
thread_local uint32_t t_runtime_correlation_id = 0;

template <typename P>
void dims_from(const P* p, int32_t (&grid)[3], int32_t (&block)[3], uint32_t* shared_bytes) {
  if (!p) return;
  if (shared_bytes) *shared_bytes = p->sharedMemBytes;
  grid[0] = static_cast<int32_t>(p->gridDimX);
  grid[1] = static_cast<int32_t>(p->gridDimY);
  grid[2] = static_cast<int32_t>(p->gridDimZ);
  block[0] = static_cast<int32_t>(p->blockDimX);
  block[1] = static_cast<int32_t>(p->blockDimY);
  block[2] = static_cast<int32_t>(p->blockDimZ);
}

/// Grid and block of a driver launch, from its parameter struct (generated_cuda_meta.h), and its
/// dynamic shared memory (bytes) into `shared_bytes` when given (left as is for a graph launch).
void launch_dims(CUpti_CallbackId cbid, const void* params, int32_t (&grid)[3], int32_t (&block)[3],
                 uint32_t* shared_bytes = nullptr) {
  if (!params) return;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      dims_from(static_cast<const cuLaunchKernel_params*>(params), grid, block, shared_bytes);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      dims_from(static_cast<const cuLaunchKernel_ptsz_params*>(params), grid, block, shared_bytes);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
      dims_from(static_cast<const cuLaunchKernelEx_params*>(params)->config, grid, block, shared_bytes);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
      dims_from(static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config, grid, block, shared_bytes);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      dims_from(static_cast<const cuLaunchCooperativeKernel_params*>(params), grid, block, shared_bytes);
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      dims_from(static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params), grid, block, shared_bytes);
      break;
    default:
      break;  // graph launches: no grid or block
  }
}

/// The stream a driver launch goes to (CU_STREAM_PER_THREAD for the default stream of a _ptsz
/// call), from its parameter struct; `per_thread_call`, when given, tells whether it is a _ptsz call.
CUstream launch_stream(CUpti_CallbackId cbid, const void* params, bool* per_thread_call = nullptr) {
  if (!params) return nullptr;
  CUstream s = nullptr;
  bool per_thread = false;
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
      s = static_cast<const cuLaunchKernel_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
      s = static_cast<const cuLaunchKernel_ptsz_params*>(params)->hStream;
      per_thread = true;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx: {
      const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_params*>(params)->config;
      s = c ? c->hStream : nullptr;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz: {
      const CUlaunchConfig* c = static_cast<const cuLaunchKernelEx_ptsz_params*>(params)->config;
      s = c ? c->hStream : nullptr;
      per_thread = true;
      break;
    }
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
      s = static_cast<const cuLaunchCooperativeKernel_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      s = static_cast<const cuLaunchCooperativeKernel_ptsz_params*>(params)->hStream;
      per_thread = true;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
      s = static_cast<const cuGraphLaunch_params*>(params)->hStream;
      break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz:
      s = static_cast<const cuGraphLaunch_ptsz_params*>(params)->hStream;
      per_thread = true;
      break;
    default:
      break;
  }
  if (per_thread_call) *per_thread_call = per_thread;
  if (!s && per_thread) s = CU_STREAM_PER_THREAD;
  return s;
}

/// What LaunchSelection counts of a driver launch, from the callback: the context id (the one the
/// activity records carry), the symbol ("" for a graph launch), grid, block, shared memory.
CountedLaunch counted_launch(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  CountedLaunch id;
  id.context_id = cb->contextUid;
  id.kernel = cb->symbolName ? cb->symbolName : "";
  int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
  launch_dims(cbid, cb->functionParams, grid, block, &id.shared_bytes);
  for (int i = 0; i < 3; ++i) {
    id.grid[i] = grid[i];
    id.block[i] = block[i];
  }
  return id;
}

/// Releases the context this thread still holds from a launch whose exit callback never came.
void release_stale_launch_lock() {
  if (t_locked) {
    t_locked->mutex().unlock();
    t_locked.reset();
  }
}

}  // namespace

void Session::release_this_threads_stale_launch_lock() noexcept { release_stale_launch_lock(); }

void Session::enable_callbacks() {
  CUpti_SubscriberHandle sub = subscriber_.get();
  auto enable = [&](CUpti_CallbackDomain d, CUpti_CallbackId c) { callbacks_.emplace_back(sub, d, c); };
  for (auto c : kDriverLaunches) enable(CUPTI_CB_DOMAIN_DRIVER_API, c);
  if (!options_.disable_profiler_start_stop) {  // ncu's --disable-profiler-start-stop: never subscribed
    enable(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart);
    enable(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop);
  }
  for (auto c : kRuntimeLaunches) enable(CUPTI_CB_DOMAIN_RUNTIME_API, c);
  if (!options_.disable_profiler_start_stop) {
    enable(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000);
    enable(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
  }
  enable(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
  enable(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  // NVTX callbacks only refine the push/pop versus start/end style: optional.
  try {
    for (auto c : kNvtxStarts) enable(CUPTI_CB_DOMAIN_NVTX, c);
    for (auto c : kNvtxPushes) enable(CUPTI_CB_DOMAIN_NVTX, c);
  } catch (const CuptiError&) {
    // Styles stay "unknown" (nvtx_style.h); everything else is collected.
  }
  enable_nvtx_filter_callbacks();  // NVTX rules need these: a failure here stops the session
}

void Session::on_callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) noexcept {
  static std::atomic<bool> reported{false};
  try {
    if (state() == State::kDisabled || !data) return;  // forked child: touch nothing
    switch (domain) {
      case CUPTI_CB_DOMAIN_DRIVER_API:
        on_driver_api(cbid, static_cast<const CUpti_CallbackData*>(data));
        break;
      case CUPTI_CB_DOMAIN_RUNTIME_API:
        on_runtime_api(cbid, static_cast<const CUpti_CallbackData*>(data));
        break;
      case CUPTI_CB_DOMAIN_RESOURCE:
        if (running()) on_resource(cbid, data);
        break;
      case CUPTI_CB_DOMAIN_NVTX:
        if (running()) on_nvtx(cbid, data);
        break;
      default:
        break;
    }
  } catch (const std::exception& e) {
    if (!reported.exchange(true)) {
      char head[96];  // no std::string in a handler: it may be out of memory
      std::snprintf(head, sizeof head, "rfprof: internal error in a CUPTI callback (domain %d, cbid %u): ",
                    static_cast<int>(domain), cbid);
      print_line(head, e.what());
    }
  } catch (...) {
    if (!reported.exchange(true)) std::fprintf(stderr, "rfprof: internal error in a CUPTI callback\n");
  }
}

void Session::on_runtime_api(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  const bool enter = cb->callbackSite == CUPTI_API_ENTER;
  if (in(kRuntimeLaunches, cbid)) {
    t_runtime_correlation_id = enter ? cb->correlationId : 0;
  } else if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000) {
    if (!enter && running()) open_window(cbid, cb->context);  // launches after the call are inside
  } else if (cbid == CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) {
    if (enter && running()) close_window(cbid);  // nothing after the call is inside
  }
}

void Session::on_driver_api(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  const bool enter = cb->callbackSite == CUPTI_API_ENTER;
  if (in(kDriverLaunches, cbid)) {
    // rfprof's own work per launch callback: every callback in counters mode (a launch there costs
    // milliseconds of replay), one in kCallbackSampleEvery per thread otherwise.
    const bool timed_callback = options_.mode == trace::CollectionMode::kCounters || sample_this_callback();
    ScopedOverhead timed(timed_callback ? &process_overhead() : nullptr, OverheadPhase::kLaunchCallbacks);
    if (enter) {
      const State s = state();
      if (s == State::kRunning)
        on_launch_enter(cbid, cb);
      else if (options_.mode == trace::CollectionMode::kCounters && (s == State::kFinishing || s == State::kFinished))
        on_launch_enter_finishing(cb);
    } else {
      on_launch_exit(cbid, cb);  // always: it releases what the entry took
    }
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStart) {
    if (!enter && running()) open_window(cbid, cb->context);
  } else if (cbid == CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) {
    if (enter && running()) close_window(cbid);
  }
}

void Session::forget_previous_launch() {
  release_stale_launch_lock();  // an exit callback never came: do not keep the context locked
  launch_log_.exit(t_launch.ticket, std::nullopt);  // the previous launch's exit never came
  if (t_launch.step_unlocked) step_unlocked_launch_exit();
  t_launch = ThreadLaunch{};
}

void Session::on_launch_enter(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  forget_previous_launch();
  ThreadLaunch& t = t_launch;
  // A launch into a stream being captured into a CUDA graph runs no kernel now (its kernels run,
  // under the graph launch's correlation id, when the graph is launched): not a launch to record.
  if (driver::is_capturing(launch_stream(cbid, cb->functionParams))) return;
  t.active = true;
  t.correlation_id = cb->correlationId;
  t.runtime_correlation_id = t_runtime_correlation_id;
  t.start_ns = now_ns();
  const bool on_listed_device = !device_filter_ || device_filter_->selects(cb->context);
  const bool selected =
      on_listed_device &&
      (!launch_filter_ || launch_filter_->selects(cb->symbolName ? cb->symbolName : "", NvtxState::kCallingThread));
  if (selection_) {  // --kernel-id, --filter-mode, --launch-skip-before-match: counted inside windows
    t.ticket = launch_log_.enter_admitted(t.correlation_id, t.runtime_correlation_id, [&]() noexcept {
      // std::bad_alloc (a key's first counter, a thread's first answers): this launch is not
      // profiled, and the ticket and the kernel-record filter stay consistent.
      try {
        CountedLaunch id = counted_launch(cbid, cb);
        if (selection_->needs_device() && device_filter_) id.device = device_filter_->device(cb->context);
        if (selection_->needs_stream_id()) {  // 0 when CUPTI cannot tell: matches no stream id but 0
          bool per_thread = false;
          const CUstream stream = launch_stream(cbid, cb->functionParams, &per_thread);
          (void)cuptiGetStreamIdEx(cb->context, stream, per_thread ? 1 : 0, &id.stream_id);
        }
        if (kernel_id_names_) id.kernel_id_name_matches = kernel_id_names_->name_matches(id.kernel);
        return selection_->admit(id, selected);
      } catch (const std::exception&) {
        return false;
      }
    });
  } else {
    t.ticket = launch_log_.enter(t.correlation_id, t.runtime_correlation_id, selected);
  }
  if (step_mode()) {  // replay across steps: pass windows are not LaunchLog windows
    if (!cb->context) return;
    if (std::shared_ptr<ContextProfiler> cp = step_launch_enter(cb->context, t.step_unlocked)) {
      if (cp->started()) t.counters_from_ns = now_ns();
      t_locked = std::move(cp);
      t.step = true;
    }
    return;
  }
  if (!on_listed_device) return;  // --devices: no Range Profiler on a device never profiled
  if (!t.ticket.in_window) {
    // Outside windows no Range Profiler runs, except an image still started: one a launch filter
    // kept open in the window (-k, -s/-c, NVTX rules), or one a closing window has not stopped yet.
    // Two atomic reads in the common case (seq_cst: close_window counts before LaunchLog closes).
    if (filters_set_ || windows_closing_.load() != 0)
      stop_image_for_outside_launch(cb->context, /*finishing=*/!running());
    return;
  }
  const uint32_t window = t.ticket.window;
  if (options_.mode != trace::CollectionMode::kCounters || !cb->context) return;
  std::shared_ptr<ContextProfiler> cp = profiler_for(cb->context);
  if (!cp) return;
  // Held until the exit callback: launches on this context run one at a time, so the order of
  // LaunchRangeMap::record is the order of the ranges CUPTI writes (kernel replay serializes them).
  cp->mutex().lock();
  t_locked = cp;
  LaunchRangeMap& launches = cp->launches();
  if (cp->started()) {
    const uint64_t now = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                   std::chrono::steady_clock::now().time_since_epoch())
                                                   .count());
    const ImageState image{cp->window_id(), launches.size(), cp->max_ranges(), launches.has_graph(),
                           now - cp->started_at_ns()};
    // Decode before the image overflows, keep every graph launch in an image of its own so that
    // its unknowable range count spoils no other launch's counters, and decode at least every
    // flush interval so that a SIGKILL loses no older counters (docs/failure-modes.md).
    if (image_must_be_decoded(image, window, is_graph(cbid), uint64_t{options_.flush_ms} * 1000000u))
      flush_image(*cp);
  }
  // Its window closed (or finishing began) while this launch waited for the lock, and the closing
  // stopped the image: no image starts for a closed window, which nothing would decode and later
  // launches outside it would spoil (close_window publishes "closed" before it takes the lock).
  // The launch is recorded without counters.
  if (!cp->started() && running() && launch_log_.current_window() == window) {
    try {
      cp->start(window);
    } catch (const CuptiError& e) {
      counters_failed(cb->context, cp->device_id(), window, "cuptiRangeProfiler start on device " +
                                                 std::to_string(cp->device_id()) + " (" + cp->chip() +
                                                 "): " + e.what(),
                      static_cast<int>(e.result()));
      cp->stop_for_good();
      cp->mutex().unlock();
      t_locked.reset();
    }
  }
  if (t_locked && cp->started()) t.counters_from_ns = now_ns();
}

void Session::stop_image_for_outside_launch(CUcontext ctx, bool finishing) {
  if (options_.mode != trace::CollectionMode::kCounters || !ctx) return;
  std::shared_ptr<ContextProfiler> cp = profilers_.find(ctx);  // none set up: no image started
  if (!cp) return;
  if (!finishing) {
    cp->mutex().lock();
  } else if (!cp->mutex().try_lock_for(kExitLaunchWait)) {
    return;  // a launch stuck in flight holds it (flush_all_images gave up too): never hang here
  }
  t_locked = cp;
  // Decode what the image holds, so this kernel runs once with the profiler stopped; the next
  // launch in a window starts a fresh image.
  if (cp->started()) flush_image(*cp);
}

void Session::on_launch_enter_finishing(const CUpti_CallbackData* cb) {
  // Replay across steps too: a launch while finishing waits for the profiler's lock and stops a
  // pass still started, so that it never runs inside the pass while the finishing thread stops
  // and disables it (flush_image only stops a step context's pass).
  forget_previous_launch();  // t_launch not active: this launch's exit records nothing, only unlocks
  stop_image_for_outside_launch(cb->context, /*finishing=*/true);
}

void Session::on_launch_exit(CUpti_CallbackId cbid, const CUpti_CallbackData* cb) {
  std::shared_ptr<ContextProfiler> cp = std::move(t_locked);
  t_locked.reset();
  ThreadLaunch t = t_launch;
  t_launch = ThreadLaunch{};
  if (t.step_unlocked) step_unlocked_launch_exit();
  struct Unlock {
    ContextProfiler* p;
    ~Unlock() {
      if (p) p->mutex().unlock();
    }
  } unlock{cp.get()};
  // The driver's launch call ran with the Range Profiler started on its context: kernel replay
  // (or a user-replay pass) happened inside it, after the entry callback's counters work.
  uint64_t exit_ns = 0;
  if (cp && cp->started() && t.active && t.counters_from_ns != 0) {
    exit_ns = now_ns();
    if (exit_ns >= t.counters_from_ns)
      process_overhead().add(OverheadPhase::kLaunchCounters, exit_ns - t.counters_from_ns);
  }
  if (cp && t.step) step_stop_abandoned_pass(*cp);
  const bool ok = cb->functionReturnValue &&
                  *static_cast<const CUresult*>(cb->functionReturnValue) == CUDA_SUCCESS;
  // In the timing window only recorded launches (inside the LaunchLog window) join the sequence:
  // one that raced the window's opening makes the window differ, and it is run again.
  if (t.active && t.step && ok && t.correlation_id == cb->correlationId &&
      (t.ticket.in_window || step_role_.load() != WindowRole::kTiming)) {
    LaunchIdentity identity;
    int32_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
    launch_dims(cbid, cb->functionParams, grid, block);
    identity.kernel = is_graph(cbid) ? kGraphLaunchName : (cb->symbolName ? cb->symbolName : "");
    for (int i = 0; i < 3; ++i) {
      identity.grid[i] = grid[i];
      identity.block[i] = block[i];
    }
    step_launch_exit(identity, t.correlation_id, current_thread_id());
  }
  if (!t.active || !t.ticket.in_window) return;
  const State s = state();
  // A failed launch ran no kernel and made no range: nothing to join, nothing written.
  if (t.correlation_id != cb->correlationId || (s != State::kRunning && s != State::kFinishing) || !ok) {
    launch_log_.exit(t.ticket, std::nullopt);
    return;
  }

  trace::LaunchApi rec;
  rec.correlation_id = t.correlation_id;
  rec.runtime_correlation_id = t.runtime_correlation_id;
  rec.domain = trace::ApiDomain::kDriver;
  rec.cbid = cbid;
  rec.thread_id = current_thread_id();
  rec.api_start_ns = t.start_ns;
  rec.api_end_ns = exit_ns != 0 ? exit_ns : now_ns();
  rec.is_graph = is_graph(cbid);
  launch_dims(cbid, cb->functionParams, rec.grid, rec.block);
  const std::string_view name = (!rec.is_graph && cb->symbolName) ? cb->symbolName : "";
  if (call_stacks_) rec.stack_id = call_stacks_->capture_and_intern();
  const bool counters = cp && cp->started() && cp->replay() == ReplayMode::kKernel;
  if (counters) {
    LaunchInfo info;
    info.correlation_id = t.correlation_id;
    for (int i = 0; i < 3; ++i) {
      info.grid[i] = rec.grid[i];
      info.block[i] = rec.block[i];
    }
    info.is_graph = rec.is_graph;
    info.kernel_name = std::string(name);  // counters mode only: no allocation in timing mode
    rec.launch_index = cp->launches().record(std::move(info));
  }
  // kernel_name, window_id and (timing mode) launch_index are LaunchLog's (launch_log.h).
  launch_log_.exit(t.ticket, rec, name, /*keep_index=*/counters);
}

void Session::open_window(uint32_t cbid, CUcontext ctx) {
  if (step_range_) return;  // the windows are NVTX ranges (feed_nvtx)
  release_stale_launch_lock();  // a window change waits for the launches in flight on the context
  if (step_mode()) return step_open_window(cbid, ctx);
  (void)launch_log_.open_window(now_ns(), cbid);  // nullopt: nested or duplicate start
}

void Session::close_window(uint32_t cbid) {
  if (step_range_) return;
  release_stale_launch_lock();
  if (step_mode()) return step_close_window(cbid);
  windows_closing_.fetch_add(1);  // before LaunchLog says "closed": see stop_image_for_outside_launch
  const std::optional<uint32_t> id = launch_log_.close_window();
  if (id) flush_all_images(/*at_exit=*/false);
  windows_closing_.fetch_sub(1);
  if (id) write(trace::ProfilingWindow{*id, false, now_ns(), cbid});
}

void Session::on_resource(CUpti_CallbackId cbid, const void* data) {
  const auto* r = static_cast<const CUpti_ResourceData*>(data);
  if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_CREATED) {
    uint32_t device = 0;
    if (cuptiGetDeviceId(r->context, &device) == CUPTI_SUCCESS) {
      (void)chip_of(device);
      write_pending_devices(/*all=*/false);
    }
    // --devices: no Range Profiler set-up on a device whose launches are never profiled.
    if (options_.mode == trace::CollectionMode::kCounters && (!device_filter_ || device_filter_->selects(r->context)))
      (void)profiler_for(r->context);
  } else if (cbid == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    // A lock this thread still holds is a launch whose exit callback never came (a destruction
    // cannot start inside this thread's launch call): released, or drop_context would wait on it.
    release_stale_launch_lock();
    drop_context(r->context);
    if (device_filter_) device_filter_->forget_contexts();  // the handle may come back for another device
  }
}

void Session::on_nvtx(CUpti_CallbackId cbid, const void* data) {
  const auto* n = static_cast<const CUpti_NvtxData*>(data);
  feed_nvtx(cbid, n);
  if (in(kNvtxStarts, cbid)) {
    // nvtxRangeId_t is uint64_t (nvToolsExt.h). Lock-free: the activity thread holds
    // activity_mutex_ while it writes the trace, which a start callback must never wait for.
    uint64_t id = n->functionReturnValue ? *static_cast<const uint64_t*>(n->functionReturnValue) : 0;
    nvtx_styles_.on_start_callback(id);
  } else if (in(kNvtxPushes, cbid)) {
    nvtx_styles_.on_push_callback();  // lock-free: a push/pop range per operator is common
  }
}

}  // namespace rf::collector
