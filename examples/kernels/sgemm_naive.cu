// sgemm_naive: C = A * B for n x n row-major FP32 matrices, one thread per element of C.
//
// Each thread runs acc = fma(A[row, k], B[k, col], acc) for k = 0..n-1 and stores acc.
//   FFMA thread instructions = n^3 exactly (n multiple of 16: no idle thread)
//   FP32 FLOP = 2 n^3 (the textbook GEMM count)
// SASS check (as in ffma.cu): sgemm_naive holds exactly 1 FFMA, inside the `#pragma unroll 1` k
// loop, and no other FP opcode (in particular no FMUL for the first iteration).
// Verified with nvcc 13.0.88 for sm_90 (scripts/sass_count.py on the cubin; see
// examples/README.md): 1 FFMA (acc = 0 is an integer IMAD.MOV), nothing else FP; all unpredicated.
#include <cmath>
#include <cstring>
#include <vector>

#include "cuda_support.cuh"

namespace {

constexpr const char* kExample = "sgemm_naive";
constexpr int kTile = 16;  // 16 x 16 threads per block

__global__ void __launch_bounds__(kTile * kTile)
    sgemm_naive(const float* __restrict__ a, const float* __restrict__ b, float* __restrict__ c,
                int n) {
  const int row = static_cast<int>(blockIdx.y) * kTile + static_cast<int>(threadIdx.y);
  const int col = static_cast<int>(blockIdx.x) * kTile + static_cast<int>(threadIdx.x);
  float acc = 0.0f;
#pragma unroll 1
  for (int k = 0; k < n; ++k)
    acc = fmaf(a[static_cast<size_t>(row) * n + k], b[static_cast<size_t>(k) * n + col], acc);
  c[static_cast<size_t>(row) * n + col] = acc;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rf::examples;
  int64_t n = 1024;
  bool expected_only = false;
  if (auto rc = parse_args(argc, argv, "sgemm_naive: naive FP32 GEMM with FFMA count n^3",
                           {{"--n", "matrix size (M = N = K)", &n, kTile, 16384, kTile}},
                           expected_only))
    return *rc;

  const uint64_t un = static_cast<uint64_t>(n);
  ExpectedKernel k;
  k.kernel = "sgemm_naive";
  k.grid = {static_cast<uint32_t>(n / kTile), static_cast<uint32_t>(n / kTile), 1};
  k.block = {kTile, kTile, 1};
  k.ffma = un * un * un;
  k.fp32_flop = 2 * un * un * un;
  if (expected_only) {
    print_expected(kExample, {k});
    return 0;
  }

  const size_t elems = static_cast<size_t>(n) * static_cast<size_t>(n);
  DeviceBuffer<float> da(kExample, elems), db(kExample, elems), dc(kExample, elems);
  std::vector<float> ha(elems), hb(elems), hc(elems);
  for (size_t i = 0; i < elems; ++i) {
    ha[i] = static_cast<float>(i % 17) / 16.0f - 0.5f;
    hb[i] = static_cast<float>(i % 13) / 12.0f - 0.5f;
  }
  cuda_check(kExample, cudaMemcpy(da.get(), ha.data(), da.bytes(), cudaMemcpyHostToDevice),
             "cudaMemcpy to device");
  cuda_check(kExample, cudaMemcpy(db.get(), hb.data(), db.bytes(), cudaMemcpyHostToDevice),
             "cudaMemcpy to device");

  const unsigned tiles = static_cast<unsigned>(n / kTile);
  begin_measured(kExample);
  sgemm_naive<<<dim3(tiles, tiles), dim3(kTile, kTile)>>>(da.get(), db.get(), dc.get(),
                                                         static_cast<int>(n));
  end_measured(kExample);

  cuda_check(kExample, cudaMemcpy(hc.data(), dc.get(), dc.bytes(), cudaMemcpyDeviceToHost),
             "cudaMemcpy to host");
  for (size_t idx = 0; idx < elems; idx += 4099) {  // same fma order as the kernel: bitwise equal
    const size_t row = idx / static_cast<size_t>(n), col = idx % static_cast<size_t>(n);
    float acc = 0.0f;
    for (size_t kk = 0; kk < static_cast<size_t>(n); ++kk)
      acc = std::fma(ha[row * static_cast<size_t>(n) + kk], hb[kk * static_cast<size_t>(n) + col],
                     acc);
    if (std::memcmp(&acc, &hc[idx], sizeof acc) != 0)
      return fail(kExample, "result check failed at C[" + std::to_string(row) + "][" +
                                std::to_string(col) + "]: got " + std::to_string(hc[idx]) +
                                ", expected " + std::to_string(acc));
  }
  print_expected(kExample, {k});
  return 0;
}
