// ffma: FP32 fused multiply-add chains with an analytically known FFMA count.
//
// Every thread keeps kChains independent chains v = fma(v, a, b) (a, b kernel arguments, so nothing
// can be folded at compile time; each chain starts from a different loaded value and is stored,
// so none is dead) and advances each of them `iters` times.
//   FFMA thread instructions = blocks * 256 * iters * kChains; no other FP instruction.
//   FP32 FLOP = 2 * FFMA.
// SASS check (tests/examples, scripts/sass_count.py on the cubin built with the same flags, and
// `cuobjdump -sass` on the GPU machine): ffma_loop holds exactly kChains FFMA, all inside the loop
// (`#pragma unroll 1`), and no other FP opcode (no FADD/FMUL/HFMA2/HFMA2.MMA/D*), so the dynamic
// count is threads * iters * kChains.
// Verified with nvcc 13.0.88 for sm_90 (scripts/sass_count.py on the cubin; see
// examples/README.md): 8 FFMA, nothing else FP; all unpredicated.
#include <cmath>
#include <cstring>
#include <vector>

#include "cuda_support.cuh"

namespace {

constexpr const char* kExample = "ffma";
constexpr int kBlock = 256;
constexpr int kChains = 8;

__global__ void __launch_bounds__(kBlock)
    ffma_loop(const float* __restrict__ in, float* __restrict__ out, float a, float b, int iters) {
  const unsigned base = (blockIdx.x * kBlock + threadIdx.x) * kChains;
  float v[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) v[c] = in[base + c];
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) v[c] = fmaf(v[c], a, b);
  }
#pragma unroll
  for (int c = 0; c < kChains; ++c) out[base + c] = v[c];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rf::examples;
  int64_t blocks = 1024, iters = 1024;
  bool expected_only = false;
  if (auto rc = parse_args(argc, argv, "ffma: FP32 FFMA chains with a known FFMA count",
                           {{"--blocks", "thread blocks of 256 threads", &blocks, 1, 65536},
                            {"--iters", "loop iterations per thread", &iters, 1, 1 << 20}},
                           expected_only))
    return *rc;

  const uint64_t threads = static_cast<uint64_t>(blocks) * kBlock;
  ExpectedKernel k;
  k.kernel = "ffma_loop";
  k.grid = {static_cast<uint32_t>(blocks), 1, 1};
  k.block = {kBlock, 1, 1};
  k.ffma = threads * static_cast<uint64_t>(iters) * kChains;
  k.fp32_flop = 2 * threads * static_cast<uint64_t>(iters) * kChains;  // multiply + add per FMA
  if (expected_only) {
    print_expected(kExample, {k});
    return 0;
  }

  const size_t n = threads * kChains;
  DeviceBuffer<float> in(kExample, n), out(kExample, n);
  std::vector<float> host_in(n), host_out(n);
  for (size_t i = 0; i < n; ++i) host_in[i] = 1.0f + static_cast<float>(i % 1000) / 1000.0f;
  const float a = 0.999f, b = 0.001f;
  cuda_check(kExample, cudaMemcpy(in.get(), host_in.data(), in.bytes(), cudaMemcpyHostToDevice),
             "cudaMemcpy to device");

  begin_measured(kExample);
  ffma_loop<<<static_cast<unsigned>(blocks), kBlock>>>(in.get(), out.get(), a, b,
                                                       static_cast<int>(iters));
  end_measured(kExample);

  cuda_check(kExample, cudaMemcpy(host_out.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost),
             "cudaMemcpy to host");
  for (size_t i = 0; i < n; i += 997) {  // std::fma rounds once, like FFMA: results equal bitwise
    float v = host_in[i];
    for (int64_t it = 0; it < iters; ++it) v = std::fma(v, a, b);
    if (std::memcmp(&v, &host_out[i], sizeof v) != 0)
      return fail(kExample, "result check failed at element " + std::to_string(i) + ": got " +
                                std::to_string(host_out[i]) + ", expected " + std::to_string(v));
  }
  print_expected(kExample, {k});
  return 0;
}
