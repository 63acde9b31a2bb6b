// The fake CUPTI of fake_cupti.h, the tests' side: contexts, launches, windows and NVTX ranges
// made through the subscribed callbacks, and the fake's state (fake_cupti_state.h). The CUPTI
// functions themselves are in fake_cupti_api.cpp, the direct callers in fake_cupti_direct.cpp.
#include "fake_cupti.h"
#include "fake_cupti_state.h"

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <generated_nvtx_meta.h>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace rf::fake_cupti {
namespace detail {

State g;

/// Counts a Range Profiler call made while `ctx` is not current (caller holds g.m).
void check_current(CUcontext ctx) {
  if (auto current = driver_fn<CUcontext (*)()>("rf_fake_cuda_current"))
    if (current() != ctx) ++g.off_context;
}

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::atomic<uint64_t> g_misuses{0};

CUptiResult misuse(const std::string& what, CUptiResult result) {
  g_misuses.fetch_add(1, std::memory_order_relaxed);
  std::fprintf(stderr, "fake CUPTI misuse: %s\n", what.c_str());
  return result;
}

Profiler* enabled(CUpti_RangeProfiler_Object* object) {
  for (const auto& [ctx, prof] : g.profilers)
    if (reinterpret_cast<CUpti_RangeProfiler_Object*>(prof) == object) return prof;
  return nullptr;
}

/// Counts the call and returns the injected failure, or CUPTI_SUCCESS; never returns for a
/// function given to hang().
CUptiResult enter(const char* function) {
  bool hangs = false;
  CUptiResult result = CUPTI_SUCCESS;
  std::function<void()> before;
  {
    std::lock_guard lock(g.m);
    ++g.calls[function];
    hangs = g.hangs.count(function) != 0;
    auto it = g.failures.find(function);
    if (it != g.failures.end()) result = it->second;
    if (auto b = g.before.find(function); b != g.before.end()) {
      before = std::move(b->second);
      g.before.erase(b);
    }
  }
  if (before) before();
  while (hangs) std::this_thread::sleep_for(std::chrono::hours(1));
  return result;
}

uint32_t stream_id(CUstream stream, bool per_thread) {
  if (per_thread && (!stream || stream == CU_STREAM_PER_THREAD)) return 20;  // the flag says which default
  if (!stream) return 7;
  return static_cast<uint32_t>((reinterpret_cast<uintptr_t>(stream) >> 4) & 0xffff);
}

const char* keep(const std::string& s) {  // caller holds g.m
  g.names.push_back(s);
  return g.names.back().c_str();
}

/// A marker record's thread id, of the type cuptiSetThreadIdType chose. Caller holds g.m.
uint32_t record_thread_id() {
  return g.system_thread_ids ? static_cast<uint32_t>(::gettid()) : static_cast<uint32_t>(::pthread_self());
}

uint32_t context_uid(CUcontext ctx) {
  std::lock_guard lock(g.m);
  auto it = g.contexts.find(ctx);
  return it == g.contexts.end() ? 0 : it->second.index;
}

}  // namespace detail

using namespace detail;

namespace {

Context g_context_storage[16];  // CUcontext handles point here (index 1..15)

thread_local bool t_silent = false;  // the current fake launch makes no callbacks

void callback(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  if (t_silent) return;
  CUpti_CallbackFunc f = nullptr;
  void* user = nullptr;
  {
    std::lock_guard lock(g.m);
    if (!g.enabled.count({static_cast<int>(domain), cbid})) return;
    f = g.callback;
    user = g.userdata;
  }
  if (f) f(user, domain, cbid, data);  // no fake lock held: the session calls back into CUPTI
}

CUpti_CallbackData api_data(CUpti_ApiCallbackSite site, const char* function, const void* params,
                            void* result, const char* symbol, CUcontext ctx, uint32_t correlation) {
  CUpti_CallbackData d{};
  d.callbackSite = site;
  d.functionName = function;
  d.functionParams = params;
  d.functionReturnValue = result;
  d.symbolName = symbol;
  d.context = ctx;
  d.contextUid = context_uid(ctx);
  d.correlationId = correlation;
  return d;
}

uint32_t next_correlation() {
  std::lock_guard lock(g.m);
  return g.next_correlation++;
}

void api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* function, CUcontext ctx, uint32_t c) {
  int result = 0;  // CUDA_SUCCESS / cudaSuccess
  CUpti_CallbackData in = api_data(CUPTI_API_ENTER, function, nullptr, &result, nullptr, ctx, c);
  callback(domain, cbid, &in);
  CUpti_CallbackData out = api_data(CUPTI_API_EXIT, function, nullptr, &result, nullptr, ctx, c);
  callback(domain, cbid, &out);
}

}  // namespace

void reset() {
  std::lock_guard lock(g.m);
  g.failures.clear();
  g.hangs.clear();
  g.before.clear();
  g.calls.clear();
  g.other_subscriber.clear();
  g.subscriber.clear();
  g.callback = nullptr;
  g.userdata = nullptr;
  g.enabled.clear();
  g.kinds.clear();
  g.requested = nullptr;
  g.completed = nullptr;
  g.pending.clear();
  g.contexts.clear();
  g.devices_seen.clear();
  g.profilers.clear();  // leaked on purpose: the session may still hold an object pointer
  g.passes = 2;
  g.start_misses_launch = false;
  g.chip = "GH100";
  g.device_chips.clear();
  g.support.clear();
  g.dropped = 0;
  g.system_thread_ids = false;
  g.next_correlation = 1;
  g.next_marker = 1;
  g.marker_stack.clear();
  g.next_range_id = 1;
  g.off_context = 0;
}

void set_current_context(CUcontext ctx) {
  if (auto f = driver_fn<void (*)(CUcontext)>("rf_fake_cuda_set_current")) f(ctx);
}

bool load_fake_driver(const char* path) { return ::dlopen(path, RTLD_NOW | RTLD_GLOBAL) != nullptr; }

void set_driver_devices(const std::vector<std::string>& names) {
  std::vector<const char*> c;
  for (const auto& n : names) c.push_back(n.c_str());
  if (auto f = driver_fn<void (*)(const char* const*, int)>("rf_fake_cuda_set_devices"))
    f(c.data(), static_cast<int>(c.size()));
}

void set_capturing_stream(CUstream stream) {
  if (auto f = driver_fn<void (*)(CUstream)>("rf_fake_cuda_set_capturing")) f(stream);
}

uint64_t context_pushes() {
  auto f = driver_fn<unsigned long long (*)()>("rf_fake_cuda_pushes");
  return f ? f() : 0;
}

CUcontext current_context() {
  auto f = driver_fn<CUcontext (*)()>("rf_fake_cuda_current");
  return f ? f() : nullptr;
}

void push_context(CUcontext ctx) {
  if (auto f = driver_fn<CUresult (*)(CUcontext)>("cuCtxPushCurrent_v2")) (void)f(ctx);
}

void fail_driver(const std::string& function, CUresult result) {
  if (auto f = driver_fn<void (*)(const char*, CUresult)>("rf_fake_cuda_fail")) f(function.c_str(), result);
}

void set_device_attribute(CUdevice_attribute attr, int value) {
  if (auto f = driver_fn<void (*)(CUdevice_attribute, int)>("rf_fake_cuda_set_attribute")) f(attr, value);
}

uint64_t calls_off_context() {
  std::lock_guard lock(g.m);
  return g.off_context;
}

void fail(const std::string& function, CUptiResult result) {
  std::lock_guard lock(g.m);
  if (result == CUPTI_SUCCESS)
    g.failures.erase(function);
  else
    g.failures[function] = result;
}

void hang(const std::string& function) {
  std::lock_guard lock(g.m);
  g.hangs.insert(function);
}

void before_next_call(const std::string& function, std::function<void()> hook) {
  std::lock_guard lock(g.m);
  g.before[function] = std::move(hook);
}

void set_other_subscriber(const std::string& name) {
  std::lock_guard lock(g.m);
  g.other_subscriber = name;
}

std::pair<CUpti_CallbackFunc, void*> subscriber() {
  std::lock_guard lock(g.m);
  return {g.callback, g.userdata};
}

std::string subscriber_name() {
  std::lock_guard lock(g.m);
  return g.subscriber;
}

bool callback_enabled(CUpti_CallbackDomain domain, CUpti_CallbackId cbid) {
  std::lock_guard lock(g.m);
  return g.enabled.count({static_cast<int>(domain), cbid}) > 0;
}

bool activity_enabled(CUpti_ActivityKind kind) {
  std::lock_guard lock(g.m);
  return g.kinds.count(static_cast<int>(kind)) > 0;
}

void set_passes(uint32_t passes) {
  std::lock_guard lock(g.m);
  g.passes = passes;
}

void set_chip(const std::string& chip) {
  std::lock_guard lock(g.m);
  g.chip = chip;
}

void set_device_chip(uint32_t device, const std::string& chip) {
  std::lock_guard lock(g.m);
  g.device_chips[device] = chip;
}

void set_support(uint32_t device, const std::string& field, CUpti_Profiler_Support_Level level) {
  std::lock_guard lock(g.m);
  g.support[device][field] = level;
}

void drop_records(uint64_t n) {
  std::lock_guard lock(g.m);
  g.dropped += n;
}

void memory(CUcontext ctx, bool allocation, uint64_t address, uint64_t bytes) {
  const uint32_t c = next_correlation();
  std::lock_guard lock(g.m);
  if (!g.kinds.count(CUPTI_ACTIVITY_KIND_MEMORY2)) return;
  CUpti_ActivityMemory4 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  m.memoryOperationType = allocation ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION
                                     : CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.correlationId = c;
  m.address = address;
  m.bytes = bytes;
  m.timestamp = now_ns();
  m.processId = static_cast<uint32_t>(::getpid());
  auto it = g.contexts.find(ctx);
  m.deviceId = it == g.contexts.end() ? 0 : it->second.device;
  m.contextId = it == g.contexts.end() ? 0 : it->second.index;
  push_record(m);
}

void set_pass_start_in_a_launch_misses_it(bool misses) {
  std::lock_guard lock(g.m);
  g.start_misses_launch = misses;
}

uint64_t misuses() { return detail::g_misuses.load(std::memory_order_relaxed); }

uint64_t calls(const std::string& function) {
  std::lock_guard lock(g.m);
  auto it = g.calls.find(function);
  return it == g.calls.end() ? 0 : it->second;
}

CUcontext create_context(uint32_t index, uint32_t device) {
  auto* ctx = reinterpret_cast<CUcontext>(&g_context_storage[index % 16]);
  {
    std::lock_guard lock(g.m);
    g.contexts[ctx] = Context{index, device};
    if (g.devices_seen.insert(device).second && g.kinds.count(CUPTI_ACTIVITY_KIND_DEVICE)) {
      CUpti_ActivityDevice5 d{};
      d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
      d.id = device;
      d.name = keep("NVIDIA H100 80GB HBM3 (fake)");
      d.computeCapabilityMajor = 9;
      d.computeCapabilityMinor = 0;
      d.numMultiprocessors = 132;
      d.coreClockRate = 1980000;
      d.globalMemorySize = 85ull << 30;
      d.globalMemoryBandwidth = 3352320000ull;
      d.l2CacheSize = 50u << 20;
      push_record(d);
    }
  }
  set_current_context(ctx);  // cuCtxCreate, or the primary context of cudaSetDevice
  CUpti_ResourceData r{};
  r.context = ctx;
  callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &r);
  return ctx;
}

void destroy_context(CUcontext ctx) {
  CUpti_ResourceData r{};
  r.context = ctx;
  callback(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING, &r);
  std::lock_guard lock(g.m);
  g.contexts.erase(ctx);
  // The context's Range Profiler goes with it, disabled or not (a session that abandoned it made
  // no call): the handle may come back for a new context, whose Enable is then no misuse.
  g.profilers.erase(ctx);  // the object leaks: the session may still hold its pointer
}

uint32_t launch(const Launch& l) {
  struct Silent {
    explicit Silent(bool on) { t_silent = on; }
    ~Silent() { t_silent = false; }
  } silent(l.silent);
  set_current_context(l.ctx);  // the application launches on its current context
  // The driver call a runtime call makes shares its correlation id, and so does the kernel record
  // (as recorded on an H100: tests/recorded, FakeModel.*).
  const uint32_t driver_c = next_correlation();
  const uint32_t runtime_c = l.through_runtime ? driver_c : 0;
  int runtime_result = l.result == CUDA_SUCCESS ? 0 : 1;
  CUresult driver_result = l.result;
  // Each driver call: its callback ids (runtime, driver), names and parameter struct.
  struct Call {
    CUpti_CallbackId rt, dr;
    const char *rt_name, *dr_name;
  };
  Call call{CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
            "cudaLaunchKernel", "cuLaunchKernel"};
  switch (l.call) {
    case DriverCall::kLaunchKernel: break;
    case DriverCall::kLaunchKernelPtsz:
      call = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
              "cudaLaunchKernel_ptsz", "cuLaunchKernel_ptsz"};
      break;
    case DriverCall::kLaunchKernelEx:
      call = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
              "cudaLaunchKernelExC", "cuLaunchKernelEx"};
      break;
    case DriverCall::kLaunchKernelExPtsz:
      call = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
              "cudaLaunchKernelExC_ptsz", "cuLaunchKernelEx_ptsz"};
      break;
    case DriverCall::kCooperative:
      call = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
              CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, "cudaLaunchCooperativeKernel",
              "cuLaunchCooperativeKernel"};
      break;
    case DriverCall::kCooperativePtsz:
      call = {CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
              CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz, "cudaLaunchCooperativeKernel_ptsz",
              "cuLaunchCooperativeKernel_ptsz"};
      break;
  }
  if (l.graph)
    call = {CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, "cudaGraphLaunch",
            "cuGraphLaunch"};
  const CUpti_CallbackId rt = call.rt, dr = call.dr;
  cuLaunchKernel_params kp{};  // cuLaunchKernel's layout, which the _ptsz and cooperative calls share
  static_assert(offsetof(cuLaunchKernel_params, hStream) == offsetof(cuLaunchCooperativeKernel_params, hStream) &&
                offsetof(cuLaunchKernel_params, hStream) == offsetof(cuLaunchKernel_ptsz_params, hStream) &&
                offsetof(cuLaunchKernel_params, hStream) == offsetof(cuLaunchCooperativeKernel_ptsz_params, hStream));
  cuLaunchKernelEx_params xp{};
  CUlaunchConfig config{};
  cuGraphLaunch_params gp{};
  const void* params = nullptr;
  if (l.graph) {
    params = &gp;
  } else if (l.call == DriverCall::kLaunchKernelEx || l.call == DriverCall::kLaunchKernelExPtsz) {
    config.gridDimX = l.grid[0];
    config.gridDimY = l.grid[1];
    config.gridDimZ = l.grid[2];
    config.blockDimX = l.block[0];
    config.blockDimY = l.block[1];
    config.blockDimZ = l.block[2];
    config.sharedMemBytes = l.shared_bytes;
    config.hStream = l.stream;
    xp.config = &config;
    params = &xp;
  } else {
    kp.gridDimX = l.grid[0];
    kp.gridDimY = l.grid[1];
    kp.gridDimZ = l.grid[2];
    kp.blockDimX = l.block[0];
    kp.blockDimY = l.block[1];
    kp.blockDimZ = l.block[2];
    kp.sharedMemBytes = l.shared_bytes;
    kp.hStream = l.stream;
    params = &kp;
  }
  const char* symbol = l.graph ? nullptr : l.kernel.c_str();
  bool started_before = false;  // the context's Range Profiler was started before this launch's callbacks
  {
    std::lock_guard lock(g.m);
    if (auto it = g.profilers.find(l.ctx); it != g.profilers.end()) started_before = it->second->started;
  }
  if (l.through_runtime) {
    CUpti_CallbackData d = api_data(CUPTI_API_ENTER, call.rt_name, nullptr, &runtime_result, symbol, l.ctx, runtime_c);
    callback(CUPTI_CB_DOMAIN_RUNTIME_API, rt, &d);
  }
  CUpti_CallbackData enter_d = api_data(CUPTI_API_ENTER, call.dr_name, params, &driver_result, symbol, l.ctx, driver_c);
  callback(CUPTI_CB_DOMAIN_DRIVER_API, dr, &enter_d);
  if (l.after_enter) l.after_enter();
  // A launch into a stream being captured into a graph runs no kernel now (cudaStreamBeginCapture).
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  const bool ptsz = l.call == DriverCall::kLaunchKernelPtsz || l.call == DriverCall::kLaunchKernelExPtsz ||
                    l.call == DriverCall::kCooperativePtsz;
  if (auto is_capturing = driver_fn<CUresult (*)(CUstream, CUstreamCaptureStatus*)>("cuStreamIsCapturing"))
    (void)is_capturing(!l.stream && ptsz ? CU_STREAM_PER_THREAD : l.stream, &capture);  // a _ptsz call's default stream
  if (l.result == CUDA_SUCCESS && capture == CU_STREAM_CAPTURE_STATUS_NONE) {  // the kernel runs: its range and record
    std::lock_guard lock(g.m);
    const std::vector<std::string> kernels = l.graph ? l.graph_kernels : std::vector<std::string>{l.kernel};
    auto it = g.profilers.find(l.ctx);
    const bool missed = g.start_misses_launch && !started_before && it != g.profilers.end() && it->second->user_replay;
    if (it != g.profilers.end() && it->second->started && !missed) {
      Profiler& p = *it->second;
      for (const std::string& kernel : kernels) {
        if (p.ranges.size() < p.max_ranges)
          p.ranges.push_back(Range{driver_c, kernel});
        else
          ++p.dropped;
      }
    }
    const bool serial = g.kinds.count(CUPTI_ACTIVITY_KIND_KERNEL) > 0;
    for (const std::string& kernel : kernels) {
      if (!serial && !g.kinds.count(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) break;
      CUpti_ActivityKernel10 k{};
      k.kind = serial ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
      k.correlationId = driver_c;
      auto c = g.contexts.find(l.ctx);
      k.deviceId = c == g.contexts.end() ? 0 : c->second.device;
      k.contextId = c == g.contexts.end() ? 0 : c->second.index;
      k.streamId = stream_id(l.stream, ptsz);
      k.start = now_ns();
      k.end = k.start + l.duration_ns;
      k.gridX = static_cast<int32_t>(l.grid[0]);
      k.gridY = static_cast<int32_t>(l.grid[1]);
      k.gridZ = static_cast<int32_t>(l.grid[2]);
      k.blockX = static_cast<int32_t>(l.block[0]);
      k.blockY = static_cast<int32_t>(l.block[1]);
      k.blockZ = static_cast<int32_t>(l.block[2]);
      k.dynamicSharedMemory = static_cast<int32_t>(l.shared_bytes);
      k.registersPerThread = 32;
      k.name = keep(kernel);
      push_record(k);
    }
  }
  CUpti_CallbackData exit_d = api_data(CUPTI_API_EXIT, call.dr_name, params, &driver_result, symbol, l.ctx, driver_c);
  callback(CUPTI_CB_DOMAIN_DRIVER_API, dr, &exit_d);
  if (l.through_runtime) {
    CUpti_CallbackData d = api_data(CUPTI_API_EXIT, call.rt_name, nullptr, &runtime_result, symbol, l.ctx, runtime_c);
    callback(CUPTI_CB_DOMAIN_RUNTIME_API, rt, &d);
  }
  return driver_c;
}

namespace {

/// cudaProfilerStart or cudaProfilerStop (`runtime_cbid`, `runtime_name`) on `ctx`, enclosing the
/// driver call it makes (`driver_cbid`, `driver_name`), as the runtime makes it.
void profiler_call(CUpti_CallbackId runtime_cbid, const char* runtime_name, CUpti_CallbackId driver_cbid,
                   const char* driver_name, CUcontext ctx) {
  const uint32_t c = next_correlation();
  int result = 0;
  CUpti_CallbackData in = api_data(CUPTI_API_ENTER, runtime_name, nullptr, &result, nullptr, ctx, c);
  callback(CUPTI_CB_DOMAIN_RUNTIME_API, runtime_cbid, &in);
  api_call(CUPTI_CB_DOMAIN_DRIVER_API, driver_cbid, driver_name, ctx, c);
  CUpti_CallbackData out = api_data(CUPTI_API_EXIT, runtime_name, nullptr, &result, nullptr, ctx, c);
  callback(CUPTI_CB_DOMAIN_RUNTIME_API, runtime_cbid, &out);
}

}  // namespace

void profiler_start(CUcontext ctx) {
  profiler_call(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, "cudaProfilerStart",
                CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, "cuProfilerStart", ctx);
}

void profiler_stop(CUcontext ctx) {
  profiler_call(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, "cudaProfilerStop",
                CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, "cuProfilerStop", ctx);
}

namespace {

/// An NVTX marker record of this thread, if MARKER records are enabled (`name`: null for an end).
/// Caller holds g.m.
void push_marker(CUpti_ActivityFlag flags, uint32_t id, const char* name) {
  if (!g.kinds.count(CUPTI_ACTIVITY_KIND_MARKER)) return;
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = flags;
  m.timestamp = now_ns();
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = static_cast<uint32_t>(::getpid());
  m.objectId.pt.threadId = record_thread_id();
  m.name = name;
  push_record(m);
}

}  // namespace

void nvtx_push(const std::string& message) {
  nvtxRangePushA_params p{};
  p.message = message.c_str();
  int level = 0;
  CUpti_NvtxData d{"nvtxRangePushA", &p, &level};
  callback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &d);
  std::lock_guard lock(g.m);
  const uint32_t id = g.next_marker++;
  g.marker_stack.push_back(id);
  push_marker(CUPTI_ACTIVITY_FLAG_MARKER_START, id, keep(message));
}

void nvtx_pop() {
  nvtxRangePop_params p{};
  int level = 0;
  CUpti_NvtxData d{"nvtxRangePop", &p, &level};
  callback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &d);
  std::lock_guard lock(g.m);
  if (g.marker_stack.empty()) return;
  const uint32_t id = g.marker_stack.back();
  g.marker_stack.pop_back();
  push_marker(CUPTI_ACTIVITY_FLAG_MARKER_END, id, nullptr);
}

namespace {

/// One NVTX callback `cbid` (`function`) with `params` and `result` as CUPTI passes them.
void nvtx_callback(CUpti_CallbackId cbid, const char* function, const void* params, void* result) {
  CUpti_NvtxData d{function, params, result};
  callback(CUPTI_CB_DOMAIN_NVTX, cbid, &d);
}

nvtxEventAttributes_t ascii_attributes(const std::string& message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message.c_str();
  return a;
}

nvtxRangeId_t next_range_id() {
  std::lock_guard lock(g.m);
  return g.next_range_id++;
}

char g_domain_storage[16];  // nvtxDomainHandle_t handles point here

}  // namespace

uint64_t nvtx_start(const std::string& message) {
  nvtxRangeStartA_params p{};
  p.message = message.c_str();
  nvtxRangeId_t id = next_range_id();
  nvtx_callback(CUPTI_CBID_NVTX_nvtxRangeStartA, "nvtxRangeStartA", &p, &id);
  return id;
}

void nvtx_end(uint64_t id) {
  nvtxRangeEnd_params p{};
  p.id = id;
  nvtx_callback(CUPTI_CBID_NVTX_nvtxRangeEnd, "nvtxRangeEnd", &p, nullptr);
}

void nvtx_push_ex(const std::string& message) {
  const nvtxEventAttributes_t a = ascii_attributes(message);
  nvtxRangePushEx_params p{};
  p.eventAttrib = &a;
  int level = 0;
  nvtx_callback(CUPTI_CBID_NVTX_nvtxRangePushEx, "nvtxRangePushEx", &p, &level);
}

uint64_t nvtx_start_ex(const std::string& message) {
  const nvtxEventAttributes_t a = ascii_attributes(message);
  nvtxRangeStartEx_params p{};
  p.eventAttrib = &a;
  nvtxRangeId_t id = next_range_id();
  nvtx_callback(CUPTI_CBID_NVTX_nvtxRangeStartEx, "nvtxRangeStartEx", &p, &id);
  return id;
}

nvtxDomainHandle_t nvtx_domain_create(const std::string& name) {
  static std::atomic<unsigned> next{0};
  auto handle = reinterpret_cast<nvtxDomainHandle_t>(&g_domain_storage[next++ % 16]);
  nvtxDomainCreateA_params p{};
  p.name = name.c_str();
  nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainCreateA, "nvtxDomainCreateA", &p, &handle);
  return handle;
}

void nvtx_domain_push(nvtxDomainHandle_t domain, const std::string& message) {
  const nvtxEventAttributes_t a = ascii_attributes(message);
  nvtxDomainRangePushEx_params p{};
  p.domain = domain;
  p.core.eventAttrib = &a;
  int level = 0;
  nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangePushEx, "nvtxDomainRangePushEx", &p, &level);
}

void nvtx_domain_pop(nvtxDomainHandle_t domain) {
  nvtxDomainRangePop_params p{};
  p.domain = domain;
  int level = 0;
  nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangePop, "nvtxDomainRangePop", &p, &level);
}

uint64_t nvtx_domain_start(nvtxDomainHandle_t domain, const std::string& message) {
  const nvtxEventAttributes_t a = ascii_attributes(message);
  nvtxDomainRangeStartEx_params p{};
  p.domain = domain;
  p.core.eventAttrib = &a;
  nvtxRangeId_t id = next_range_id();
  nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, "nvtxDomainRangeStartEx", &p, &id);
  return id;
}

void nvtx_domain_end(nvtxDomainHandle_t domain, uint64_t id) {
  nvtxDomainRangeEnd_params p{};
  p.domain = domain;
  p.core.id = id;
  nvtx_callback(CUPTI_CBID_NVTX_nvtxDomainRangeEnd, "nvtxDomainRangeEnd", &p, nullptr);
}

}  // namespace rf::fake_cupti
