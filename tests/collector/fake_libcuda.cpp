// A fake CUDA driver, built as libcuda.so.1 in its own folder, for the fake-CUPTI tests: the few
// calls collector/src/driver_shim.cpp resolves from an already loaded libcuda.so.1, and the device
// enumeration of collector/src/local_devices.cpp (rfprof --query-metrics without --chips). A test
// child dlopens it (fake_session.h, load_fake_driver) first; the shim and local_devices() then
// find it by its soname. Its state is set through the rf_fake_cuda_* functions below.
#include <cuda.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

// Pushed contexts, [0..t_depth-1], the last one current. Trivially destructible, so that it still
// works in exit handlers after the thread's thread_local objects are destroyed, as a driver's does.
constexpr size_t kMaxDepth = 64;
thread_local CUcontext t_stack[kMaxDepth];
thread_local size_t t_depth = 0;
thread_local CUcontext t_current = nullptr;   // set by the application's "cudaSetDevice"
std::atomic<CUstream> g_capturing{nullptr};
std::atomic<unsigned long long> g_pushes{0};

std::mutex g_m;
std::map<std::string, CUresult> g_failures;  // driver function -> the result it returns
// False until a test first injects a failure: the driver's calls then take no lock, as a real
// driver's cuStreamIsCapturing in a launch (test_session_fake_locks counts the launch path's locks).
std::atomic<bool> g_any_failure{false};
std::map<int, int> g_attributes;             // attribute -> value, instead of the defaults below
std::vector<std::string> g_device_names = {"NVIDIA H100 80GB HBM3"};  // cuDeviceGetCount's devices

CUcontext current() { return t_depth == 0 ? t_current : t_stack[t_depth - 1]; }

/// The injected failure of `function`, or CUDA_SUCCESS.
CUresult failure(const char* function) {
  if (!g_any_failure.load(std::memory_order_acquire)) return CUDA_SUCCESS;
  std::lock_guard lock(g_m);
  auto it = g_failures.find(function);
  return it == g_failures.end() ? CUDA_SUCCESS : it->second;
}

}  // namespace

extern "C" {

// ---- control, for the tests ----

/// Makes `ctx` the calling thread's current context (what cudaSetDevice would do).
__attribute__((visibility("default"))) void rf_fake_cuda_set_current(CUcontext ctx) { t_current = ctx; }
/// The calling thread's current context, pushes included.
__attribute__((visibility("default"))) CUcontext rf_fake_cuda_current() { return current(); }
/// cuStreamIsCapturing then says `stream` is capturing into a graph (null: none is).
__attribute__((visibility("default"))) void rf_fake_cuda_set_capturing(CUstream stream) { g_capturing = stream; }
/// cuCtxPushCurrent calls so far.
__attribute__((visibility("default"))) unsigned long long rf_fake_cuda_pushes() { return g_pushes.load(); }

/// Every later call of `function` ("cuCtxPushCurrent", "cuStreamIsCapturing",
/// "cuDeviceGetAttribute", "cuInit", "cuDeviceGetCount", "cuDeviceGet", "cuDeviceGetName")
/// returns `result` and does nothing; CUDA_SUCCESS removes the failure.
__attribute__((visibility("default"))) void rf_fake_cuda_fail(const char* function, CUresult result) {
  std::lock_guard lock(g_m);
  g_any_failure.store(true, std::memory_order_release);
  if (result == CUDA_SUCCESS) g_failures.erase(function);
  else g_failures[function] = result;
}
/// cuDeviceGetAttribute then gives `value` for `attr`, on any device.
__attribute__((visibility("default"))) void rf_fake_cuda_set_attribute(CUdevice_attribute attr, int value) {
  std::lock_guard lock(g_m);
  g_attributes[static_cast<int>(attr)] = value;
}

/// cuDeviceGetCount then reports `count` devices, device i named `names[i]` by cuDeviceGetName.
/// Default: one, "NVIDIA H100 80GB HBM3".
__attribute__((visibility("default"))) void rf_fake_cuda_set_devices(const char* const* names, int count) {
  std::lock_guard lock(g_m);
  g_device_names.assign(names, names + count);
}

// ---- the driver calls (cuda.h) ----

CUresult CUDAAPI cuInit(unsigned int) { return failure("cuInit"); }

CUresult CUDAAPI cuDeviceGetCount(int* count) {
  if (CUresult r = failure("cuDeviceGetCount")) return r;
  std::lock_guard lock(g_m);
  *count = static_cast<int>(g_device_names.size());
  return CUDA_SUCCESS;
}

/// As the driver: the name cut to `len` - 1 bytes and NUL-terminated.
CUresult CUDAAPI cuDeviceGetName(char* name, int len, CUdevice device) {
  if (CUresult r = failure("cuDeviceGetName")) return r;
  std::lock_guard lock(g_m);
  if (device < 0 || static_cast<size_t>(device) >= g_device_names.size()) return CUDA_ERROR_INVALID_DEVICE;
  if (!name || len <= 0) return CUDA_ERROR_INVALID_VALUE;
  const std::string& n = g_device_names[static_cast<size_t>(device)];
  const size_t k = std::min(n.size(), static_cast<size_t>(len) - 1);
  n.copy(name, k);
  name[k] = '\0';
  return CUDA_SUCCESS;
}

/// The names of the results the fake returns; CUDA_ERROR_INVALID_VALUE for others, as the driver
/// does for a value it does not know.
CUresult CUDAAPI cuGetErrorName(CUresult error, const char** name) {
  switch (error) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
    case CUDA_ERROR_NOT_INITIALIZED: *name = "CUDA_ERROR_NOT_INITIALIZED"; return CUDA_SUCCESS;
    case CUDA_ERROR_NO_DEVICE: *name = "CUDA_ERROR_NO_DEVICE"; return CUDA_SUCCESS;
    case CUDA_ERROR_INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; return CUDA_SUCCESS;
    default: *name = nullptr; return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  *ctx = current();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {  // cuCtxPushCurrent_v2 (cuda.h's macro)
  if (CUresult r = failure("cuCtxPushCurrent")) return r;
  if (t_depth == kMaxDepth) return CUDA_ERROR_INVALID_VALUE;
  ++g_pushes;
  t_stack[t_depth++] = ctx;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* ctx) {  // cuCtxPopCurrent_v2
  if (t_depth == 0) return CUDA_ERROR_INVALID_CONTEXT;
  --t_depth;
  if (ctx) *ctx = t_stack[t_depth];
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  if (CUresult r = failure("cuStreamIsCapturing")) return r;
  *status = (stream && stream == g_capturing.load()) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (CUresult r = failure("cuDeviceGet")) return r;
  if (ordinal < 0 || ordinal > 7) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attr, CUdevice) {
  if (CUresult r = failure("cuDeviceGetAttribute")) return r;
  {
    std::lock_guard lock(g_m);
    if (auto it = g_attributes.find(static_cast<int>(attr)); it != g_attributes.end()) {
      *value = it->second;
      return CUDA_SUCCESS;
    }
  }
  switch (attr) {
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
      *value = 2619000;  // kHz, an H100 SXM's HBM3
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
      *value = 5120;  // bits
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

}  // extern "C"
