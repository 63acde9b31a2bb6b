// big_memory: the memory-heavy overhead workload (bench/overhead.py): holds --gib GiB of device
// memory (default 40) and runs --kernels kernels that each read and write a 256 MiB slice of it.
// Kernel replay must save and restore the memory a kernel may write, so its cost grows with the
// memory the process holds, not with the work the kernels do.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__global__ void scale(float4* p, size_t n, float a) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    float4 v = p[i];
    p[i] = make_float4(v.x * a, v.y * a, v.z * a, v.w * a);
  }
}

int main(int argc, char** argv) {
  long gib = 40, kernels = 20;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--gib") == 0) gib = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--kernels") == 0) kernels = std::atol(argv[i + 1]);
  }
  if (gib <= 0 || kernels <= 0) {
    std::fprintf(stderr, "big_memory: --gib and --kernels must be positive integers\n");
    return 2;
  }
  std::vector<void*> chunks;  // 1 GiB allocations, as frameworks' caching allocators hold them
  for (long g = 0; g < gib; ++g) {
    void* p = nullptr;
    if (cudaMalloc(&p, size_t(1) << 30) != cudaSuccess) {
      std::fprintf(stderr, "big_memory: could only allocate %ld GiB\n", g);
      return 1;
    }
    cudaMemset(p, 0, size_t(1) << 30);
    chunks.push_back(p);
  }
  const size_t slice = (size_t(256) << 20) / sizeof(float4);
  for (long k = 0; k < kernels; ++k) {
    auto* base = static_cast<float4*>(chunks[size_t(k) % chunks.size()]);
    scale<<<1024, 256>>>(base, slice, 1.0001f);
  }
  const cudaError_t e = cudaDeviceSynchronize();
  for (void* p : chunks) cudaFree(p);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "big_memory: %s\n", cudaGetErrorString(e));
    return 1;
  }
  std::printf("big_memory: %ld GiB held, %ld kernels\n", gib, kernels);
  return 0;
}
