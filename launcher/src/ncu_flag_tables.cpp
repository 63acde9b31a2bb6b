// The ncu flags rfprof knows: those it refuses (and why), the values it accepts as what it does
// anyway, and its long options for ncu's unique-prefix matching (rfprof/launcher/ncu_args.h;
// docs/ncu-flags.md, "Every ncu flag").
#include <algorithm>
#include <cctype>
#include <map>
#include <string>
#include <vector>

#include "rfprof/launcher/ncu_args.h"

namespace rf::launcher {

const std::map<std::string, std::string>& unsupported_flags() {
  static const std::map<std::string, std::string> flags = {
      {"replay-mode", "rfprof replays by kernel (--replay-mode kernel) or across training steps (--replay-mode step)"},
      {"app-replay-buffer", "rfprof has no application replay: it replays each kernel, or one pass per training step (--replay-mode step)"},
      {"app-replay-match", "rfprof has no application replay (--replay-mode step replays across training steps)"},
      {"app-replay-mode", "rfprof has no application replay (--replay-mode step replays across training steps)"},
      {"range-replay-options", "rfprof has no range replay (--replay-mode step replays across training steps)"},
      {"graph-profiling", "graphs are profiled per kernel: only --graph-profiling node is accepted"},
      {"cache-control", "expected all or none (rfprof never flushes caches: kernels run as in the application)"},
      {"clock-control", "expected base, boost, force-boost or none (rfprof never changes clocks: kernels run at the application's clocks)"},
      {"mode", "rfprof has no interactive modes (launch-and-attach, attach): it launches and profiles"},
      {"hostname", "rfprof has no remote attach"},
      {"port", "rfprof has no remote attach"},
      {"print-units", "units are printed in base units: only --print-units base is accepted"},
      {"section-folder", "section files are not read"},
      {"pm-sampling-interval", "rfprof does no PM sampling"},
      {"warp-sampling-interval", "rfprof does no warp sampling"},
      {"import-source", "rfprof imports no source (--import-source no is accepted)"},
      {"check-exit-code", "expected yes or no (or on/off, true/false, 1/0; rfprof always exits with the application's status)"},
      {"launch-count-per-kernel", "use -k with -c"},
      // ncu flags without an rfprof counterpart (their ncu defaults, where harmless, are accepted:
      // accepted_values()).
      {"config-file", "rfprof reads no config.ncu-cfg; give the flags on the command line (--config-file off and on are accepted)"},
      {"config-file-path", "rfprof reads no config.ncu-cfg; give the flags on the command line"},
      {"kill", "rfprof lets the application run to its end (--kill no is accepted)"},
      {"range-filter", "select ranges with --nvtx-include, or windows with cudaProfilerStart/Stop"},
      {"target-processes-filter", "every CUDA process of the application is profiled (or only the first: --target-processes application-only)"},
      {"native-include", "rfprof has no call stack filters; rfanalyze sums launches by call site (--call-stack)"},
      {"native-exclude", "rfprof has no call stack filters; rfanalyze sums launches by call site (--call-stack)"},
      {"python-include", "rfprof records native call stacks only (--call-stack)"},
      {"python-exclude", "rfprof records native call stacks only (--call-stack)"},
      {"nvtx-push-pop-scope", "push/pop ranges are per thread (--nvtx-push-pop-scope thread is accepted)"},
      {"pipeline-boost-state", "expected stable or dynamic (rfprof never changes the tensor-core boost state)"},
      {"import-sass", "expected yes or no (or on/off, true/false, 1/0; rfprof's traces hold no SASS)"},
      {"apply-rules", "expected yes or no (or on/off, true/false, 1/0; rfprof applies no ncu rules)"},
      {"rule", "ncu's rules are not applied"},
      {"list-rules", "ncu's rules are not applied"},
      {"metric-distribution-groups", "rfprof plans the passes of its metric list itself"},
      {"section-folder-recursive", "section files are not read"},
      {"section-folder-restore", "section files are not read"},
      {"rename-kernels", "expected on or off (or yes/no, true/false, 1/0; rfprof prints demangled names as the driver gives them)"},
      {"rename-kernels-export", "rfprof renames no kernels"},
      {"rename-kernels-path", "rfprof renames no kernels"},
      {"source-folders", "rfprof imports no source"},
      {"print-source", "source views are not printed; rfanalyze writes the per-kernel tables"},
      {"resolve-source-file", "source views are not printed"},
      {"print-details", "the details page prints rfprof's metrics only (--print-details header is accepted)"},
      {"print-metric-name", "metric names are printed as NVIDIA spells them (--print-metric-name name is accepted)"},
      {"print-metric-instances", "metric instances are not recorded (--print-metric-instances none is accepted)"},
      {"print-nvtx-rename", "kernels are not renamed after NVTX ranges (--print-nvtx-rename none is accepted); rfanalyze's kernels.csv has each launch's NVTX path"},
      {"print-rule-details", "ncu's rules are not applied"},
      {"print-metric-attribution", "green-context attribution is not recorded"},
      {"print-fp", "values are printed as recorded"},
      {"open-in-ui", "rfprof has no UI: rfanalyze writes report.html"},
      {"pm-sampling-buffer-size", "rfprof does no PM sampling"},
      {"pm-sampling-max-passes", "rfprof does no PM sampling"},
      {"warp-samples-per-interval", "rfprof does no warp sampling"},
      {"disable-pm-warp-sampling", "rfprof does no PM sampling"},
      {"warp-sampling-max-passes", "rfprof does no warp sampling"},
      {"warp-sampling-buffer-size", "rfprof does no warp sampling"},
      {"mps", "rfprof has no MPS mode"},
      {"mps-num-clients", "rfprof has no MPS mode"},
      {"mps-timeout", "rfprof has no MPS mode"},
      {"communicator", "rfprof has no multi-process communicator: each process writes its own trace"},
      {"communicator-tcp-num-peers", "rfprof has no multi-process communicator: each process writes its own trace"},
      {"communicator-tcp-hostname", "rfprof has no multi-process communicator: each process writes its own trace"},
      {"communicator-tcp-port", "rfprof has no multi-process communicator: each process writes its own trace"},
      {"lockstep-kernel-launch", "rfprof has no multi-process communicator: each process writes its own trace"},
      {"lockstep-nvtx-include", "rfprof has no multi-process communicator: each process writes its own trace"},
      {"lockstep-nvtx-exclude", "rfprof has no multi-process communicator: each process writes its own trace"},
      {"max-connections", "rfprof has no remote attach"},
      {"process-id", "rfprof cannot attach to a running process"},
      {"injection-path-64", "rfprof injects its own librfinject.so"},
      {"injection-path-32", "rfprof profiles 64-bit processes only"},
      {"preload-library", "set LD_PRELOAD for the application"},
      {"support-32bit", "rfprof profiles 64-bit processes only"},
      // Older ncu spellings, still in scripts.
      {"kernel-regex", "an old ncu flag: use -k regex:EXPR"},
      {"kernel-regex-base", "an old ncu flag: use --kernel-name-base with -k regex:EXPR"},
      {"details-all", "an old ncu flag (--print-details all now): rfprof's details page (--page details) prints every metric it collected"},
  };
  return flags;
}

bool is_boolean_flag(const std::string& name) {
  static const std::vector<std::string> flags = {"check-exit-code", "import-source", "import-sass", "apply-rules",
                                                 "kill", "config-file", "rename-kernels"};
  return std::find(flags.begin(), flags.end(), name) != flags.end();
}

std::string boolean_spelling(const std::string& value) {
  std::string v = value;
  for (char& c : v) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (v == "on" || v == "yes" || v == "true" || v == "1") return "yes";
  if (v == "off" || v == "no" || v == "false" || v == "0") return "no";
  return v;
}

const std::vector<AcceptedValue>& accepted_values() {
  static const std::vector<AcceptedValue> values = {
      {"cache-control", "none", ""},
      {"cache-control", "all",
       "--cache-control all: rfprof does not flush caches before each kernel as ncu does; DRAM bytes are "
       "those of the application's own run"},
      {"clock-control", "none", ""},
      {"clock-control", "base",
       "--clock-control base: rfprof does not lock clocks as ncu does; kernels run at the application's clocks"},
      {"clock-control", "boost",
       "--clock-control boost: rfprof does not lock clocks as ncu does; kernels run at the application's clocks"},
      {"clock-control", "force-boost",
       "--clock-control force-boost: rfprof does not lock clocks as ncu does; kernels run at the application's clocks"},
      {"graph-profiling", "node", ""},
      {"print-units", "base", ""},
      {"print-units", "auto", "--print-units auto: rfprof prints base units (bytes, ns), as --print-units base"},
      // Switches (is_boolean_flag): every spelling of yes and no is compared as these.
      {"check-exit-code", "yes", ""},
      {"check-exit-code", "no", ""},
      {"import-source", "no", ""},
      {"config-file", "no", ""},
      {"config-file", "yes", ""},  // ncu's default: it only matters when a config.ncu-cfg exists
      {"kill", "no", ""},
      {"nvtx-push-pop-scope", "thread", ""},
      {"pipeline-boost-state", "dynamic", ""},
      {"pipeline-boost-state", "stable",
       "--pipeline-boost-state stable: rfprof does not set the tensor-core boost state as ncu does; kernels run "
       "in the application's state"},
      {"import-sass", "yes", ""},
      {"import-sass", "no", ""},
      {"apply-rules", "yes", ""},
      {"apply-rules", "no", ""},
      {"rename-kernels", "yes", ""},
      {"rename-kernels", "no", ""},
      {"print-details", "header", ""},
      {"print-metric-name", "name", ""},
      {"print-metric-instances", "none", ""},
      {"print-nvtx-rename", "none", ""},
  };
  return values;
}

const std::vector<std::string>& long_options() {
  static const std::vector<std::string> opts = {
      "help", "metrics", "section", "set", "csv", "page", "log-file", "export", "force-overwrite", "import",
      "profile-from-start", "disable-profiler-start-stop", "target-processes", "nvtx", "kernel-name",
      "launch-skip", "launch-count", "replay-mode", "kernel-name-base", "list-sets", "chip",
      "call-stack", "call-stack-type", "cuda-memory-usage", "nvtx-include", "nvtx-exclude", "replay-groups", "replay-range",
      "version", "disable-extra-suffixes", "quiet", "verbose", "null-stdin", "forward-signals",
      "print-summary", "print-kernel-base", "devices", "kernel-id", "filter-mode",
      "launch-skip-before-match", "chips", "list-chips", "query-metrics", "query-metrics-mode",
      "query-metrics-collection", "list-sections", "list-metrics"};
  return opts;
}

}  // namespace rf::launcher
