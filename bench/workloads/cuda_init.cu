// cuda_init: initializes CUDA (cudaFree(0)) and exits: bench/overhead.py's measure of what a
// profiler adds at CUDA initialization (budget: < 0.3 s for librfinject).
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  const cudaError_t e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda_init: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
