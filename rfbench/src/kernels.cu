// rfbench microbenchmark kernels, ERT-style (Empirical Roofline Toolkit: streaming kernels for
// bandwidth, the best of several kept; independent FMA chains in registers for compute), and
// their host launchers. The amounts each launch counts are in amounts.cpp (tested on CPU).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "amounts.h"
#include "measure.h"

#ifndef RFBENCH_CUDA_ARCHS
#define RFBENCH_CUDA_ARCHS "(unknown)"
#endif

namespace rfbench {
namespace {

constexpr int kChains = 8;    // independent FMA chains per thread (hides FMA latency)
constexpr int kUnroll = 4;    // independent 16-byte loads in flight per thread in the bandwidth kernels
constexpr int kThreads = 256; // threads per block of every kernel

// The bandwidth kernels walk their buffers in a grid-stride loop, kUnroll grid strides per
// iteration: the kUnroll loads of an iteration are independent (all issued before the first
// use), and each is coalesced across the warp. The tail (fewer than kUnroll strides) is done one
// stride at a time, but in read_kernel (also the L2 kernel, whose buffer is a few strides long)
// as one predicated unrolled step. Loads are ld.global.cg (L2 only: streaming data gains nothing from L1); with
// the default (read-only, ld.global.nc) loads ptxas put the triad's first store before its last 4
// loads (sm_90 SASS), with .cg all 8 loads come first.

__global__ void read_kernel(const uint4* __restrict__ in, size_t n, int repeats, unsigned* sink) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  unsigned acc[kUnroll] = {};
  for (int r = 0; r < repeats; ++r) {
    size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
      uint4 v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(in + i + u * stride);  // cached in L2 only
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) acc[u] ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    // The tail (fewer than kUnroll strides left for this thread) with its loads in flight too:
    // the L2 buffer is a few grid strides long, so a tail done one load at a time was a third of
    // each repeat on an H100 (25 MiB, 270,336 threads).
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = i + u * stride < n ? __ldcg(in + i + u * stride) : make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc[u] ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  unsigned s = 0;
#pragma unroll
  for (int u = 0; u < kUnroll; ++u) s ^= acc[u];
  if (s == 0x9e3779b9u) *sink = s;  // keeps the loads; practically never true
}

__global__ void copy_kernel(const float4* __restrict__ in, float4* __restrict__ out, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    float4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = __ldcg(in + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) out[i + u * stride] = v[u];
  }
  for (; i < n; i += stride) out[i] = in[i];
}

__device__ __forceinline__ float4 triad(float4 b, float4 c, float s) {
  return make_float4(fmaf(s, c.x, b.x), fmaf(s, c.y, b.y), fmaf(s, c.z, b.z), fmaf(s, c.w, b.w));
}

__global__ void triad_kernel(float4* __restrict__ a, const float4* __restrict__ b, const float4* __restrict__ c,
                             float s, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < n; i += kUnroll * stride) {
    float4 vb[kUnroll], vc[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      vb[u] = __ldcg(b + i + u * stride);
      vc[u] = __ldcg(c + i + u * stride);
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) a[i + u * stride] = triad(vb[u], vc[u], s);
  }
  for (; i < n; i += stride) a[i] = triad(b[i], c[i], s);
}

template <typename T>
__device__ __forceinline__ T fma_op(T x, T a, T b) { return fma(x, a, b); }
template <>
__device__ __forceinline__ __half2 fma_op<__half2>(__half2 x, __half2 a, __half2 b) { return __hfma2(x, a, b); }

// iters x kChains FMAs, then kChains - 1 folding FMAs per thread: fma_kernel_fmas_per_thread.
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

// Pseudo-random fill (a hash of the index; no cuRAND): GEMM inputs of zeros draw less power than
// real data, so the tensor roofs would come out optimistic.
__device__ __forceinline__ unsigned hash(size_t i, unsigned seed) {
  unsigned x = unsigned(i) * 0x9e3779b1u ^ unsigned(i >> 32) * 0x85ebca6bu ^ seed;
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

__global__ void fill_kernel(void* p, size_t n, FillType type, unsigned seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const unsigned h = hash(i, seed);
    const float u = float(h >> 8) * (2.0f / 16777216.0f) - 1.0f;  // [-1, 1)
    switch (type) {
      case FillType::f64: static_cast<double*>(p)[i] = u; break;
      case FillType::f32: static_cast<float*>(p)[i] = u; break;
      case FillType::f16: static_cast<__half*>(p)[i] = __float2half(u); break;
      case FillType::bf16: static_cast<__nv_bfloat16*>(p)[i] = __float2bfloat16(u); break;
      case FillType::i8: static_cast<signed char*>(p)[i] = static_cast<signed char>(int(h >> 29) - 4); break;
    }
  }
}

/// Blocks of kThreads threads that fill every SM at once (cudaOccupancyMaxActiveBlocksPerMultiprocessor:
/// 8 per SM where an SM holds 2048 threads, 6 where it holds 1536).
template <typename Kernel>
int full_grid(Kernel kernel, const DeviceIdentity& d, int* per_sm_out = nullptr) {
  int per_sm = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  per_sm = std::max(per_sm, 1);
  if (per_sm_out) *per_sm_out = per_sm;
  return per_sm * d.sm_count;
}

struct CopyArgs { const float4* in; float4* out; size_t n; int blocks; };
void run_copy(void* p) {
  auto* a = static_cast<CopyArgs*>(p);
  copy_kernel<<<a->blocks, kThreads>>>(a->in, a->out, a->n);
}

struct ReadArgs { const uint4* in; size_t n; int repeats; unsigned* sink; int blocks; };
void run_read(void* p) {
  auto* a = static_cast<ReadArgs*>(p);
  read_kernel<<<a->blocks, kThreads>>>(a->in, a->n, a->repeats, a->sink);
}

struct TriadArgs { float4* a; const float4* b; const float4* c; size_t n; int blocks; };
void run_triad(void* p) {
  auto* a = static_cast<TriadArgs*>(p);
  triad_kernel<<<a->blocks, kThreads>>>(a->a, a->b, a->c, 0.5f, a->n);
}

template <typename T>
struct FmaArgs { T a, b; int iters; T* sink; int blocks; };
template <typename T>
void run_fma(void* p) {
  auto* a = static_cast<FmaArgs<T>*>(p);
  fma_kernel<T><<<a->blocks, kThreads>>>(a->a, a->b, a->iters, a->sink);
}

Measurement rates(Measurement m, const std::vector<double>& seconds, double amount) {
  for (double s : seconds) m.runs.push_back(amount / s);
  m.value = *std::max_element(m.runs.begin(), m.runs.end());
  return m;
}

/// Device memory freed on scope exit.
struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check_cuda(cudaMalloc(&p, bytes), "cudaMalloc"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

std::string tb_per_s(double bytes_per_s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f TB/s", bytes_per_s * 1e-12);
  return buf;
}

std::string blocks_text(int blocks, int per_sm) {
  return std::to_string(blocks) + " blocks of " + std::to_string(kThreads) + " threads (" + std::to_string(per_sm) +
         " per SM)";
}

}  // namespace

void check_kernel_image(const DeviceIdentity& d) {
  cudaFuncAttributes attr{};
  const cudaError_t e = cudaFuncGetAttributes(&attr, copy_kernel);
  if (e == cudaErrorNoKernelImageForDevice || e == cudaErrorInvalidDeviceFunction) {
    cudaGetLastError();
    throw GpuError("this rfbench has no kernel for " + d.name + " (sm_" + std::to_string(d.cc_major) +
                   std::to_string(d.cc_minor) + "): it was built for CUDA architectures " RFBENCH_CUDA_ARCHS
                   "; rebuild with -DRFBENCH_CUDA_ARCHITECTURES=" + std::to_string(d.cc_major) +
                   std::to_string(d.cc_minor));
  }
  check_cuda(e, "cudaFuncGetAttributes");
}

void fill_random(void* p, size_t count, FillType type, unsigned seed) {
  fill_kernel<<<1024, kThreads>>>(p, count, type, seed);
  check_cuda(cudaGetLastError(), "fill kernel launch");
  check_cuda(cudaDeviceSynchronize(), "fill kernel");
}

Measurement measure_dram(const Options& o, const DeviceIdentity& d) {
  const size_t bytes = dram_buffer_bytes(d.l2_bytes, free_device_memory(), o.quick);
  const size_t n = bytes / sizeof(float4);
  DeviceBuffer x(bytes), y(bytes), z(bytes), sink(sizeof(unsigned));
  fill_random(x.p, bytes / sizeof(float), FillType::f32, 1);
  fill_random(y.p, bytes / sizeof(float), FillType::f32, 2);
  fill_random(z.p, bytes / sizeof(float), FillType::f32, 3);
  struct Result { BandwidthKernel kernel; std::vector<double> seconds; int blocks, per_sm; };
  std::vector<Result> results;
  {
    int per_sm = 0;
    ReadArgs a{static_cast<const uint4*>(x.p), n, 1, static_cast<unsigned*>(sink.p), full_grid(read_kernel, d, &per_sm)};
    results.push_back({BandwidthKernel::read, time_runs(o.runs, run_read, &a), a.blocks, per_sm});
  }
  {
    int per_sm = 0;
    CopyArgs a{static_cast<const float4*>(x.p), static_cast<float4*>(y.p), n, full_grid(copy_kernel, d, &per_sm)};
    results.push_back({BandwidthKernel::copy, time_runs(o.runs, run_copy, &a), a.blocks, per_sm});
  }
  {
    int per_sm = 0;
    TriadArgs a{static_cast<float4*>(z.p), static_cast<const float4*>(x.p), static_cast<const float4*>(y.p), n,
                full_grid(triad_kernel, d, &per_sm)};
    results.push_back({BandwidthKernel::triad, time_runs(o.runs, run_triad, &a), a.blocks, per_sm});
  }
  std::vector<Measurement> ms;
  for (const auto& r : results)
    ms.push_back(rates(Measurement{"dram_bytes_per_s", 0, "bytes/s", "", {}}, r.seconds,
                       bandwidth_bytes(r.kernel, bytes)));
  size_t best = 0;
  for (size_t i = 1; i < ms.size(); ++i)
    if (ms[i].value > ms[best].value) best = i;
  const Result& b = results[best];
  std::string others;
  for (size_t i = 0; i < ms.size(); ++i)
    if (i != best)
      others += std::string(others.empty() ? "" : ", ") + bandwidth_kernel_name(results[i].kernel) + " " +
                tb_per_s(ms[i].value);
  Measurement m = ms[best];
  m.method = std::string(bandwidth_kernel_name(b.kernel)) + " kernel, the best of read-only, copy and triad (" + others +
             "): " + std::to_string(kUnroll) + " independent 16-byte loads per thread per iteration, " +
             blocks_text(b.blocks, b.per_sm) + ", buffers of " + std::to_string(bytes >> 20) + " MiB (L2 " +
             std::to_string(d.l2_bytes >> 20) + " MiB), " + std::to_string(int(bandwidth_bytes(b.kernel, 1))) +
             " x buffer bytes per run";
  return m;
}

Measurement measure_l2(const Options& o, const DeviceIdentity& d) {
  const size_t bytes = l2_buffer_bytes(d.l2_bytes);
  const int repeats = o.quick ? 20 : 200;
  DeviceBuffer in(bytes), sink(sizeof(unsigned));
  fill_random(in.p, bytes / sizeof(float), FillType::f32, 4);
  int per_sm = 0;
  ReadArgs args{static_cast<const uint4*>(in.p), bytes / sizeof(uint4), repeats, static_cast<unsigned*>(sink.p),
                full_grid(read_kernel, d, &per_sm)};
  std::vector<double> s = time_runs(o.runs, run_read, &args);
  Measurement m{"l2_bytes_per_s", 0, "bytes/s",
                "ld.global.cg read kernel (" + std::to_string(kUnroll) + " independent 16-byte loads per thread), " +
                    blocks_text(args.blocks, per_sm) + ", " + std::to_string(bytes >> 10) + " KiB (L2/2) read " +
                    std::to_string(repeats) + " times per run",
                {}};
  return rates(m, s, bandwidth_bytes(BandwidthKernel::read, bytes, repeats));
}

Measurement measure_fma(const Options& o, const DeviceIdentity& d, const std::string& precision) {
  FmaPrecision p;
  try {
    p = fma_precision(precision);
  } catch (const std::invalid_argument& e) {
    throw GpuError(e.what());
  }
  const int iters = o.quick ? 1 << 12 : 1 << 16;
  DeviceBuffer sink(16);
  std::vector<double> s;
  int blocks = 0, per_sm = 0;
  if (p == FmaPrecision::fp64) {
    FmaArgs<double> a{0.999999, 1e-7, iters, static_cast<double*>(sink.p), full_grid(fma_kernel<double>, d, &per_sm)};
    blocks = a.blocks;
    s = time_runs(o.runs, run_fma<double>, &a);
  } else if (p == FmaPrecision::fp32) {
    FmaArgs<float> a{0.9999f, 1e-4f, iters, static_cast<float*>(sink.p), full_grid(fma_kernel<float>, d, &per_sm)};
    blocks = a.blocks;
    s = time_runs(o.runs, run_fma<float>, &a);
  } else {
    FmaArgs<__half2> a{__floats2half2_rn(0.999f, 0.999f), __floats2half2_rn(1e-3f, 1e-3f), iters,
                       static_cast<__half2*>(sink.p), full_grid(fma_kernel<__half2>, d, &per_sm)};
    blocks = a.blocks;
    s = time_runs(o.runs, run_fma<__half2>, &a);
  }
  const char* op = p == FmaPrecision::fp64 ? "DFMA" : p == FmaPrecision::fp32 ? "FFMA" : "HFMA2";
  Measurement m{precision + "_flop_per_s", 0, "FLOP/s",
                std::to_string(kChains) + " independent " + op + " chains x " + std::to_string(iters) +
                    " per thread, " + blocks_text(blocks, per_sm) + ", " +
                    std::to_string(int(flop_per_fma(p))) + " FLOP per " + op,
                {}};
  return rates(m, s, fma_launch_flop(p, blocks, kThreads, iters, kChains));
}

}  // namespace rfbench
