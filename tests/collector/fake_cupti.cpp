// The fake CUPTI of fake_cupti.h: the callback, activity, device and Range Profiler calls the
// session makes, and the three host-API calls that read a counter-data image.
#include "fake_cupti.h"

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
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace rf::fake_cupti {
namespace {

/// Every activity record goes into a slot of this size (the fake's cuptiActivityGetNextRecord
/// steps by it); large enough for every record type the session reads.
constexpr size_t kSlot = 256;
static_assert(sizeof(CUpti_ActivityKernel10) <= kSlot && sizeof(CUpti_ActivityDevice5) <= kSlot &&
              sizeof(CUpti_ActivityMarker2) <= kSlot && sizeof(CUpti_ActivityMemory4) <= kSlot);

/// The fake counter-data image: "LOPDATA\0", u32 range count, u32 dropped, then per range the
/// u32 correlation id of its launch and a 64-byte NUL-terminated kernel name.
constexpr char kSignature[8] = {'L', 'O', 'P', 'D', 'A', 'T', 'A', '\0'};
constexpr size_t kHeader = 16, kRangeBytes = 4 + 64;

struct Range {
  uint32_t correlation_id;
  std::string name;
};

struct Profiler {  // one per context with the Range Profiler enabled
  CUcontext ctx = nullptr;
  bool configured = false, started = false, user_replay = false;
  uint8_t* image = nullptr;
  size_t image_size = 0;
  size_t max_ranges = 0;
  uint32_t pass_index = 0;         // passes stopped since SetConfig
  std::vector<Range> ranges;       // of the current pass
  std::vector<Range> decodable;    // of the last completed pass
  uint64_t dropped = 0;
};

struct Context {
  uint32_t index = 0, device = 0;
};

struct State {
  std::mutex m;
  std::map<std::string, CUptiResult> failures;
  std::map<std::string, uint64_t> calls;
  std::string other_subscriber, subscriber;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::set<std::pair<int, uint32_t>> enabled;
  std::set<int> kinds;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  std::vector<std::array<uint8_t, kSlot>> pending;
  std::deque<std::string> names;  // record strings: alive until the process ends
  std::map<CUcontext, Context> contexts;
  std::set<uint32_t> devices_seen;
  std::map<CUcontext, Profiler*> profilers;
  uint32_t passes = 2;
  std::string chip = "GH100";
  std::map<uint32_t, std::string> device_chips;
  std::map<uint32_t, std::map<std::string, CUpti_Profiler_Support_Level>> support;  // device -> field -> level
  uint64_t dropped = 0;             // since the last cuptiActivityGetNumDroppedRecords
  bool system_thread_ids = false;   // cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
  uint32_t next_correlation = 1;
  uint32_t next_marker = 1;
  std::vector<uint32_t> marker_stack;
  uint64_t off_context = 0;
} g;

/// A function of the fake driver, or null while it is not loaded.
template <typename F>
F driver_fn(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
}

/// Counts a Range Profiler call made while `ctx` is not current (caller holds g.m).
void check_current(CUcontext ctx) {
  if (auto current = driver_fn<CUcontext (*)()>("rf_fake_cuda_current"))
    if (current() != ctx) ++g.off_context;
}

Context g_context_storage[16];  // CUcontext handles point here (index 1..15)

uint64_t now_ns() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

/// Counts the call and returns the injected failure, or CUPTI_SUCCESS.
CUptiResult enter(const char* function) {
  std::lock_guard lock(g.m);
  ++g.calls[function];
  auto it = g.failures.find(function);
  return it == g.failures.end() ? CUPTI_SUCCESS : it->second;
}

const char* keep(const std::string& s) {  // caller holds g.m
  g.names.push_back(s);
  return g.names.back().c_str();
}

template <typename R>
void push_record(const R& r) {  // caller holds g.m
  std::array<uint8_t, kSlot> slot{};
  std::memcpy(slot.data(), &r, sizeof r);
  g.pending.push_back(slot);
}

/// A marker record's thread id, of the type cuptiSetThreadIdType chose. Caller holds g.m.
uint32_t record_thread_id() {
  return g.system_thread_ids ? static_cast<uint32_t>(::gettid()) : static_cast<uint32_t>(::pthread_self());
}

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

uint32_t context_uid(CUcontext ctx) {
  std::lock_guard lock(g.m);
  auto it = g.contexts.find(ctx);
  return it == g.contexts.end() ? 0 : it->second.index;
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

void api_call(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const char* function, CUcontext ctx) {
  const uint32_t c = next_correlation();
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
  g.chip = "GH100";
  g.device_chips.clear();
  g.support.clear();
  g.dropped = 0;
  g.system_thread_ids = false;
  g.next_correlation = 1;
  g.next_marker = 1;
  g.marker_stack.clear();
  g.off_context = 0;
}

void set_current_context(CUcontext ctx) {
  if (auto f = driver_fn<void (*)(CUcontext)>("rf_fake_cuda_set_current")) f(ctx);
}

bool load_fake_driver(const char* path) { return ::dlopen(path, RTLD_NOW | RTLD_GLOBAL) != nullptr; }

void set_capturing_stream(CUstream stream) {
  if (auto f = driver_fn<void (*)(CUstream)>("rf_fake_cuda_set_capturing")) f(stream);
}

uint64_t context_pushes() {
  auto f = driver_fn<unsigned long long (*)()>("rf_fake_cuda_pushes");
  return f ? f() : 0;
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
}

uint32_t launch(const Launch& l) {
  struct Silent {
    explicit Silent(bool on) { t_silent = on; }
    ~Silent() { t_silent = false; }
  } silent(l.silent);
  set_current_context(l.ctx);  // the application launches on its current context
  const uint32_t runtime_c = l.through_runtime ? next_correlation() : 0;
  const uint32_t driver_c = next_correlation();
  int runtime_result = l.result == CUDA_SUCCESS ? 0 : 1;
  CUresult driver_result = l.result;
  const CUpti_CallbackId rt = l.graph ? CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000
                                      : CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  const CUpti_CallbackId dr = l.graph ? CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch : CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
  cuLaunchKernel_params kp{};
  cuGraphLaunch_params gp{};
  const void* params = nullptr;
  if (l.graph) {
    params = &gp;
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
  if (l.through_runtime) {
    CUpti_CallbackData d = api_data(CUPTI_API_ENTER, "cudaLaunchKernel", nullptr, &runtime_result, symbol, l.ctx, runtime_c);
    callback(CUPTI_CB_DOMAIN_RUNTIME_API, rt, &d);
  }
  CUpti_CallbackData enter_d = api_data(CUPTI_API_ENTER, "cuLaunchKernel", params, &driver_result, symbol, l.ctx, driver_c);
  callback(CUPTI_CB_DOMAIN_DRIVER_API, dr, &enter_d);
  // A launch into a stream being captured into a graph runs no kernel now (cudaStreamBeginCapture).
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (auto is_capturing = driver_fn<CUresult (*)(CUstream, CUstreamCaptureStatus*)>("cuStreamIsCapturing"))
    (void)is_capturing(l.stream, &capture);
  if (l.result == CUDA_SUCCESS && capture == CU_STREAM_CAPTURE_STATUS_NONE) {  // the kernel runs: its range and record
    std::lock_guard lock(g.m);
    const std::vector<std::string> kernels = l.graph ? l.graph_kernels : std::vector<std::string>{l.kernel};
    if (auto it = g.profilers.find(l.ctx); it != g.profilers.end() && it->second->started) {
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
      k.correlationId = l.through_runtime ? runtime_c : driver_c;
      auto c = g.contexts.find(l.ctx);
      k.deviceId = c == g.contexts.end() ? 0 : c->second.device;
      k.contextId = c == g.contexts.end() ? 0 : c->second.index;
      k.streamId = 7;
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
  CUpti_CallbackData exit_d = api_data(CUPTI_API_EXIT, "cuLaunchKernel", params, &driver_result, symbol, l.ctx, driver_c);
  callback(CUPTI_CB_DOMAIN_DRIVER_API, dr, &exit_d);
  if (l.through_runtime) {
    CUpti_CallbackData d = api_data(CUPTI_API_EXIT, "cudaLaunchKernel", nullptr, &runtime_result, symbol, l.ctx, runtime_c);
    callback(CUPTI_CB_DOMAIN_RUNTIME_API, rt, &d);
  }
  return driver_c;
}

void profiler_start(CUcontext ctx) {
  const uint32_t c = next_correlation();
  int result = 0;
  CUpti_CallbackData in = api_data(CUPTI_API_ENTER, "cudaProfilerStart", nullptr, &result, nullptr, ctx, c);
  callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, &in);
  api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStart, "cuProfilerStart", ctx);
  CUpti_CallbackData out = api_data(CUPTI_API_EXIT, "cudaProfilerStart", nullptr, &result, nullptr, ctx, c);
  callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStart_v4000, &out);
}

void profiler_stop(CUcontext ctx) {
  const uint32_t c = next_correlation();
  int result = 0;
  CUpti_CallbackData in = api_data(CUPTI_API_ENTER, "cudaProfilerStop", nullptr, &result, nullptr, ctx, c);
  callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, &in);
  api_call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop, "cuProfilerStop", ctx);
  CUpti_CallbackData out = api_data(CUPTI_API_EXIT, "cudaProfilerStop", nullptr, &result, nullptr, ctx, c);
  callback(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000, &out);
}

void nvtx_push(const std::string& message) {
  nvtxRangePushA_params p{};
  p.message = message.c_str();
  int level = 0;
  CUpti_NvtxData d{"nvtxRangePushA", &p, &level};
  callback(CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &d);
  std::lock_guard lock(g.m);
  const uint32_t id = g.next_marker++;
  g.marker_stack.push_back(id);
  if (!g.kinds.count(CUPTI_ACTIVITY_KIND_MARKER)) return;
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_START;
  m.timestamp = now_ns();
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = static_cast<uint32_t>(::getpid());
  m.objectId.pt.threadId = record_thread_id();
  m.name = keep(message);
  push_record(m);
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
  if (!g.kinds.count(CUPTI_ACTIVITY_KIND_MARKER)) return;
  CUpti_ActivityMarker2 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MARKER;
  m.flags = CUPTI_ACTIVITY_FLAG_MARKER_END;
  m.timestamp = now_ns();
  m.id = id;
  m.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
  m.objectId.pt.processId = static_cast<uint32_t>(::getpid());
  m.objectId.pt.threadId = record_thread_id();
  push_record(m);
}

}  // namespace rf::fake_cupti

// ---- the CUPTI functions (cupti_callbacks.h, cupti_activity.h, cupti_range_profiler.h, ...) ----

using rf::fake_cupti::g;
using rf::fake_cupti::enter;

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                       void* userdata, CUpti_SubscriberParams* params) {
  if (CUptiResult r = enter("cuptiSubscribe_v2")) return r;
  std::lock_guard lock(g.m);
  const std::string& old = !g.subscriber.empty() ? g.subscriber : g.other_subscriber;
  if (!old.empty()) {
    if (params && params->oldSubscriberName && params->oldSubscriberSize > 0) {
      std::strncpy(params->oldSubscriberName, old.c_str(), params->oldSubscriberSize - 1);
      params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  g.subscriber = params && params->subscriberName ? params->subscriberName : "(unnamed)";
  g.callback = callback;
  g.userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) {
  if (CUptiResult r = enter("cuptiUnsubscribe")) return r;
  std::lock_guard lock(g.m);
  g.subscriber.clear();
  g.callback = nullptr;
  g.enabled.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId cbid) {
  if (CUptiResult r = enter("cuptiEnableCallback")) return r;
  std::lock_guard lock(g.m);
  if (enable)
    g.enabled.insert({static_cast<int>(domain), cbid});
  else
    g.enabled.erase({static_cast<int>(domain), cbid});
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  if (CUptiResult r = enter("cuptiSetThreadIdType")) return r;
  std::lock_guard lock(g.m);
  g.system_thread_ids = type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  if (CUptiResult r = enter("cuptiActivityRegisterCallbacks")) return r;
  std::lock_guard lock(g.m);
  g.requested = requested;
  g.completed = completed;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (CUptiResult r = enter("cuptiActivityEnable")) return r;
  std::lock_guard lock(g.m);
  g.kinds.insert(static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (CUptiResult r = enter("cuptiActivityDisable")) return r;
  std::lock_guard lock(g.m);
  g.kinds.erase(static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  if (CUptiResult r = enter("cuptiActivityFlushAll")) return r;
  static std::mutex flushing;  // one flush at a time hands buffers over, as CUPTI's own lock
  std::lock_guard one(flushing);
  for (;;) {
    std::vector<std::array<uint8_t, rf::fake_cupti::kSlot>> records;
    CUpti_BuffersCallbackRequestFunc requested;
    CUpti_BuffersCallbackCompleteFunc completed;
    {
      std::lock_guard lock(g.m);
      if (g.pending.empty() || !g.requested || !g.completed) return CUPTI_SUCCESS;
      records.swap(g.pending);
      requested = g.requested;
      completed = g.completed;
    }
    size_t i = 0;
    while (i < records.size()) {
      uint8_t* buffer = nullptr;
      size_t size = 0, max_records = 0;
      requested(&buffer, &size, &max_records);
      if (!buffer || size < rf::fake_cupti::kSlot) return CUPTI_SUCCESS;  // records dropped
      size_t used = 0;
      for (; i < records.size() && used + rf::fake_cupti::kSlot <= size; ++i, used += rf::fake_cupti::kSlot)
        std::memcpy(buffer + used, records[i].data(), rf::fake_cupti::kSlot);
      completed(nullptr, 0, buffer, size, used);
    }
  }
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* next = *record ? reinterpret_cast<uint8_t*>(*record) + rf::fake_cupti::kSlot : buffer;
  if (static_cast<size_t>(next - buffer) + rf::fake_cupti::kSlot > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (CUptiResult r = enter("cuptiActivityGetNumDroppedRecords")) return r;
  std::lock_guard lock(g.m);
  *dropped = static_cast<size_t>(std::exchange(g.dropped, 0));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = rf::fake_cupti::now_ns();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return enter("cuptiGetVersion");
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t* device) {
  if (CUptiResult r = enter("cuptiGetDeviceId")) return r;
  std::lock_guard lock(g.m);
  auto it = g.contexts.find(context);
  if (it == g.contexts.end()) return CUPTI_ERROR_INVALID_CONTEXT;
  *device = it->second.device;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext, CUstream, uint8_t, uint32_t* stream) {
  *stream = 7;
  return enter("cuptiGetStreamIdEx");
}

CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  if (CUptiResult r = enter("cuptiDeviceGetChipName")) return r;
  std::lock_guard lock(g.m);
  auto it = g.device_chips.find(static_cast<uint32_t>(p->deviceIndex));
  p->pChipName = rf::fake_cupti::keep(it == g.device_chips.end() ? g.chip : it->second);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params*) {
  return enter("cuptiProfilerInitialize");
}

CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params*) {
  return enter("cuptiProfilerDeInitialize");
}

CUptiResult CUPTIAPI cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) {
  if (CUptiResult r = enter("cuptiProfilerDeviceSupported")) return r;
  p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->architecture = p->sli = p->vGpu = p->confidentialCompute = p->cmp = p->wsl =
      CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  std::lock_guard lock(g.m);
  auto it = g.support.find(static_cast<uint32_t>(p->cuDevice));
  if (it == g.support.end()) return CUPTI_SUCCESS;
  const std::map<std::string, CUpti_Profiler_Support_Level*> fields = {
      {"architecture", &p->architecture}, {"sli", &p->sli}, {"vGpu", &p->vGpu},
      {"confidentialCompute", &p->confidentialCompute}, {"cmp", &p->cmp}, {"wsl", &p->wsl}};
  for (const auto& [field, level] : it->second) {
    *fields.at(field) = level;
    if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) p->isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  p->counterAvailabilityImageSize = 0;  // no image: the host API then works from the chip alone
  return enter("cuptiProfilerGetCounterAvailability");
}

CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerEnable")) return r;
  std::lock_guard lock(g.m);
  auto* prof = new rf::fake_cupti::Profiler;  // leaked when the session forgets it (abandon)
  prof->ctx = p->ctx;
  g.profilers[p->ctx] = prof;
  p->pRangeProfilerObject = reinterpret_cast<CUpti_RangeProfiler_Object*>(prof);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerDisable")) return r;
  std::lock_guard lock(g.m);
  auto* prof = reinterpret_cast<rf::fake_cupti::Profiler*>(p->pRangeProfilerObject);
  for (auto it = g.profilers.begin(); it != g.profilers.end(); ++it)
    if (it->second == prof) {
      rf::fake_cupti::check_current(prof->ctx);
      g.profilers.erase(it);
      delete prof;
      return CUPTI_SUCCESS;
    }
  return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerGetCounterDataSize")) return r;
  p->counterDataSize = std::max<size_t>(512, rf::fake_cupti::kHeader + rf::fake_cupti::kRangeBytes * p->maxNumOfRanges);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerCounterDataImageInitialize")) return r;
  std::memset(p->pCounterData, 0, p->counterDataSize);
  std::memcpy(p->pCounterData, rf::fake_cupti::kSignature, sizeof rf::fake_cupti::kSignature);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerSetConfig")) return r;
  std::lock_guard lock(g.m);
  auto* prof = reinterpret_cast<rf::fake_cupti::Profiler*>(p->pRangeProfilerObject);
  prof->configured = true;
  prof->user_replay = p->replayMode == CUPTI_UserReplay;
  prof->image = p->pCounterDataImage;
  prof->image_size = p->counterDataImageSize;
  prof->max_ranges = p->maxRangesPerPass;
  prof->pass_index = 0;
  prof->ranges.clear();
  prof->decodable.clear();
  prof->dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerStart")) return r;
  std::lock_guard lock(g.m);
  auto* prof = reinterpret_cast<rf::fake_cupti::Profiler*>(p->pRangeProfilerObject);
  if (!prof->configured || prof->started) return CUPTI_ERROR_INVALID_OPERATION;
  rf::fake_cupti::check_current(prof->ctx);
  prof->started = true;
  prof->ranges.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerStop")) return r;
  std::lock_guard lock(g.m);
  auto* prof = reinterpret_cast<rf::fake_cupti::Profiler*>(p->pRangeProfilerObject);
  if (!prof->started) return CUPTI_ERROR_INVALID_OPERATION;
  rf::fake_cupti::check_current(prof->ctx);
  prof->started = false;
  prof->decodable = prof->ranges;
  if (prof->user_replay) {
    p->passIndex = prof->pass_index++;
    p->isAllPassSubmitted = prof->pass_index >= g.passes ? 1 : 0;
  } else {  // kernel replay: every pass ran inside each launch
    p->passIndex = g.passes - 1;
    p->isAllPassSubmitted = 1;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerDecodeData")) return r;
  std::lock_guard lock(g.m);
  auto* prof = reinterpret_cast<rf::fake_cupti::Profiler*>(p->pRangeProfilerObject);
  if (prof->started || !prof->image) return CUPTI_ERROR_INVALID_OPERATION;
  rf::fake_cupti::check_current(prof->ctx);
  const auto n = static_cast<uint32_t>(prof->decodable.size());
  if (rf::fake_cupti::kHeader + size_t{n} * rf::fake_cupti::kRangeBytes > prof->image_size)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::memcpy(prof->image + 8, &n, 4);
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* at = prof->image + rf::fake_cupti::kHeader + size_t{i} * rf::fake_cupti::kRangeBytes;
    std::memcpy(at, &prof->decodable[i].correlation_id, 4);
    std::strncpy(reinterpret_cast<char*>(at + 4), prof->decodable[i].name.c_str(), 63);
  }
  p->numOfRangeDropped = prof->dropped;
  return CUPTI_SUCCESS;
}

// The host API's readers of a counter-data image, for the fake image above.
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerGetCounterDataInfo")) return r;
  uint32_t n = 0;
  std::memcpy(&n, p->pCounterDataImage + 8, 4);
  p->numTotalRanges = n;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataGetRangeInfo(
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerCounterDataGetRangeInfo")) return r;
  p->rangeName = reinterpret_cast<const char*>(p->pCounterDataImage + rf::fake_cupti::kHeader +
                                               p->rangeIndex * rf::fake_cupti::kRangeBytes + 4);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (CUptiResult r = enter("cuptiProfilerHostEvaluateToGpuValues")) return r;
  uint32_t cid = 0;
  std::memcpy(&cid, p->pCounterDataImage + rf::fake_cupti::kHeader + p->rangeIndex * rf::fake_cupti::kRangeBytes, 4);
  for (size_t m = 0; m < p->numMetrics; ++m) p->pMetricValues[m] = rf::fake_cupti::value(cid, m);
  return CUPTI_SUCCESS;
}

}  // extern "C"
