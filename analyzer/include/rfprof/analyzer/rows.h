// Rows of rfanalyze's CSV outputs: one per launch (kernels.csv) and sums per key (ranges.csv,
// phases.csv, summary.json totals). Column meanings and units: docs/analyzer-outputs.md.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rfprof/analyzer/flops.h"
#include "rfprof/analyzer/roof.h"
#include "rfprof/trace/records.h"

namespace rf::analyzer {

/// Header of kernels.csv, in column order; the last, tensor_pipe_inst, is
/// sm__inst_executed_pipe_tensor.sum (LaunchMetrics::tensor_pipe_inst), empty when not collected.
const std::vector<std::string>& kernels_csv_header();
/// Header of counters.csv: id,kernel,metric,value,pid,window (pid and window appended after the
/// first four columns, which readers may take by position).
const std::vector<std::string>& counters_csv_header();
/// Header of ranges.csv (`key_column` "nvtx") and phases.csv (`key_column` "phase").
std::vector<std::string> aggregate_csv_header(const std::string& key_column);
/// Header of ranges.csv and phases.csv: aggregate_csv_header(key_column), then
/// peak_memory_bytes, memory_bound_ns, compute_bound_ns.
std::vector<std::string> range_csv_header(const std::string& key_column);

/// One launch, as written to kernels.csv. Absent values are written as empty fields.
struct KernelRow {
  uint32_t id = 0;                              ///< correlation id (JoinedLaunch::id)
  uint32_t pid = 0;
  std::optional<uint32_t> device;               ///< CUDA device id
  std::optional<uint32_t> stream;               ///< CUPTI stream id
  std::optional<uint32_t> context;              ///< CUPTI context id; not a CSV column
  /// LaunchApi::window_id of the launch (absent without a launch record): counters.csv's `window`,
  /// not a kernels.csv column. Replay across steps gives each group's timing window its own id.
  std::optional<uint32_t> window;
  std::string kernel;                           ///< demangled name
  /// The kernel's mangled symbol (empty when the trace has none), pointing into the trace reader's
  /// string table: valid only while the row is handed to a stream_launches sink. Not a CSV column.
  std::string_view mangled;
  std::optional<std::array<int32_t, 3>> grid;   ///< blocks (x, y, z)
  std::optional<std::array<int32_t, 3>> block;  ///< threads (x, y, z)
  std::optional<uint32_t> shared_bytes;         ///< dynamic shared memory (bytes); not a CSV column
  std::optional<uint32_t> static_shared_bytes;  ///< static shared memory (bytes per block); not a CSV column
  std::optional<uint32_t> registers_per_thread; ///< registers per thread; not a CSV column
  std::optional<uint64_t> duration_ns;          ///< kernel end - start (ns), as the kernel really ran
  std::optional<uint64_t> start_ns;             ///< kernel start (CUPTI timestamp, ns); not a CSV column
  /// start_ns is not the GPU's: kernel replay left the kernel record without timestamps, so the
  /// kernel is placed at the end of its launch call, where it ran (trace.json only).
  bool start_from_launch = false;
  std::optional<uint64_t> thread_id;            ///< thread that launched it (trace.json's flow); not a CSV column
  /// The launch API call (LaunchApi api_start_ns/api_end_ns, ns; both set or neither, neither when
  /// the call has no end >= its start): trace.json draws it on the thread's track. Under kernel
  /// replay the replays run inside it. Not CSV columns.
  std::optional<uint64_t> launch_start_ns, launch_end_ns;
  trace::ApiDomain launch_domain = trace::ApiDomain::kDriver;  ///< of the call (trace::launch_api_label)
  uint32_t launch_cbid = 0;                     ///< CUPTI callback id of the call
  bool launch_is_graph = false;                 ///< a graph launch: one call for many rows
  uint32_t stack_id = 0;                        ///< LaunchApi::stack_id (0: none); not a CSV column
  LaunchMetrics metrics;                        ///< FLOP per precision, DRAM bytes
  std::string nvtx;                             ///< range path ("" outside every range)
  std::string phase;

  /// total FLOP / DRAM bytes (FLOP/byte); see arithmetic_intensity() in flops.h.
  std::optional<double> arithmetic_intensity() const;
  /// total FLOP / duration (FLOP/s); see flop_per_s() in flops.h.
  std::optional<double> flop_per_s() const;
  /// The kernels.csv fields, unescaped, in kernels_csv_header() order; the roofline position
  /// (`bound`, `attainable_flop_per_s`, `roof_fraction`) from `roof`, the launch placed under its
  /// device's ceilings (check_roof), empty when null (no ceilings for the device).
  std::vector<std::string> csv_fields(const RoofCheck* roof = nullptr) const;
  /// csv_fields into `fields`, whose strings are overwritten and their memory reused (Report
  /// writes a row per launch: no allocation once the strings are long enough).
  void csv_fields(const RoofCheck* roof, std::vector<std::string>& fields) const;
};

/// Sum of one optional column over many launches: present once one launch had a value.
struct OptionalSum {
  double sum = 0.0;
  uint64_t count = 0;  ///< launches that had a value
  void add(const std::optional<double>& v) {
    if (v) {
      sum += *v;
      ++count;
    }
  }
  /// Adds another sum (as if its launches had been added here).
  void merge(const OptionalSum& o) {
    sum += o.sum;
    count += o.count;
  }
  std::optional<double> value() const { return count ? std::optional<double>(sum) : std::nullopt; }
};

/// A launch's total FLOP and DRAM bytes (LaunchMetrics::total_flop(), dram_bytes()), computed once
/// for the several sums one launch is added to (Report, ReportPage: seven per launch).
struct LaunchTotals {
  std::optional<double> flop;        ///< FLOP; absent as total_flop() is
  std::optional<double> dram_bytes;  ///< bytes; absent as dram_bytes() is
  static LaunchTotals of(const LaunchMetrics& m) { return {m.total_flop(), m.dram_bytes()}; }
};

/// Sums of launches sharing a key (an NVTX path, a phase, or all launches).
/// Each FLOP and byte column sums the launches that have it. Arithmetic intensity is computed over
/// the launches that have total FLOP and DRAM bytes, FLOP/s over those that have total FLOP and a
/// duration, so that a launch without counters never dilutes a ratio.
struct Aggregate {
  uint64_t launches = 0;
  uint64_t duration_ns = 0;         ///< sum of kernel durations (ns)
  uint64_t timed_launches = 0;      ///< launches with a duration
  OptionalSum fp64_flop, fp32_flop, fp16_flop, dram_read_bytes, dram_write_bytes;
  std::array<OptionalSum, kTensorPrecisions> tensor_dense, tensor_sparse;  ///< FLOP (INT8: ops)
  OptionalSum l2_bytes, l1_bytes;
  OptionalSum total_flop;           ///< LaunchMetrics::total_flop() of the launches that have it
  OptionalSum dram_bytes;           ///< read + write bytes of the launches that have both
  uint64_t counted_launches = 0;    ///< launches with total FLOP and DRAM bytes
  uint64_t l2_counted = 0, l1_counted = 0;  ///< launches with total FLOP and L2 (L1) bytes
  double l2_ai_flop = 0.0, l2_ai_bytes = 0.0, l1_ai_flop = 0.0, l1_ai_bytes = 0.0;
  double ai_flop = 0.0, ai_bytes = 0.0;
  double rate_flop = 0.0;
  uint64_t rate_ns = 0;
  /// GPU time (ns) of the launches whose roofline bound (RoofCheck::bound()) is memory, compute;
  /// added by the Report, which knows the devices' ceilings (not by add()).
  uint64_t memory_bound_ns = 0, compute_bound_ns = 0;

  /// Adds one launch: its counts to each column it has, to the ratios' sums as the struct comment says.
  void add(const KernelRow& row) { add(row, LaunchTotals::of(row.metrics)); }
  /// add(row), given `totals` == LaunchTotals::of(row.metrics) computed once by the caller.
  void add(const KernelRow& row, const LaunchTotals& totals);
  /// Adds the launches summed in `other` (the same result as adding each of them here).
  void merge(const Aggregate& other);
  /// total FLOP / DRAM bytes over the counted launches (FLOP/byte); absent when bytes are 0.
  std::optional<double> arithmetic_intensity() const;
  /// total FLOP / L2 bytes (lts__t_bytes.sum) over launches that have both (FLOP/byte).
  std::optional<double> l2_arithmetic_intensity() const;
  /// total FLOP / L1 bytes (l1tex__t_bytes.sum) over launches that have both (FLOP/byte).
  std::optional<double> l1_arithmetic_intensity() const;
  /// total FLOP / total duration over launches with FLOP and duration (FLOP/s).
  std::optional<double> flop_per_s() const;
  /// The fields of ranges.csv / phases.csv after the key column.
  std::vector<std::string> csv_fields(const std::string& key) const;
};

/// Human-readable name of an Itanium-mangled symbol: libstdc++'s __cxa_demangle (the collector's,
/// so names match the trace's), else LLVM's itaniumDemangle when built with it and the symbol is
/// at most kMaxLlvmDemangled bytes (it reads the CUTLASS kernel symbols of cuDNN that
/// __cxa_demangle refuses); `mangled` itself when neither can or when it does not start with "_Z"
/// (an extern "C" name). Both demanglers expand back-references without limit (a 283-byte symbol
/// prints as 1.88 GB), so a symbol with substitutions, template parameters or pack expansions is
/// demangled in a child process, given 500 ms and 256 KiB of output; past either it keeps its
/// mangled name (analyzer/src/demangle.cpp). Never throws but std::bad_alloc.
std::string demangle(const std::string& mangled);

/// Longest symbol (bytes) demangle() gives LLVM's demangler, which recurses without a depth
/// limit; a longer one __cxa_demangle refuses keeps its mangled name.
inline constexpr size_t kMaxLlvmDemangled = 8192;

/// True when the collector could not demangle `mangled`: a C++ symbol ("_Z...") whose recorded
/// demangled name is empty or the symbol itself. The analyzer then tries demangle() again.
bool demangle_refused(std::string_view demangled, std::string_view mangled);

/// Whether demangle() has LLVM's fallback (rfprof::llvm_demangle was found at configure time).
bool has_llvm_demangler();

}  // namespace rf::analyzer
