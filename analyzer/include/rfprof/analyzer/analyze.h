// rfanalyze as a library call: traces in, report directory out (docs/analyzer.md).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace rf::analyzer {

/// Exit status of a run.
inline constexpr int kExitOk = 0;          ///< outputs written (above-roof launches are warned about)
inline constexpr int kExitOutputError = 1; ///< an output file could not be written
inline constexpr int kExitBadInput = 2;    ///< missing or corrupt trace, bad phase map or ceilings file
inline constexpr int kExitInternalError = 3;  ///< an unexpected exception inside the analysis (a bug), no outputs

/// Inputs of a run (the command line of rfanalyze).
struct AnalyzeOptions {
  std::vector<std::filesystem::path> traces;       ///< .rftrace files
  std::vector<std::filesystem::path> import_ncu;   ///< ncu raw CSV files (--import-ncu), after the traces
  std::filesystem::path output_dir = "rfprof-report";
  std::optional<std::filesystem::path> phase_map;  ///< --phase-map FILE (replaces default rules)
  std::optional<std::filesystem::path> ceilings;   ///< --ceilings FILE (overrides the datasheet)
  std::optional<std::string> device;               ///< --device NAME (entry used for every device)
};

/// Streams every trace (two passes each) and writes kernels.csv, counters.csv, ranges.csv,
/// phases.csv, summary.json, scaling.csv and report.html into `output_dir` (created if needed). Files are written under
/// temporary names and renamed at the end, so a failed run leaves no partial outputs behind.
/// Messages go to `err`, one line each, prefixed "rfanalyze: ": a truncated trace is analyzed as
/// far as it is readable (exit 0); a missing or corrupt trace fails the run (kExitBadInput).
/// Returns an exit status above. Never throws for bad input; an unexpected exception inside the
/// analysis (a bug) is one "rfanalyze: internal error: ..." line and kExitInternalError.
/// `summary`: when given, the run's summary is printed there once the outputs are written
/// (print_terminal_summary, terminal_summary.h): rfanalyze passes stdout unless --quiet.
int run_analysis(const AnalyzeOptions& options, std::ostream& err, std::ostream* summary = nullptr);

}  // namespace rf::analyzer
