// Device selection, CUDA-event timing and error checks of rfbench (measure.h).
#include "measure.h"

#include <cuda_runtime.h>

namespace rfbench {

void check_cuda(int status, const char* what) {
  if (status != cudaSuccess)
    throw GpuError(std::string(what) + " failed: " + cudaGetErrorString(static_cast<cudaError_t>(status)));
}

DeviceIdentity open_device(const Options& options) {
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  if (options.device < 0 || options.device >= count)
    throw GpuError("device " + std::to_string(options.device) + " does not exist (" + std::to_string(count) +
                   " CUDA devices)");
  check_cuda(cudaSetDevice(options.device), "cudaSetDevice");
  cudaDeviceProp p{};
  check_cuda(cudaGetDeviceProperties(&p, options.device), "cudaGetDeviceProperties");
  DeviceIdentity d;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.l2_bytes = static_cast<size_t>(p.l2CacheSize);
  d.global_memory_bytes = p.totalGlobalMem;
  return d;
}

std::vector<double> time_runs(int runs, void (*run)(void*), void* arg) {
  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&stop), "cudaEventCreate");
  run(arg);  // warm-up: clocks ramp up, code and caches load
  check_cuda(cudaGetLastError(), "warm-up launch");
  check_cuda(cudaDeviceSynchronize(), "warm-up run");
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    check_cuda(cudaEventRecord(start), "cudaEventRecord");
    run(arg);
    check_cuda(cudaEventRecord(stop), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(stop), "timed run");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
    seconds.push_back(double(ms) * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return seconds;
}

}  // namespace rfbench
