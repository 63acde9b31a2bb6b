// rfbench microbenchmark kernels, ERT-style (Empirical Roofline Toolkit: streaming copies for
// bandwidth, independent FMA chains in registers for compute), and their host launchers.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "measure.h"

namespace rfbench {
namespace {

constexpr int kChains = 8;  // independent FMA chains per thread (hides FMA latency)

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = in[i];
}

__global__ void read_kernel(const float4* __restrict__ in, size_t n, int repeats, float* sink) {
  float acc = 0.f;
  for (int r = 0; r < repeats; ++r)
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
      float4 v = __ldcg(in + i);  // cache in L2 only
      acc += v.x + v.y + v.z + v.w;
    }
  if (acc == 1234.5f) *sink = acc;  // keeps the loads; practically never true
}

template <typename T>
__device__ __forceinline__ T fma_op(T x, T a, T b) { return fma(x, a, b); }
template <>
__device__ __forceinline__ __half2 fma_op<__half2>(__half2 x, __half2 a, __half2 b) { return __hfma2(x, a, b); }

template <typename T>
__global__ void fma_kernel(T a, T b, int iters, T* sink) {
  T x[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) x[c] = a;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) x[c] = fma_op(x[c], a, b);
  }
  T s = x[0];
#pragma unroll
  for (int c = 1; c < kChains; ++c) s = fma_op(s, a, x[c]);
  if (threadIdx.x == 0 && blockIdx.x == 0) *sink = s;  // one store: the chains are live
}

struct CopyArgs { const float4* in; float4* out; size_t n; int blocks; };
void run_copy(void* p) {
  auto* a = static_cast<CopyArgs*>(p);
  copy_kernel<<<a->blocks, 256>>>(a->in, a->out, a->n);
}

struct ReadArgs { const float4* in; size_t n; int repeats; float* sink; int blocks; };
void run_read(void* p) {
  auto* a = static_cast<ReadArgs*>(p);
  read_kernel<<<a->blocks, 256>>>(a->in, a->n, a->repeats, a->sink);
}

template <typename T>
struct FmaArgs { T a, b; int iters; T* sink; int blocks; };
template <typename T>
void run_fma(void* p) {
  auto* a = static_cast<FmaArgs<T>*>(p);
  fma_kernel<T><<<a->blocks, 256>>>(a->a, a->b, a->iters, a->sink);
}

Measurement rates(Measurement m, const std::vector<double>& seconds, double amount) {
  for (double s : seconds) m.runs.push_back(amount / s);
  m.value = *std::max_element(m.runs.begin(), m.runs.end());
  return m;
}

}  // namespace

Measurement measure_dram(const Options& o, const DeviceIdentity& d) {
  size_t bytes = std::max<size_t>(size_t(1) << 30, 8 * d.l2_bytes);
  if (o.quick) bytes = std::max<size_t>(size_t(64) << 20, 4 * d.l2_bytes);
  void *in = nullptr, *out = nullptr;
  check_cuda(cudaMalloc(&in, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&out, bytes), "cudaMalloc");
  check_cuda(cudaMemset(in, 0, bytes), "cudaMemset");
  CopyArgs args{static_cast<const float4*>(in), static_cast<float4*>(out), bytes / sizeof(float4), d.sm_count * 8};
  std::vector<double> s = time_runs(o.runs, run_copy, &args);
  cudaFree(in);
  cudaFree(out);
  Measurement m{"dram_bytes_per_s", 0, "bytes/s",
                "float4 copy kernel, " + std::to_string(bytes >> 20) + " MiB read + written per run", {}};
  return rates(m, s, 2.0 * double(bytes));
}

Measurement measure_l2(const Options& o, const DeviceIdentity& d) {
  const size_t bytes = std::max<size_t>(d.l2_bytes / 2, 1 << 20);
  const int repeats = o.quick ? 20 : 200;
  void* in = nullptr;
  float* sink = nullptr;
  check_cuda(cudaMalloc(&in, bytes), "cudaMalloc");
  check_cuda(cudaMalloc(&sink, sizeof(float)), "cudaMalloc");
  check_cuda(cudaMemset(in, 0, bytes), "cudaMemset");
  ReadArgs args{static_cast<const float4*>(in), bytes / sizeof(float4), repeats, sink, d.sm_count * 8};
  std::vector<double> s = time_runs(o.runs, run_read, &args);
  cudaFree(in);
  cudaFree(sink);
  Measurement m{"l2_bytes_per_s", 0, "bytes/s",
                "ld.global.cg read kernel, " + std::to_string(bytes >> 10) + " KiB (L2/2) read " +
                    std::to_string(repeats) + " times per run", {}};
  return rates(m, s, double(bytes) * repeats);
}

Measurement measure_fma(const Options& o, const DeviceIdentity& d, const std::string& precision) {
  const int blocks = d.sm_count * 16;
  const int iters = o.quick ? 1 << 12 : 1 << 16;
  const double fmas = double(blocks) * 256 * iters * kChains;
  void* sink = nullptr;
  check_cuda(cudaMalloc(&sink, 16), "cudaMalloc");
  std::vector<double> s;
  double flop_per_fma = 2.0;
  if (precision == "fp64") {
    FmaArgs<double> a{0.999999, 1e-7, iters, static_cast<double*>(sink), blocks};
    s = time_runs(o.runs, run_fma<double>, &a);
  } else if (precision == "fp32") {
    FmaArgs<float> a{0.9999f, 1e-4f, iters, static_cast<float*>(sink), blocks};
    s = time_runs(o.runs, run_fma<float>, &a);
  } else if (precision == "fp16") {
    FmaArgs<__half2> a{__floats2half2_rn(0.999f, 0.999f), __floats2half2_rn(1e-3f, 1e-3f), iters,
                       static_cast<__half2*>(sink), blocks};
    s = time_runs(o.runs, run_fma<__half2>, &a);
    flop_per_fma = 4.0;  // HFMA2: two lanes
  } else {
    cudaFree(sink);
    throw GpuError("unknown FMA precision " + precision + " (expected fp64, fp32 or fp16)");
  }
  cudaFree(sink);
  Measurement m{precision + "_flop_per_s", 0, "FLOP/s",
                std::to_string(kChains) + " independent " + (precision == "fp16" ? "HFMA2" : "FMA") +
                    " chains x " + std::to_string(iters) + " per thread, " + std::to_string(blocks) + " x 256 threads",
                {}};
  return rates(m, s, fmas * flop_per_fma);
}

}  // namespace rfbench
