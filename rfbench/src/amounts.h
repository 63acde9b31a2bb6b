// rfbench's host-side rules, without CUDA, so that a CPU test can check them
// (tests/rfbench/test_rfbench_amounts.cpp): the amount of work each measurement counts (FLOP per
// FMA kernel launch, per GEMM; bytes per bandwidth kernel launch), the problem sizes, and which
// tensor-core precisions a compute capability has. A wrong amount here is a wrong ceiling.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace rfbench {

/// The non-tensor FMA instruction of fma_kernel: DFMA, FFMA, or HFMA2 (two FP16 lanes).
enum class FmaPrecision { fp64, fp32, fp16x2 };

/// "fp64", "fp32", "fp16" (HFMA2); throws std::invalid_argument for anything else.
FmaPrecision fma_precision(const std::string& name);
/// FLOP per FMA instruction per thread: 2 (DFMA, FFMA), 4 (HFMA2: two lanes of 2 FLOP).
double flop_per_fma(FmaPrecision p);
/// FMA instructions one thread of fma_kernel executes: `chains` chains of `iters` FMAs, then
/// chains - 1 FMAs folding them into one value.
double fma_kernel_fmas_per_thread(int iters, int chains);
/// FLOP of one fma_kernel launch of `blocks` x `threads_per_block` threads.
double fma_launch_flop(FmaPrecision p, long blocks, int threads_per_block, int iters, int chains);

/// FLOP (OP for INT8) of one GEMM C[m x n] = A[m x k] * B[k x n]: 2*m*n*k (one multiply and one
/// add per term).
double gemm_flop(long m, long n, long k);

/// The bandwidth kernels (ERT style; kernels.cu).
enum class BandwidthKernel {
  read,   ///< reads one buffer (each 16-byte element once per repeat)
  copy,   ///< reads one buffer, writes another: out[i] = in[i]
  triad,  ///< reads two buffers, writes a third: a[i] = b[i] + s * c[i]
};
const char* bandwidth_kernel_name(BandwidthKernel k);
/// Bytes one launch moves between the SMs and memory, with buffers of `buffer_bytes` each, every
/// element of every buffer touched once per repeat: read 1x, copy 2x (read + write), triad 3x
/// (2 reads + 1 write), times `repeats`.
double bandwidth_bytes(BandwidthKernel k, size_t buffer_bytes, int repeats = 1);

/// Bytes of each DRAM bandwidth buffer: max(1 GiB, 8 x L2) (--quick: max(64 MiB, 4 x L2)), at
/// most a sixth of `free_bytes` (three buffers in half the free memory; 0: not bounded), a
/// multiple of 1 MiB.
size_t dram_buffer_bytes(size_t l2_bytes, size_t free_bytes, bool quick);
/// Bytes of the L2 bandwidth buffer: L2/2 (at least 1 MiB), a multiple of 16.
size_t l2_buffer_bytes(size_t l2_bytes);

/// Square GEMM sizes n (n x n x n) tried for a tensor precision: --quick one size only, 2048
/// (FP64 1024), which scripts/check_flops.py gemm expects; else 4096, 8192 and 16384 (FP64 4096
/// and 8192), without those whose A, B and C take more than half of `free_bytes` (0: no bound;
/// the smallest size is always kept).
std::vector<int> gemm_sizes(const std::string& precision, bool quick, size_t free_bytes);
/// Bytes of A, B and C of an n x n x n GEMM of `precision`'s widest types (INT8: 1-byte inputs,
/// 4-byte INT32 output).
size_t gemm_buffer_bytes(const std::string& precision, int n);

/// The ceilings JSON key of a tensor precision: "tensor_<p>_flop_per_s", INT8 "tensor_int8_op_per_s".
std::string tensor_ceiling_key(const std::string& precision);
/// Empty when a GPU of compute capability major.minor has tensor cores for `precision` ("fp64",
/// "tf32", "fp16", "bf16", "fp8", "int8"); otherwise why not, e.g. "sm_86 has no FP64 tensor cores
/// (DMMA: sm_80, sm_90 and sm_100 only)". FP16: 7.0 and later; INT8: 7.2, 7.5 and later but not
/// 10.3 (B300); TF32, BF16: 8.0 and later; FP8: 8.9 and later; FP64 (DMMA): 8.0, 9.0, 10.0 only.
std::string tensor_unsupported(const std::string& precision, int major, int minor);

}  // namespace rfbench
