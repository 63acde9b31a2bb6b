// Tensor-core ceilings from square GEMMs (measure.h: measure_gemm). cuBLAS picks tensor-core
// kernels for these types on Volta and later (TF32 through CUBLAS_COMPUTE_32F_FAST_TF32, FP64
// through DMMA on sm_80/90/10x); FLOP = 2*M*N*K per GEMM (amounts.h: gemm_flop).
//
// One GEMM of one size and layout may run a kernel far from the roof (on an H100, cublasGemmEx
// INT8 TN 8192^3 ran a 128x64x128 tile at 70 % of the datasheet), so without --quick every
// precision tries several sizes, layouts (NN, TN, NT) and output/compute types, each with
// cublasGemmEx's default and with cuBLASLt's best heuristic algorithms, screens each with two
// timed runs, and times the fastest `runs` times. --quick runs one cublasGemmEx of one size (what
// scripts/check_flops.py gemm expects of a --quick run under rfprof).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "amounts.h"
#include "measure.h"

namespace rfbench {
namespace {

constexpr int kLtAlgos = 6;                        // cuBLASLt heuristic algorithms tried per configuration
constexpr size_t kLtWorkspace = size_t(32) << 20;  // NVIDIA's recommendation for Hopper
constexpr int kScreenRuns = 2;                     // timed runs (after a warm-up) per candidate

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw GpuError(std::string(what) + " failed: " + cublasGetStatusString(s) + " (cuBLAS status " +
                   std::to_string(static_cast<int>(s)) + ")");
}

/// Input, output, compute and scale types of one GEMM configuration.
struct GemmType {
  std::string label;  ///< e.g. "fp16 -> fp16, FP32 accumulate"
  cudaDataType_t in, out;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  size_t in_size, out_size;
  bool gemm_ex;  ///< cublasGemmEx takes it (INT8 -> INT8 only cuBLASLt)
};

std::vector<GemmType> gemm_types(const std::string& p) {
  if (p == "fp64") return {{"fp64, FP64 accumulate", CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, 8, 8, true}};
  if (p == "tf32")
    return {{"fp32 inputs as TF32, FP32 accumulate", CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F,
             4, 4, true}};
  if (p == "fp16")
    // The FP16 roof is the fastest FP16 tensor rate: FP16 accumulate is twice as fast on GeForce chips
    // (docs/ceilings.md: RTX 4090), the same elsewhere.
    return {{"fp16 -> fp16, FP32 accumulate", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2, true},
            {"fp16 -> fp16, FP16 accumulate", CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_16F, CUDA_R_16F, 2, 2, true}};
  if (p == "bf16")
    return {{"bf16 -> bf16, FP32 accumulate", CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2, true}};
  if (p == "int8")
    return {{"int8 -> int32", CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 1, 4, true},
            {"int8 -> int8 (INT32 accumulate, FP32 scale)", CUDA_R_8I, CUDA_R_8I, CUBLAS_COMPUTE_32I, CUDA_R_32F, 1, 1,
             false}};
  throw GpuError("unknown tensor precision " + p + " (expected fp64, tf32, fp16, bf16 or int8)");
}

/// cuBLAS (column-major) operations on A and B. INT8 tensor-core GEMMs need TN (A transposed).
struct Layout {
  cublasOperation_t a, b;
  const char* name;
};
std::vector<Layout> layouts(const std::string& p, bool quick) {
  if (p == "int8") return {{CUBLAS_OP_T, CUBLAS_OP_N, "TN"}};
  if (quick) return {{CUBLAS_OP_N, CUBLAS_OP_N, "NN"}};
  return {{CUBLAS_OP_N, CUBLAS_OP_N, "NN"}, {CUBLAS_OP_T, CUBLAS_OP_N, "TN"}, {CUBLAS_OP_N, CUBLAS_OP_T, "NT"}};
}

/// alpha = 1, beta = 0 in each scale type.
struct Scalars {
  double d1 = 1, d0 = 0;
  float f1 = 1, f0 = 0;
  int32_t i1 = 1, i0 = 0;
  uint16_t h1 = 0x3C00, h0 = 0;  // FP16 1.0, 0.0
  const void* one(cudaDataType_t t) const {
    return t == CUDA_R_64F ? static_cast<const void*>(&d1) : t == CUDA_R_32I ? static_cast<const void*>(&i1)
                         : t == CUDA_R_16F ? static_cast<const void*>(&h1) : static_cast<const void*>(&f1);
  }
  const void* zero(cudaDataType_t t) const {
    return t == CUDA_R_64F ? static_cast<const void*>(&d0) : t == CUDA_R_32I ? static_cast<const void*>(&i0)
                         : t == CUDA_R_16F ? static_cast<const void*>(&h0) : static_cast<const void*>(&f0);
  }
};

/// cuBLASLt descriptors of one configuration (size, layout, type), destroyed with it.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  LtPlan(int n, const Layout& l, const GemmType& t) {
    try {
      create(n, l, t);
    } catch (...) {  // a constructor that throws runs no destructor: what was made is destroyed here
      destroy();
      throw;
    }
  }
  ~LtPlan() { destroy(); }
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;

 private:
  void create(int n, const Layout& l, const GemmType& t) {
    check_cublas(cublasLtMatmulDescCreate(&desc, t.compute, t.scale), "cublasLtMatmulDescCreate");
    const int32_t ta = l.a, tb = l.b;
    check_cublas(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta),
                 "cublasLtMatmulDescSetAttribute");
    check_cublas(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb),
                 "cublasLtMatmulDescSetAttribute");
    // Square: A (m x k, or k x m transposed), B and C are all n x n with leading dimension n.
    check_cublas(cublasLtMatrixLayoutCreate(&a, t.in, n, n, n), "cublasLtMatrixLayoutCreate");
    check_cublas(cublasLtMatrixLayoutCreate(&b, t.in, n, n, n), "cublasLtMatrixLayoutCreate");
    check_cublas(cublasLtMatrixLayoutCreate(&c, t.out, n, n, n), "cublasLtMatrixLayoutCreate");
  }
  void destroy() noexcept {
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (desc) cublasLtMatmulDescDestroy(desc);
    c = b = a = nullptr;
    desc = nullptr;
  }
};

/// One way to run one GEMM.
struct Candidate {
  int n = 0;
  Layout layout{};
  const GemmType* type = nullptr;
  bool lt = false;
  std::shared_ptr<LtPlan> plan;  // lt
  cublasLtMatmulAlgo_t algo{};   // lt
  size_t workspace_size = 0;     // lt
  std::string description;
};

struct Context {
  cublasHandle_t handle = nullptr;
  cublasLtHandle_t lt = nullptr;
  Scalars scalars;
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  ~Context() {
    if (lt) cublasLtDestroy(lt);
    if (handle) cublasDestroy(handle);
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    cudaFree(workspace);
  }
};

struct RunArgs {
  const Context* ctx;
  const Candidate* cand;
};

void run_gemm(void* p) {
  const auto* r = static_cast<RunArgs*>(p);
  const Context& x = *r->ctx;
  const Candidate& k = *r->cand;
  const GemmType& t = *k.type;
  const int n = k.n;
  if (k.lt)
    check_cublas(cublasLtMatmul(x.lt, k.plan->desc, x.scalars.one(t.scale), x.a, k.plan->a, x.b, k.plan->b,
                                x.scalars.zero(t.scale), x.c, k.plan->c, x.c, k.plan->c, &k.algo, x.workspace,
                                k.workspace_size, nullptr),
                 "cublasLtMatmul");
  else
    check_cublas(cublasGemmEx(x.handle, k.layout.a, k.layout.b, n, n, n, x.scalars.one(t.scale), x.a, t.in, n, x.b,
                              t.in, n, x.scalars.zero(t.scale), x.c, t.out, n, t.compute, CUBLAS_GEMM_DEFAULT),
                 "cublasGemmEx");
}

const char* tile_name(uint32_t id) {
  // cublasLtMatmulTile_t, whose values are fixed (cublasLt.h); later ones are named by number.
  static const char* const names[] = {"undefined", "8x8",     "8x16",    "16x8",    "8x32",    "16x16",
                                      "32x8",      "8x64",    "16x32",   "32x16",   "64x8",    "32x32",
                                      "32x64",     "64x32",   "32x128",  "64x64",   "128x32",  "64x128",
                                      "128x64",    "64x256",  "128x128", "256x64",  "64x512",  "128x256",
                                      "256x128",   "512x64",  "64x96",   "96x64",   "96x128",  "128x160",
                                      "160x128",   "192x128", "128x192", "128x96",  "32x256",  "256x32"};
  return id < sizeof names / sizeof names[0] ? names[id] : nullptr;
}

/// "algo 23, tile 256x128, stages id 21, split-K 1" from the algorithm's configuration.
std::string describe_algo(const cublasLtMatmulAlgo_t& algo) {
  int32_t id = -1, splitk = 1;
  uint32_t tile = 0, stages = 0;
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, nullptr);
  cublasLtMatmulAlgoConfigGetAttribute(&algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, nullptr);
  const char* t = tile_name(tile);
  return "algo " + std::to_string(id) + ", tile " + (t ? std::string(t) : "id " + std::to_string(tile)) +
         ", stages id " + std::to_string(stages) + ", split-K " + std::to_string(splitk);
}

std::string config_text(int n, const Layout& l, const GemmType& t) {
  const std::string s = std::to_string(n);
  return std::string(l.name) + " " + s + "x" + s + "x" + s + ", " + t.label;
}

/// cuBLASLt's best `kLtAlgos` heuristic algorithms for one configuration (none when it has none).
std::vector<Candidate> lt_candidates(const Context& x, int n, const Layout& l, const GemmType& t) {
  auto plan = std::make_shared<LtPlan>(n, l, t);
  cublasLtMatmulPreference_t pref = nullptr;
  check_cublas(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = kLtWorkspace;
  // Unchecked, a failure left the workspace at 0: only algorithms without one, lower roofs, no word.
  const cublasStatus_t set =
      cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
  if (set != CUBLAS_STATUS_SUCCESS) cublasLtMatmulPreferenceDestroy(pref);
  check_cublas(set, "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  cublasLtMatmulHeuristicResult_t results[kLtAlgos] = {};
  int returned = 0;
  const cublasStatus_t s = cublasLtMatmulAlgoGetHeuristic(x.lt, plan->desc, plan->a, plan->b, plan->c, plan->c, pref,
                                                          kLtAlgos, results, &returned);
  cublasLtMatmulPreferenceDestroy(pref);
  std::vector<Candidate> out;
  if (s != CUBLAS_STATUS_SUCCESS) return out;  // NOT_SUPPORTED: no algorithm for this configuration
  for (int i = 0; i < returned; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS || results[i].workspaceSize > kLtWorkspace) continue;
    Candidate c;
    c.n = n;
    c.layout = l;
    c.type = &t;
    c.lt = true;
    c.plan = plan;
    c.algo = results[i].algo;
    c.workspace_size = results[i].workspaceSize;
    c.description = "cublasLtMatmul " + config_text(n, l, t) + ", heuristic #" + std::to_string(i + 1) + ": " +
                    describe_algo(c.algo);
    out.push_back(std::move(c));
  }
  return out;
}

Candidate gemm_ex_candidate(int n, const Layout& l, const GemmType& t) {
  Candidate c;
  c.n = n;
  c.layout = l;
  c.type = &t;
  c.description = "cublasGemmEx " + config_text(n, l, t) + ", CUBLAS_GEMM_DEFAULT";
  return c;
}

FillType fill_type(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_64F: return FillType::f64;
    case CUDA_R_32F: return FillType::f32;
    case CUDA_R_16F: return FillType::f16;
    case CUDA_R_16BF: return FillType::bf16;
    default: return FillType::i8;
  }
}

}  // namespace

Measurement measure_gemm(const Options& o, const DeviceIdentity& /*device*/, const std::string& precision) {
  const std::vector<GemmType> types = gemm_types(precision);
  const std::vector<int> sizes = gemm_sizes(precision, o.quick, free_device_memory());
  const std::vector<Layout> lays = layouts(precision, o.quick);
  const size_t nmax = size_t(sizes.back());
  size_t out_size = 0;
  for (const auto& t : types) out_size = std::max(out_size, t.out_size);

  Context x;
  check_cuda(cudaMalloc(&x.a, nmax * nmax * types[0].in_size), "cudaMalloc");
  check_cuda(cudaMalloc(&x.b, nmax * nmax * types[0].in_size), "cudaMalloc");
  check_cuda(cudaMalloc(&x.c, nmax * nmax * out_size), "cudaMalloc");
  fill_random(x.a, nmax * nmax, fill_type(types[0].in), 11);
  fill_random(x.b, nmax * nmax, fill_type(types[0].in), 12);
  check_cuda(cudaMemset(x.c, 0, nmax * nmax * out_size), "cudaMemset");
  check_cublas(cublasCreate(&x.handle), "cublasCreate");

  // --quick: one cublasGemmEx (the first type and layout, the one size).
  if (o.quick) {
    const Candidate c = gemm_ex_candidate(sizes.front(), lays.front(), types.front());
    RunArgs r{&x, &c};
    const std::vector<double> seconds = time_runs(o.runs, run_gemm, &r);
    Measurement m{tensor_ceiling_key(precision), 0, precision == "int8" ? "OP/s" : "FLOP/s", c.description, {}};
    for (double s : seconds) m.runs.push_back(gemm_flop(c.n, c.n, c.n) / s);
    m.value = *std::max_element(m.runs.begin(), m.runs.end());
    return m;
  }

  check_cublas(cublasLtCreate(&x.lt), "cublasLtCreate");
  check_cuda(cudaMalloc(&x.workspace, kLtWorkspace), "cudaMalloc");
  int tried = 0, failed = 0;
  std::string first_failure;
  double best_rate = 0;
  Candidate best;
  auto screen = [&](Candidate c) {
    ++tried;
    try {
      RunArgs r{&x, &c};
      const std::vector<double> s = time_runs(kScreenRuns, run_gemm, &r);
      const double rate = gemm_flop(c.n, c.n, c.n) / *std::min_element(s.begin(), s.end());
      if (rate > best_rate) {
        best_rate = rate;
        best = std::move(c);
      }
    } catch (const GpuError& e) {
      ++failed;
      if (first_failure.empty()) first_failure = c.description + ": " + e.what();
    }
  };
  for (int n : sizes)
    for (const Layout& l : lays)
      for (const GemmType& t : types) {
        if (t.gemm_ex) screen(gemm_ex_candidate(n, l, t));
        std::vector<Candidate> lt;
        try {
          lt = lt_candidates(x, n, l, t);
        } catch (const GpuError& e) {
          ++failed;
          if (first_failure.empty()) first_failure = config_text(n, l, t) + ": " + e.what();
        }
        for (auto& c : lt) screen(std::move(c));
      }
  if (best_rate == 0)
    throw GpuError("no " + precision + " GEMM ran (" + std::to_string(tried) + " tried); first failure: " +
                   first_failure);

  RunArgs r{&x, &best};
  const std::vector<double> seconds = time_runs(o.runs, run_gemm, &r);
  std::string sizes_text;
  for (int n : sizes) sizes_text += (sizes_text.empty() ? "" : ", ") + std::to_string(n);
  std::string layouts_text;
  for (const auto& l : lays) layouts_text += std::string(layouts_text.empty() ? "" : ", ") + l.name;
  Measurement m{tensor_ceiling_key(precision), 0, precision == "int8" ? "OP/s" : "FLOP/s",
                best.description + "; the fastest of " + std::to_string(tried) +
                    " GEMMs screened (cublasGemmEx and cuBLASLt's top " + std::to_string(kLtAlgos) +
                    " heuristic algorithms; n = " + sizes_text + "; layouts " + layouts_text + "; " +
                    std::to_string(types.size()) + " output/accumulate type(s))" +
                    (failed ? "; " + std::to_string(failed) + " failed, first: " + first_failure : ""),
                {}};
  for (double s : seconds) m.runs.push_back(gemm_flop(best.n, best.n, best.n) / s);
  m.value = *std::max_element(m.runs.begin(), m.runs.end());
  return m;
}

}  // namespace rfbench
