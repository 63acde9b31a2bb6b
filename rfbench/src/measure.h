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
  int max_threads_per_sm = 0;
};

/// Selects `options.device` and returns its identity. Throws GpuError; without a driver or a GPU,
/// one that says so ("no NVIDIA GPU found: ...").
DeviceIdentity open_device(const Options& options);

/// Throws GpuError when this build holds no kernel the device can run (CMake's
/// RFBENCH_CUDA_ARCHITECTURES lacks its architecture), naming the fix.
void check_kernel_image(const DeviceIdentity& device);

/// DRAM bandwidth, the best of three ERT-style kernels (read-only, copy, triad; each with 4
/// independent 16-byte loads in flight per thread) over buffers of dram_buffer_bytes (amounts.h),
/// well above the L2 size. Bytes per run: bandwidth_bytes. `method` names the kernel kept and the
/// others' rates. Throws GpuError.
Measurement measure_dram(const Options& options, const DeviceIdentity& device);
/// L2 bandwidth: repeated ld.global.cg reads of a buffer of half the L2 size (bytes read per second).
Measurement measure_l2(const Options& options, const DeviceIdentity& device);
/// Non-tensor FMA throughput of `precision` ("fp64", "fp32", "fp16" as half2): independent FMA
/// chains in registers; FLOP per launch: fma_launch_flop (amounts.h). Throws GpuError.
Measurement measure_fma(const Options& options, const DeviceIdentity& device, const std::string& precision);
/// Tensor-core throughput of `precision` ("fp64", "tf32", "fp16", "bf16", "int8") from square
/// GEMMs of random small values: with --quick one cublasGemmEx of gemm_sizes (amounts.h);
/// otherwise the fastest of cublasGemmEx and cuBLASLt's heuristic algorithms over several sizes,
/// layouts and output/compute types, named in `method`. 2*M*N*K FLOP (OP for INT8) per GEMM.
/// The caller checks that the device has such tensor cores (tensor_unsupported). Throws GpuError.
Measurement measure_gemm(const Options& options, const DeviceIdentity& device, const std::string& precision);

/// Element types fill_random writes.
enum class FillType { f64, f32, f16, bf16, i8 };
/// Fills `count` elements at device pointer `p` with small pseudo-random values (a hash of the
/// index and `seed`): floating types uniform in [-1, 1), INT8 in [-4, 3]. Throws GpuError.
void fill_random(void* p, size_t count, FillType type, unsigned seed);

/// Times `run` (which enqueues work on the default stream) `runs` times after one warm-up with
/// CUDA events; returns each run's seconds. Throws GpuError (and whatever `run` throws).
std::vector<double> time_runs(int runs, void (*run)(void*), void* arg);

/// Throws GpuError naming `what` when `status` (a cudaError_t) is not cudaSuccess.
void check_cuda(int status, const char* what);
/// Free device memory in bytes (cudaMemGetInfo); 0 when unknown.
size_t free_device_memory();

}  // namespace rfbench
