// LaunchRangeMap: range i of an auto-range counter image is the i-th launch since the image reset.
#include "rfprof/collector/launch_map.h"

#include <utility>

namespace rf::collector {

uint64_t LaunchRangeMap::record(LaunchInfo launch) {
  if (launch.is_graph) has_graph_ = true;
  launches_.push_back(std::move(launch));
  return launches_.size() - 1;
}

RangeMapping LaunchRangeMap::map(size_t num_ranges) const {
  RangeMapping out;
  out.expected_ranges = launches_.size();
  out.actual_ranges = num_ranges;
  out.correlation_ids.assign(num_ranges, 0);
  if (has_graph_) {
    size_t graphs = 0;
    uint32_t first_graph = 0;
    for (const auto& l : launches_) {
      if (!l.is_graph) continue;
      if (graphs++ == 0) first_graph = l.correlation_id;
    }
    out.message = "counter image with " + std::to_string(num_ranges) + " ranges contains " +
                  std::to_string(graphs) + " CUDA graph launch(es) (first: correlation id " +
                  std::to_string(first_graph) +
                  "); a graph launch runs an unknown number of kernels, so its ranges cannot be "
                  "matched to launches; counters written with correlation id 0";
    return out;
  }
  if (num_ranges != launches_.size()) {
    out.message = "counter image has " + std::to_string(num_ranges) + " ranges but " +
                  std::to_string(launches_.size()) +
                  " kernel launches were seen since it was reset; counters written with "
                  "correlation id 0 instead of being shifted onto other launches";
    return out;
  }
  for (size_t i = 0; i < num_ranges; ++i) out.correlation_ids[i] = launches_[i].correlation_id;
  out.ok = true;
  return out;
}

void LaunchRangeMap::reset() noexcept {
  launches_.clear();
  has_graph_ = false;
}

bool image_must_be_decoded(const ImageState& image, uint32_t window, bool graph, uint64_t max_age_ns) noexcept {
  return image.image_window != window || image.launches >= image.max_ranges || image.has_graph ||
         (graph && image.launches > 0) || (image.launches > 0 && image.age_ns >= max_age_ns);
}

}  // namespace rf::collector
