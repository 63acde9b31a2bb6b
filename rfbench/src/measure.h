// rfbench measurements: each returns the best rate over repeated timed runs (CUDA events).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rfbench {

/// A CUDA or cuBLAS call failed: what() names the call and the error string.
class GpuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One measured ceiling.
struct Measurement {
  std::string ceiling;  ///< key in the ceilings JSON, e.g. "dram_bytes_per_s", "fp32_flop_per_s"
  double value = 0;     ///< best rate over the runs (bytes/s or FLOP/s)
  std::string unit;     ///< "bytes/s", "FLOP/s" or "OP/s"
  std::string method;   ///< what ran, with sizes, e.g. "copy kernel, 2 x 4 GiB"
  std::vector<double> runs;  ///< every run's rate, in run order
};

/// Options shared by the measurements.
struct Options {
  int device = 0;
  int runs = 10;        ///< timed runs per measurement (after one warm-up run)
  bool quick = false;   ///< smaller problems (for a smoke test)
};

/// Device identity for the ceilings entry.
struct DeviceIdentity {
  std::string name;     ///< cudaDeviceProp::name, e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  size_t l2_bytes = 0;
  size_t global_memory_bytes = 0;
};

/// Selects `options.device` and returns its identity. Throws GpuError.
DeviceIdentity open_device(const Options& options);

/// DRAM bandwidth: a float4 copy over buffers of max(1 GiB, 8 x L2) each (bytes read + written
/// per second). Throws GpuError.
Measurement measure_dram(const Options& options, const DeviceIdentity& device);
/// L2 bandwidth: repeated reads of a buffer of half the L2 size (bytes read per second).
Measurement measure_l2(const Options& options, const DeviceIdentity& device);
/// Non-tensor FMA throughput of `precision` ("fp64", "fp32", "fp16" as half2): independent FMA
/// chains in registers; FLOP = 2 per FMA (4 per HFMA2). Throws GpuError.
Measurement measure_fma(const Options& options, const DeviceIdentity& device, const std::string& precision);
/// Tensor-core throughput of `precision` ("fp64", "tf32", "fp16", "bf16", "int8") from a square
/// cuBLAS GEMM: 2*M*N*K FLOP (OP for INT8) per run. Throws GpuError.
Measurement measure_gemm(const Options& options, const std::string& precision);

/// Times `run` (which enqueues work on the default stream) `runs` times after one warm-up with
/// CUDA events; returns each run's seconds. Throws GpuError.
std::vector<double> time_runs(int runs, void (*run)(void*), void* arg);

/// Throws GpuError naming `what` when `status` (a cudaError_t) is not cudaSuccess.
void check_cuda(int status, const char* what);

}  // namespace rfbench
