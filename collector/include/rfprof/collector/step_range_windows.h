// Replay across steps with NVTX-range windows (RFPROF_REPLAY_RANGE, pure logic, no CUPTI): the
// NVTX range that is one training step, e.g. "regex:^step " for examples/imagenet/main.py's
// "step 5", "step 6", ... opens a window when it starts and closes it when it ends, instead of
// cudaProfilerStart/Stop. docs/step-replay.md.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "rfprof/trace/per_thread.h"

namespace rf::collector {

/// What an NVTX event does to the step window.
enum class StepRangeEvent { kNone, kOpen, kClose };

/// Follows NVTX push/pop ranges per thread and domain (NVTX keeps one push/pop stack per domain
/// and thread) and start/end ranges by id, and says when the range that delimits a step opens and
/// closes the window. Only one window is open at a time: a matching range inside the open one
/// does nothing.
///
/// Thread-safe. The `thread` of push() and pop() is kCallingThread, the calling thread (the
/// session's), or an id the caller chose for its own thread, one thread at a time per id (tests).
/// PyTorch's emit_nvtx pushes a range around every operator, from several threads: a range that
/// neither opens nor closes the window takes no lock shared between threads, and allocates
/// nothing once its thread has used its domain, except to search a `regex:` rule in a name not in
/// the thread's cache (below). The depths are per thread (trace::PerThread), the open window is
/// an atomic, and the lock is taken only by a range whose name matches while no window is open,
/// or by the pop or end that closes it.
/// While no window is open, a push looks its name up in the thread's cache of the last names it
/// searched (kNameCacheSlots), and searches a `regex:` rule only in a name not there; a start
/// searches it each time (start/end ranges are rarely one per operator).
/// Pushes are counted in the pushing thread's state, starts in one shared counter.
///
/// Memory: per thread, its domains' depths and, once it searched, the cache (some 3 KiB with
/// short names). kCallingThread's state is trace::PerThread::local(): when its thread exits it is
/// handed to the next thread that pushes or pops, its depths set to 0 (the cache and the push
/// count kept), so memory is bounded by the threads alive at once (a DataLoader's pin-memory
/// threads, thread pools created per epoch: until 2026-11-30 the session named threads by gettid()
/// and each one's state stayed for the run). A caller-chosen id's state is kept for the run.
///
/// The open push/pop window's owner is not the thread's id but a number its state is given, new
/// each time the state changes hands (thread_serial): a thread handed the state of the thread that
/// opened the window, or given that thread's reused system id, never closes it. A window whose
/// thread exits before popping its range stays open (NVTX never ends that range; no other range
/// opens a window meanwhile) until the run's end closes it, as a cudaProfilerStart without a
/// cudaProfilerStop.
class StepRangeWindows {
 public:
  /// `rule`: the range's name exactly, or "regex:EXPR" (ECMAScript) searched in the name. Throws
  /// std::invalid_argument for an empty rule or an invalid regular expression (naming it).
  explicit StepRangeWindows(const std::string& rule);

  /// The calling thread, as the `thread` of push() and pop() (its state handed on at its exit).
  static constexpr uint64_t kCallingThread = 0;

  /// nvtxRangePush (nvtxDomainRangePushEx: in `domain`, 0 for the default domain) on `thread`
  /// with message `name`. May throw std::bad_alloc on a thread's first push or pop, on its first
  /// range in a domain, or when a `regex:` rule is searched in a name not in the thread's cache.
  StepRangeEvent push(uint64_t thread, std::string_view name, uint64_t domain = 0);
  /// nvtxRangePop (nvtxDomainRangePop of `domain`) on `thread` (a pop without a push is ignored).
  StepRangeEvent pop(uint64_t thread, uint64_t domain = 0);
  /// nvtxRangeStart returning `id`, with message `name`.
  StepRangeEvent start(uint64_t id, std::string_view name);
  /// nvtxRangeEnd of `id`.
  StepRangeEvent end(uint64_t id);

  bool open() const noexcept { return open_.load(std::memory_order_acquire); }
  /// NVTX ranges pushed or started so far, all threads together (the "none matching it" count
  /// of a run whose rule matched nothing). Each thread counts its pushes in its own state, which
  /// this sums without a lock (PerThread::for_each): a push made meanwhile, or the
  /// first push of a thread still inside it, may be missed. Never waits.
  uint64_t ranges_seen();
  /// True when `name` is a step range's name.
  bool matches(std::string_view name) const;
  /// Per-thread states allocated (threads that push or pop now, states handed back by exited
  /// threads, and caller-chosen ids): memory use, for tests. Takes the registry lock.
  size_t threads_held() const { return depths_.size(); }

  /// Slots of a thread's cache of searched names (direct-mapped by the name's hash).
  static constexpr size_t kNameCacheSlots = 64;

 private:
  /// A name searched by a thread, and the answer; the string's memory is reused by the next name
  /// in its slot.
  struct CachedName {
    std::string name;
    bool matches = false;
    bool used = false;
  };
  /// One thread's push depth per domain (kept when it drops to 0) and its cache of searched names
  /// (a `regex:` rule only; created at its first search); touched only by that thread.
  struct Depths {
    std::vector<std::pair<uint64_t, uint32_t>> by_domain;  // (domain, depth), a handful at most
    std::unique_ptr<std::array<CachedName, kNameCacheSlots>> names;
    std::atomic<uint64_t> pushes{0};  // written by its thread only; read by ranges_seen(); kept when handed on
    uint64_t serial = 0;  // the thread holding it now, as owner_ names it (0: none given yet)
  };
  /// The state of `thread` (kCallingThread: the calling thread's; one an exited thread handed
  /// back comes with its depths at 0 and a new serial).
  Depths& depths_of(uint64_t thread);
  /// matches(), answered from `t`'s cache when it holds `name`.
  bool matches_cached(Depths& t, std::string_view name) const;

  std::string exact_;
  std::optional<std::regex> regex_;
  trace::PerThread<Depths> depths_;  // local() (kCallingThread), or by the caller's id
  std::atomic<uint64_t> thread_serial_{1};  // the next Depths::serial (taken once per thread and hand-over)

  // The open window. Written under mutex_; the atomics are read without it to skip the ranges
  // that cannot open or close it, and read again under it before deciding.
  std::mutex mutex_;
  std::atomic<bool> open_{false};
  std::atomic<bool> by_id_{false};         // the open window is a start/end range (else push/pop)
  std::atomic<uint64_t> owner_{0};         // its thread's Depths::serial (push/pop) or range id (start/end)
  std::atomic<uint64_t> owner_domain_{0};  // its domain (push/pop)
  std::atomic<uint32_t> owner_depth_{0};   // push depth of its range on its thread, in its domain
  std::atomic<uint64_t> starts_{0};        // start() calls (start/end ranges are rare: shared)
};

}  // namespace rf::collector
