// Conversion of CUPTI activity records to trace records (no I/O, no CUPTI calls), so the field
// mapping can be tested with constructed records.
#pragma once

#include <cupti_activity.h>

#include <functional>
#include <optional>
#include <string_view>

#include "rfprof/collector/names.h"
#include "rfprof/collector/nvtx_style.h"
#include "rfprof/trace/records.h"

namespace rf::collector {

/// Maps a string to its trace string id (rf::trace::Writer::intern).
using InternFn = std::function<trace::StringId(std::string_view)>;

/// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (CUpti_ActivityKernel10) -> KernelActivity. Names are
/// interned (mangled and demangled) through `names`.
trace::KernelActivity convert_kernel(const CUpti_ActivityKernel10& k, KernelNameCache& names);

/// CUPTI_ACTIVITY_KIND_MARKER (CUpti_ActivityMarker2) -> NvtxEvent, or nullopt for markers that
/// are not NVTX range starts/ends or instant marks (sync-object markers). The thread id is the
/// system thread id (the session calls cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)).
std::optional<trace::NvtxEvent> convert_marker(const CUpti_ActivityMarker2& m,
                                               NvtxStyleTracker& styles, const InternFn& intern);

/// CUPTI_ACTIVITY_KIND_DEVICE (CUpti_ActivityDevice5) -> DeviceInfo with the chip name `chip`
/// (cuptiDeviceGetChipName; "" when unknown).
trace::DeviceInfo convert_device(const CUpti_ActivityDevice5& d, std::string_view chip,
                                 const InternFn& intern);

/// CUPTI_ACTIVITY_KIND_MEMORY2 (CUpti_ActivityMemory4) -> MemoryActivity, or nullopt for an
/// invalid operation type. Memory kinds beyond the trace's known ones become kUnknown.
std::optional<trace::MemoryActivity> convert_memory(const CUpti_ActivityMemory4& m);

}  // namespace rf::collector
