// Mapping of Range Profiler ranges to kernel launches (pure logic, no CUPTI).
//
// Under CUPTI_AutoRange a counter image holds one range per kernel, in execution order, and a
// range carries neither a correlation id nor a kernel name. The collector therefore records every
// driver launch of a context since the image was last reset, and maps range i to the i-th launch.
// When the number of ranges differs from the number of launches (dropped ranges, a launch the
// callbacks did not see, a CUDA graph whose kernel count is unknowable) the mapping is refused as a
// whole: the caller writes the counters with correlation id 0 and a CollectorError
// (kRangeLaunchMismatch). Counters are never shifted onto other launches.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rf::collector {

/// One driver launch API call as seen by the launch callbacks.
struct LaunchInfo {
  uint32_t correlation_id = 0;            ///< CUPTI correlation id of the driver launch call
  std::string kernel_name;                ///< mangled symbol name ("" for graph launches)
  std::array<int32_t, 3> grid{0, 0, 0};   ///< grid size in blocks (x, y, z)
  std::array<int32_t, 3> block{0, 0, 0};  ///< block size in threads (x, y, z)
  bool is_graph = false;                  ///< cuGraphLaunch: one call, an unknown number of kernels
};

/// Result of LaunchRangeMap::map().
struct RangeMapping {
  bool ok = false;                       ///< true: correlation_ids[i] is the launch of range i
  std::vector<uint32_t> correlation_ids; ///< one per range; all 0 when !ok
  uint64_t expected_ranges = 0;          ///< launches recorded (graph launches count as 1)
  uint64_t actual_ranges = 0;            ///< ranges decoded from the counter image
  std::string message;                   ///< why the mapping was refused ("" when ok)
};

/// What decides, at a launch's entry in kernel replay, that the counter image started so far must
/// be decoded before this launch (LaunchRangeMap holds the image's launches).
struct ImageState {
  uint32_t image_window = 0;       ///< window whose ranges the image holds
  size_t launches = 0;             ///< launches recorded in the image
  size_t max_ranges = 0;           ///< its capacity
  bool has_graph = false;          ///< a graph launch is in it (its range count is unknowable)
  uint64_t age_ns = 0;             ///< time since the image was started
};

/// True when the started image must be decoded before a launch in `window` (a graph launch when
/// `graph`): another window; the image is full; it holds a graph launch, or this is a graph launch
/// and the image is not empty (a graph gets an image of its own); or it is older than
/// `max_age_ns` (the flush interval), so that a SIGKILL loses at most that much of the counters.
bool image_must_be_decoded(const ImageState& image, uint32_t window, bool graph, uint64_t max_age_ns) noexcept;

/// The launches of one counter image since its last reset, in launch order. Not thread-safe: the
/// collector serializes launches per context while counters are collected.
class LaunchRangeMap {
 public:
  /// Appends a launch and returns its index within the image (0-based). This index is the
  /// LaunchApi::launch_index written to the trace.
  uint64_t record(LaunchInfo launch);

  /// Launches recorded since the last reset.
  size_t size() const noexcept { return launches_.size(); }
  bool empty() const noexcept { return launches_.empty(); }
  /// True if a graph launch was recorded since the last reset (the range count is then unknowable).
  bool has_graph() const noexcept { return has_graph_; }
  /// The recorded launches, in launch order.
  const std::vector<LaunchInfo>& launches() const noexcept { return launches_; }

  /// Maps `num_ranges` decoded ranges to the recorded launches: range i -> launch i when the counts
  /// are equal and no graph launch was recorded; otherwise a refused mapping (ok == false, every
  /// correlation id 0) whose message names the expected and actual counts, or the graph launch.
  RangeMapping map(size_t num_ranges) const;

  /// Forgets all launches (call when the counter image is re-initialized).
  void reset() noexcept;

 private:
  std::vector<LaunchInfo> launches_;
  bool has_graph_ = false;
};

}  // namespace rf::collector
