// Replay across training steps (pure logic, no CUPTI): each profiling window (a
// cudaProfilerStart/Stop window, or an NVTX range chosen by the user, such as one training step)
// runs one pass of the Range Profiler's user replay with auto range, instead of replaying every
// kernel N times with save/restore (kernel replay). With a metric set of N passes, a *group* is
// N instrumented windows (pass 0 in step k, pass 1 in step k+1, ...) followed by one window run
// without instrumentation, whose kernel durations are the group's real durations.
//
// Every window's kernel sequence (name, grid, block, in launch order) must equal the group's
// reference sequence, the first window's: a window that differs is discarded with a message naming
// the first differing launch, so that counters of different kernels are never combined. A
// discarded instrumented window restarts its group at pass 0 (the counter image accumulates passes
// in order and cannot redo one); a discarded timing window is run again.
//
// The pass count is the host API's plan until CUPTI says otherwise: cuptiRangeProfilerStop's
// isAllPassSubmitted, given to end(), decides when a group's passes are complete, as NVIDIA's
// range_profiling sample loops Start/Stop until it is set. docs/step-replay.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace rf::collector {

/// LaunchIdentity::kernel of a CUDA graph launch (one call, an unknown number of kernels).
inline constexpr const char* kGraphLaunchName = "[CUDA graph]";

/// What identifies a launch across steps. `kernel` is a view: of CUPTI's symbolName in the
/// launch callback, read only during the call it is passed to (StepReplay keeps its own copy of
/// each distinct name, so that a launch allocates nothing).
struct LaunchIdentity {
  std::string_view kernel;  ///< mangled kernel name
  std::array<int32_t, 3> grid{};
  std::array<int32_t, 3> block{};
  bool operator==(const LaunchIdentity&) const = default;
};

/// The distinct kernel names of a run, each kept once and numbered 0, 1, ... in order of first
/// sight (id 0: kGraphLaunchName). Not thread-safe. Memory: the distinct names, never per launch.
class KernelNameIds {
 public:
  KernelNameIds();
  KernelNameIds(const KernelNameIds&) = delete;  // names_ and slots_ point into ids_
  KernelNameIds& operator=(const KernelNameIds&) = delete;
  KernelNameIds(KernelNameIds&&) = default;  // map nodes move with the map
  KernelNameIds& operator=(KernelNameIds&&) = default;
  /// The id of `name`, added at its first sight (which allocates; later sights do not). A name
  /// found at the address where it was last looked up (its slot's) takes one comparison of its
  /// bytes, no hash: CUPTI normally hands the same symbolName pointer for every launch of a kernel.
  /// Any other lookup hashes the name. Throws std::bad_alloc, leaving the ids as they were.
  uint32_t id(std::string_view name);
  /// The name of `id` (from id()); valid while this object lives.
  std::string_view name(uint32_t id) const { return *names_.at(id); }
  /// Distinct names kept, kGraphLaunchName included.
  size_t size() const noexcept { return names_.size(); }

 private:
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  /// Last id found for a name at this address (the slot is chosen by the address).
  struct Slot {
    const char* data = nullptr;
    uint32_t id = 0;
  };
  static constexpr size_t kSlots = 256;
  std::unordered_map<std::string, uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<const std::string*> names_;  // by id: the keys of ids_ (stable node addresses)
  std::array<Slot, kSlots> slots_{};
};

/// What a window is for, decided when it opens.
struct WindowRole {
  enum Kind {
    kPass,    ///< instrumented: run pass `pass` of the counter configuration
    kTiming,  ///< not instrumented: kernel durations of the group
    kDone,    ///< all requested groups collected: nothing to do in this window
  } kind = kDone;
  uint32_t group = 0;  ///< index of the group (0, 1, ...)
  uint32_t pass = 0;   ///< pass index for kPass
};

/// What became of a window when it closed.
struct WindowVerdict {
  enum Kind {
    kKept,          ///< pass kept; more passes (or the timing window) to come
    kGroupCounters, ///< last pass kept: the counter image holds every pass; decode it now
    kGroupTimed,    ///< timing window kept: the group is complete
    kDiscarded,     ///< kernel sequence differs from the reference (or is empty): data dropped
    kIgnored,       ///< the window had no role (kDone) or was never opened
  } kind = kIgnored;
  std::string message;  ///< for kDiscarded: the first difference, e.g. "launch 3: expected ..., got ..."
  bool empty = false;   ///< for kDiscarded: the window launched no kernel (not a mismatch)
  /// Set when CUPTI's isAllPassSubmitted disagreed with the planned pass count: what changed, e.g.
  /// "CUPTI completed the passes after 3 windows, 2 were planned; later groups run 3".
  std::string passes_note;
};

/// The state machine of replay across steps. Not thread-safe: the session serializes calls.
class StepReplay {
 public:
  /// `passes`: passes of the metric configuration (>= 1); `groups`: groups to collect (>= 1).
  /// Throws std::invalid_argument for 0.
  StepReplay(uint32_t passes, uint32_t groups);

  /// A profiling window opens. Returns its role. Calling begin() twice without end() ends the
  /// first window as discarded ("window not closed") and opens a new one.
  WindowRole begin();
  /// A kernel launch inside the open window (ignored outside one or in a kDone window). Allocates
  /// nothing but at the first sight of a kernel name and while the window holds more launches
  /// than the group's reference (begin() reserves that many). Throws std::bad_alloc.
  void on_launch(const LaunchIdentity& launch);
  /// The open window closes. Returns the verdict; the next begin() continues accordingly.
  /// `all_passes_submitted`: for a pass window, what cuptiRangeProfilerStop said
  /// (isAllPassSubmitted); it overrides the planned count for this and later groups: true ends the
  /// group's passes (kGroupCounters), false asks for another pass window (kKept), up to
  /// kMaxExtraPasses beyond the plan, after which the window is discarded and the group restarts.
  /// Without it (no Stop was made) the planned count decides.
  WindowVerdict end(std::optional<bool> all_passes_submitted = std::nullopt);

  /// Pass windows beyond the host API's planned count that CUPTI may ask for in a group.
  static constexpr uint32_t kMaxExtraPasses = 8;

  /// Starts the current group over at pass 0 (the decoded counters could not be used, e.g. their
  /// range count differs from the reference's); counts as a discarded window.
  void restart_group();

  /// The reference kernel sequence of the current group (the first kept window's). Built on each
  /// call: its names are views valid while this StepReplay lives.
  std::vector<LaunchIdentity> reference() const;
  /// reference().size(), without building it.
  size_t reference_size() const noexcept { return reference_.size(); }
  /// Whether the reference holds a CUDA graph launch (kGraphLaunchName).
  bool reference_has_graph_launch() const noexcept;
  /// Passes of a group: the host API's plan, or CUPTI's count once a group told it.
  uint32_t passes() const noexcept { return passes_; }
  /// The host API's planned pass count (the constructor's `passes`).
  uint32_t planned_passes() const noexcept { return planned_; }
  /// Pass windows kept in the current group so far: 0 before its first, passes() once its passes
  /// are complete and its timing window comes next.
  uint32_t passes_kept() const noexcept { return next_pass_; }
  /// Groups completed so far (kGroupTimed verdicts).
  uint32_t groups_done() const noexcept { return groups_done_; }
  /// Windows discarded so far.
  uint64_t discarded() const noexcept { return discarded_; }
  /// True once every requested group is complete.
  bool done() const noexcept { return groups_done_ >= groups_; }

 private:
  /// A launch as kept (28 bytes): its kernel name is names_' id, the name itself kept once.
  struct Launch {
    uint32_t kernel = 0;
    std::array<int32_t, 3> grid{};
    std::array<int32_t, 3> block{};
    bool operator==(const Launch&) const = default;
  };
  static_assert(sizeof(Launch) == 28);
  LaunchIdentity identity(const Launch& l) const { return {names_.name(l.kernel), l.grid, l.block}; }
  /// "" when `seq` equals the reference, else the first difference.
  std::string difference(const std::vector<Launch>& seq) const;

  uint32_t passes_;
  uint32_t planned_;
  uint32_t groups_;
  uint32_t groups_done_ = 0;
  uint32_t next_pass_ = 0;  // pass of the next instrumented window; == passes_: timing window next
  bool open_ = false;
  WindowRole role_;
  KernelNameIds names_;
  std::vector<Launch> reference_;
  std::vector<Launch> current_;
  uint64_t discarded_ = 0;
};

/// Short text of a launch identity: "name<<<(gx,gy,gz),(bx,by,bz)>>>".
std::string describe(const LaunchIdentity& launch);

}  // namespace rf::collector
