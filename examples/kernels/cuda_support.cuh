// CUDA-side helpers of the example programs: error checks, device buffers, and the measured
// region (cudaProfilerStart + NVTX range around the measured kernels).
#pragma once

#include <cuda_profiler_api.h>
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "support.h"

namespace rf::examples {

/// Exits with status 1 and one line "<example>: <what> failed: <CUDA error>" when `err` is not
/// cudaSuccess. The examples have nothing to clean up that the process exit does not.
inline void cuda_check(const char* example, cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s failed: %s\n", example, what, cudaGetErrorString(err));
  std::exit(1);
}

/// `n` elements of T in device memory (cudaMalloc); freed on destruction.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer(const char* example, size_t n) : n_(n) {
    cuda_check(example, cudaMalloc(reinterpret_cast<void**>(&ptr_), n * sizeof(T)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] T* get() const { return ptr_; }
  [[nodiscard]] size_t size() const { return n_; }
  [[nodiscard]] size_t bytes() const { return n_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t n_;
};

/// Opens the measured region: CUDA is initialized first (CUPTI 13.0 GA crashes when NVTX is
/// called before CUPTI initializes), then cudaProfilerStart and an NVTX push range named after
/// the example.
inline void begin_measured(const char* example) {
  cuda_check(example, cudaFree(nullptr), "cudaFree(nullptr) (CUDA initialization)");
  cuda_check(example, cudaProfilerStart(), "cudaProfilerStart");
  nvtxRangePushA(example);
}

/// Closes the measured region: waits for the kernels, checks for launch and execution errors,
/// pops the NVTX range and calls cudaProfilerStop.
inline void end_measured(const char* example) {
  cuda_check(example, cudaGetLastError(), "kernel launch");
  cuda_check(example, cudaDeviceSynchronize(), "kernel execution");
  nvtxRangePop();
  cuda_check(example, cudaProfilerStop(), "cudaProfilerStop");
}

}  // namespace rf::examples
