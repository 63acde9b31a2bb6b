// Device selection, CUDA-event timing and error checks of rfbench (measure.h).
#include "measure.h"

#include <cuda_runtime.h>

namespace rfbench {
namespace {

std::string cuda_version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

/// Why cudaGetDeviceCount found no device, in words: no driver, an old driver, or no GPU.
std::string no_device_message(cudaError_t e) {
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0: no driver (libcuda.so) installed or loadable
  cudaRuntimeGetVersion(&runtime);
  if (driver == 0)
    return "no NVIDIA GPU found: no NVIDIA driver is installed or loaded (libcuda.so); rfbench needs a GPU "
           "and its driver";
  if (e == cudaErrorInsufficientDriver)
    return "the NVIDIA driver supports CUDA " + cuda_version_text(driver) + ", older than the CUDA " +
           cuda_version_text(runtime) + " runtime rfbench was built with: update the driver";
  return "no NVIDIA GPU found: the NVIDIA driver (CUDA " + cuda_version_text(driver) + ") sees no GPU" +
         (e == cudaSuccess ? std::string() : std::string(" (") + cudaGetErrorString(e) + ")") +
         "; check CUDA_VISIBLE_DEVICES and /dev/nvidia*";
}

}  // namespace

void check_cuda(int status, const char* what) {
  if (status != cudaSuccess)
    throw GpuError(std::string(what) + " failed: " + cudaGetErrorString(static_cast<cudaError_t>(status)));
}

DeviceIdentity open_device(const Options& options) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorInsufficientDriver || e == cudaErrorNoDevice || (e == cudaSuccess && count == 0)) {
    cudaGetLastError();
    throw GpuError(no_device_message(e));
  }
  check_cuda(e, "cudaGetDeviceCount");
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
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  return d;
}

size_t free_device_memory() {
  size_t free_bytes = 0, total = 0;
  if (cudaMemGetInfo(&free_bytes, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return free_bytes;
}

std::vector<double> time_runs(int runs, void (*run)(void*), void* arg) {
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (start) cudaEventDestroy(start);
      if (stop) cudaEventDestroy(stop);
    }
  } ev;
  check_cuda(cudaEventCreate(&ev.start), "cudaEventCreate");
  check_cuda(cudaEventCreate(&ev.stop), "cudaEventCreate");
  run(arg);  // warm-up: clocks ramp up, code and caches load
  check_cuda(cudaGetLastError(), "warm-up launch");
  check_cuda(cudaDeviceSynchronize(), "warm-up run");
  std::vector<double> seconds;
  for (int i = 0; i < runs; ++i) {
    check_cuda(cudaEventRecord(ev.start), "cudaEventRecord");
    run(arg);
    check_cuda(cudaEventRecord(ev.stop), "cudaEventRecord");
    check_cuda(cudaEventSynchronize(ev.stop), "timed run");
    check_cuda(cudaGetLastError(), "timed launch");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, ev.start, ev.stop), "cudaEventElapsedTime");
    seconds.push_back(double(ms) * 1e-3);
  }
  return seconds;
}

}  // namespace rfbench
