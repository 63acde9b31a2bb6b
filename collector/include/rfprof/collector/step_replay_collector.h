// Replay across steps, the session's side (pure logic, no CUPTI): StepReplay (step_replay.h) plus
// what lives between windows: the counters decoded after a group's last pass, and the correlation
// ids of the group's timing window, to which those counters are attached. The session asks it
// what to do with the Range Profiler (user replay, auto range) and the trace at each window.
//
// A group of a metric configuration with N passes:
//   window 1..N  kPass: the Range Profiler runs pass i (started at the window's first launch, or
//                when it opens with RFPROF_STEP_PASS_START=window; stopped when the window
//                closes); nothing of these windows is recorded, since the
//                instrumentation distorts durations. After pass N: decode and evaluate.
//   window N+1   kTiming: recorded as usual (launches, kernels with uninstrumented durations);
//                when it closes, range i's counters are written for its launch i.
// docs/step-replay.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/step_replay.h"

namespace rf::collector {

/// Counters of one launch of a complete group, for one RangeCounters record.
struct StepRangeCounters {
  uint32_t range_index = 0;     ///< index of the launch in the window (= range index)
  uint32_t correlation_id = 0;  ///< the timing window's launch with that index
  RangeValues range;            ///< CUPTI's range name and the metric values
};

/// What the session must do when a window closes.
struct StepWindowClosed {
  WindowVerdict verdict;
  bool stop_pass = false;       ///< the window ran a pass: cuptiRangeProfilerStop
  bool decode = false;          ///< then DecodeData + evaluate, handed to counters_decoded()
  bool reset_profiler = false;  ///< the image's passes are void: fresh image and config at pass 0
  /// Replay across steps cannot work for this program (the reason): the session steps aside and
  /// records the remaining windows without counters.
  std::string give_up;
  /// kGroupTimed: the group's counters, range i with the timing window's launch i.
  std::vector<StepRangeCounters> counters;
};

/// Not thread-safe: the session serializes calls (one mutex for windows and launches).
class StepReplayCollector {
 public:
  /// `passes` of the metric configuration, `groups` to collect (>= 1 each); throws
  /// std::invalid_argument for 0.
  /// `max_ranges`: ranges the counter image holds per pass (launches per window at most).
  StepReplayCollector(uint32_t passes, uint32_t groups, size_t max_ranges = 2000)
      : replay_(passes, groups), max_ranges_(max_ranges) {}

  /// Consecutive group restarts (differing windows, unusable decodes) or rerun timing windows
  /// after which it gives up.
  static constexpr uint32_t kMaxRestarts = 3;

  /// A window opens (cudaProfilerStart). kPass: profile, record nothing; kTiming: record, do not
  /// profile; kDone: neither. While a window is open this returns its role and changes nothing
  /// (a runtime cudaProfilerStart also makes a driver cuProfilerStart: two callbacks).
  WindowRole open_window();
  /// Role of the open window (kDone when none is open).
  WindowRole current() const noexcept { return open_ ? role_ : WindowRole{}; }
  /// A kernel (or graph) launch in the open window, in launch order, with the correlation id its
  /// LaunchApi record carries (used for the timing window's launches) and the system thread id
  /// that launched it (launches from other threads than the window's first launch are counted,
  /// for the range-count message).
  void on_launch(const LaunchIdentity& launch, uint32_t correlation_id, uint64_t thread = 0);
  /// The open window closes (cudaProfilerStop). `all_passes_submitted`: for a pass window whose
  /// pass the session stopped, cuptiRangeProfilerStop's isAllPassSubmitted, which decides whether
  /// the group's passes are complete (StepReplay::end); verdict.passes_note says when it disagreed
  /// with the plan.
  StepWindowClosed close_window(std::optional<bool> all_passes_submitted = std::nullopt);
  /// After StepWindowClosed::decode: the evaluated ranges of the group's image and whether CUPTI
  /// said every pass was submitted. Returns "" when kept; otherwise why the group restarts (range
  /// count differs from the reference's launch count, passes missing, range names that are not
  /// consecutive launch indexes) and the caller must reset the profiler's image. Kept ranges are
  /// put in the order of their names' indexes (auto range's "0", "1", ...), which may start past 0,
  /// and range i goes to the window's i-th launch.
  /// `dropped_ranges`: DecodeData's numOfRangeDropped. The range-count message says which side
  /// is larger, how many ranges CUPTI dropped, and how many of the last pass window's launches
  /// came from other threads than its first launch: the causes a first GPU run must tell apart.
  std::string counters_decoded(std::vector<RangeValues> ranges, bool all_passes_submitted,
                               uint64_t dropped_ranges = 0);
  /// After counters_decoded returned a reason: the give-up reason once restarts exceed
  /// kMaxRestarts ("" otherwise).
  std::string give_up_reason() const;

  const StepReplay& replay() const noexcept { return replay_; }
  /// Counters decoded and waiting for the group's timing window.
  bool counters_pending() const noexcept { return pending_.has_value(); }

 private:
  StepReplay replay_;
  size_t max_ranges_;
  uint32_t restarts_ = 0;       // consecutive group restarts
  uint32_t timing_reruns_ = 0;  // consecutive discarded timing windows of the decoded group
  bool open_ = false;
  WindowRole role_;
  std::vector<uint32_t> timing_correlation_ids_;
  size_t launches_in_window_ = 0;
  uint64_t first_thread_ = 0;         // thread of the open window's first launch
  size_t other_thread_launches_ = 0;  // the open window's launches from other threads
  size_t last_pass_other_threads_ = 0;  // of the last pass window closed
  std::optional<std::vector<RangeValues>> pending_;
};

/// The line for a run that ended inside a group after `groups_done` (>= 1) complete groups: the
/// current group had kept `passes_kept` of its `passes` pass windows, and with `counters_decoded`
/// its counters were decoded but its timing window never ran. "" when the group had not begun
/// (passes_kept 0 and nothing decoded): nothing of it is lost.
std::string step_incomplete_group_line(uint32_t groups_done, uint32_t passes_kept, uint32_t passes,
                                       bool counters_decoded);

/// What the session knows at the end of a run in which replay across steps collected no
/// counters (and did not step aside, which says why itself).
struct StepEndState {
  uint64_t windows_opened = 0;  ///< window-opening callbacks seen (cudaProfilerStart: runtime and driver)
  std::string replay_range;     ///< RFPROF_REPLAY_RANGE; "": cudaProfilerStart/Stop windows
  uint64_t nvtx_calls_seen = 0;  ///< NVTX push/start calls seen (with replay_range)
  struct Group {
    uint32_t passes = 0;      ///< pass windows a group needs
    uint64_t discarded = 0;   ///< windows discarded
  };
  std::optional<Group> group;  ///< set once a window opened on a context with counters
  /// The step's device (the context current where the first window opened), once known.
  std::optional<uint32_t> step_device;
  /// A kernel of another CUDA context was launched while a window was open (tensors on another
  /// GPU than the current one): those kernels are in no pass.
  bool other_context_launches = false;
};

/// The one "rfprof: replay across steps collected no counters: ..." line for `end`: no window
/// at all (naming the delimiter, and for an NVTX range whether any NVTX call arrived), windows but
/// none on a thread with a CUDA context, or too few windows for a group; with
/// other_context_launches, the hint that the windows' kernels ran on another context than the
/// step's device and how to make that device current. Never empty.
std::string step_no_counters_line(const StepEndState& end);

/// The one end-of-run line of a run whose groups were collected but that discarded windows on the
/// way because their kernels differed (windows without kernels are not counted): "rfprof: replay across steps discarded N window(s) whose kernels differed from their group's
/// first window (the first: `first`); the counters of the G group(s) collected come from windows
/// that matched". `discarded` > 0, `groups` > 0.
std::string step_discarded_line(uint64_t discarded, uint32_t groups, const std::string& first);

}  // namespace rf::collector
