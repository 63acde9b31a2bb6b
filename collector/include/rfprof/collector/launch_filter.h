// Which kernel launches are profiled: ncu's -k/--kernel-name, --kernel-name-base and
// --nvtx-include/--nvtx-exclude, decided in the collector at the launch API's entry, so that a
// launch filtered out is neither recorded nor replayed (docs/collector.md, "Filters"). Launch
// skip/count (-s/-c) are counted by LaunchLog over the launches selected here. CUPTI-free.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rfprof/collector/kernel_names.h"
#include "rfprof/collector/nvtx_rule.h"
#include "rfprof/trace/per_thread.h"

namespace rf::collector {

/// The NVTX ranges open in a process as the filter sees them: a push/pop stack per thread and
/// NVTX domain, and the open start/end ranges. Fed from the NVTX callbacks; thread-safe. The
/// launch path's questions take no lock shared between threads and search no regular expression:
/// a thread's stacks have their own lock (trace::PerThread), a watched start/end name has an
/// atomic count of open ranges, and a rule's regular expressions are searched when a range is
/// pushed or started, not when a kernel is launched (watch_regex, watch).
///
/// Threads are named by the caller: kCallingThread is the calling thread, whose stacks are handed
/// to a later thread, emptied, when it exits (the session's use: memory bounded by the threads
/// alive at once); any other value is an id the caller chose, kept as long as the state.
///
/// Start/end ranges: a state that keeps names (the default) keeps each open range's domain and
/// name under a lock, to answer for any pair. A LaunchFilter's state keeps none (keep_names
/// false): it answers only for the pairs it watches, all of its rules' start/end pairs, and with
/// at most kMaxLockFreeWatched of them nvtxRangeStart/End take no lock and allocate nothing (a
/// literal pair; a regex: pair is searched in the range's names at its start, and std::regex
/// allocates): an open range that counts in a watched pair takes a slot of a fixed table, by its
/// id (kOpenSlots; more such ranges open at once in one of its buckets go to a map under a lock).
class NvtxState {
 public:
  /// Most regular expressions that get a slot (bits of NvtxStackEntry::regex_matches).
  static constexpr int kRegexSlots = 64;
  /// The calling thread (push, pop, stack, stack_matches, LaunchFilter::selects).
  static constexpr uint64_t kCallingThread = 0;
  /// Most watched start/end pairs for which start and end take no lock.
  static constexpr size_t kMaxLockFreeWatched = 64;
  /// Open start/end ranges that count in a watched pair, kept without a lock: 64 buckets of 8.
  static constexpr size_t kOpenBuckets = 64, kOpenWays = 8, kOpenSlots = kOpenBuckets * kOpenWays;

  /// `keep_names`: keep the open start/end ranges' names, to answer for pairs not watched (the
  /// start and end of every range then take a lock and copy its names).
  explicit NvtxState(bool keep_names = true) : keep_names_(keep_names) {}

  /// nvtx(Domain)RangePush on `thread` in `domain` ("" = the default domain). Searches each
  /// watched regular expression in `name` (and in `domain` when the thread first uses it).
  void push(uint64_t thread, std::string_view domain, std::string_view name);
  /// nvtx(Domain)RangePop on `thread`; a pop of an empty stack is ignored.
  void pop(uint64_t thread, std::string_view domain);
  /// nvtx(Domain)RangeStart returning `id` (any thread; an id still open: its range is over).
  void start(uint64_t id, std::string_view domain, std::string_view name);
  /// nvtxRangeEnd(id) (any thread); an unknown id is ignored.
  void end(uint64_t id);
  /// Before any range is pushed: gives regex name `name` (a regex: push/pop rule's range name, or
  /// its domain when `domain`) a slot, so that it is searched once per push (a domain: once per
  /// thread that uses it) instead of at every launch. Returns the slot (0..kRegexSlots-1; the same
  /// expression shares one), or -1 when every slot is taken or `name` is literal (then it is
  /// compared or searched when asked).
  int watch_regex(const NvtxName& name, bool domain = false);
  /// Before any range starts: keep an atomic count of the open start/end ranges whose domain is
  /// (or, regex, matches) `domain` and whose name is (matches) `name`, so that start_end_open()
  /// answers for that pair without a lock (a start/end rule's names). Returns the pair's index,
  /// for NvtxName::watched (the same pair watched again: the same index).
  int watch(const NvtxName& domain, const NvtxName& name);

  /// The push/pop stack of `thread` in `domain`, outermost first (a copy of the names).
  std::vector<std::string> stack(uint64_t thread, std::string_view domain) const;
  /// stack_matches() (nvtx_rule.h) on the stacks of `thread` in the domains `domain` names (a
  /// literal domain: its one stack), in place (no copy, no allocation).
  bool stack_matches(uint64_t thread, const NvtxName& domain, const std::vector<NvtxElement>& pattern,
                     bool bottom, bool top) const;
  /// True when a start/end range named `name` is open in `domain` (a pair not watched: false
  /// unless the state keeps names).
  bool start_end_open(std::string_view domain, std::string_view name) const;
  /// The same for the names of a rule: a watched pair without a lock (`name.watched`: without a
  /// lookup either), otherwise by looking through the open start/end ranges under the
  /// process-wide lock (false unless the state keeps names).
  bool start_end_open(const NvtxName& domain, const NvtxName& name) const;

  /// Per-thread stacks allocated (threads that use the state now or handed theirs back, and
  /// caller-chosen ids): memory use, for tests.
  size_t threads_held() const { return stacks_.size(); }
  /// Open start/end ranges kept in the map under the lock (names kept, or no table slot).
  size_t open_ranges_locked() const;

 private:
  /// One domain's stack on one thread, and which watched regexes match the domain's name. The
  /// stack is the first `depth` entries of `ranges`; the entries above are kept, so that a push
  /// reuses an entry's string instead of allocating one (a range around every operator).
  struct DomainStack {
    uint64_t regex_matches = 0;
    std::vector<NvtxStackEntry> ranges;
    size_t depth = 0;
    std::span<const NvtxStackEntry> stack() const noexcept { return {ranges.data(), depth}; }
  };
  using DomainStacks = std::map<std::string, DomainStack, std::less<>>;
  /// One thread's stacks; its lock is taken by other threads only to read them (stack()).
  struct ThreadStacks {
    std::mutex mutex;
    DomainStacks domains;
  };
  /// One slot of the open-range table: `id` 0 is free, kBusy being written; `bits` are the
  /// watched_ pairs the range counts in (set before `id` is published).
  struct OpenSlot {
    std::atomic<uint64_t> id{0};
    std::atomic<uint64_t> bits{0};
  };
  static constexpr uint64_t kBusy = ~uint64_t{0};
  /// A watched start/end (domain, name) pair and its open ranges.
  struct Watched {
    NvtxName domain, name;
    std::atomic<int64_t> open{0};
  };
  static constexpr uint8_t kRangeUse = 1, kDomainUse = 2;  // what a slot's expression is searched in
  /// The bits of the watched regexes of `use` found in `text`.
  uint64_t regex_matches_of(std::string_view text, uint8_t use) const;
  const Watched* find_watched(const NvtxName& domain, const NvtxName& name) const;
  /// The stacks of `thread` (kCallingThread: the calling thread's, emptied if a thread that
  /// exited had them).
  ThreadStacks& stacks_of(uint64_t thread) const;
  /// Whether start and end of range `id` use the table (open_slots_) and not the locked map.
  bool lock_free(uint64_t id) const noexcept {
    return !keep_names_ && watched_.size() <= kMaxLockFreeWatched && id != 0 && id != kBusy;
  }
  /// Adds `delta` to the open count of each watched pair of `bits`.
  void count(uint64_t bits, int64_t delta) const;
  /// Stores range `id`'s `bits` in a free slot of its bucket; false when the bucket is full.
  bool put_open(uint64_t id, uint64_t bits);
  /// Removes range `id` from the table: its bits, 0 when it is not there.
  uint64_t take_open(uint64_t id);
  /// Ends range `id` if the locked map has it.
  void end_locked(uint64_t id);

  const bool keep_names_;
  mutable trace::PerThread<ThreadStacks> stacks_;  // local() (kCallingThread), or by the caller's id
  std::vector<NvtxName> regexes_;                   // by slot; set before use, then read-only
  std::vector<uint8_t> slot_use_;                   // by slot: kRangeUse | kDomainUse
  std::vector<std::unique_ptr<Watched>> watched_;   // set before use (watch), then read-only
  std::array<OpenSlot, kOpenSlots> open_slots_;     // lock_free() ranges counting in a watched pair
  mutable std::mutex mutex_;                        // open_
  struct Open {
    std::string domain, name;       // keep_names_ only
    std::vector<Watched*> watched;  // the watched pairs it counts in
  };
  std::unordered_map<uint64_t, Open> open_;  // start/end ranges by id, not in open_slots_
  std::atomic<size_t> locked_open_{0};       // open_.size(), read without the lock
};

/// Settings of a LaunchFilter (from RFPROF_KERNEL_NAME, RFPROF_KERNEL_NAME_BASE,
/// RFPROF_NVTX_INCLUDE, RFPROF_NVTX_EXCLUDE).
struct LaunchFilterOptions {
  std::string kernel_name;                 ///< exact name or "regex:EXPR"; "" = every kernel
  std::string kernel_name_base = "function";  ///< function, demangled or mangled
  std::vector<std::string> nvtx_include;   ///< launches inside one of these (if any) ...
  std::vector<std::string> nvtx_exclude;   ///< ... and inside none of these
  /// ncu's --devices (RFPROF_DEVICES): CUDA device ordinals whose launches are profiled; empty =
  /// every device. Decided by DeviceFilter (device_filter.h), not by LaunchFilter.
  std::vector<uint32_t> devices;
};

/// Decides per launch whether it is profiled. Thread-safe, and without a lock shared between
/// launching threads once a thread has seen a symbol. Memory: one cache entry per distinct kernel
/// symbol and launching thread when a kernel name filter is set.
class LaunchFilter {
 public:
  /// Throws FilterError for a bad regular expression, base or NVTX rule.
  explicit LaunchFilter(const LaunchFilterOptions& options);

  /// True when some filter is set (false: every launch is selected, nothing to ask).
  bool active() const noexcept { return has_name_ || !include_.empty() || !exclude_.empty(); }
  /// True when NVTX rules are set: the session then feeds nvtx() from the NVTX callbacks.
  bool uses_nvtx() const noexcept { return !include_.empty() || !exclude_.empty(); }
  NvtxState& nvtx() noexcept { return nvtx_; }

  /// Whether a launch of the kernel with mangled symbol `symbol` ("" for a graph launch, which
  /// has none and never matches a kernel name filter) by `thread` (NvtxState's naming: the
  /// session's is NvtxState::kCallingThread) is selected.
  bool selects(std::string_view symbol, uint64_t thread);
  /// The kernel name filter alone, on a mangled symbol (cached per symbol).
  bool name_matches(std::string_view symbol);

 private:
  bool has_name_ = false;
  std::string exact_;  // -k NAME
  std::optional<std::regex> regex_;
  std::string base_;
  std::vector<NvtxRule> include_, exclude_;  // regex names carry their NvtxState slot
  NvtxState nvtx_{/*keep_names=*/false};     // every start/end pair the rules ask about is watched
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  using NameCache = std::unordered_map<std::string, bool, Hash, std::equal_to<>>;
  trace::PerThread<NameCache> name_cache_;  // each launching thread's answers, per symbol
};

/// Whether exact name `wanted` (-k NAME) names the kernel with mangled `symbol` for `base`:
/// "mangled" compares the symbol, "demangled" the demangled name, "function" (ncu's default) the
/// function name with or without its namespaces, or the whole demangled name.
bool kernel_name_equals(std::string_view symbol, std::string_view base, std::string_view wanted);

}  // namespace rf::collector
