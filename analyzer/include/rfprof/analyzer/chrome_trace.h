// trace.json: the run as a timeline in the Chrome trace event format (JSON object form with
// "traceEvents"), which ui.perfetto.dev and chrome://tracing open. GPU kernels are complete ("X")
// events on one track per GPU device and stream; NVTX ranges and launch API calls are "X" events
// on the profiled process's thread tracks, each call joined to its kernel by a flow arrow, as the
// PyTorch profiler's (Kineto's) traces draw them. Written as it streams: memory does not grow with
// launches. Format: "Trace Event Format" (Google, 2016), events X (complete), M (metadata),
// C (counter) and s/f (flow start and end).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "rfprof/analyzer/rows.h"
#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {

/// Streams trace.json. Timestamps ("ts", "dur") are in microseconds from set_time_base()'s time,
/// or the first trace's process start, or its first NVTX range when that is earlier (the time
/// axis may move back until the first trace's events are written).
class ChromeTrace {
 public:
  /// Writes the document's opening to `out`. Events reach `out` in blocks of about
  /// kFlushBytes, the last ones at finish(): `out` holds the whole document only after it.
  explicit ChromeTrace(std::ostream& out);
  /// The time (ns, the traces' clock) that is 0 on the time axis: the earliest process start of
  /// the run's traces (first_process_info) and, with two or more traces, their earliest NVTX
  /// range start (earliest_nvtx_start), so that no trace's events precede it (Perfetto drops
  /// events of negative "ts"). Call before the first begin_trace.
  void set_time_base(uint64_t base_ns);
  /// Starts a trace: names its process and thread tracks, writes its NVTX ranges (ranges never
  /// ended last until the trace's last event, ctx.last_event_ns, and their "args" say so). Its
  /// track process id is its pid, or, when an earlier trace had that pid, one above every Linux
  /// pid, named with its host. A range that does not nest in the ones drawn before it on its
  /// thread is an async slice ("b"/"e", unique "id") of the process instead of an "X" event.
  void begin_trace(const TraceContext& ctx);
  /// One launch: an "X" event on the track of its device and stream, args with its FLOP, bytes,
  /// arithmetic intensity, FLOP/s, NVTX path and phase. Launches without start or duration are
  /// counted in skipped() and not written. When the row has its launch call (launch_start_ns),
  /// the call is an "X" event (cat "cuda_api", named e.g. "cuLaunchKernel") on its thread's track,
  /// once per call (a graph launch's kernels share one), and a flow ("s" at the call's start,
  /// "f" with "bp": "e" at the kernel's start, cat "ac2g" as Kineto names it) joins the two.
  /// rfanalyze calls it on a thread of its own (BatchThread), with copies of the rows whose
  /// `mangled` view is cleared: it must read no memory of the trace pass but the row's.
  void add_launch(const KernelRow& row);
  /// Writes the closing of the document and every event not yet written. Call once, after the
  /// last trace.
  void finish();
  uint64_t events() const noexcept { return events_; }
  uint64_t skipped() const noexcept { return skipped_; }

 private:
  /// Serializes `event` into text_, as nlohmann::json::dump(-1, ' ', false, replace) would (invalid
  /// UTF-8 replaced by U+FFFD), writing text_ to out_ once it holds kFlushBytes.
  void write_event(const nlohmann::json& event);
  void flush_text();
  double us(uint64_t ns) const;
  int64_t gpu_pid(uint32_t device);
  void name_thread(uint64_t thread_id);
  /// Draws the launch call of `row` on its thread's track, unless it is a graph launch whose call
  /// one of the last kGraphCallsKept graph rows already drew.
  void add_launch_call(const KernelRow& row);

  std::ostream& out_;
  // Events are serialized into text_ by one nlohmann serializer kept for the run: json::dump
  // builds a serializer, a shared output adapter and a growing string per event, which made
  // trace.json's thread the slower of rfanalyze's two (bench/README.md). The serializer is the
  // one json::dump uses (nlohmann/detail/output/serializer.hpp, nlohmann_json 3.x).
  using Serializer = nlohmann::detail::serializer<nlohmann::json>;
  static constexpr size_t kFlushBytes = size_t{1} << 16;
  std::string text_;
  Serializer serializer_{nlohmann::detail::output_adapter<char, std::string>(text_), ' ',
                         nlohmann::json::error_handler_t::replace};  // writes into text_
  bool first_ = true;
  bool have_base_ = false;
  bool timed_events_ = false;               // an event with a time stamp was written: base_ns_ is fixed
  uint64_t base_ns_ = 0;
  uint32_t pid_ = 0;                        // process of the current trace
  int64_t track_pid_ = 0;                   // its track process id (pid_ unless shared)
  std::string label_;                       // "pid P" or "pid P, HOST" in its track names
  std::set<uint32_t> used_pids_;            // pids of the traces begun so far
  int64_t shared_pids_ = 0;                 // track ids handed to traces of a used pid
  uint64_t traces_ = 0;                     // traces begun
  uint64_t async_ranges_ = 0;               // async NVTX slice ids handed out
  std::map<std::pair<int64_t, uint32_t>, int64_t> gpu_pids_;  // (track pid, device) -> GPU track id
  std::map<std::pair<int64_t, uint32_t>, bool> streams_named_;
  std::map<uint32_t, std::string> device_names_;  // of the current trace, by device id
  std::map<std::pair<int64_t, uint64_t>, bool> threads_named_;  // (track pid, thread id)
  // Per-launch events are filled into these and dumped: their keys are built once, not per event
  // (trace.json is the costliest output per launch). Pointers are to the value slots, which
  // std::map-backed JSON objects never move.
  struct Event {
    nlohmann::json doc;
    std::vector<nlohmann::json*> slots;
  };
  Event call_, kernel_, flow_start_, flow_end_;
  static constexpr size_t kGraphCallsKept = 64;
  std::deque<uint32_t> graph_calls_;  // correlation ids of the last graph launch calls drawn
  uint64_t flows_ = 0;                // flow ids handed out (unique in the file)
  uint64_t events_ = 0;
  uint64_t skipped_ = 0;
};

}  // namespace rf::analyzer
