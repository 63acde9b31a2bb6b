// hfma2: packed half2 fused multiply-add chains with a known HFMA count.
//
// Every thread keeps kChains independent half2 chains v = __hfma2(v, c, d) and advances each of
// them `iters` times. A half2 instruction counts once in
// smsp__sass_thread_inst_executed_op_hfma_pred_on.sum and does two lanes of work.
//   HFMA thread instructions = blocks * 256 * iters * kChains; no other FP instruction.
//   FP16 FLOP (analytic: 2 lanes x (multiply + add)) = 4 * HFMA, which is what ncu's roofline
//   weight for hfma gives (2 hadd + 2 hmul + 4 hfma).
// Inputs are loaded and results stored as raw half2 (no half<->float conversion on the device,
// which ptxas may implement with HADD2.F32, an hadd).
// Why only HFMA2: for sm_90, ptxas balances the FMA pipe against the MMA pipe by emitting half of
// the chains as HFMA2.MMA, and it also rewrites __hadd2 as HFMA2.MMA(x, 1, y) and __hmul2 as
// HFMA2.MMA(x, y, -0) (seen in the cubin with scripts/sass_count.py). So hadd/hmul counts are
// not under the programmer's control, while the hfma count is, provided HFMA2.MMA counts as an
// hfma. SASS check (as in ffma.cu): half2_fma_loop holds kChains HFMA2 + HFMA2.MMA in total,
// inside the `#pragma unroll 1` loop, and no other FP opcode. The GPU comparison with ncu tells
// whether the HFMA2.MMA half is counted (validation/README.md).
// Verified with nvcc 13.0.88 for sm_90 (scripts/sass_count.py on the cubin; see
// examples/README.md): 4 HFMA2 + 4 HFMA2.MMA, nothing else FP; all unpredicated.
#include <cuda_fp16.h>

#include <cstring>
#include <vector>

#include "cuda_support.cuh"

namespace {

constexpr const char* kExample = "hfma2";
constexpr int kBlock = 256;
constexpr int kChains = 8;

__global__ void __launch_bounds__(kBlock)
    half2_fma_loop(const __half2* __restrict__ in, __half2* __restrict__ out, __half2 c, __half2 d,
                   int iters) {
  // 32-bit indices: a 64-bit index makes ptxas zero a register with HFMA2.MMA (an extra hfma).
  const unsigned base = (blockIdx.x * kBlock + threadIdx.x) * kChains;
  __half2 v[kChains];
#pragma unroll
  for (int j = 0; j < kChains; ++j) v[j] = in[base + j];
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < kChains; ++j) v[j] = __hfma2(v[j], c, d);
  }
#pragma unroll
  for (int j = 0; j < kChains; ++j) out[base + j] = v[j];
}

/// One lane of HFMA2 on the host: the exact a * c + d in double (these halves' products and sums
/// fit in 53 bits) rounded once to half, as the GPU rounds.
__half emulate_fma(__half a, __half c, __half d) {
  const double exact = static_cast<double>(__half2float(a)) * __half2float(c) + __half2float(d);
  return __double2half(exact);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rf::examples;
  int64_t blocks = 1024, iters = 1024;
  bool expected_only = false;
  if (auto rc = parse_args(argc, argv, "hfma2: half2 HFMA2 chains with a known HFMA count",
                           {{"--blocks", "thread blocks of 256 threads", &blocks, 1, 65536},
                            {"--iters", "loop iterations per thread", &iters, 1, 1 << 20}},
                           expected_only))
    return *rc;

  const uint64_t work = static_cast<uint64_t>(blocks) * kBlock * static_cast<uint64_t>(iters);
  ExpectedKernel k;
  k.kernel = "half2_fma_loop";
  k.grid = {static_cast<uint32_t>(blocks), 1, 1};
  k.block = {kBlock, 1, 1};
  k.hfma = work * kChains;
  constexpr uint64_t kLanes = 2, kFlopPerLane = 2;  // multiply + add in each of 2 lanes
  k.fp16_flop = work * kChains * kLanes * kFlopPerLane;
  if (expected_only) {
    print_expected(kExample, {k});
    return 0;
  }

  const size_t n = static_cast<size_t>(blocks) * kBlock * kChains;
  DeviceBuffer<__half2> in(kExample, n), out(kExample, n);
  std::vector<__half2> host_in(n), host_out(n);
  for (size_t i = 0; i < n; ++i)
    host_in[i] = __floats2half2_rn(1.0f + static_cast<float>(i % 256) / 256.0f,
                                   1.0f + static_cast<float>(i % 100) / 128.0f);
  const __half hc = __double2half(0.5), hd = __double2half(1.0);
  const __half2 c{hc, hc}, d{hd, hd};
  cuda_check(kExample, cudaMemcpy(in.get(), host_in.data(), in.bytes(), cudaMemcpyHostToDevice),
             "cudaMemcpy to device");

  begin_measured(kExample);
  half2_fma_loop<<<static_cast<unsigned>(blocks), kBlock>>>(in.get(), out.get(), c, d,
                                                            static_cast<int>(iters));
  end_measured(kExample);

  cuda_check(kExample, cudaMemcpy(host_out.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost),
             "cudaMemcpy to host");
  for (size_t i = 0; i < n; i += 983) {
    __half lo = host_in[i].x, hi = host_in[i].y;
    for (int64_t it = 0; it < iters; ++it) {
      lo = emulate_fma(lo, hc, hd);
      hi = emulate_fma(hi, hc, hd);
    }
    const __half2 want{lo, hi};
    if (std::memcmp(&want, &host_out[i], sizeof want) != 0)
      return fail(kExample, "result check failed at element " + std::to_string(i) + ": got (" +
                                std::to_string(__low2float(host_out[i])) + ", " +
                                std::to_string(__high2float(host_out[i])) + "), expected (" +
                                std::to_string(__half2float(lo)) + ", " +
                                std::to_string(__half2float(hi)) + ")");
  }
  print_expected(kExample, {k});
  return 0;
}
