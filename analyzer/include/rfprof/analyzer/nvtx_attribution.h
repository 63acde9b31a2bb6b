// NVTX attribution: which NVTX ranges were open on which thread at a given time.
//
// Rule (docs/analyzer.md, "NVTX attribution"): a push/pop range (a thread range) belongs to the
// thread that pushed it, and is open on that thread from its kStart timestamp (inclusive) to its
// kEnd timestamp (exclusive); a start/end range (nvtxRangeStart/End: a process range, NVTX's own
// term) is open on every thread of the process over that interval, whichever threads started and
// ended it. A range never ended stays open to the end of the trace. The range path of a launch
// whose API call by thread T ran from t0 to t1 is the names of the process ranges open at t0
// (earliest started first), then those of the thread ranges open on T at t0, outermost (earliest
// started) first, joined with "/". When T has no thread range open, the thread ranges come from the
// same process's other threads whose ranges contain the whole call [t0, t1]: among the threads
// whose open ranges did not change during the call, the one whose innermost range started last
// (ties: lowest thread id); failing that, the ranges that stayed open through the call (the same
// instances, outermost first) on a thread whose inner ranges changed during it. That is how
// kernels launched by PyTorch's autograd threads, which push no ranges, get the "backward" range
// the main thread holds open, and why a launch racing the end of a range on another thread is not
// given that range. Ranges of unknown style (traces before the style was recorded) count as
// thread ranges.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rfprof/trace/records.h"

namespace rf::analyzer {

/// A range path: its range names, outermost first, and those names joined with "/".
struct RangePath {
  std::vector<std::string> names;
  std::string joined;
};

/// One NVTX range as recorded (for timelines such as trace.json).
struct NvtxRange {
  uint64_t thread_id = 0;  ///< thread that pushed or started it
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;     ///< UINT64_MAX: never ended
  std::string_view name;   ///< valid while the NvtxIndex lives
};

/// Thrown by NvtxIndex::finalize() when the range paths would take more bytes than the budget
/// (set_path_budget): ranges nested thousands deep, whose paths grow with the square of the depth.
class NvtxPathBudgetError : public std::length_error {
 public:
  using std::length_error::length_error;
};

/// The NVTX ranges of one process. Fill with add() (any order), then finalize(), then query.
/// Memory: O(number of ranges) while filling; O(number of range starts and ends) after finalize().
class NvtxIndex {
 public:
  /// Id of the empty path (no open range).
  static constexpr uint32_t kNoPath = 0;

  NvtxIndex();

  /// Adds one NvtxEvent; `name` is its message (kStart; ignored for kEnd). kInstant events are
  /// ignored. A kEnd may come before its kStart. A kEnd whose kStart never comes is counted
  /// (unmatched_ends()) and dropped; a second kStart with an id still open is counted
  /// (duplicate_starts()) and dropped.
  void add(const trace::NvtxEvent& event, std::string_view name);
  /// Builds the per-thread timelines. Call once, after the last add(). Throws NvtxPathBudgetError
  /// when the distinct range paths (each path's names and its joined text) would take more than
  /// the path budget.
  void finalize();
  /// Bytes the distinct range paths may take (names, joined text and name ids of every path;
  /// default: unlimited). A path of depth d holds d names, so ranges nested d deep cost about d^2
  /// name bytes: a hostile trace of 336 KB nesting 8,000 ranges took 2.85 GB.
  void set_path_budget(uint64_t bytes) noexcept { path_budget_ = bytes; }

  /// Path id of a launch whose API call by `thread_id` ran from `start_ns` to `end_ns` (ns) under
  /// the rule above; kNoPath when no range qualifies. `end_ns` below `start_ns` counts as
  /// `start_ns`. Only valid after finalize(). A path of process ranges and thread ranges together
  /// is interned on its first use (logically const: one query always gives one id; not
  /// thread-safe), so this throws NvtxPathBudgetError when that path exceeds the path budget.
  uint32_t attribute(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const;
  /// The path attribute() would give if `thread_id` had no thread range open: the process ranges
  /// open at `start_ns`, then the other threads' ranges containing the call (rules 2 and 3). The
  /// phase of a launch whose own path has none comes from it (a custom autograd Function's own
  /// range inside the main thread's "backward"). Throws NvtxPathBudgetError as attribute() does.
  uint32_t context_path(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const;
  /// attribute(thread_id, time_ns, time_ns): a call of no duration.
  uint32_t attribute(uint64_t thread_id, uint64_t time_ns) const {
    return attribute(thread_id, time_ns, time_ns);
  }
  /// The path with `id` (from attribute()); id kNoPath is the empty path.
  const RangePath& path(uint32_t id) const { return paths_.at(id); }
  /// Number of distinct paths, the empty path included.
  size_t path_count() const noexcept { return paths_.size(); }

  /// Every range (complete or never ended), ordered by thread, then start order. After finalize().
  std::vector<NvtxRange> ranges() const;
  /// Calls `f(const NvtxRange&)` for each range, in ranges()' order, without building the vector
  /// (40 bytes a range, which was the peak of a run with a range per operator).
  template <typename F>
  void for_each_range(F&& f) const {
    for (const auto& r : ranges_) f(NvtxRange{r.thread_id, r.start_ns, r.end_ns, names_[r.name]});
  }
  /// Calls `f(const NvtxRange&, uint32_t path)` for each range of non-zero length, in ranges()'
  /// order, with the range's own path: the ranges open at its start that are it or outside it, as
  /// attribute() orders them (process ranges, then its thread's), so that a range pushed in the
  /// same nanosecond inside it is not part of it (ranges.csv's memory peaks). A range whose path
  /// cannot be told (the ranges of its kind do not nest at its start) is passed with kNoPath.
  /// Only valid after finalize(); throws NvtxPathBudgetError as attribute() does.
  template <typename F>
  void for_each_range_path(F&& f) const {
    for (size_t i = 0; i < ranges_.size(); ++i) {
      const Range& r = ranges_[i];
      if (r.end_ns == r.start_ns) continue;
      f(NvtxRange{r.thread_id, r.start_ns, r.end_ns, names_[r.name]}, own_path(i));
    }
  }
  /// Ranges with a kStart (complete or still open at the end of the trace).
  uint64_t range_count() const noexcept { return range_count_; }
  /// kEnd events whose kStart never came (known after finalize()).
  uint64_t unmatched_ends() const noexcept { return unmatched_ends_; }
  uint64_t duplicate_starts() const noexcept { return duplicate_starts_; }
  /// Ranges whose kEnd timestamp precedes their kStart (dropped).
  uint64_t backwards_ranges() const noexcept { return backwards_ranges_; }

 private:
  // 32 bytes: pass 1 holds one per NVTX range instance (docs/analyzer.md, *Memory*).
  struct Range {
    uint64_t thread_id;
    uint64_t start_ns;
    uint64_t end_ns;  // UINT64_MAX: never ended
    uint32_t seq : 31;     // order of the kStart in the trace, modulo 2^31: past 2^31 starts in one
                           // trace, ranges() order and same-nanosecond nesting may differ from the trace's
    uint32_t process : 1;  // a start/end range (NvtxRangeStyle::kStartEnd): open on every thread
    uint32_t name;         // index into names_
  };
  /// State of one thread from `time_ns` until the next transition.
  struct Transition {
    uint64_t time_ns;
    uint64_t innermost_start_ns;  // start of the innermost open range (0 when none)
    uint32_t path;                // kNoPath when none open
    // How many of the previous state's open ranges, outermost first, are still open here, the
    // same range instances (not only the same names): what a call spanning this transition keeps.
    uint32_t kept;
  };

  uint32_t intern_name(std::string_view name);
  void close(Range r, uint64_t end_ns);
  /// The id of the path of `names`, added (with every prefix of it, when `prefixes`) if new.
  /// Throws NvtxPathBudgetError.
  uint32_t intern_path(const std::vector<uint32_t>& names, bool prefixes = true) const;
  /// Adds the path of `names` (not yet a path). Throws NvtxPathBudgetError.
  uint32_t add_path(const std::vector<uint32_t>& names) const;
  /// The timeline of `ranges` (one thread's thread ranges, or every process range) into `timeline`.
  /// `prefixes`: intern every prefix of each path too (rule 3 and own_path look them up).
  void build_timeline(std::span<const Range> ranges, std::vector<Transition>& timeline, bool prefixes = true);
  /// The path of `outer`'s names followed by `inner`'s (either may be kNoPath), interned on first
  /// use. Throws NvtxPathBudgetError.
  uint32_t combine(uint32_t outer, uint32_t inner) const;
  /// The thread ranges' part of attribute(): rules 1 to 3 on the threads' timelines.
  uint32_t thread_path(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const;
  /// Rules 2 and 3: the ranges of threads other than `thread_id` that contain the call.
  uint32_t others_path(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const;
  /// The path id of the ranges of `open_path` without its `inner` innermost ones, when its
  /// innermost remaining range is named `name`; else kNoPath (own_path's step).
  uint32_t without_inner(uint32_t open_path, size_t inner, uint32_t name) const;
  /// The transition of `timeline` in effect at `time_ns`, or nullptr before the first.
  static const Transition* state_at(const std::vector<Transition>& timeline, uint64_t time_ns);
  /// for_each_range_path's path of ranges_[i].
  uint32_t own_path(size_t i) const;

  /// Transparent hash: intern_name() looks a name up without building a std::string.
  struct NameHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t, NameHash, std::equal_to<>> name_ids_;
  std::unordered_map<uint64_t, Range> open_;  // by NVTX id, while filling
  std::unordered_map<uint64_t, uint64_t> early_ends_;  // NVTX id -> end time, kEnd before kStart
  std::vector<Range> ranges_;                 // while filling
  uint32_t seq_ = 0;
  // Mutable: attribute() interns a path of process and thread ranges together on its first use.
  // Deques: path() references stay valid while later paths are added.
  mutable std::map<std::vector<uint32_t>, uint32_t> path_ids_;
  mutable std::deque<RangePath> paths_;
  mutable std::deque<std::vector<uint32_t>> path_names_;  // by path id: name ids, outermost first
  mutable std::unordered_map<uint64_t, uint32_t> combined_;  // (outer << 32 | inner) -> path id
  std::map<uint64_t, std::vector<Transition>> timelines_;  // thread ranges, by thread id
  std::vector<Range> process_ranges_;        // ordered by start, then trace order
  std::vector<Transition> process_timeline_;  // of process_ranges_
  uint64_t range_count_ = 0;
  uint64_t unmatched_ends_ = 0;
  uint64_t duplicate_starts_ = 0;
  uint64_t backwards_ranges_ = 0;
  uint64_t path_budget_ = UINT64_MAX;
  mutable uint64_t path_bytes_ = 0;  // charged against path_budget_ by intern_path
};

}  // namespace rf::analyzer
