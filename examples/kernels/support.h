// Host-side helpers shared by the known-count example programs (examples/kernels/*.cu):
// command-line sizes (CLI11) and the RFPROF_EXPECTED line (nlohmann_json). Compiled by the host C++
// compiler into rf_example_support, so the .cu files stay small and quick to compile with nvcc.
// This header includes no CUDA header.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rf::examples {

/// Expected counts of one kernel of an example, summed over its `launches` launches.
/// Instruction counts are thread instructions with predicate on, i.e. the values of
/// smsp__sass_thread_inst_executed_op_<op>_pred_on.sum (ops: fadd fmul ffma hadd hmul hfma dadd
/// dmul dfma). A half2 instruction (HADD2/HMUL2/HFMA2) counts once.
struct ExpectedKernel {
  std::string kernel;                      ///< function base name, e.g. "ffma_loop"
  uint64_t launches = 1;                   ///< launches of this kernel
  std::array<uint32_t, 3> grid{1, 1, 1};   ///< blocks per launch (x, y, z)
  std::array<uint32_t, 3> block{1, 1, 1};  ///< threads per block (x, y, z)
  uint64_t fadd = 0, fmul = 0, ffma = 0;   ///< FP32 thread instructions
  uint64_t hadd = 0, hmul = 0, hfma = 0;   ///< FP16 (half2) thread instructions
  uint64_t dadd = 0, dmul = 0, dfma = 0;   ///< FP64 thread instructions
  /// Analytic FLOP per precision, counted from the algorithm (every lane of every operation: an
  /// FMA is 2 FLOP, a half2 FMA 4), not from the instruction counts above, so that comparing them
  /// with the analyzer's FLOPs checks its formulas.
  uint64_t fp32_flop = 0, fp64_flop = 0, fp16_flop = 0;
  /// DRAM bytes (dram__bytes_read.sum / dram__bytes_write.sum) the kernel must move, for kernels
  /// whose traffic is predictable (streaming far more data than L2 holds); absent otherwise.
  std::optional<uint64_t> dram_read_bytes, dram_write_bytes;
  /// Allowed relative difference of measured DRAM bytes from dram_*_bytes (e.g. 0.05 = 5%).
  double dram_rel_tolerance = 0.0;
};

/// The RFPROF_EXPECTED document of one example:
/// {"example": NAME, "kernels": [{"kernel", "launches", "grid", "block", "metrics": {nine sass
/// metric names: count}, "fp32_flop", "fp64_flop", "fp16_flop", "dram_read_bytes",
/// "dram_write_bytes", "dram_rel_tolerance"}]} with null for absent DRAM expectations.
/// Format documented in examples/README.md.
[[nodiscard]] std::string expected_json(std::string_view example,
                                        const std::vector<ExpectedKernel>& kernels);

/// Writes "RFPROF_EXPECTED <expected_json>" as one line on stdout and flushes it.
void print_expected(std::string_view example, const std::vector<ExpectedKernel>& kernels);

/// One integer size option of an example (e.g. --iters). Accepted values: min..max, multiples of
/// `multiple_of`; `value` holds the default on entry and the parsed value on return.
struct SizeOption {
  std::string name;  ///< long option name with dashes, e.g. "--iters"
  std::string help;  ///< one-line description with the unit
  int64_t* value;    ///< in: default, out: parsed value
  int64_t min;       ///< smallest accepted value
  int64_t max;       ///< largest accepted value (keeps every expected count below 2^53)
  int64_t multiple_of = 1;
};

/// Parses `argc/argv` with CLI11: the size options plus --expected-only (print the RFPROF_EXPECTED
/// line and exit without touching the GPU). Returns std::nullopt when the program should go on,
/// otherwise the exit code to return: 0 after --help, 2 after a bad argument (CLI11 printed one
/// message naming the option and the accepted values).
[[nodiscard]] std::optional<int> parse_args(int argc, char** argv, std::string_view description,
                                            const std::vector<SizeOption>& options,
                                            bool& expected_only);

/// Prints "<example>: <message>" on stderr and returns 1 (the exit code of a failed run).
int fail(std::string_view example, std::string_view message);

}  // namespace rf::examples
