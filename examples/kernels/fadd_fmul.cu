// fadd_fmul: an FP32 mix with distinct, analytically known FADD, FMUL and FFMA counts.
//
// Per thread and iteration: kAdds chains s = s + a (__fadd_rn), kMuls chains p = p * m
// (__fmul_rn) and kFmas chains f = fma(f, c, d). The _rn intrinsics are never contracted into an
// FMA, and the counts differ (4, 2, 1) so that a metric swapped with another one is caught.
//   FADD = threads * iters * 4, FMUL = threads * iters * 2, FFMA = threads * iters * 1
//   FP32 FLOP = threads * iters * (4 + 2 + 2 * 1)
// SASS check (as in ffma.cu): fadd_fmul_mix holds exactly 4 FADD, 2 FMUL and 1 FFMA, inside the
// `#pragma unroll 1` loop, and no other FP opcode.
// Verified with nvcc 13.0.88 for sm_90 (scripts/sass_count.py on the cubin; see
// examples/README.md): 4 FADD, 2 FMUL, 1 FFMA, nothing else FP; all unpredicated.
#include <cmath>
#include <cstring>
#include <vector>

#include "cuda_support.cuh"

namespace {

constexpr const char* kExample = "fadd_fmul";
constexpr int kBlock = 256;
constexpr int kAdds = 4, kMuls = 2, kFmas = 1;
constexpr int kValues = kAdds + kMuls + kFmas;  // values per thread, in that order

__global__ void __launch_bounds__(kBlock)
    fadd_fmul_mix(const float* __restrict__ in, float* __restrict__ out, float a, float m,
                  float c, float d, int iters) {
  const unsigned base = (blockIdx.x * kBlock + threadIdx.x) * kValues;
  float v[kValues];
#pragma unroll
  for (int j = 0; j < kValues; ++j) v[j] = in[base + j];
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < kAdds; ++j) v[j] = __fadd_rn(v[j], a);
#pragma unroll
    for (int j = kAdds; j < kAdds + kMuls; ++j) v[j] = __fmul_rn(v[j], m);
#pragma unroll
    for (int j = kAdds + kMuls; j < kValues; ++j) v[j] = fmaf(v[j], c, d);
  }
#pragma unroll
  for (int j = 0; j < kValues; ++j) out[base + j] = v[j];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rf::examples;
  int64_t blocks = 1024, iters = 1024;
  bool expected_only = false;
  if (auto rc = parse_args(argc, argv, "fadd_fmul: FP32 FADD/FMUL/FFMA mix with known counts",
                           {{"--blocks", "thread blocks of 256 threads", &blocks, 1, 65536},
                            {"--iters", "loop iterations per thread", &iters, 1, 1 << 20}},
                           expected_only))
    return *rc;

  const uint64_t work = static_cast<uint64_t>(blocks) * kBlock * static_cast<uint64_t>(iters);
  ExpectedKernel k;
  k.kernel = "fadd_fmul_mix";
  k.grid = {static_cast<uint32_t>(blocks), 1, 1};
  k.block = {kBlock, 1, 1};
  k.fadd = work * kAdds;
  k.fmul = work * kMuls;
  k.ffma = work * kFmas;
  k.fp32_flop = work * (kAdds * 1 + kMuls * 1 + kFmas * 2);
  if (expected_only) {
    print_expected(kExample, {k});
    return 0;
  }

  const size_t n = static_cast<size_t>(blocks) * kBlock * kValues;
  DeviceBuffer<float> in(kExample, n), out(kExample, n);
  std::vector<float> host_in(n), host_out(n);
  for (size_t i = 0; i < n; ++i) host_in[i] = 1.0f + static_cast<float>(i % 977) / 977.0f;
  const float a = 0.000244140625f, m = 1.0001f, c = 0.999f, d = 0.001f;
  cuda_check(kExample, cudaMemcpy(in.get(), host_in.data(), in.bytes(), cudaMemcpyHostToDevice),
             "cudaMemcpy to device");

  begin_measured(kExample);
  fadd_fmul_mix<<<static_cast<unsigned>(blocks), kBlock>>>(in.get(), out.get(), a, m, c, d,
                                                           static_cast<int>(iters));
  end_measured(kExample);

  cuda_check(kExample, cudaMemcpy(host_out.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost),
             "cudaMemcpy to host");
  for (size_t i = 0; i < n; i += 991) {  // IEEE single add, mul and fma: equal bitwise
    const int j = static_cast<int>(i % kValues);
    float v = host_in[i];
    for (int64_t it = 0; it < iters; ++it)
      v = j < kAdds ? v + a : j < kAdds + kMuls ? v * m : std::fma(v, c, d);
    if (std::memcmp(&v, &host_out[i], sizeof v) != 0)
      return fail(kExample, "result check failed at element " + std::to_string(i) + ": got " +
                                std::to_string(host_out[i]) + ", expected " + std::to_string(v));
  }
  print_expected(kExample, {k});
  return 0;
}
