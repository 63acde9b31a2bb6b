// Internal helpers of the codec shared by writer and reader.
#pragma once

#include <variant>

#include "rfprof/trace/records.h"

namespace rf::trace {

template <class... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <class... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

/// True when every enum field of `record` holds a value the reader accepts (the ranges of
/// docs/trace-format.md, "Records"): the writer drops a record that fails this instead of writing
/// one that would make the reader refuse it and everything after it.
bool enums_in_range(const Record& record) noexcept;

/// Calls `visit` with every StringId field of `record` (StringDef's own id excluded).
/// (A template: the reader calls it for every record, ~3 per launch.)
template <class Visit>
void for_each_string_id(const Record& record, Visit&& visit) {
  std::visit(Overloaded{
                 [&](const StringDef&) {},
                 [&](const ProcessInfo& r) {
                   visit(r.hostname); visit(r.process_name); visit(r.command_line);
                   visit(r.rfprof_version);
                 },
                 [&](const DeviceInfo& r) { visit(r.name); visit(r.chip); },
                 [&](const KernelActivity& r) { visit(r.mangled_name); visit(r.demangled_name); },
                 [&](const LaunchApi& r) { visit(r.kernel_name); },
                 [&](const NvtxEvent& r) { visit(r.domain); visit(r.name); },
                 [&](const MetricConfig& r) {
                   visit(r.chip);
                   for (StringId id : r.metrics) visit(id);
                 },
                 [&](const RangeCounters& r) { visit(r.range_name); },
                 [&](const ProfilingWindow&) {},
                 [&](const CollectorError& r) { visit(r.message); },
                 [&](const TraceEnd&) {},
                 [&](const MemoryActivity&) {},
                 [&](const CallStack& r) {
                   for (StringId id : r.functions) visit(id);
                   for (StringId id : r.modules) visit(id);
                 },
                 [&](const ProfilerOverhead& r) { visit(r.phase); },
             },
             record);
}

}  // namespace rf::trace
