// Replay across training steps: the per-window state machine (rfprof/collector/step_replay.h).
#include "rfprof/collector/step_replay.h"

#include <algorithm>
#include <stdexcept>

namespace rf::collector {

std::string describe(const LaunchIdentity& l) {
  auto dim = [](const std::array<int32_t, 3>& d) {
    return "(" + std::to_string(d[0]) + "," + std::to_string(d[1]) + "," + std::to_string(d[2]) + ")";
  };
  return std::string(l.kernel) + "<<<" + dim(l.grid) + "," + dim(l.block) + ">>>";
}

KernelNameIds::KernelNameIds() { (void)id(kGraphLaunchName); }

uint32_t KernelNameIds::id(std::string_view name) {
  Slot& slot = slots_[(reinterpret_cast<uintptr_t>(name.data()) >> 4) % kSlots];
  // The bytes are compared, not only the address: a module unloaded and another loaded may put a
  // different name where this one was.
  if (slot.data == name.data() && *names_[slot.id] == name) return slot.id;
  auto it = ids_.find(name);
  if (it == ids_.end()) {
    // Room first, so that push_back cannot throw after the name entered ids_ (a bad_alloc leaves
    // both as they were).
    if (names_.size() == names_.capacity()) names_.reserve(2 * names_.size() + 16);
    it = ids_.emplace(std::string(name), static_cast<uint32_t>(names_.size())).first;
    names_.push_back(&it->first);
  }
  slot = Slot{name.data(), it->second};
  return it->second;
}

StepReplay::StepReplay(uint32_t passes, uint32_t groups) : passes_(passes), planned_(passes), groups_(groups) {
  if (passes == 0) throw std::invalid_argument("replay across steps needs at least 1 pass");
  if (groups == 0) throw std::invalid_argument("replay across steps needs at least 1 group");
}

WindowRole StepReplay::begin() {
  if (open_) {
    ++discarded_;  // a window that never closed: its data cannot be trusted
    current_.clear();
  }
  open_ = true;
  current_.clear();
  current_.reserve(reference_.size());  // a window like the reference allocates nothing per launch
  role_ = WindowRole{};
  if (done()) return role_;  // kDone
  role_.group = groups_done_;
  if (next_pass_ < passes_) {
    role_.kind = WindowRole::kPass;
    role_.pass = next_pass_;
  } else {
    role_.kind = WindowRole::kTiming;
  }
  return role_;
}

void StepReplay::on_launch(const LaunchIdentity& launch) {
  if (!open_ || role_.kind == WindowRole::kDone) return;
  current_.push_back(Launch{names_.id(launch.kernel), launch.grid, launch.block});
}

std::vector<LaunchIdentity> StepReplay::reference() const {
  std::vector<LaunchIdentity> out;
  out.reserve(reference_.size());
  for (const Launch& l : reference_) out.push_back(identity(l));
  return out;
}

bool StepReplay::reference_has_graph_launch() const noexcept {
  const uint32_t graph = 0;  // KernelNameIds' id of kGraphLaunchName
  return std::any_of(reference_.begin(), reference_.end(), [&](const Launch& l) { return l.kernel == graph; });
}

std::string StepReplay::difference(const std::vector<Launch>& seq) const {
  const size_t n = std::min(seq.size(), reference_.size());
  for (size_t i = 0; i < n; ++i)
    if (!(seq[i] == reference_[i]))
      return "launch " + std::to_string(i) + ": expected " + describe(identity(reference_[i])) + ", got " +
             describe(identity(seq[i]));
  if (seq.size() != reference_.size())
    return std::to_string(seq.size()) + " launches, expected " + std::to_string(reference_.size());
  return "";
}

WindowVerdict StepReplay::end(std::optional<bool> all_passes_submitted) {
  WindowVerdict v;
  if (!open_ || role_.kind == WindowRole::kDone) {
    open_ = false;
    return v;  // kIgnored
  }
  open_ = false;
  const bool first_of_group = role_.kind == WindowRole::kPass && role_.pass == 0;
  if (first_of_group) {
    if (current_.empty()) {
      ++discarded_;
      v.kind = WindowVerdict::kDiscarded;
      v.empty = true;
      v.message = "window launched no kernel";
      return v;
    }
    reference_.swap(current_);  // current_ keeps a capacity for the next windows
    current_.clear();
  } else if (std::string d = difference(current_); !d.empty()) {
    ++discarded_;
    v.kind = WindowVerdict::kDiscarded;
    v.message = "its kernels differ from the first window's: " + d;
    if (role_.kind == WindowRole::kPass) {
      // The counter image accumulates passes in order and cannot redo one: start the group over.
      next_pass_ = 0;
      reference_.clear();
      v.message += "; the group restarts at pass 0";
    }  // a timing window is simply run again
    return v;
  }
  if (role_.kind == WindowRole::kTiming) {
    ++groups_done_;
    next_pass_ = 0;
    v.kind = WindowVerdict::kGroupTimed;
    return v;
  }
  ++next_pass_;
  if (!all_passes_submitted) {
    v.kind = next_pass_ >= passes_ ? WindowVerdict::kGroupCounters : WindowVerdict::kKept;
    return v;
  }
  // CUPTI decides: its isAllPassSubmitted, not the plan, ends the group's passes.
  const uint32_t before = passes_;
  if (*all_passes_submitted) {
    passes_ = next_pass_;
    v.kind = WindowVerdict::kGroupCounters;
  } else if (next_pass_ < planned_ + kMaxExtraPasses) {
    passes_ = std::max(passes_, next_pass_ + 1);
    v.kind = WindowVerdict::kKept;
  } else {
    ++discarded_;
    const uint32_t windows = next_pass_;
    next_pass_ = 0;
    reference_.clear();
    passes_ = planned_;
    v.kind = WindowVerdict::kDiscarded;
    v.message = "cuptiRangeProfilerStop still reported passes to submit after " + std::to_string(windows) +
                " pass windows (" + std::to_string(planned_) + " planned); the group restarts at pass 0";
    return v;
  }
  if (passes_ != before)
    v.passes_note = *all_passes_submitted
                        ? "CUPTI completed the passes after " + std::to_string(passes_) + " windows, " +
                              std::to_string(before) + " were planned; later groups run " + std::to_string(passes_)
                        : "CUPTI wants more passes than the " + std::to_string(before) +
                              " planned; running pass window " + std::to_string(next_pass_ + 1);
  return v;
}

void StepReplay::restart_group() {
  ++discarded_;
  next_pass_ = 0;
  reference_.clear();
}

}  // namespace rf::collector
