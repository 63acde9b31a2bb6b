// Run-time resolved CUDA driver calls (see driver_shim.h).
#include "driver_shim.h"

#include <dlfcn.h>

#include <atomic>
#include <mutex>

namespace rf::collector::driver {
namespace {

struct Api {
  decltype(&::cuDriverGetVersion) get_version = nullptr;
  decltype(&::cuCtxGetCurrent) get_current = nullptr;
  decltype(&::cuCtxPushCurrent) push = nullptr;
  decltype(&::cuCtxPopCurrent) pop = nullptr;
  decltype(&::cuStreamIsCapturing) is_capturing = nullptr;
  decltype(&::cuDeviceGet) device_get = nullptr;
  decltype(&::cuDeviceGetAttribute) device_attribute = nullptr;
};

template <typename F>
void resolve(void* lib, const char* name, F& out) noexcept {
  out = reinterpret_cast<F>(::dlsym(lib, name));
}

/// Finds a driver that is already loaded (RTLD_NOLOAD), never loads one. Retries until a driver
/// is found, since the NVTX entry point can run before the application loads CUDA.
Api api() noexcept {
  static Api a;
  static std::atomic<bool> found{false};
  static std::mutex m;
  if (found.load(std::memory_order_acquire)) return a;
  std::lock_guard lock(m);
  if (found.load(std::memory_order_relaxed)) return a;
  void* lib = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!lib) return a;  // all pointers still null
  // The handle stays open: the driver is never unloaded while the process runs.
  resolve(lib, "cuDriverGetVersion", a.get_version);
  resolve(lib, "cuCtxGetCurrent", a.get_current);
  resolve(lib, "cuCtxPushCurrent_v2", a.push);
  resolve(lib, "cuCtxPopCurrent_v2", a.pop);
  resolve(lib, "cuStreamIsCapturing", a.is_capturing);
  resolve(lib, "cuDeviceGet", a.device_get);
  resolve(lib, "cuDeviceGetAttribute", a.device_attribute);
  found.store(true, std::memory_order_release);
  return a;
}

}  // namespace

int version() noexcept {
  int v = 0;
  const Api a = api();
  if (a.get_version && a.get_version(&v) == CUDA_SUCCESS) return v;
  return 0;
}

unsigned device_attribute(int ordinal, CUdevice_attribute attr) noexcept {
  const Api a = api();
  if (!a.device_get || !a.device_attribute) return 0;
  CUdevice dev = 0;
  if (a.device_get(&dev, ordinal) != CUDA_SUCCESS) return 0;
  int value = 0;
  if (a.device_attribute(&value, attr, dev) != CUDA_SUCCESS || value < 0) return 0;
  return static_cast<unsigned>(value);
}

bool is_capturing(CUstream stream) noexcept {
  const Api a = api();
  if (!a.is_capturing) return false;
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  if (a.is_capturing(stream, &status) != CUDA_SUCCESS) return false;
  return status != CU_STREAM_CAPTURE_STATUS_NONE;
}

CUcontext current_context() noexcept {
  const Api a = api();
  CUcontext current = nullptr;
  if (!a.get_current || a.get_current(&current) != CUDA_SUCCESS) return nullptr;
  return current;
}

ScopedContext::ScopedContext(CUcontext ctx) noexcept {
  const Api a = api();
  if (!ctx || !a.get_current || !a.push || !a.pop) return;
  CUcontext current = nullptr;
  if (a.get_current(&current) != CUDA_SUCCESS || current == ctx) return;
  pushed_ = a.push(ctx) == CUDA_SUCCESS;
}

ScopedContext::~ScopedContext() {
  if (!pushed_) return;
  CUcontext popped = nullptr;
  (void)api().pop(&popped);
}

}  // namespace rf::collector::driver
