// processes.csv: one row per trace (process, rank), the per-process view of a merged run and the
// scaling table of runs at several batch sizes: batch size, training steps, throughput, FLOP/s,
// arithmetic intensity.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "rfprof/analyzer/nvtx_attribution.h"
#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {

/// The batch size a command line asks for: the value of --batch-size, --batch_size, --bs or -b
/// ("--batch-size 64", "--batch-size=64", "-b 64"); nullopt when none (or not a positive integer).
std::optional<uint64_t> batch_size_of(const std::string& command_line);

/// Training steps of a trace: its NVTX ranges named "step...", "iter..." or "iteration..."
/// (case-insensitive, at the start of the name) that ended, and their summed wall time (ns).
struct StepRanges {
  uint64_t count = 0;
  uint64_t wall_ns = 0;
};
StepRanges step_ranges(const NvtxIndex& nvtx);

/// One trace of a run.
struct ProcessRow {
  std::string trace;            ///< path
  uint32_t pid = 0;
  std::string hostname;
  std::string label;            ///< "batch N" when the batch size is known, else the trace's file stem
  std::optional<uint64_t> batch_size;
  StepRanges steps;
  Aggregate totals;             ///< the trace's launches
  /// batch size x steps / steps' wall time (samples/s); absent without batch size or steps. Under
  /// counter replay the steps run slower than natively: meaningful in timing mode.
  std::optional<double> samples_per_s() const;
};

/// Header of processes.csv.
std::vector<std::string> processes_csv_header();
/// The fields of one row, in processes_csv_header() order.
std::vector<std::string> processes_csv_fields(const ProcessRow& row);

}  // namespace rf::analyzer
