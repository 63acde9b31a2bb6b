// dfma: an FP64 mix with distinct, analytically known DFMA, DADD and DMUL counts.
//
// Per thread and iteration: kFmas chains x = fma(x, c, d), kAdds chains x = x + a (__dadd_rn) and
// kMuls chains x = x * m (__dmul_rn); the _rn intrinsics are never contracted into a DFMA.
//   DFMA = threads * iters * 4, DADD = threads * iters * 2, DMUL = threads * iters * 1
//   FP64 FLOP = threads * iters * (4 * 2 + 2 + 1)
// SASS check (as in ffma.cu): dfma_mix holds exactly 4 DFMA, 2 DADD and 1 DMUL, inside the
// `#pragma unroll 1` loop, and no other FP opcode.
// Verified with nvcc 13.0.88 for sm_90 (scripts/sass_count.py on the cubin; see
// examples/README.md): 4 DFMA, 2 DADD, 1 DMUL, nothing else FP; all unpredicated.
#include <cmath>
#include <cstring>
#include <vector>

#include "cuda_support.cuh"

namespace {

constexpr const char* kExample = "dfma";
constexpr int kBlock = 256;
constexpr int kFmas = 4, kAdds = 2, kMuls = 1;
constexpr int kValues = kFmas + kAdds + kMuls;  // values per thread, in that order

__global__ void __launch_bounds__(kBlock)
    dfma_mix(const double* __restrict__ in, double* __restrict__ out, double c, double d,
             double a, double m, int iters) {
  const unsigned base = (blockIdx.x * kBlock + threadIdx.x) * kValues;
  double v[kValues];
#pragma unroll
  for (int j = 0; j < kValues; ++j) v[j] = in[base + j];
#pragma unroll 1
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int j = 0; j < kFmas; ++j) v[j] = fma(v[j], c, d);
#pragma unroll
    for (int j = kFmas; j < kFmas + kAdds; ++j) v[j] = __dadd_rn(v[j], a);
#pragma unroll
    for (int j = kFmas + kAdds; j < kValues; ++j) v[j] = __dmul_rn(v[j], m);
  }
#pragma unroll
  for (int j = 0; j < kValues; ++j) out[base + j] = v[j];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rf::examples;
  int64_t blocks = 1024, iters = 512;
  bool expected_only = false;
  if (auto rc = parse_args(argc, argv, "dfma: FP64 DFMA/DADD/DMUL mix with known counts",
                           {{"--blocks", "thread blocks of 256 threads", &blocks, 1, 65536},
                            {"--iters", "loop iterations per thread", &iters, 1, 1 << 20}},
                           expected_only))
    return *rc;

  const uint64_t work = static_cast<uint64_t>(blocks) * kBlock * static_cast<uint64_t>(iters);
  ExpectedKernel k;
  k.kernel = "dfma_mix";
  k.grid = {static_cast<uint32_t>(blocks), 1, 1};
  k.block = {kBlock, 1, 1};
  k.dfma = work * kFmas;
  k.dadd = work * kAdds;
  k.dmul = work * kMuls;
  k.fp64_flop = work * (kFmas * 2 + kAdds * 1 + kMuls * 1);
  if (expected_only) {
    print_expected(kExample, {k});
    return 0;
  }

  const size_t n = static_cast<size_t>(blocks) * kBlock * kValues;
  DeviceBuffer<double> in(kExample, n), out(kExample, n);
  std::vector<double> host_in(n), host_out(n);
  for (size_t i = 0; i < n; ++i) host_in[i] = 1.0 + static_cast<double>(i % 1009) / 1009.0;
  const double c = 0.999, d = 0.001, a = 1.0 / 4096, m = 1.0001;
  cuda_check(kExample, cudaMemcpy(in.get(), host_in.data(), in.bytes(), cudaMemcpyHostToDevice),
             "cudaMemcpy to device");

  begin_measured(kExample);
  dfma_mix<<<static_cast<unsigned>(blocks), kBlock>>>(in.get(), out.get(), c, d, a, m,
                                                      static_cast<int>(iters));
  end_measured(kExample);

  cuda_check(kExample, cudaMemcpy(host_out.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost),
             "cudaMemcpy to host");
  for (size_t i = 0; i < n; i += 1013) {  // IEEE double add, mul and fma: equal bitwise
    const int j = static_cast<int>(i % kValues);
    double v = host_in[i];
    for (int64_t it = 0; it < iters; ++it)
      v = j < kFmas ? std::fma(v, c, d) : j < kFmas + kAdds ? v + a : v * m;
    if (std::memcmp(&v, &host_out[i], sizeof v) != 0)
      return fail(kExample, "result check failed at element " + std::to_string(i) + ": got " +
                                std::to_string(host_out[i]) + ", expected " + std::to_string(v));
  }
  print_expected(kExample, {k});
  return 0;
}
