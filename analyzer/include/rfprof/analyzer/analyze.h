// rfanalyze as a library call: traces in, report directory out (docs/analyzer.md).
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
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
  std::vector<std::filesystem::path> import_ncu;   ///< ncu CSVs, raw or details page (--import-ncu), after the traces
  std::filesystem::path output_dir = "rfprof-report";
  std::optional<std::filesystem::path> phase_map;  ///< --phase-map FILE (replaces default rules)
  std::optional<std::filesystem::path> ceilings;   ///< --ceilings FILE (overrides the datasheet)
  std::optional<std::string> device;               ///< --device NAME (entry used for every device)
  /// Outputs not written (--skip, or every one not in --outputs): names from output_names().
  /// kernels.csv, counters.csv and trace.json hold a row or events per launch; skipping them
  /// skips formatting them too, which is most of a run's time (bench/README.md).
  std::set<std::string> skip;
};

/// Every output file of a run, in the order they are opened: kernels.csv, counters.csv,
/// trace.json, memory.csv, ranges.csv, phases.csv, processes.csv, profiler_overhead.csv, ops.csv,
/// layers.csv, callsites_time.folded, callsites_flop.folded, callsites.csv, summary.json,
/// roofline.svg, scaling.csv, report.html.
const std::vector<std::string>& output_names();

/// nullopt when `name` is one of output_names(); otherwise the one-line message (no newline)
/// "rfanalyze: OPTION: \"NAME\" is not an output (expected one of: kernels.csv, ...)".
std::optional<std::string> output_name_problem(std::string_view option, std::string_view name);

/// Streams every trace (two passes each) and writes kernels.csv, counters.csv, ranges.csv,
/// phases.csv, summary.json, scaling.csv and report.html (output_names(), less options.skip) into
/// `output_dir` (created if needed). A name in options.skip that is no output is bad input
/// (kExitBadInput, the names expected listed). A skipped output's file left in `output_dir` by an
/// earlier run is kept, and one note line names it. Files are written under
/// temporary names and renamed at the end, so a failed run leaves no partial outputs behind.
/// Messages go to `err`, one line each, prefixed "rfanalyze: ": a truncated trace is analyzed as
/// far as it is readable (exit 0); a missing or corrupt trace fails the run (kExitBadInput).
/// Returns an exit status above. Never throws for bad input; an unexpected exception inside the
/// analysis (a bug) is one "rfanalyze: internal error: ..." line and kExitInternalError.
/// `summary`: when given, the run's summary is printed there once the outputs are written
/// (print_terminal_summary, terminal_summary.h): rfanalyze passes stdout unless --quiet.
int run_analysis(const AnalyzeOptions& options, std::ostream& err, std::ostream* summary = nullptr);

}  // namespace rf::analyzer
