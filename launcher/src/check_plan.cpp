// Checks before the application starts (rfprof/launcher/ncu_args.h): the RFPROF_* settings as
// librfinject will read them inside the application, and the -o pattern's folder and trace.
#include <unistd.h>

#include <filesystem>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "args_fail.h"
#include "config.h"  // librfinject's reading of the RFPROF_* variables (inject/config.h)
#include "rfprof/collector/messages.h"
#include "rfprof/launcher/ncu_args.h"

namespace rf::launcher {

void check_plan(const Plan& plan, const inject::EnvLookup& process_env) {
  if (plan.command.empty()) return;  // nothing runs: -i, --list-sets, --help, --version
  // The application's environment, as application_environment builds it: the plan's variables
  // over the process's own (a user's RFPROF_* reaches the application too), less those the plan
  // removes (Plan::env_unset).
  // RFPROF_ROOT_PID is the application's process id, set in the child after the fork (run.cpp):
  // any id stands for it here, or --target-processes application-only was always refused.
  inject::EnvLookup env = [&](const std::string& name) -> std::optional<std::string> {
    if (auto it = plan.env.find(name); it != plan.env.end()) return it->second;
    if (name == "RFPROF_ROOT_PID") return std::to_string(::getpid());
    if (plan.env_unset.count(name)) return std::nullopt;
    return process_env(name);
  };
  static const std::vector<std::pair<std::string, std::string>> kFlagOf = {
      {"RFPROF_METRICS", "--metrics"},          {"RFPROF_METRIC_SET", "--set/--section"},
      {"RFPROF_PROFILE_FROM_START", "--profile-from-start"}, {"RFPROF_OUTPUT", "-o/--export"},
      {"RFPROF_KERNEL_NAME", "-k/--kernel-name"}, {"RFPROF_KERNEL_NAME_BASE", "--kernel-name-base"},
      {"RFPROF_LAUNCH_SKIP", "-s/--launch-skip"}, {"RFPROF_LAUNCH_COUNT", "-c/--launch-count"},
      {"RFPROF_NVTX_INCLUDE", "--nvtx-include"}, {"RFPROF_NVTX_EXCLUDE", "--nvtx-exclude"},
      {"RFPROF_REPLAY", "--replay-mode"},       {"RFPROF_REPLAY_RANGE", "--replay-range"},
      {"RFPROF_REPLAY_GROUPS", "--replay-groups"}, {"RFPROF_DEVICES", "--devices"},
      {"RFPROF_KERNEL_ID", "--kernel-id"},      {"RFPROF_FILTER_MODE", "--filter-mode"},
      {"RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "--launch-skip-before-match"},
      {"RFPROF_DISABLE_PROFILER_START_STOP", "--disable-profiler-start-stop"}};
  // The other RFPROF_* variables a message names that come from rfprof's environment, not from a
  // flag: the conflict a flag's variable meets may be theirs (RFPROF_KERNEL_NAME=x rfprof
  // --replay-mode step). "" when none does.
  auto inherited = [&](const std::string& what, const std::string& own) {
    static const std::regex kVariable("RFPROF_[A-Z0-9_]+");
    std::string named;
    for (std::sregex_iterator it(what.begin(), what.end(), kVariable), end; it != end; ++it) {
      const std::string var = it->str();
      const auto value = var == own || plan.env.count(var) ? std::nullopt : env(var);
      if (!value || value->empty() || var == "RFPROF_ROOT_PID" || named.find(var + "=") != std::string::npos) continue;
      named += (named.empty() ? "" : ", ") + var + "=\"" + *value + "\"";
    }
    return named.empty() ? named : " (from the environment: " + named + ")";
  };
  auto refuse = [&](const inject::ConfigError& e) {
    const std::string what = collector::detail_of(e);
    for (const auto& [var, flag] : kFlagOf)
      if (what.rfind(var, 0) == 0 && (what[var.size()] == '=' || what[var.size()] == ':'))
        fail(plan.env.count(var) ? flag + ": " + what + inherited(what, var) : "the environment's " + what);
    fail(what);
  };
  try {
    (void)inject::read_config(env);
    // The pattern's syntax only: %q{VAR} may name a variable that a launcher inside the command
    // (torchrun, mpirun) sets for each process, so any variable counts as set here.
    inject::PatternContext pattern;
    pattern.pid = 1;
    pattern.env = [](const std::string&) -> std::optional<std::string> { return std::string("x"); };
    pattern.exists = [](const std::filesystem::path&) { return false; };
    (void)inject::expand_output_pattern(plan.output_pattern, pattern);
  } catch (const inject::ConfigError& e) {
    refuse(e);
  }
  check_output(plan, env);
}

void check_output(const Plan& plan, const inject::EnvLookup& env) {
  const std::string& pattern = plan.output_pattern;
  namespace fs = std::filesystem;
  std::error_code ec;
  // The folder, when the pattern names it without placeholders: ncu does not create it either.
  const fs::path folder = fs::path(pattern).parent_path();
  if (!folder.empty() && folder.string().find('%') == std::string::npos) {
    if (!fs::exists(folder, ec))
      fail("-o/--export " + pattern + ": the folder " + folder.string() + " does not exist");
    if (!fs::is_directory(folder, ec))
      fail("-o/--export " + pattern + ": " + folder.string() + " is not a folder");
    if (::access(folder.c_str(), W_OK | X_OK) != 0)
      fail("-o/--export " + pattern + ": cannot write in the folder " + folder.string());
  }
  // The trace of the process rfprof starts, when its name does not depend on the process: an
  // existing one is refused before the run, as ncu refuses an existing report without -f.
  for (const char* per_process : {"%p", "%i", "%q"})
    if (pattern.find(per_process) != std::string::npos) return;
  const auto force_value = env("RFPROF_FORCE_OVERWRITE");
  const bool force = force_value && !force_value->empty() && *force_value != "0";
  inject::PatternContext context;
  context.pid = 1;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) context.hostname = host;
  context.env = env;
  fs::path trace;
  try {
    trace = inject::expand_output_pattern(pattern, context);
  } catch (const inject::ConfigError&) {
    return;  // check_plan named it
  }
  // -f replaces an earlier trace, never a folder, a device or a pipe (the writer refuses them too).
  const auto type = fs::symlink_status(trace, ec).type();
  if (type != fs::file_type::not_found && type != fs::file_type::none && type != fs::file_type::regular &&
      type != fs::file_type::symlink)
    fail("-o/--export " + pattern + ": " + trace.string() + " exists and is not a file (a folder, a device or a pipe)");
  if (!force && fs::exists(trace, ec))
    fail("-o/--export " + pattern + ": " + trace.string() + " exists; -f/--force-overwrite overwrites it");
}

}  // namespace rf::launcher
