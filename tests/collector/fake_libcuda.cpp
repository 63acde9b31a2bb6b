// A fake CUDA driver, built as libcuda.so.1 in its own folder, for the fake-CUPTI session tests:
// the few calls collector/src/driver_shim.cpp resolves from an already loaded libcuda.so.1. A test
// child dlopens it (fake_session.h, load_fake_driver) before the session starts; the shim then
// finds it by its soname. Its state is set through the rf_fake_cuda_* functions below.
#include <cuda.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace {

thread_local std::vector<CUcontext> t_stack;  // [0..n-1]: pushed contexts; back() is current
thread_local CUcontext t_current = nullptr;   // set by the application's "cudaSetDevice"
std::atomic<CUstream> g_capturing{nullptr};
std::atomic<unsigned long long> g_pushes{0};

CUcontext current() { return t_stack.empty() ? t_current : t_stack.back(); }

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

// ---- the driver calls (cuda.h) ----

CUresult CUDAAPI cuDriverGetVersion(int* version) {
  *version = 13000;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxGetCurrent(CUcontext* ctx) {
  *ctx = current();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPushCurrent(CUcontext ctx) {  // cuCtxPushCurrent_v2 (cuda.h's macro)
  ++g_pushes;
  t_stack.push_back(ctx);
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuCtxPopCurrent(CUcontext* ctx) {  // cuCtxPopCurrent_v2
  if (t_stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx) *ctx = t_stack.back();
  t_stack.pop_back();
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream stream, CUstreamCaptureStatus* status) {
  *status = (stream && stream == g_capturing.load()) ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal < 0 || ordinal > 7) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetAttribute(int* value, CUdevice_attribute attr, CUdevice) {
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
