// Internal helpers of the codec shared by writer and reader.
#pragma once

#include <functional>

#include "rfprof/trace/records.h"

namespace rf::trace {

/// Calls `visit` with every StringId field of `record` (StringDef's own id excluded).
void for_each_string_id(const Record& record, const std::function<void(StringId)>& visit);

}  // namespace rf::trace
