// Running the application under librfinject and finding the traces it wrote.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "rfprof/launcher/ncu_args.h"

namespace rf::launcher {

/// librfinject.so for the rfprof binary at `self`: in the same folder (the build tree), else in
/// ../lib (an install tree). nullopt when neither exists.
std::optional<std::filesystem::path> find_inject_library(const std::filesystem::path& self);

/// The environment of the application: the current environment, then `plan.env`, then
/// CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH set to `inject`, as "NAME=value" strings.
/// (RFPROF_ROOT_PID is added in the child, which knows its pid.)
std::vector<std::string> application_environment(const Plan& plan, const std::filesystem::path& inject,
                                                 char** current_environment);

/// Runs `plan.command` (PATH lookup as execvp) with `environment`, forwarding SIGINT, SIGTERM and
/// SIGHUP to it while it runs. Returns its exit status, 128 + N when signal N killed it, 127 when
/// it could not be started (one "rfprof: cannot run ..." line on `err`).
int run_application(const Plan& plan, const std::vector<std::string>& environment, std::ostream& err);

/// Regular expression matching the paths an RFPROF_OUTPUT pattern can expand to: %p and %i digits,
/// %h and %q{VAR} any characters but '/', %% a '%'; everything else literal.
std::string pattern_regex(const std::string& pattern);

/// Trace files in the pattern's folder that match pattern_regex(pattern) and were modified at or
/// after `since`, sorted by path (the traces this run wrote; one per profiled process).
std::vector<std::filesystem::path> traces_written(const std::string& pattern,
                                                  std::filesystem::file_time_type since);

}  // namespace rf::launcher
