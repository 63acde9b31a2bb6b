// The few CUDA driver calls the collector needs, resolved at run time from the libcuda.so.1 that
// the application (through CUPTI) has already loaded. librfinject does not link libcuda, so it
// loads on machines without a driver; without a loaded driver these calls do nothing.
#pragma once

#include <cuda.h>

namespace rf::collector::driver {

/// cuDriverGetVersion (e.g. 13000), or 0 when the driver is not loaded or the call fails.
int version() noexcept;

/// The calling thread's current context (cuCtxGetCurrent), or null without one or a driver.
CUcontext current_context() noexcept;

/// Attribute `attr` of CUDA device `ordinal` (cuDeviceGet + cuDeviceGetAttribute), e.g.
/// CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE in kHz or CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH in
/// bits; 0 when the call fails (bad ordinal, driver not initialized), the value is negative, or
/// without a driver.
unsigned device_attribute(int ordinal, CUdevice_attribute attr) noexcept;

/// True if `stream` is capturing into a CUDA graph (cuStreamIsCapturing): a launch into it runs no
/// kernel now. False when not capturing, on error (e.g. the legacy stream during a global capture,
/// whose launch fails anyway) or without a driver.
bool is_capturing(CUstream stream) noexcept;

/// Makes `ctx` the current context of this thread for the guard's lifetime when it is not
/// already (cuCtxPushCurrent / cuCtxPopCurrent); does nothing otherwise or without a driver.
class ScopedContext {
 public:
  explicit ScopedContext(CUcontext ctx) noexcept;
  ~ScopedContext();
  ScopedContext(const ScopedContext&) = delete;
  ScopedContext& operator=(const ScopedContext&) = delete;

 private:
  bool pushed_ = false;
};

}  // namespace rf::collector::driver
