// rfprof's command line: Nsight Compute's flags with ncu's meaning, mapped onto librfinject's
// RFPROF_* configuration (docs/ncu-flags.md has the table of every ncu flag). Pure logic, no
// process is started here, so every flag is tested without a GPU.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

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
  /// Traces to read instead of running anything (-i/--import).
  std::vector<std::string> import_files;
  bool csv = false;                      ///< --csv: print ncu's CSV after the run
  std::string page = "details";          ///< --page raw|details (ncu's default: details)
  std::optional<std::string> log_file;   ///< --log-file: where the CSV/report text goes
  std::string output_pattern;            ///< -o/--export pattern, ".rftrace" appended if missing
  /// Kernel filters applied to what is printed (-k, -s, -c): see docs/ncu-flags.md.
  std::optional<std::string> kernel_name;  ///< exact name, or "regex:<ECMAScript regex>"
  uint64_t launch_skip = 0;
  std::optional<uint64_t> launch_count;
  std::optional<std::string> list_sets_chip;  ///< --list-sets --chip CHIP: print the sets and exit
  bool help = false;                     ///< --help: usage was requested
  std::string help_text;
};

/// Parses rfprof's arguments (argv[0] excluded): ncu's flags, then the command. Unique prefixes
/// of long options are accepted as in ncu (`--target-process all`). Throws ArgsError for an
/// unknown flag, a flag of ncu rfprof does not support (the message names it and says why), a bad
/// value, or neither a command nor --import.
Plan parse_args(const std::vector<std::string>& args);

/// The long options rfprof accepts (without "--"), for prefix expansion and docs.
const std::vector<std::string>& long_options();

/// ncu's flags that rfprof knows but does not support, each with the reason printed.
const std::map<std::string, std::string>& unsupported_flags();

}  // namespace rf::launcher
