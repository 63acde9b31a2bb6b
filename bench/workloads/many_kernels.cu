// many_kernels: the launch-heavy overhead workload (bench/overhead.py): --launches tiny kernels
// (one block of 32 threads, one FMA each) back to back, so per-launch costs of a profiler
// (launch callback, record writing, replay setup) dominate the run time.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

__global__ void tiny(float* out, float a) { out[threadIdx.x] = fmaf(out[threadIdx.x], a, 1.0f); }

int main(int argc, char** argv) {
  long launches = 100000;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--launches") == 0) launches = std::atol(argv[i + 1]);
  if (launches <= 0) {
    std::fprintf(stderr, "many_kernels: --launches must be a positive integer\n");
    return 2;
  }
  float* buf = nullptr;
  if (cudaMalloc(&buf, 32 * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "many_kernels: cudaMalloc failed\n");
    return 1;
  }
  cudaMemset(buf, 0, 32 * sizeof(float));
  for (long i = 0; i < launches; ++i) tiny<<<1, 32>>>(buf, 0.5f);
  const cudaError_t e = cudaDeviceSynchronize();
  cudaFree(buf);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "many_kernels: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("many_kernels: %ld launches\n", launches);
  return 0;
}
