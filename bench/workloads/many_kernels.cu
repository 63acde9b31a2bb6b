// many_kernels: the launch-heavy overhead workload (bench/overhead.py): --launches tiny kernels
// (one block of 32 threads, one FMA each) back to back, so per-launch costs of a profiler
// (launch callback, record writing, replay setup) dominate the run time.
//
// The launches are split into --steps equal steps, like the iterations of a training loop. The
// profiled region is one cudaProfilerStart/Stop window around all steps, or with
// --window-per-step one window per step (what replay across steps, RFPROF_REPLAY=step, profiles:
// one pass per window).
#include <cuda_profiler_api.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void tiny(float* out, float a) { out[threadIdx.x] = fmaf(out[threadIdx.x], a, 1.0f); }

int main(int argc, char** argv) {
  long launches = 100000, steps = 1;
  bool window_per_step = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--window-per-step") == 0) {
      window_per_step = true;
    } else if (i + 1 < argc && std::strcmp(argv[i], "--launches") == 0) {
      launches = std::atol(argv[++i]);
    } else if (i + 1 < argc && std::strcmp(argv[i], "--steps") == 0) {
      steps = std::atol(argv[++i]);
    } else {
      std::fprintf(stderr, "many_kernels: unknown argument '%s' (expected --launches N, --steps N, "
                           "--window-per-step)\n", argv[i]);
      return 2;
    }
  }
  if (launches <= 0 || steps <= 0 || launches % steps != 0) {
    std::fprintf(stderr, "many_kernels: --launches and --steps must be positive integers, "
                         "--launches a multiple of --steps\n");
    return 2;
  }
  float* buf = nullptr;
  if (cudaMalloc(&buf, 32 * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "many_kernels: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(buf, 0, 32 * sizeof(float));
  cudaDeviceSynchronize();
  const long per_step = launches / steps;
  if (!window_per_step) cudaProfilerStart();
  for (long s = 0; s < steps; ++s) {
    if (window_per_step) cudaProfilerStart();
    for (long i = 0; i < per_step; ++i) tiny<<<1, 32>>>(buf, 0.5f);
    if (window_per_step) {
      cudaDeviceSynchronize();  // the step's kernels end inside its window, as a training step's do
      cudaProfilerStop();
    }
  }
  if (!window_per_step) cudaProfilerStop();
  const cudaError_t e = cudaDeviceSynchronize();
  cudaFree(buf);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "many_kernels: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("many_kernels: %ld launches in %ld steps\n", launches, steps);
  return 0;
}
