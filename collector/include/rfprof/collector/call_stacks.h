// Native call stacks of kernel launches (RFPROF_CALLSTACKS=1), deduplicated into ids as launches
// happen and symbolized once, when the trace is finished. CUPTI-free; docs/collector.md
// ("Call stacks") gives the cost per launch measured by bench/bench_call_stacks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rfprof/trace/per_thread.h"

namespace rf::collector {

/// One symbolized frame.
struct StackFrame {
  std::string function;  ///< demangled symbol; "<module basename>+0x<offset>" when unknown
  std::string module;    ///< path of the shared object or executable ("" when unknown)
};

/// The distinct call stacks of a process, each with an id (1, 2, ...). Thread-safe.
/// Memory: at most `max_stacks` stacks of at most kMaxDepth return addresses each.
class CallStackTable {
 public:
  /// Frames kept per stack (the innermost ones).
  static constexpr size_t kMaxDepth = 64;

  explicit CallStackTable(size_t max_stacks = 1u << 16) : max_stacks_(max_stacks) {}

  /// Return addresses of the calling thread's stack, innermost first (libunwind unw_backtrace),
  /// at most `frames.size()`. Returns how many were written; 0 when unwinding fails. No allocation.
  static size_t capture(std::span<uintptr_t> frames) noexcept;

  /// Id of the stack `frames` (innermost first; only the first kMaxDepth count), added when new.
  /// Returns 0 for an empty stack or when the table already holds `max_stacks` stacks (counted in
  /// overflowed()). A stack the calling thread interned before is found in the thread's own cache
  /// (at most kThreadCacheStacks stacks per thread), without the table's lock; allocates only when
  /// the stack is new to the thread.
  uint32_t intern(std::span<const uintptr_t> frames) noexcept;
  /// Stacks each thread remembers without the table's lock.
  static constexpr size_t kThreadCacheStacks = 4096;

  /// capture() then intern(): the id of the calling thread's current stack (0: none, see intern).
  uint32_t capture_and_intern() noexcept;

  /// Every stack with its frames symbolized (dladdr and the Itanium demangler; each distinct
  /// address resolved once), in id order. Leading frames whose module `skip_leading` accepts (the
  /// launch machinery: librfinject, libcupti, libcuda) are left out; frames past them are kept
  /// whatever their module. Throws std::bad_alloc only.
  std::vector<std::pair<uint32_t, std::vector<StackFrame>>> symbolize(
      const std::function<bool(std::string_view module)>& skip_leading) const;

  /// Distinct stacks held.
  size_t size() const;
  /// Launches whose stack was not added because the table was full.
  uint64_t overflowed() const;

 private:
  struct Entry {
    size_t offset;  // into frames_
    size_t length;
  };
  /// One thread's known stacks: hash -> (id, frames), its own copy (owner thread only).
  using ThreadCache = std::unordered_multimap<uint64_t, std::pair<uint32_t, std::vector<uintptr_t>>>;
  /// The table's id of `frames` (hash `h`), added when new; takes the table's lock.
  uint32_t intern_shared(std::span<const uintptr_t> frames, uint64_t h) noexcept;
  size_t max_stacks_;
  trace::PerThread<ThreadCache> thread_caches_;
  mutable std::mutex mutex_;
  std::vector<uintptr_t> frames_;                       // every stack's frames, back to back
  std::vector<Entry> stacks_;                           // stack id - 1 -> its frames
  std::unordered_multimap<uint64_t, uint32_t> by_hash_;  // hash of the frames -> stack id
  uint64_t overflowed_ = 0;
};

/// True for the modules of the launch machinery that a launch's stack starts in: librfinject,
/// libcupti and the CUDA driver (libcuda). Matched on the basename's prefix.
bool is_launch_machinery(std::string_view module) noexcept;

}  // namespace rf::collector
