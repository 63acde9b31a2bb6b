// rfprof's command line: Nsight Compute's flags with ncu's meaning, mapped onto librfinject's
// RFPROF_* configuration (docs/ncu-flags.md has the table of every ncu flag). Pure logic, no
// process is started here, so every flag is tested without a GPU.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "rfprof/launcher/listings.h"
#include "rfprof/launcher/metric_query.h"

namespace rf::launcher {

/// A command line rfprof cannot honour. what() is one line naming the flag and what was expected,
/// prefixed "rfprof: ".
class ArgsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What one rfprof invocation does.
struct Plan {
  /// The application and its arguments; empty with --import.
  std::vector<std::string> command;
  /// Environment for the application: CUDA_INJECTION64_PATH / NVTX_INJECTION64_PATH are added by
  /// the runner; the RFPROF_* variables of docs/inject-env.md are here.
  std::map<std::string, std::string> env;
  /// RFPROF_* variables removed from the inherited environment: those of a flag given whose value
  /// means "unset" (--set without --metrics: no RFPROF_METRICS), so that rfprof's own environment
  /// never decides what a flag given says.
  std::set<std::string> env_unset;
  /// Traces to read instead of running anything (-i/--import).
  std::vector<std::string> import_files;
  bool csv = false;                      ///< --csv: print ncu's CSV (else, without -o, ncu's text)
  std::string page = "details";          ///< --page raw|details (ncu's default: details)
  /// --page was given: as ncu, a run with -o prints its results only then (or with --print-summary).
  bool page_given = false;
  /// --log-file: where the CSV/report text goes; "stdout" and "stderr" name those channels (ncu)
  std::optional<std::string> log_file;
  std::string output_pattern;            ///< -o/--export pattern, ".rftrace" appended if missing
  /// -o/--export was given. As ncu: without it the results are printed after the run (text, or
  /// the CSV with --csv); with it only the traces are named, unless --page (or --print-summary) is
  /// given.
  bool export_given = false;
  /// --print-summary per-kernel: the text is one table per kernel (min, max, average) instead of
  /// one per launch (analyzer::write_ncu_summary_text).
  bool print_summary = false;
  /// Kernel filters applied to what is printed (-k, -s, -c): see docs/ncu-flags.md.
  std::optional<std::string> kernel_name;  ///< exact name, or "regex:<ECMAScript regex>"
  uint64_t launch_skip = 0;
  std::optional<uint64_t> launch_count;
  std::optional<std::string> kernel_id;  ///< --kernel-id, ncu's syntax (collector::KernelId)
  std::string filter_mode = "global";    ///< --filter-mode: global, per-gpu or per-launch-config
  uint64_t launch_skip_before_match = 0; ///< --launch-skip-before-match
  std::vector<uint32_t> devices;         ///< --devices (-i: the printed rows' devices; empty: all)
  /// --kernel-name-base: what an exact -k compares, "function" (ncu's default), "demangled" or
  /// "mangled"; with -i applied while printing, else by the collector (RFPROF_KERNEL_NAME_BASE).
  std::string kernel_name_base = "function";
  /// --print-kernel-base: how "Kernel Name" is printed, "demangled" (ncu's default), "function"
  /// (the bare function name) or "mangled" (analyzer::NcuFilter::print_kernel_base).
  std::string print_kernel_base = "demangled";
  /// -i with --metrics: only these metrics are printed (names as given; a base name selects its
  /// .sum, .avg, ... as analyzer::NcuFilter::metrics). Empty: every metric of the trace.
  std::vector<std::string> print_metrics;
  /// A run's --metrics names that are ncu launch or device attributes (analyzer::ncu_attributes):
  /// not collected, printed as rows on the details page and in text after the run
  /// (analyzer::NcuFilter::attributes); the raw page prints every attribute anyway.
  std::vector<std::string> print_attributes;
  /// --list-sets, --list-sections or --list-metrics: print the listing and exit (run_listing).
  std::optional<Listing> listing;
  /// --list-chips: print the chips --chips takes (to --log-file when given) and exit
  bool list_chips = false;
  /// --query-metrics (or --query-metrics-mode): list metrics and exit (launcher::run_metric_query).
  std::optional<MetricQuery> metric_query;
  bool help = false;                     ///< --help: usage was requested
  std::string help_text;
  bool version = false;                  ///< -v/--version: print rfprof's version and exit
  bool null_stdin = false;               ///< --null-stdin: the application reads /dev/null
  /// --forward-signals: SIGUSR1 and SIGUSR2 go on to the application too (without it rfprof
  /// ignores them: an application-defined signal delivered twice, as when Slurm's
  /// --signal=USR1@N signals every process of the step, would run its handler twice).
  bool forward_signals = false;
  bool quiet = false;                    ///< --quiet: no notes, no "rfprof: trace:" lines
  /// One-line notes for stderr before the run ("rfprof: note: ..."): ncu flags accepted whose ncu
  /// meaning rfprof does not reproduce (e.g. --cache-control all: no cache flush).
  std::vector<std::string> notes;
};

/// An ncu flag value that describes what rfprof does anyway: accepted (and skipped), with a note
/// when ncu's numbers would differ from rfprof's ("" when they would not).
struct AcceptedValue {
  std::string flag;   ///< long name without "--", e.g. "cache-control"
  std::string value;  ///< e.g. "none"
  std::string note;
};

/// The ncu flag values rfprof accepts as no-ops (docs/ncu-flags.md). A switch's values
/// (is_boolean_flag) are "yes" and "no" only: boolean_spelling gives them.
const std::vector<AcceptedValue>& accepted_values();

/// True for the ncu flags that take a yes/no value in any of ncu's spellings (--check-exit-code,
/// --import-source, --import-sass, --apply-rules, --kill, --config-file, --rename-kernels).
bool is_boolean_flag(const std::string& name);
/// "yes" for on, yes, true and 1, "no" for off, no, false and 0 (any case); any other value
/// lowercased, as it was.
std::string boolean_spelling(const std::string& value);

/// Parses rfprof's arguments (argv[0] excluded): ncu's flags, then the command. Unique prefixes
/// of long options are accepted as in ncu (`--target-process all`). Throws ArgsError for an
/// unknown flag, a flag of ncu rfprof does not support (the message names it and says why), a bad
/// value, flags that cannot work together (e.g. --replay-mode step with -k), or neither a command
/// nor --import. The RFPROF_* settings are checked as librfinject will read them, so a run never
/// starts that the collector would then refuse.
Plan parse_args(const std::vector<std::string>& args);

/// Checks, before the application starts, the settings librfinject will read in it: the plan's
/// RFPROF_* variables over `process_env` (rfprof's own environment, which the application
/// inherits; less Plan::env_unset), with inject::read_config, the -o pattern's syntax, and check_output.
/// Throws ArgsError naming the flag (or "the environment's RFPROF_X") and what was expected; a flag's
/// conflict with a variable of `process_env` names that variable as the environment's. Does nothing
/// without a command.
void check_plan(const Plan& plan, const std::function<std::optional<std::string>(const std::string&)>& process_env);

/// The -o checks of check_plan, before the application starts: a folder named without
/// placeholders must exist and be writable, and the trace of the process rfprof starts must not
/// exist unless RFPROF_FORCE_OVERWRITE (through `env`) is set, when its name depends on nothing
/// but the host (no %p, %i or %q{VAR}; ncu refuses an existing report without -f the same way).
/// Throws ArgsError naming -o and the path.
void check_output(const Plan& plan, const std::function<std::optional<std::string>(const std::string&)>& env);

/// The long options rfprof accepts (without "--"), for prefix expansion and docs.
const std::vector<std::string>& long_options();

/// ncu's flags that rfprof knows but does not support, each with the reason printed.
const std::map<std::string, std::string>& unsupported_flags();

}  // namespace rf::launcher
