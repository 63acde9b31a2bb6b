// Replay across steps with NVTX-range windows (RFPROF_REPLAY_RANGE, pure logic, no CUPTI): the
// NVTX range that is one training step, e.g. "regex:^step " for examples/imagenet/main.py's
// "step 5", "step 6", ... opens a window when it starts and closes it when it ends, instead of
// cudaProfilerStart/Stop. docs/collector.md, "Replay across steps".
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>

namespace rf::collector {

/// What an NVTX event does to the step window.
enum class StepRangeEvent { kNone, kOpen, kClose };

/// Follows NVTX push/pop ranges per thread and domain (NVTX keeps one push/pop stack per domain
/// and thread) and start/end ranges by id, and says when the range that delimits a step opens and
/// closes the window. Only one window is open at a time: a matching
/// range inside the open one does nothing. Not thread-safe: the session serializes calls.
class StepRangeWindows {
 public:
  /// `rule`: the range's name exactly, or "regex:EXPR" (ECMAScript) searched in the name. Throws
  /// std::invalid_argument for an empty rule or an invalid regular expression (naming it).
  explicit StepRangeWindows(const std::string& rule);

  /// nvtxRangePush (nvtxDomainRangePushEx: in `domain`, 0 for the default domain) on `thread`
  /// with message `name`.
  StepRangeEvent push(uint64_t thread, std::string_view name, uint64_t domain = 0);
  /// nvtxRangePop (nvtxDomainRangePop of `domain`) on `thread` (a pop without a push is ignored).
  StepRangeEvent pop(uint64_t thread, uint64_t domain = 0);
  /// nvtxRangeStart returning `id`, with message `name`.
  StepRangeEvent start(uint64_t id, std::string_view name);
  /// nvtxRangeEnd of `id`.
  StepRangeEvent end(uint64_t id);

  bool open() const noexcept { return open_; }
  /// True when `name` is a step range's name.
  bool matches(std::string_view name) const;

 private:
  std::string exact_;
  std::optional<std::regex> regex_;
  bool open_ = false;
  bool by_id_ = false;        // the open window is a start/end range (else push/pop)
  uint64_t owner_ = 0;        // its thread (push/pop) or range id (start/end)
  uint64_t owner_domain_ = 0; // its domain (push/pop)
  uint32_t owner_depth_ = 0;  // push depth of the window's range on its thread, in its domain
  std::map<std::pair<uint64_t, uint64_t>, uint32_t> depth_;  // push depth per (thread, domain), > 0
};

}  // namespace rf::collector
