// --metrics as ncu reads it, checked against CUPTI's profiler host API before the application
// starts (no GPU needed): a name the collector would refuse inside the application, where it could
// only step aside and let the job run unprofiled, is refused here instead, naming it.
#pragma once

#include <string>
#include <vector>

namespace rf::launcher {

/// Checks and completes `names` (the --metrics list, in order). A full metric name valid on some
/// chip of the host API (GH100 asked first, then cuptiProfilerHostGetSupportedChips) is kept. A base
/// name such as gpu__time_duration is what ncu completes with its extra suffixes: it becomes its
/// valid .sum, .avg, .min and .max names (one line added to `notes`), unless `extra_suffixes` is
/// false (ncu's --disable-extra-suffixes), when it is refused. ncu's breakdown:, group: and regex:
/// forms are refused. Throws ArgsError ("rfprof: --metrics NAME: ...", with the closest valid names
/// on GH100 for an unknown name) or, when the host API itself fails, nothing: the names are then
/// returned unchanged and the collector checks them on the real device.
std::vector<std::string> resolve_metric_names(const std::vector<std::string>& names, bool extra_suffixes,
                                              std::vector<std::string>& notes);

}  // namespace rf::launcher
