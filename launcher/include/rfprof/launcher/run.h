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

/// The environment of the application: the current environment less RFPROF_ROOT_PID and
/// `plan.env_unset`, then `plan.env`, then CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH set to
/// `inject`, as "NAME=value" strings. (RFPROF_ROOT_PID is added in the child, which knows its pid.)
std::vector<std::string> application_environment(const Plan& plan, const std::filesystem::path& inject,
                                                 char** current_environment);

/// Ignores SIGPIPE in rfprof, so that printing results into a closed pipe (`rfprof --csv ... |
/// head`) is a write error it reports, not a death that leaves its temporary traces behind;
/// run_application gives the application the disposition rfprof started with.
void ignore_sigpipe() noexcept;

/// Runs `plan.command` (PATH lookup as execvp) with `environment`, forwarding SIGINT, SIGTERM,
/// SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGVTALRM, SIGPROF and SIGXCPU to it while it runs
/// (and waiting for it), except those the kernel sent (si_code SI_KERNEL: the terminal's
/// Ctrl-C and hangup) while the application is in rfprof's process group, which they reached
/// already; a hangup when rfprof leads its session (sent to it alone) is forwarded. Returns its exit status, 128 + N when signal N killed it, 127 when
/// it could not be started (one "rfprof: cannot run ..." line on `err`; `*started`, when given, is
/// then false, and true otherwise: an application may exit 127 itself).
int run_application(const Plan& plan, const std::vector<std::string>& environment, std::ostream& err,
                    bool* started = nullptr);

/// The traces of one run, from its RFPROF_TRACE_LIST file (librfinject appends the path of each
/// trace it starts: inject::append_trace_list), each once, in the order listed.
struct ListedTraces {
  std::vector<std::filesystem::path> finished;    ///< listed paths that exist (finished traces)
  /// Listed paths of which only "<path>.part" exists (the process was killed): these .part paths.
  std::vector<std::filesystem::path> unfinished;
};

/// Reads the list file `list` (absent or empty: no traces). Never throws for a missing file.
ListedTraces traces_listed(const std::filesystem::path& list);

}  // namespace rf::launcher
