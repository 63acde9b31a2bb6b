// The one-line "rfprof:" messages the collector prints inside a profiled process (pure logic).
// Each names what happened and what the user can do; the application always goes on.
#pragma once

#include <exception>
#include <string>
#include <string_view>

namespace rf::collector {

/// Why counters could not be collected.
enum class CountersFailure {
  kPrivileges,   ///< CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (ERR_NVGPUCTRPERM)
  kBusy,         ///< CUPTI_ERROR_HARDWARE_BUSY (DCGM or another profiler holds the counters)
  kUnsupported,  ///< device or configuration not supported (vGPU, WSL, CMP, SLI, old GPU, MPS?, ...)
  kMig,          ///< CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED (a MIG compute instance sharing its GPU instance)
  kMetrics,      ///< the metric list was rejected for this chip
  kOther,        ///< any other failing call
};

/// Writes `a`, `b`, `c` and a newline to stderr in one piece, printable (trace::printable: a metric
/// name, path or value from an environment variable holding a newline or an escape sequence cannot
/// forge a second line or drive the terminal); as they are if that fails (no memory). The parts
/// are joined here, so a caller in a catch handler builds no string. Never throws.
void print_line(std::string_view a, std::string_view b = {}, std::string_view c = {}) noexcept;

/// `text` without a leading "rfprof: ": an exception's message (HostApiError, MetricError,
/// ConfigError start with it) embedded in another "rfprof:" line. Never throws.
std::string_view without_rfprof_prefix(std::string_view text) noexcept;
/// `e.what()` without a leading "rfprof: ", for the detail of another "rfprof:" line.
std::string detail_of(const std::exception& e);

/// Classifies a CUptiResult (passed as its integer value) returned by a Range Profiler call.
CountersFailure classify_counters_failure(int cupti_result) noexcept;

/// "rfprof: another CUPTI client is attached (PyTorch profiler, nsys, ncu?); rfprof is disabled",
/// with the other client's name when CUPTI reported one (`other_client`, may be empty).
std::string another_client_message(std::string_view other_client);

/// One line saying counters are unavailable, why (`failure`), what to do about it, and that the
/// process goes on with kernel timing only. `detail` names the call, device and CUPTI's message.
/// `mps_enabled`: the device is shared through MPS (CU_DEVICE_ATTRIBUTE_MPS_ENABLED), which a
/// kUnsupported line then names with its remedy (stopping the MPS control daemon).
std::string counters_unavailable_message(CountersFailure failure, std::string_view detail,
                                         bool mps_enabled = false);

/// "rfprof: cannot attach to CUDA (<detail>); rfprof is disabled".
std::string cannot_attach_message(std::string_view detail);

}  // namespace rf::collector
