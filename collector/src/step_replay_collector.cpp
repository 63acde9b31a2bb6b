// Replay across steps, the session's side (rfprof/collector/step_replay_collector.h).
#include "rfprof/collector/step_replay_collector.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <utility>

namespace rf::collector {
namespace {

/// Auto range names each range by its launch's index ("0", "1", ..., as on the H100 under kernel
/// replay). Puts `ranges` in the order of those indexes, which may start past 0 (a CUPTI that
/// went on counting across passes). "" when done; otherwise why the names are not n consecutive
/// indexes, and `ranges` is left as it was.
std::string order_by_index_names(std::vector<RangeValues>& ranges) {
  std::vector<uint64_t> index(ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    const std::string& name = ranges[i].range_name;
    const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), index[i]);
    if (name.empty() || ec != std::errc() || end != name.data() + name.size())
      return "range " + std::to_string(i) + " is named \"" + name + "\", not by its launch's index";
  }
  if (ranges.empty()) return "";
  const uint64_t first = *std::min_element(index.begin(), index.end());
  std::vector<RangeValues> ordered(ranges.size());
  std::vector<bool> taken(ranges.size(), false);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const uint64_t at = index[i] - first;
    if (at >= ranges.size() || taken[at])
      return "the ranges are not named by " + std::to_string(ranges.size()) + " consecutive launch indexes (range " +
             std::to_string(i) + " is \"" + ranges[i].range_name + "\")";
    taken[at] = true;
    ordered[at] = ranges[i];
  }
  ranges = std::move(ordered);
  return "";
}

}  // namespace

WindowRole StepReplayCollector::open_window() {
  if (open_) return role_;  // the same start seen twice (runtime and driver callbacks)
  role_ = replay_.begin();
  open_ = true;
  timing_correlation_ids_.clear();
  if (role_.kind == WindowRole::kTiming) timing_correlation_ids_.reserve(replay_.reference_size());
  first_thread_ = 0;
  other_thread_launches_ = 0;
  launches_in_window_ = 0;
  return role_;
}

void StepReplayCollector::on_launch(const LaunchIdentity& launch, uint32_t correlation_id, uint64_t thread) {
  if (!open_ || role_.kind == WindowRole::kDone) return;
  if (launches_in_window_++ == 0) first_thread_ = thread;
  else if (thread != first_thread_) ++other_thread_launches_;
  // A window of more launches than a pass holds ranges is discarded or given up whatever they
  // are: past that nothing is kept, so a window that never closes does not grow without bound.
  if (launches_in_window_ > max_ranges_ + 1) return;
  replay_.on_launch(launch);
  if (role_.kind == WindowRole::kTiming) timing_correlation_ids_.push_back(correlation_id);
}

StepWindowClosed StepReplayCollector::close_window(std::optional<bool> all_passes_submitted) {
  StepWindowClosed c;
  if (!open_) return c;  // kIgnored
  open_ = false;
  const WindowRole role = role_;
  c.verdict = replay_.end(role.kind == WindowRole::kPass ? all_passes_submitted : std::nullopt);
  if (role.kind == WindowRole::kPass) {
    last_pass_other_threads_ = other_thread_launches_;
    c.stop_pass = true;
    switch (c.verdict.kind) {
      case WindowVerdict::kGroupCounters:
        c.decode = true;
        break;
      case WindowVerdict::kDiscarded:
        c.reset_profiler = true;  // the group restarts at pass 0
        pending_.reset();
        // A first window without kernels (a warm-up step on the CPU, say) started no group:
        // no restart of one, and no reason to give up.
        if (role.pass == 0 && launches_in_window_ == 0) break;
        if (++restarts_ > kMaxRestarts)
          c.give_up = std::to_string(restarts_) + " windows in a row launched other kernels than the "
                      "group's first (last: " + c.verdict.message + ")";
        break;
      default:
        break;
    }
    if (role.pass == 0 && c.verdict.kind != WindowVerdict::kDiscarded && c.give_up.empty()) {
      std::string unusable;
      if (replay_.reference_has_graph_launch())
        unusable = "a window launches a CUDA graph, whose kernels cannot be matched to ranges";
      else if (replay_.reference_size() > max_ranges_)
        unusable = "a window launches " + std::to_string(launches_in_window_) + " kernels, more than the " +
                   std::to_string(max_ranges_) + " ranges a pass holds (raise RFPROF_MAX_RANGES)";
      if (!unusable.empty()) {
        // Discarded as a first window, and the next one tried: a warm-up step (cuDNN's autotuning,
        // torch.compile) is often larger than the steps after it. It gave up the whole run; now
        // only kMaxRestarts + 1 such windows in a row do.
        replay_.restart_group();
        c.verdict.kind = WindowVerdict::kDiscarded;
        c.verdict.message = unusable;
        c.decode = false;
        c.reset_profiler = true;
        pending_.reset();
        if (++restarts_ > kMaxRestarts) c.give_up = unusable + " (" + std::to_string(restarts_) + " windows in a row)";
      }
    }
  } else if (role.kind == WindowRole::kTiming && c.verdict.kind == WindowVerdict::kDiscarded) {
    // Run again, with the counters kept; but not without end: uninstrumented steps that always
    // differ from the instrumented ones would hold the counters back until the run ends.
    if (++timing_reruns_ > kMaxRestarts)
      c.give_up = std::to_string(timing_reruns_) + " timing windows in a row launched other kernels than the "
                  "group's passes (last: " + c.verdict.message + ")";
  } else if (role.kind == WindowRole::kTiming && c.verdict.kind == WindowVerdict::kGroupTimed) {
    if (pending_) {
      const size_t n = std::min(pending_->size(), timing_correlation_ids_.size());
      c.counters.reserve(n);
      for (size_t i = 0; i < n; ++i)
        c.counters.push_back(
            StepRangeCounters{static_cast<uint32_t>(i), timing_correlation_ids_[i], std::move((*pending_)[i])});
      pending_.reset();
    }
    restarts_ = 0;
    timing_reruns_ = 0;
  }
  timing_correlation_ids_.clear();
  return c;
}

std::string StepReplayCollector::give_up_reason() const {
  if (restarts_ <= kMaxRestarts) return "";
  return std::to_string(restarts_) + " groups in a row could not be used";
}

std::string StepReplayCollector::counters_decoded(std::vector<RangeValues> ranges, bool all_passes_submitted,
                                                  uint64_t dropped_ranges) {
  std::string why;
  const size_t launches = replay_.reference_size();
  if (!all_passes_submitted) {
    why = "cuptiRangeProfilerStop reports that not all passes were submitted";
  } else if (ranges.size() != launches) {
    why = std::to_string(ranges.size()) + " ranges decoded for " + std::to_string(launches) + " launches per window";
    if (ranges.size() > launches)
      why += " (more ranges than launches: GPU work CUPTI profiled that rfprof did not see as a kernel launch)";
    else
      why += " (fewer ranges than launches: " + std::to_string(launches - ranges.size()) +
             " launches not profiled; " + std::to_string(last_pass_other_threads_) +
             " of the last pass window's launches came from other threads than its first launch)";
    if (dropped_ranges > 0) why += "; CUPTI dropped " + std::to_string(dropped_ranges) + " ranges";
  } else {
    why = order_by_index_names(ranges);  // ranges are then mapped to launches by index
  }
  if (!why.empty()) {
    pending_.reset();
    replay_.restart_group();
    ++restarts_;
    return why + "; the group restarts at pass 0";
  }
  pending_ = std::move(ranges);
  timing_reruns_ = 0;  // the timing windows of this group are counted from here
  return "";
}

std::string step_no_counters_line(const StepEndState& end) {
  const bool nvtx = !end.replay_range.empty();
  const std::string delimiter =
      nvtx ? "one NVTX range \"" + end.replay_range + "\"" : std::string("one cudaProfilerStart/Stop window");
  std::string line = "rfprof: replay across steps collected no counters: ";
  if (end.group) {
    line += "a group needs " + std::to_string(end.group->passes) +
            " windows (one per pass) and then one timing window, each launching the same kernels, and the run "
            "ended first (windows discarded: " + std::to_string(end.group->discarded) +
            "); run more profiled steps, " + delimiter + " each";
    if (end.other_context_launches)
      line += "; kernels of another CUDA context ran inside the windows, and only those of the step's context (" +
              (end.step_device ? "device " + std::to_string(*end.step_device) + ", " : std::string()) +
              "current where the first window opened) are counted: make the training device current before "
              "the first window (torch.cuda.set_device, cudaSetDevice)";
    return line;
  }
  if (end.windows_opened > 0)
    return line + "windows opened, but none on a thread with a CUDA context current";
  line += "no window opened; each is " + delimiter;
  if (!nvtx) return line + " (the application never called cudaProfilerStart; RFPROF_REPLAY_RANGE names an NVTX "
                           "range to use instead)";
  if (end.nvtx_calls_seen == 0)
    return line + " (no NVTX call reached rfprof: NVTX_INJECTION64_PATH must name librfinject.so, as the rfprof "
                  "launcher sets it)";
  return line + " (" + std::to_string(end.nvtx_calls_seen) + " NVTX push/start calls seen, none matching it)";
}

std::string step_incomplete_group_line(uint32_t groups_done, uint32_t passes_kept, uint32_t passes,
                                       bool counters_decoded) {
  if (passes_kept == 0 && !counters_decoded) return "";
  std::string line = "rfprof: replay across steps: the run ended during group " + std::to_string(groups_done + 1) +
                     ", after " + std::to_string(passes_kept) + " of its " + std::to_string(passes) +
                     " pass windows";
  if (counters_decoded) line += " (its counters decoded, its timing window not run)";
  return line + "; that group's counters are dropped, the " + std::to_string(groups_done) + " complete " +
         (groups_done == 1 ? "group is" : "groups are") + " in the trace";
}

std::string step_discarded_line(uint64_t discarded, uint32_t groups, const std::string& first) {
  return "rfprof: replay across steps discarded " + std::to_string(discarded) +
         (discarded == 1 ? " window" : " windows") + " whose kernels differed from their group's first window (the first: " +
         first + "); the counters of the " + std::to_string(groups) + (groups == 1 ? " group" : " groups") +
         " collected come from windows that matched";
}

}  // namespace rf::collector
