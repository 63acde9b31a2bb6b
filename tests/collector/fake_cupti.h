// A fake of the CUPTI calls the collector session makes, so that collector/src/session*.cpp and
// range_profiler.cpp run without a GPU. Linked into a test executable, fake_cupti_api.cpp's
// definitions of cuptiSubscribe_v2, cuptiActivity*, cuptiRangeProfiler*, ... take precedence over
// libcupti's (an object file's definition beats a shared library's); the profiler host API
// (metric validation, config images, pass counts) stays the real libcupti.
//
// What the fake models, from the CUPTI 13 headers and guide:
//   - callbacks: one subscriber (a second one gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
//     and the first one's name); a callback runs only while enabled (cuptiEnableCallback).
//   - a runtime launch (cudaLaunchKernel) encloses the driver launch it makes (cuLaunchKernel, or
//     the _ptsz, cuLaunchKernelEx and cooperative calls, each with its own parameter struct);
//     both calls and the kernel record carry one correlation id, a bare driver launch its own. So
//     do cudaProfilerStart and the cuProfilerStart it makes. (The CUPTI headers leave this open;
//     the H100 traces of tests/data show it: tests/recorded, FakeModel.* checks both.)
//   - activity records of the enabled kinds wait until cuptiActivityFlushAll hands them over in
//     buffers the client gave (buffer-requested / buffer-completed callbacks). Records CUPTI had no
//     buffer space for are counted; cuptiActivityGetNumDroppedRecords gives the count since its
//     last call and resets it.
//   - a marker record's thread id is the system one (gettid) after
//     cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM), else pthread_self() (the default
//     type, cupti_activity.h).
//   - stream ids (cuptiGetStreamIdEx, kernel records): 7 for the legacy default stream, 20 for the
//     per-thread one, a number of the handle for others; the same in both places.
//   - a graph launch runs the kernels it is given: each a kernel record with the launch call's
//     correlation id, and a range of its own in a started Range Profiler (auto range).
//   - cuptiProfilerDeviceSupported and cuptiDeviceGetChipName answer per device index.
//   - the Range Profiler in auto range mode: every kernel launched on a context between Start
//     and Stop is one range, named by its index in the image ("0", "1", ..., as on the H100);
//     kernel replay completes every pass inside the launch; user replay
//     completes pass k at the k-th Stop, and isAllPassSubmitted at the last one.
//   - calls out of the order the real Range Profiler takes (Enable twice on a context, Start before
//     SetConfig or while started, Stop without Start, SetConfig or Decode between Start and Stop,
//     Decode before a user replay's last pass, any call on a disabled object) are refused and
//     written to stderr as "fake CUPTI misuse:", which fails a run_child test (fake_session.h).
//   - counter-data images: the fake writes its own layout behind NVIDIA's "LOPDATA" signature,
//     and the fake cuptiProfilerHostEvaluateToGpuValues evaluates metric m of the range made by
//     the launch with driver correlation id c to value(c, m) = c * 1000 + m, so a test can tell
//     which launch each RangeCounters came from.
//   - NVTX callbacks (CUPTI_CB_DOMAIN_NVTX, functionParams from generated_nvtx_meta.h): push/pop,
//     start/end (the range id in functionReturnValue), nvtxDomainCreateA (the new handle in
//     functionReturnValue) and the domain push/pop/start/end calls with an ASCII message.
//   - the driver (with load_fake_driver, fake_libcuda.cpp): each thread's current context (the
//     one it created or last launched on), cuCtxPushCurrent/PopCurrent, stream capture, the
//     memory clock and bus width; a driver call can be made to fail with a CUresult. Without it
//     the session's driver calls do nothing, as on a machine without a driver.
// Not modelled: a real GPU's timing, instrumentation, memory save/restore, the nodes of a graph
// other than its kernels, marker records of NVTX ranges other than nvtxRangePushA/Pop.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <nvtx3/nvToolsExt.h>  // nvtxDomainHandle_t (generated_nvtx_meta.h has no include guard)

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace rf::fake_cupti {

/// Forgets everything: subscriber, enabled callbacks and activity kinds, pending records,
/// contexts, Range Profiler state, injected failures. Correlation ids start again at 1.
void reset();

/// Every later call of CUPTI function `function` (e.g. "cuptiRangeProfilerEnable") returns
/// `result` without doing anything; CUPTI_SUCCESS removes the failure.
void fail(const std::string& function, CUptiResult result);

/// Every later call of CUPTI function `function` blocks its thread for good (a CUPTI call that
/// never returns: a hung driver, a lock held elsewhere); for a child process that ends by signal.
void hang(const std::string& function);

/// The next call of CUPTI function `function`, on any thread, first runs `hook` on that thread
/// (outside the fake's own lock), once: what another thread does while a call of the session is
/// on its way (e.g. cuptiGetDeviceId, a context's first Range Profiler set-up inside a launch).
void before_next_call(const std::string& function, std::function<void()> hook);

/// cuptiSubscribe_v2 then refuses with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and names
/// `name` as the subscriber already attached (what CUPTI does when nsys or ncu is there).
void set_other_subscriber(const std::string& name);

/// The subscriber's callback and its userdata (null when none): for tests and benchmarks that
/// call it directly, without the fake's own work per launch.
std::pair<CUpti_CallbackFunc, void*> subscriber();
/// The name rfprof subscribed with ("" when not subscribed).
std::string subscriber_name();
/// True when the callback (domain, cbid) is enabled for the current subscriber.
bool callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid);
/// True when activity kind `kind` is enabled.
bool activity_enabled(CUpti_ActivityKind kind);

/// Passes a user-replay configuration needs (the host API's pass count for the metrics; 2 for
/// the default roofline set on GH100). Default 2.
void set_passes(uint32_t passes);
/// With `misses`, a user-replay pass started inside a launch's callbacks does not profile that
/// launch (a CUPTI that takes only the launches after Start returned); default false, the launch
/// is profiled, as kernel replay's launches are on the H100.
void set_pass_start_in_a_launch_misses_it(bool misses);
/// Chip name cuptiDeviceGetChipName gives every device. Default "GH100".
void set_chip(const std::string& chip);
/// Chip name of device `device` alone (instead of set_chip's).
void set_device_chip(uint32_t device, const std::string& chip);
/// cuptiProfilerDeviceSupported for device `device` reports `level` in field `field` ("sli",
/// "vGpu", "confidentialCompute", "cmp", "wsl" or "architecture"), and isSupported is not
/// CUPTI_PROFILER_CONFIGURATION_SUPPORTED then.
void set_support(uint32_t device, const std::string& field, CUpti_Profiler_Support_Level level);
/// CUPTI had no buffer space for `n` more activity records: they are lost, and counted.
void drop_records(uint64_t n);

/// Creates CUDA context `index` (1, 2, ...) on device `device`: the RESOURCE CONTEXT_CREATED
/// callback, and a DEVICE activity record on the device's first context. Returns its handle.
CUcontext create_context(uint32_t index, uint32_t device = 0);
/// The RESOURCE CONTEXT_DESTROY_STARTING callback of `ctx`.
void destroy_context(CUcontext ctx);

/// The driver launch call of a (non-graph) Launch: each has its own callback id and parameter
/// struct (generated_cuda_meta.h); a cuLaunchKernelEx call passes grid, block, shared memory and
/// stream in a CUlaunchConfig. _ptsz: the per-thread default stream's variant.
enum class DriverCall { kLaunchKernel, kLaunchKernelPtsz, kLaunchKernelEx, kLaunchKernelExPtsz, kCooperative,
                        kCooperativePtsz };

/// One kernel launch, as the application's call would make CUPTI see it.
struct Launch {
  CUcontext ctx = nullptr;
  std::string kernel = "_Z6kernelPf";  ///< mangled symbol name
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {32, 1, 1};
  unsigned shared_bytes = 0;
  CUresult result = CUDA_SUCCESS;  ///< what the driver's launch call returns
  bool through_runtime = true;     ///< inside cudaLaunchKernel (else a bare cuLaunchKernel)
  bool graph = false;              ///< cuGraphLaunch (no symbol, no grid)
  std::vector<std::string> graph_kernels = {};  ///< the kernels a graph launch runs, in order
  uint64_t duration_ns = 1000;     ///< the kernel record's end - start
  /// No callbacks: a kernel CUPTI profiles and records but whose launch the session never sees
  /// (what a launch path rfprof does not subscribe to would look like).
  bool silent = false;
  CUstream stream = nullptr;       ///< cuLaunchKernel's hStream
  DriverCall call = DriverCall::kLaunchKernel;  ///< the driver call and, through the runtime, its runtime call
  /// Run between the driver call's entry callback and the kernel (its range, its record): what
  /// the launching thread does there is the driver's own time inside the launch call.
  std::function<void()> after_enter = {};
};
/// Makes `launch`'s callbacks (runtime entry, driver entry, driver exit, runtime exit) and, when
/// the launch succeeded and its stream is not capturing, its kernel record and its range in a
/// started Range Profiler.
/// Returns the driver call's correlation id (the one LaunchApi and RangeCounters carry).
uint32_t launch(const Launch& launch);

/// Launches made by calling the subscriber's callback directly, exactly as CUPTI calls it for a
/// launch through the runtime (runtime entry, driver entry, driver exit, runtime exit), with none
/// of the fake's own work: no kernel record, no range, no lock. For measuring what the session's
/// callbacks cost (time, allocations). Not thread-safe: one per thread.
class DirectLaunch {
 public:
  /// Launches of `kernel` (grid x `grid_x`, block x `block_x`) on `ctx`; binds the subscriber
  /// now (ok() is false without one).
  DirectLaunch(CUcontext ctx, const char* kernel, unsigned grid_x, unsigned block_x);
  DirectLaunch(const DirectLaunch&) = delete;
  DirectLaunch& operator=(const DirectLaunch&) = delete;
  bool ok() const noexcept { return fn_ != nullptr; }
  /// One launch with correlation id `id` (the runtime call's and the driver call's).
  void operator()(uint32_t id);

 private:
  CUpti_CallbackFunc fn_ = nullptr;
  void* user_ = nullptr;
  cuLaunchKernel_params params_{};
  CUresult driver_result_ = CUDA_SUCCESS;
  int runtime_result_ = 0;
  CUpti_CallbackData runtime_{}, driver_{};
};

/// nvtxRangePushA / nvtxRangePop (and nvtxRangeStartA / nvtxRangeEnd) by calling the subscriber's
/// NVTX callback directly, with none of the fake's own work (no marker record, no lock): for
/// measuring what the session's NVTX callbacks cost. Not thread-safe: one per thread.
class DirectNvtx {
 public:
  /// Ranges in `domain` (nvtxDomainRangePushEx / nvtxDomainRangePop, nvtxDomainRangeStartEx /
  /// nvtxDomainRangeEnd; from nvtx_domain_create), or, null, in the default domain
  /// (nvtxRangePushA / nvtxRangePop, nvtxRangeStartA / nvtxRangeEnd).
  explicit DirectNvtx(nvtxDomainHandle_t domain = nullptr);
  bool ok() const noexcept { return fn_ != nullptr; }
  /// Pushes a range named `message`, which must outlive the call.
  void push(const char* message);
  void pop();
  /// Starts a range named `message` as if NVTX returned range id `id` (the caller's: the fake's
  /// own counter is not touched), and ends range `id`.
  void start(const char* message, uint64_t id);
  void end(uint64_t id);

 private:
  CUpti_CallbackFunc fn_ = nullptr;
  void* user_ = nullptr;
  nvtxDomainHandle_t domain_ = nullptr;
};

/// cudaProfilerStart / cudaProfilerStop on `ctx` (each enclosing the driver call it makes).
void profiler_start(CUcontext ctx);
void profiler_stop(CUcontext ctx);

/// An NVTX callback (CUPTI_CB_DOMAIN_NVTX) with `params` as functionParams, and an NVTX marker
/// record: nvtxRangePushA(`message`) / nvtxRangePop().
void nvtx_push(const std::string& message);
void nvtx_pop();
/// nvtxRangeStartA(`message`) (returns the range id, 1, 2, ...) / nvtxRangeEnd(`id`): the NVTX
/// callbacks only.
uint64_t nvtx_start(const std::string& message);
void nvtx_end(uint64_t id);
/// nvtxRangePushEx / nvtxRangeStartEx (the default domain, an ASCII message in event attributes,
/// as NVTX's C++ API and many libraries call them): the NVTX callbacks only. Pop and end as above.
void nvtx_push_ex(const std::string& message);
uint64_t nvtx_start_ex(const std::string& message);
/// nvtxDomainCreateA(`name`): its callback; returns the new domain's handle.
nvtxDomainHandle_t nvtx_domain_create(const std::string& name);
/// nvtxDomainRangePushEx / nvtxDomainRangePop / nvtxDomainRangeStartEx / nvtxDomainRangeEnd in
/// `domain`, with an ASCII message: the NVTX callbacks only.
void nvtx_domain_push(nvtxDomainHandle_t domain, const std::string& message);
void nvtx_domain_pop(nvtxDomainHandle_t domain);
uint64_t nvtx_domain_start(nvtxDomainHandle_t domain, const std::string& message);
void nvtx_domain_end(nvtxDomainHandle_t domain, uint64_t id);

/// A device memory allocation (`allocation`) or release of `bytes` at `address` on `ctx`: a
/// MEMORY2 activity record (CUpti_ActivityMemory4) when that kind is enabled.
void memory(CUcontext ctx, bool allocation, uint64_t address, uint64_t bytes);

/// The value fake evaluation gives metric `metric` of the range of driver correlation id `cid`.
inline double value(uint32_t cid, size_t metric) { return cid * 1000.0 + static_cast<double>(metric); }

/// With the fake driver loaded (load_fake_driver): makes `ctx` the calling thread's current
/// context, as cudaSetDevice would; create_context and launch do it for their context. Without
/// it, nothing (the session's driver calls then do nothing, as on a machine without a driver).
void set_current_context(CUcontext ctx);
/// Loads the fake driver (tests/collector/fake_libcuda.cpp, libcuda.so.1) at `path`, as the
/// application's CUDA runtime would load the real one. Returns false if it cannot be loaded.
bool load_fake_driver(const char* path);
/// With the fake driver: cuStreamIsCapturing says `stream` is capturing into a CUDA graph.
void set_capturing_stream(CUstream stream);
/// With the fake driver: cuCtxPushCurrent calls so far (0 without it).
uint64_t context_pushes();
/// With the fake driver: the calling thread's current context (cuCtxGetCurrent); null without it.
CUcontext current_context();
/// With the fake driver: the application's own cuCtxPushCurrent(`ctx`) on the calling thread.
void push_context(CUcontext ctx);
/// With the fake driver: every later call of driver function `function` ("cuCtxPushCurrent",
/// "cuStreamIsCapturing", "cuDeviceGetAttribute", "cuInit", "cuDeviceGetCount", "cuDeviceGet",
/// "cuDeviceGetName") returns `result` and does nothing;
/// CUDA_SUCCESS removes the failure.
void fail_driver(const std::string& function, CUresult result);
/// With the fake driver: cuDeviceGetCount reports one device per name, cuDeviceGetName names
/// device i `names[i]` (default: one device, "NVIDIA H100 80GB HBM3"). cuDeviceGet takes any
/// ordinal from 0 to 7 all the same: the session asks it for the devices of the fake's contexts.
void set_driver_devices(const std::vector<std::string>& names);
/// With the fake driver: cuDeviceGetAttribute gives `value` for `attr` (on any device).
void set_device_attribute(CUdevice_attribute attr, int value);
/// Range Profiler calls (Start, Stop, DecodeData, Disable) made while their context was not the
/// calling thread's current one (with the fake driver loaded; 0 without it).
uint64_t calls_off_context();

/// Range Profiler calls seen so far (cuptiRangeProfilerStart, ...), by function name.
uint64_t calls(const std::string& function);
/// Calls the real CUPTI would refuse (Enable twice, Start/Stop out of order, Decode before the last
/// user-replay pass, calls on a disabled object), in this process; each also wrote a
/// "fake CUPTI misuse:" line to stderr. Not reset by reset().
uint64_t misuses();

}  // namespace rf::fake_cupti
