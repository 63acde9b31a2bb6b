// stream_copy: a float copy far larger than L2, with predictable DRAM traffic.
//
// out[i] = in[i] for N floats, one element per thread (N is a multiple of the block size, so no
// thread is idle). With 2 GiB per buffer (default) against 50 MB of L2 on H100/H200:
//   dram__bytes_read.sum  ~ N * 4 (every input byte read once from DRAM)
//   dram__bytes_write.sum ~ N * 4 (every output byte written back; at most one L2 of dirty lines
//                                  can still sit in L2 when the kernel ends: < 2.5% of 2 GiB)
//   tolerance 5%. No FP instruction at all (checked in SASS as in ffma.cu).
// Verified with nvcc 13.0.88 for sm_90 (scripts/sass_count.py on the cubin; see
// examples/README.md): no FP instruction; all unpredicated.
#include <cstring>
#include <vector>

#include "cuda_support.cuh"

namespace {

constexpr const char* kExample = "stream_copy";
constexpr int kBlock = 256;

__global__ void __launch_bounds__(kBlock)
    stream_copy(const float* __restrict__ in, float* __restrict__ out) {
  const unsigned i = blockIdx.x * kBlock + threadIdx.x;
  out[i] = in[i];
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rf::examples;
  int64_t mib = 2048;
  bool expected_only = false;
  if (auto rc = parse_args(argc, argv, "stream_copy: DRAM-bound float copy with known bytes",
                           {{"--mib", "MiB per buffer (input and output)", &mib, 1, 8192}},
                           expected_only))
    return *rc;

  const size_t n = static_cast<size_t>(mib) * (1u << 20) / sizeof(float);
  const uint64_t blocks = n / kBlock;
  ExpectedKernel k;
  k.kernel = "stream_copy";
  k.grid = {static_cast<uint32_t>(blocks), 1, 1};
  k.block = {kBlock, 1, 1};
  k.dram_read_bytes = n * sizeof(float);
  k.dram_write_bytes = n * sizeof(float);
  k.dram_rel_tolerance = 0.05;
  if (expected_only) {
    print_expected(kExample, {k});
    return 0;
  }

  DeviceBuffer<float> in(kExample, n), out(kExample, n);  // before the slow host fill
  std::vector<float> host_in(n), host_out(n);
  for (size_t i = 0; i < n; ++i) host_in[i] = static_cast<float>(i & 0xffffff);
  cuda_check(kExample, cudaMemcpy(in.get(), host_in.data(), in.bytes(), cudaMemcpyHostToDevice),
             "cudaMemcpy to device");

  begin_measured(kExample);
  stream_copy<<<static_cast<unsigned>(blocks), kBlock>>>(in.get(), out.get());
  end_measured(kExample);

  cuda_check(kExample, cudaMemcpy(host_out.data(), out.get(), out.bytes(), cudaMemcpyDeviceToHost),
             "cudaMemcpy to host");
  if (std::memcmp(host_in.data(), host_out.data(), n * sizeof(float)) != 0)
    return fail(kExample, "result check failed: the output differs from the input");
  print_expected(kExample, {k});
  return 0;
}
