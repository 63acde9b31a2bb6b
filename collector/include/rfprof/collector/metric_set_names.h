// Names of rfprof's metric sets, without CUPTI (the set planner is rfprof/collector/metric_sets.h),
// so that configuration code can check a set name without the profiler host API.
#pragma once

#include <string>
#include <vector>

namespace rf::collector {

/// Names of the sets, in order: "timing", "roofline", "roofline-tensor", "hierarchical". Never throws.
const std::vector<std::string>& metric_set_names();

/// One-line description of a set; "" for an unknown name. Never throws.
std::string metric_set_description(const std::string& set);

}  // namespace rf::collector
