// processes.csv: one row per trace (process, rank), the per-process view of a merged run and the
// scaling table of runs at several batch sizes: batch size, training steps, throughput, FLOP/s,
// arithmetic intensity.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "rfprof/analyzer/nvtx_attribution.h"
#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {

/// The batch size a command line asks for: the value of --batch-size, --batch_size, --bs or -b
/// ("--batch-size 64", "--batch-size=64", "-b 64"; whitespace-separated words). As with argparse,
/// the last of them wins ("-b 32 --batch-size 64" is 64); nullopt when none, or when the last one's
/// value is not a positive integer. processes.csv and scaling.csv both read it from here.
std::optional<uint64_t> batch_size_of(std::string_view command_line);

/// N from "--iterations N", "--iters N" or "--steps N" (also "=N"; the last of them wins, as for
/// batch_size_of); nullopt when absent or not a positive integer. It counts every step of the run,
/// profiled or not.
std::optional<uint64_t> iterations_of(std::string_view command_line);

/// How processes.csv and scaling.csv name a trace: "batch N" when the batch size is known, else
/// the trace's file name without its extension ("rank0" for "runs/rank0.rftrace").
std::string trace_label(const std::string& trace_path, const std::optional<uint64_t>& batch_size);

/// Whether an NVTX range name names a training step: it starts with "step", "iter" or
/// "iteration" (any case) followed by the end or a character other than a letter, digit or '_'
/// ("step 5", "Iteration", "iter:3"; not "stepper", "step_3", "steps").
bool is_step_range_name(std::string_view name);

/// Training steps of a trace: its NVTX ranges that ended and whose names are step range names
/// (is_step_range_name), but not those inside an earlier-started step range of their thread that
/// ends no earlier ("iteration 3/step" is one step; overlapping start/end ranges are two), and
/// their summed wall time (ns).
struct StepRanges {
  uint64_t count = 0;
  uint64_t wall_ns = 0;
};
/// The StepRanges of the NVTX ranges indexed in `nvtx` (0 and 0 when none is a step range).
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
