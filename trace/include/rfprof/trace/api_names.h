// Names of the launch API calls that LaunchApi records carry as (domain, CUPTI callback id).
// The table holds the callback ids of the CUDA 13 CUPTI headers (cupti_driver_cbid.h,
// cupti_runtime_cbid.h) for the launch calls the collector records (collector/src/
// session_callbacks.cpp); tests/collector/test_session_names.cpp checks it against those enums,
// so the trace library itself needs no CUPTI header.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "rfprof/trace/records.h"

namespace rf::trace {

/// The API function of a launch callback id, e.g. (kDriver, 307) -> "cuLaunchKernel",
/// (kRuntime, 505) -> "__cudaLaunchKernel"; "_ptsz" variants keep their suffix. Returns "" for a
/// callback id that is not a launch call. Never throws.
std::string_view launch_api_name(ApiDomain domain, uint32_t cbid) noexcept;

/// launch_api_name(), or "driver API call (cbid N)" / "runtime API call (cbid N)" when the id is
/// not in the table (a newer CUDA's call, a hand-written trace). Throws only std::bad_alloc.
std::string launch_api_label(ApiDomain domain, uint32_t cbid);

}  // namespace rf::trace
