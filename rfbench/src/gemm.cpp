// Tensor-core ceilings from square cuBLAS GEMMs (measure.h: measure_gemm). cuBLAS picks tensor-core
// kernels for these types on Volta and later (TF32 through CUBLAS_COMPUTE_32F_FAST_TF32, FP64
// through DMMA on Ampere and later); FLOP = 2*M*N*K per GEMM.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>

#include "measure.h"

namespace rfbench {
namespace {

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw GpuError(std::string(what) + " failed: cuBLAS status " + std::to_string(static_cast<int>(s)));
}

struct GemmArgs {
  cublasHandle_t handle;
  cublasOperation_t op_a;
  int n;
  cudaDataType_t in_type, out_type;
  cublasComputeType_t compute;
  const void *alpha, *beta;
  void *a, *b, *c;
};

void run_gemm(void* p) {
  auto* g = static_cast<GemmArgs*>(p);
  const int lda = g->n;
  check_cublas(cublasGemmEx(g->handle, g->op_a, CUBLAS_OP_N, g->n, g->n, g->n, g->alpha, g->a, g->in_type, lda,
                            g->b, g->in_type, g->n, g->beta, g->c, g->out_type, g->n, g->compute,
                            CUBLAS_GEMM_DEFAULT),
               "cublasGemmEx");
}

}  // namespace

Measurement measure_gemm(const Options& o, const std::string& precision) {
  int n = o.quick ? 2048 : 8192;
  cudaDataType_t in = CUDA_R_16F, out = CUDA_R_16F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  cublasOperation_t op_a = CUBLAS_OP_N;
  size_t in_size = 2, out_size = 2;
  float alpha_f = 1.f, beta_f = 0.f;
  double alpha_d = 1.0, beta_d = 0.0;
  int32_t alpha_i = 1, beta_i = 0;
  const void *alpha = &alpha_f, *beta = &beta_f;
  if (precision == "fp16") {
  } else if (precision == "bf16") {
    in = out = CUDA_R_16BF;
  } else if (precision == "tf32") {
    in = out = CUDA_R_32F;
    in_size = out_size = 4;
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  } else if (precision == "fp64") {
    in = out = CUDA_R_64F;
    in_size = out_size = 8;
    compute = CUBLAS_COMPUTE_64F;
    alpha = &alpha_d;
    beta = &beta_d;
    n = o.quick ? 1024 : 4096;
  } else if (precision == "int8") {
    in = CUDA_R_8I;
    out = CUDA_R_32I;
    in_size = 1;
    out_size = 4;
    compute = CUBLAS_COMPUTE_32I;
    op_a = CUBLAS_OP_T;  // cuBLAS INT8 GEMMs need A transposed (TN)
    alpha = &alpha_i;
    beta = &beta_i;
  } else {
    throw GpuError("unknown tensor precision " + precision + " (expected fp64, tf32, fp16, bf16 or int8)");
  }
  const size_t elems = size_t(n) * n;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  check_cuda(cudaMalloc(&a, elems * in_size), "cudaMalloc");
  check_cuda(cudaMalloc(&b, elems * in_size), "cudaMalloc");
  check_cuda(cudaMalloc(&c, elems * out_size), "cudaMalloc");
  check_cuda(cudaMemset(a, 0, elems * in_size), "cudaMemset");
  check_cuda(cudaMemset(b, 0, elems * in_size), "cudaMemset");
  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  GemmArgs g{handle, op_a, n, in, out, compute, alpha, beta, a, b, c};
  std::vector<double> seconds;
  try {
    seconds = time_runs(o.runs, run_gemm, &g);
  } catch (...) {
    cublasDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    throw;
  }
  cublasDestroy(handle);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  Measurement m{"tensor_" + precision + (precision == "int8" ? "_op_per_s" : "_flop_per_s"), 0,
                precision == "int8" ? "OP/s" : "FLOP/s",
                "cublasGemmEx " + std::to_string(n) + "^3, " + precision, {}};
  const double flop = 2.0 * double(n) * n * n;
  for (double s : seconds) m.runs.push_back(flop / s);
  m.value = *std::max_element(m.runs.begin(), m.runs.end());
  return m;
}

}  // namespace rfbench
