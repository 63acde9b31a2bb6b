// The CUDA devices of this machine and their chips, for ncu's --query-metrics without --chips.
// This header includes no CUDA or CUPTI header.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rf::collector {

/// One CUDA device as the calling process sees it (after CUDA_VISIBLE_DEVICES).
struct LocalDevice {
  uint32_t ordinal = 0;  ///< CUDA device ordinal
  std::string name;      ///< cuDeviceGetName, e.g. "NVIDIA H100 80GB HBM3"
  std::string chip;      ///< cuptiDeviceGetChipName, e.g. "GH100": what MetricHost takes
};

/// Every CUDA device of this process, in ordinal order. Loads the driver (libcuda.so.1, dlopen)
/// and calls cuInit; the chip comes from CUPTI (cuptiProfilerInitialize, cuptiDeviceGetChipName,
/// cuptiProfilerDeInitialize). For a command-line tool's one query (rfprof --query-metrics): not
/// thread-safe, and never to be called inside a profiled process, where the de-initialization
/// would undo the collector's own cuptiProfilerInitialize. Throws HostApiError, one line starting
/// "rfprof: ", when no driver can be loaded, cuInit fails (no device: CUDA_ERROR_NO_DEVICE), or
/// CUPTI cannot be initialized or cannot name a chip. An empty list: the driver reports no device.
std::vector<LocalDevice> local_devices();

}  // namespace rf::collector
