// Per-launch join of LaunchApi, KernelActivity and RangeCounters records, which a trace holds in
// any order (activity buffers arrive after callbacks, counters after their image is decoded).
//
// Keys (docs/trace-format.md, "Joining records"): a driver LaunchApi is known by its
// correlation_id and, when it came through the runtime, by its runtime_correlation_id; a kernel
// carries one of the two; counters carry the driver correlation_id.
// Memory: a launch is buffered only until it is complete, i.e. it has its kernel, and, when
// counters are awaited, its counters or the close of its profiling window (the collector decodes
// every counter image of a window before it writes the window's close). A launch whose records
// never all arrive is emitted by finish() with the missing parts absent; past kMaxWaiting launches
// waiting at once (counters refused at setup, in a window that closes only at exit), the earliest
// is emitted as it is. Graph launches (one call,
// many kernels) stay known until finish(); each of their kernels is emitted when it arrives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <set>
#include <utility>
#include <unordered_map>
#include <vector>

#include "rfprof/trace/records.h"

namespace rf::analyzer {

/// Counter values of one launch (RangeCounters without its bookkeeping).
struct CounterSample {
  uint32_t config_id = 0;       ///< MetricConfig::config_id that names the values
  std::vector<double> values;   ///< one per metric of the config; NaN: not available
};

/// One output row's records. At least one of the three is present.
struct JoinedLaunch {
  std::optional<trace::LaunchApi> launch;
  std::optional<trace::KernelActivity> kernel;
  std::optional<CounterSample> counters;
  /// Correlation id of the row: the kernel's when present, else the driver launch's, else the
  /// counters'.
  uint32_t id = 0;
};

/// Counts of what the joiner saw, for summary.json.
struct JoinStats {
  uint64_t emitted = 0;             ///< rows emitted
  uint64_t unmapped_counters = 0;   ///< RangeCounters with correlation id 0 (CollectorError code 1)
  uint64_t duplicate_counters = 0;  ///< a second RangeCounters for one launch (first one kept)
  uint64_t graph_counters = 0;      ///< RangeCounters mapped to a graph launch (dropped)
  uint64_t without_kernel = 0;      ///< rows emitted without a kernel record
  uint64_t without_launch = 0;      ///< rows emitted without a launch record
  uint64_t without_counters = 0;    ///< rows emitted without counters while counters were awaited
  uint64_t given_up = 0;            ///< launches emitted incomplete because kMaxWaiting others waited
  size_t max_pending = 0;           ///< largest number of records buffered at once
};

/// Joins one trace's records and hands complete rows to a sink, in the order they complete.
class LaunchJoiner {
 public:
  using Sink = std::function<void(JoinedLaunch&&)>;

  /// Launches that may wait at once: twice the largest counter image (RFPROF_MAX_RANGES, at most
  /// 100,000 launches) and room for the activity buffers' lag. Memory: a few hundred bytes each.
  static constexpr size_t kMaxWaiting = 262144;

  /// `await_counters`: the trace is in counters mode, so non-graph launches wait for counters
  /// (or their window's close) before they are emitted. `max_waiting`: kMaxWaiting (tests pass
  /// less).
  LaunchJoiner(bool await_counters, Sink sink, size_t max_waiting = kMaxWaiting);

  /// A launch API call; emitted (through the sink) once its kernel record and, when awaited, its
  /// counters arrived, in any order. Records are matched by correlation id (driver or runtime).
  void add_launch(const trace::LaunchApi& launch);
  /// A kernel activity record (start/end in ns); a graph's kernels are matched to its launch.
  void add_kernel(const trace::KernelActivity& kernel);
  /// The counter values of one range (one launch in kernel replay), matched by correlation id.
  void add_counters(const trace::RangeCounters& counters);
  /// The close of profiling window `window_id`: launches of it stop waiting for counters.
  void close_window(uint32_t window_id);
  /// Emits every buffered launch, kernel and counter sample, ordered by correlation id.
  void finish();

  /// Records currently buffered (launches waiting, kernels and counters without their launch).
  size_t pending() const noexcept;
  const JoinStats& stats() const noexcept { return stats_; }

 private:
  struct Entry {
    uint64_t seq = 0;  ///< arrival number of its launch (order_)
    std::optional<trace::LaunchApi> launch;
    std::optional<trace::KernelActivity> kernel;
    std::optional<CounterSample> counters;
  };
  struct Graph {
    trace::LaunchApi launch;
    uint64_t kernels = 0;
  };

  /// Driver correlation id of a known launch (pending or graph) for a kernel's correlation id.
  std::optional<uint32_t> driver_id(uint32_t correlation_id) const;
  bool waits_for_counters(const Entry& e) const;
  void try_emit(uint32_t driver);
  /// Removes the pending launch at `it` and its runtime id's alias (when it still names it).
  Entry take(std::unordered_map<uint32_t, Entry>::iterator it);
  void emit(Entry&& e, uint32_t id);
  void emit_graph_kernel(Graph& g, const trace::KernelActivity& kernel);
  void note_pending();
  /// Drops emitted ids from the front of order_ (and compacts it when stale ids pile up behind a
  /// launch that waits long), then emits the earliest launches while more than max_waiting_ wait.
  void bound_waiting();

  bool await_counters_;
  size_t max_waiting_;
  /// Whether `queued` (an order_ item) is a launch still waiting, not emitted or replaced.
  bool waiting(const std::pair<uint32_t, uint64_t>& queued) const;
  std::deque<std::pair<uint32_t, uint64_t>> order_;  // (driver id, seq) in arrival order (some stale)
  uint64_t arrivals_ = 0;
  Sink sink_;
  std::unordered_map<uint32_t, Entry> entries_;      // by driver correlation id
  std::unordered_map<uint32_t, Graph> graphs_;       // by driver correlation id
  std::unordered_map<uint32_t, uint32_t> aliases_;   // runtime correlation id -> driver id
  std::unordered_map<uint32_t, std::vector<trace::KernelActivity>> orphan_kernels_;
  std::unordered_map<uint32_t, CounterSample> orphan_counters_;  // by driver correlation id
  std::set<uint32_t> closed_windows_;
  JoinStats stats_;
};

}  // namespace rf::analyzer
