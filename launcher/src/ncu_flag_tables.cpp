// The ncu flags rfprof knows: those it refuses (and why), the values it accepts as what it does
// anyway, and its long options for ncu's unique-prefix matching (rfprof/launcher/ncu_args.h;
// docs/ncu-flags.md, "Every ncu flag").
#include <map>
#include <string>
#include <vector>

#include "rfprof/launcher/ncu_args.h"

namespace rf::launcher {

const std::map<std::string, std::string>& unsupported_flags() {
  static const std::map<std::string, std::string> flags = {
      {"replay-mode", "rfprof replays by kernel (--replay-mode kernel) or across training steps (--replay-mode step)"},
      {"app-replay-buffer", "application replay is not supported (rfprof uses kernel replay)"},
      {"app-replay-match", "application replay is not supported"},
      {"app-replay-mode", "application replay is not supported"},
      {"range-replay-options", "range replay is not supported"},
      {"graph-profiling", "graphs are profiled per kernel: only --graph-profiling node is accepted"},
      {"cache-control", "expected all or none (rfprof never flushes caches: kernels run as in the application)"},
      {"clock-control", "expected base or none (rfprof never changes clocks: kernels run at the application's clocks)"},
      {"mode", "the interactive modes (launch-and-attach, attach) are not supported"},
      {"hostname", "remote attach is not supported"},
      {"port", "remote attach is not supported"},
      {"print-units", "units are printed in base units: only --print-units base is accepted"},
      {"section-folder", "section files are not read"},
      {"pm-sampling-interval", "PM sampling is not supported"},
      {"warp-sampling-interval", "warp sampling is not supported"},
      {"import-source", "source import is not supported (--import-source no is accepted)"},
      {"check-exit-code", "expected yes or no (rfprof always exits with the application's status)"},
      {"launch-count-per-kernel", "not supported; use -k with -c"},
      // ncu flags without an rfprof counterpart (their ncu defaults, where harmless, are accepted:
      // accepted_values()).
      {"config-file", "rfprof reads no config.ncu-cfg; give the flags on the command line (--config-file off is accepted)"},
      {"config-file-path", "rfprof reads no config.ncu-cfg; give the flags on the command line"},
      {"kill", "rfprof lets the application run to its end (--kill no is accepted)"},
      {"range-filter", "not supported; select ranges with --nvtx-include, or windows with cudaProfilerStart/Stop"},
      {"target-processes-filter", "every CUDA process of the application is profiled (or only the first: --target-processes application-only)"},
      {"native-include", "call stack filters are not supported; rfanalyze sums launches by call site (--call-stack)"},
      {"native-exclude", "call stack filters are not supported; rfanalyze sums launches by call site (--call-stack)"},
      {"python-include", "python call stacks are not supported"},
      {"python-exclude", "python call stacks are not supported"},
      {"nvtx-push-pop-scope", "push/pop ranges are per thread (--nvtx-push-pop-scope thread is accepted)"},
      {"pipeline-boost-state", "expected stable or dynamic (rfprof never changes the tensor-core boost state)"},
      {"import-sass", "expected yes or no (rfprof's traces hold no SASS)"},
      {"apply-rules", "expected yes or no (rfprof applies no ncu rules)"},
      {"rule", "ncu's rules are not applied"},
      {"list-rules", "ncu's rules are not applied"},
      {"metric-distribution-groups", "not supported: rfprof plans the passes of its metric list itself"},
      {"section-folder-recursive", "section files are not read"},
      {"section-folder-restore", "section files are not read"},
      {"rename-kernels", "expected on or off (rfprof prints demangled names as the driver gives them)"},
      {"rename-kernels-export", "kernel renaming is not supported"},
      {"rename-kernels-path", "kernel renaming is not supported"},
      {"source-folders", "source import is not supported"},
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
      {"pm-sampling-buffer-size", "PM sampling is not supported"},
      {"pm-sampling-max-passes", "PM sampling is not supported"},
      {"warp-samples-per-interval", "warp sampling is not supported"},
      {"disable-pm-warp-sampling", "PM sampling is not supported"},
      {"warp-sampling-max-passes", "warp sampling is not supported"},
      {"warp-sampling-buffer-size", "warp sampling is not supported"},
      {"mps", "MPS profiling is not supported"},
      {"mps-num-clients", "MPS profiling is not supported"},
      {"mps-timeout", "MPS profiling is not supported"},
      {"communicator", "the multi-process communicator is not supported: each process writes its own trace"},
      {"communicator-tcp-num-peers", "the multi-process communicator is not supported"},
      {"communicator-tcp-hostname", "the multi-process communicator is not supported"},
      {"communicator-tcp-port", "the multi-process communicator is not supported"},
      {"lockstep-kernel-launch", "the multi-process communicator is not supported"},
      {"lockstep-nvtx-include", "the multi-process communicator is not supported"},
      {"lockstep-nvtx-exclude", "the multi-process communicator is not supported"},
      {"max-connections", "remote attach is not supported"},
      {"process-id", "attaching to a running process is not supported"},
      {"injection-path-64", "rfprof injects its own librfinject.so"},
      {"injection-path-32", "32-bit processes are not supported"},
      {"preload-library", "not supported; set LD_PRELOAD for the application"},
      {"support-32bit", "32-bit processes are not supported"},
  };
  return flags;
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
      {"graph-profiling", "node", ""},
      {"print-units", "base", ""},
      {"check-exit-code", "yes", ""},
      {"check-exit-code", "no", ""},
      {"check-exit-code", "1", ""},
      {"check-exit-code", "0", ""},
      {"import-source", "no", ""},
      {"import-source", "0", ""},
      {"config-file", "off", ""},
      {"config-file", "on", ""},  // ncu's default: it only matters when a config.ncu-cfg exists
      {"kill", "no", ""},
      {"kill", "0", ""},
      {"nvtx-push-pop-scope", "thread", ""},
      {"pipeline-boost-state", "dynamic", ""},
      {"pipeline-boost-state", "stable",
       "--pipeline-boost-state stable: rfprof does not set the tensor-core boost state as ncu does; kernels run "
       "in the application's state"},
      {"import-sass", "yes", ""},
      {"import-sass", "no", ""},
      {"apply-rules", "yes", ""},
      {"apply-rules", "no", ""},
      {"rename-kernels", "on", ""},
      {"rename-kernels", "off", ""},
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
