// The collector's "rfprof:" lines, and the classification of Range Profiler failures.
#include "rfprof/collector/messages.h"

#include <cupti_result.h>

#include <cstdio>

#include "rfprof/trace/utf8.h"

namespace rf::collector {

void print_line(std::string_view a, std::string_view b, std::string_view c) noexcept {
  try {
    std::string line;
    line.reserve(a.size() + b.size() + c.size());
    line.append(a).append(b).append(c);
    std::fprintf(stderr, "%s\n", trace::printable(line).c_str());
  } catch (...) {  // out of memory: byte by byte, control characters as '?' (one line still)
    for (std::string_view part : {a, b, c})
      for (char ch : part) std::fputc(static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? '?' : ch, stderr);
    std::fputc('\n', stderr);
  }
}

std::string_view without_rfprof_prefix(std::string_view text) noexcept {
  constexpr std::string_view kPrefix = "rfprof: ";
  if (text.starts_with(kPrefix)) text.remove_prefix(kPrefix.size());
  return text;
}

std::string detail_of(const std::exception& e) { return std::string(without_rfprof_prefix(e.what())); }

CountersFailure classify_counters_failure(int cupti_result) noexcept {
  switch (static_cast<CUptiResult>(cupti_result)) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
      return CountersFailure::kPrivileges;
    case CUPTI_ERROR_HARDWARE_BUSY:
      return CountersFailure::kBusy;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_INVALID_CHIP_NAME:
    case CUPTI_ERROR_INVALID_DEVICE:
      return CountersFailure::kUnsupported;
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
      return CountersFailure::kMig;
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return CountersFailure::kMetrics;
    default:
      return CountersFailure::kOther;
  }
}

std::string another_client_message(std::string_view other_client) {
  std::string line = "rfprof: another CUPTI client is attached (PyTorch profiler, nsys, ncu?)";
  if (!other_client.empty()) line += ": \"" + std::string(other_client) + "\"";
  return line + "; rfprof is disabled";
}

std::string counters_unavailable_message(CountersFailure failure, std::string_view detail, bool mps_enabled) {
  const std::string d(detail);
  const std::string tail = "; continuing with kernel timing only (no counters)";
  switch (failure) {
    case CountersFailure::kPrivileges:
      return "rfprof: GPU performance counters need permission (ERR_NVGPUCTRPERM, see "
             "https://developer.nvidia.com/ERR_NVGPUCTRPERM): run as root or load the NVIDIA "
             "driver with NVreg_RestrictProfilingToAdminUsers=0 (" + d + ")" + tail;
    case CountersFailure::kBusy:
      return "rfprof: GPU performance counters are busy: another process is collecting counters on "
             "this GPU (another process of this run with --target-processes all, or another "
             "profiler), or DCGM holds them (then run `dcgmi profile --pause` before profiling and "
             "`dcgmi profile --resume` after) (" + d + ")" + tail;
    case CountersFailure::kUnsupported:
      // The remedies: cuptiProfilerDeviceSupported's flags (cupti_profiler_target.h); MPS, which
      // no flag reports, from the driver's CU_DEVICE_ATTRIBUTE_MPS_ENABLED.
      return "rfprof: GPU performance counters are not supported on this device or configuration (" + d +
             "): they need a Volta or newer GPU, used bare-metal or passed through (on vGPU, with "
             "profiling enabled for the VM), outside WSL and confidential computing" +
             (mps_enabled ? "; this device is shared through MPS: profile with the MPS control daemon "
                            "stopped (`echo quit | nvidia-cuda-mps-control`)"
                          : "") +
             tail;
    case CountersFailure::kMig:
      // CUPTI guide, "Special Configurations", MIG: profiling works on isolated compute instances.
      return "rfprof: GPU performance counters are not available on this MIG compute instance (" + d +
             "): CUPTI profiles only a compute instance that has its whole GPU instance to itself; "
             "create one compute instance per GPU instance (`nvidia-smi mig -cgi <profile> -C`) or "
             "profile without MIG" + tail;
    case CountersFailure::kMetrics:
      return "rfprof: the metric list was rejected (" + d + "); check RFPROF_METRICS" + tail;
    case CountersFailure::kOther:
      break;
  }
  return "rfprof: GPU performance counters unavailable (" + d + ")" + tail;
}

std::string cannot_attach_message(std::string_view detail) {
  return "rfprof: cannot attach to CUDA (" + std::string(detail) + "); rfprof is disabled";
}

}  // namespace rf::collector
