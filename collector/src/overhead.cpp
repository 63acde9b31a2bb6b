// Per-phase totals of the collector's own cost (overhead.h).
#include "rfprof/collector/overhead.h"

namespace rf::collector {

std::string_view overhead_phase_name(OverheadPhase phase) noexcept {
  switch (phase) {
    case OverheadPhase::kSessionStart: return "session.start";
    case OverheadPhase::kCountersSetup: return "counters.setup";
    case OverheadPhase::kProfilerInitialize: return "counters.profiler_initialize";
    case OverheadPhase::kCounterAvailability: return "counters.counter_availability";
    case OverheadPhase::kConfigImage: return "counters.config_image";
    case OverheadPhase::kEnable: return "counters.enable";
    case OverheadPhase::kImageSetup: return "counters.image_setup";
    case OverheadPhase::kStart: return "counters.start";
    case OverheadPhase::kStop: return "counters.stop";
    case OverheadPhase::kDecode: return "counters.decode";
    case OverheadPhase::kEvaluate: return "counters.evaluate";
    case OverheadPhase::kDisable: return "counters.disable";
    case OverheadPhase::kLaunchCounters: return "launch.counters";
    case OverheadPhase::kLaunchCallbacks: return "launch.callbacks";
    case OverheadPhase::kActivityBuffer: return "activity.buffer";
    case OverheadPhase::kActivityFlush: return "activity.flush";
    case OverheadPhase::kWriterFlush: return "writer.flush";
    case OverheadPhase::kFinish: return "session.finish";
    case OverheadPhase::kCount: break;
  }
  return "";
}

void OverheadStats::add(OverheadPhase phase, uint64_t ns) noexcept {
  if (phase >= OverheadPhase::kCount) return;
  Slot& s = slots_[static_cast<size_t>(phase)];
  s.total_ns.fetch_add(ns, std::memory_order_relaxed);
  uint64_t max = s.max_ns.load(std::memory_order_relaxed);
  while (ns > max && !s.max_ns.compare_exchange_weak(max, ns, std::memory_order_relaxed)) {
  }
  // Last, with release: a reader that sees this count sees the time added before it.
  s.count.fetch_add(1, std::memory_order_release);
}

OverheadTotals OverheadStats::totals(OverheadPhase phase) const noexcept {
  if (phase >= OverheadPhase::kCount) return {};
  const Slot& s = slots_[static_cast<size_t>(phase)];
  OverheadTotals t;
  t.count = s.count.load(std::memory_order_acquire);
  t.total_ns = s.total_ns.load(std::memory_order_relaxed);
  t.max_ns = s.max_ns.load(std::memory_order_relaxed);
  return t;
}

std::vector<OverheadChange> OverheadStats::changes(bool skip_if_only_flushes) {
  std::vector<OverheadChange> out;
  bool busy = false;
  for (size_t i = 0; i < slots_.size(); ++i) {
    const auto phase = static_cast<OverheadPhase>(i);
    OverheadTotals t = totals(phase);
    if (t.count == reported_count_[i]) continue;
    out.push_back({phase, t});
    busy = busy || (phase != OverheadPhase::kWriterFlush && phase != OverheadPhase::kActivityFlush);
  }
  if (skip_if_only_flushes && !busy) return {};
  for (const OverheadChange& c : out) reported_count_[static_cast<size_t>(c.phase)] = c.totals.count;
  return out;
}

OverheadStats& process_overhead() noexcept {
  static OverheadStats stats;
  return stats;
}

bool sample_this_callback() noexcept {
  thread_local uint32_t n = 0;
  return n++ % kCallbackSampleEvery == 0;
}

}  // namespace rf::collector
