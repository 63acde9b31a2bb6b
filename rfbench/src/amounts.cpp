// rfbench's host-side rules (amounts.h).
#include "amounts.h"

#include <algorithm>
#include <stdexcept>

namespace rfbench {

FmaPrecision fma_precision(const std::string& name) {
  if (name == "fp64") return FmaPrecision::fp64;
  if (name == "fp32") return FmaPrecision::fp32;
  if (name == "fp16") return FmaPrecision::fp16x2;
  throw std::invalid_argument("unknown FMA precision " + name + " (expected fp64, fp32 or fp16)");
}

double flop_per_fma(FmaPrecision p) { return p == FmaPrecision::fp16x2 ? 4.0 : 2.0; }

double fma_kernel_fmas_per_thread(int iters, int chains) {
  return double(iters) * chains + (chains - 1);
}

double fma_launch_flop(FmaPrecision p, long blocks, int threads_per_block, int iters, int chains) {
  return double(blocks) * threads_per_block * fma_kernel_fmas_per_thread(iters, chains) * flop_per_fma(p);
}

double gemm_flop(long m, long n, long k) { return 2.0 * double(m) * double(n) * double(k); }

const char* bandwidth_kernel_name(BandwidthKernel k) {
  switch (k) {
    case BandwidthKernel::read: return "read";
    case BandwidthKernel::copy: return "copy";
    case BandwidthKernel::triad: return "triad";
  }
  return "?";
}

double bandwidth_bytes(BandwidthKernel k, size_t buffer_bytes, int repeats) {
  double buffers = 1;  // read
  if (k == BandwidthKernel::copy) buffers = 2;
  if (k == BandwidthKernel::triad) buffers = 3;
  return buffers * double(buffer_bytes) * repeats;
}

size_t dram_buffer_bytes(size_t l2_bytes, size_t free_bytes, bool quick) {
  constexpr size_t MiB = size_t(1) << 20;
  size_t bytes = quick ? std::max<size_t>(64 * MiB, 4 * l2_bytes) : std::max<size_t>(1024 * MiB, 8 * l2_bytes);
  if (free_bytes > 0) bytes = std::min(bytes, free_bytes / 6);
  bytes = bytes / MiB * MiB;
  return std::max(bytes, MiB);
}

size_t l2_buffer_bytes(size_t l2_bytes) { return std::max<size_t>(l2_bytes / 2, size_t(1) << 20) / 16 * 16; }

size_t gemm_buffer_bytes(const std::string& precision, int n) {
  size_t in = 2, out = 2;
  if (precision == "fp64") in = out = 8;
  if (precision == "tf32") in = out = 4;
  if (precision == "int8") in = 1, out = 4;
  return size_t(n) * size_t(n) * (2 * in + out);
}

std::vector<int> gemm_sizes(const std::string& precision, bool quick, size_t free_bytes) {
  std::vector<int> all;
  if (quick)
    all = {precision == "fp64" ? 1024 : 2048};
  else if (precision == "fp64")
    all = {4096, 8192};
  else
    all = {4096, 8192, 16384};
  std::vector<int> sizes = {all.front()};
  for (size_t i = 1; i < all.size(); ++i)
    if (free_bytes == 0 || gemm_buffer_bytes(precision, all[i]) <= free_bytes / 2) sizes.push_back(all[i]);
  return sizes;
}

std::string tensor_ceiling_key(const std::string& precision) {
  return "tensor_" + precision + (precision == "int8" ? "_op_per_s" : "_flop_per_s");
}

std::string tensor_unsupported(const std::string& precision, int major, int minor) {
  const int cc = major * 10 + minor;
  const std::string sm = "sm_" + std::to_string(major) + std::to_string(minor);
  if (precision == "fp16") return cc >= 70 ? "" : sm + " has no tensor cores (FP16 tensor cores: sm_70 and later)";
  // Blackwell Ultra (sm_103, B300) keeps neither FP64 tensor cores nor INT8 tensor throughput
  // worth a roof (published B300 figures: FP64 1.25 TFLOPS vector and matrix alike, against 37 on
  // B200; INT8 about 0.15 POPS against 4.5): a measured rate there would be a fallback's.
  if (precision == "int8")
    return (cc == 72 || cc >= 75) && cc != 103 ? ""
                                               : sm + " has no INT8 tensor cores (sm_72, sm_75 and later, not sm_103)";
  if (precision == "tf32" || precision == "bf16")
    return cc >= 80 ? "" : sm + " has no " + (precision == "tf32" ? "TF32" : "BF16") + " tensor cores (sm_80 and later)";
  if (precision == "fp8") return cc >= 89 ? "" : sm + " has no FP8 tensor cores (sm_89 and later)";
  if (precision == "fp64")
    return cc == 80 || cc == 90 || cc == 100 ? ""
                                              : sm + " has no FP64 tensor cores (DMMA: sm_80, sm_90 and sm_100 only)";
  throw std::invalid_argument("unknown tensor precision " + precision);
}

}  // namespace rfbench
