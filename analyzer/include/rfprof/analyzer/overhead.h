// profiler_overhead.csv and summary.json's "profiler_overhead": what the collector itself cost
// each profiled process, per phase, from the trace's ProfilerOverhead records (format 1.2; phases
// listed in docs/trace-format.md).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {

/// Header of profiler_overhead.csv: trace, pid, phase, count, total_ns, mean_ns (total_ns / count),
/// max_ns, share_of_traced_time (total_ns / the trace's ProcessInfo-to-TraceEnd time; empty for a
/// truncated trace). Phases that contain others (counters.setup, launch.callbacks) make the shares
/// of one trace add up to more than their sum.
std::vector<std::string> overhead_csv_header();

/// Writes one profiler_overhead.csv row per phase of `overhead`, in phase-name order.
/// `traced_ns`: TraceContext::traced_ns().
void write_overhead_rows(std::ostream& out, const std::string& trace, uint32_t pid,
                         const std::map<std::string, OverheadPhaseTotals>& overhead,
                         std::optional<uint64_t> traced_ns);

/// summary.json's "profiler_overhead" of one trace: {"traced_ns": n|null, "phases": {name:
/// {"count", "total_ns", "mean_ns", "max_ns"}}}.
nlohmann::ordered_json overhead_json(const std::map<std::string, OverheadPhaseTotals>& overhead,
                                     std::optional<uint64_t> traced_ns);

}  // namespace rf::analyzer
