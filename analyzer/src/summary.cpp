// summary.json of a run (Report::summary; structure documented in docs/analyzer-outputs.md).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "rfprof/analyzer/overhead.h"
#include "rfprof/analyzer/report.h"

#ifndef RFPROF_VERSION
#define RFPROF_VERSION "unknown"
#endif

namespace rf::analyzer {
namespace {

using json = nlohmann::ordered_json;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

const char* error_code_name(trace::ErrorCode code) {
  switch (code) {
    case trace::ErrorCode::kRangeLaunchMismatch: return "range_launch_mismatch";
    case trace::ErrorCode::kCuptiCall: return "cupti_call";
    case trace::ErrorCode::kCountersUnavailable: return "counters_unavailable";
    case trace::ErrorCode::kDroppedRecords: return "dropped_records";
    case trace::ErrorCode::kDecodeFailed: return "decode_failed";
    case trace::ErrorCode::kCallStacksDropped: return "call_stacks_dropped";
    case trace::ErrorCode::kFinishCutShort: return "finish_cut_short";
    case trace::ErrorCode::kUnknown: break;
  }
  return "unknown";
}

json ceiling(const Ceiling& c) {
  json j = {{"value", opt(c.value)}, {"source", c.value ? json(c.source) : json(nullptr)}};
  if (c.measured) {
    j["datasheet_value"] = opt(c.datasheet);
    j["ratio_to_datasheet"] = opt(c.ratio_to_datasheet());
  }
  return j;
}

/// Every ceiling of a device with its summary.json key, in output order.
std::vector<std::pair<std::string, const Ceiling*>> named_ceilings(const DeviceCeilings& c) {
  std::vector<std::pair<std::string, const Ceiling*>> out = {
      {"fp64_flop_per_s", &c.fp64}, {"fp32_flop_per_s", &c.fp32}, {"fp16_flop_per_s", &c.fp16}};
  for (size_t p = 0; p < kTensorPrecisions; ++p) out.emplace_back(kTensorCeilingKeys[p], &c.tensor[p]);
  out.emplace_back("dram_bytes_per_s", &c.dram);
  out.emplace_back("l2_bytes_per_s", &c.l2_bandwidth);
  out.emplace_back("l2_bytes", &c.l2_bytes);
  return out;
}

/// {"fp16": {"dense": x, "sparse": y}, ...}: tensor FLOP (INT8: ops) per precision; only the
/// precisions with a value.
json tensor(const Aggregate& a) {
  json out = json::object();
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    auto d = a.tensor_dense[p].value();
    auto s = a.tensor_sparse[p].value();
    if (d || s) out[std::string(kTensorPrecisionNames[p])] = {{"dense", opt(d)}, {"sparse", opt(s)}};
  }
  return out;
}

json aggregate(const Aggregate& a) {
  auto sum_or_null = [](const OptionalSum& s) { return opt(s.value()); };
  return {{"launches", a.launches},
          {"launches_with_counters", a.counted_launches},
          {"duration_ns", a.timed_launches ? json(a.duration_ns) : json(nullptr)},  // null: no launch timed, not 0 ns
          {"fp64_flop", sum_or_null(a.fp64_flop)},
          {"fp32_flop", sum_or_null(a.fp32_flop)},
          {"fp16_flop", sum_or_null(a.fp16_flop)},
          {"dram_read_bytes", sum_or_null(a.dram_read_bytes)},
          {"dram_write_bytes", sum_or_null(a.dram_write_bytes)},
          {"tensor", tensor(a)},
          {"l2_bytes", sum_or_null(a.l2_bytes)},
          {"l1_bytes", sum_or_null(a.l1_bytes)},
          {"arithmetic_intensity", opt(a.arithmetic_intensity())},
          {"l2_arithmetic_intensity", opt(a.l2_arithmetic_intensity())},
          {"l1_arithmetic_intensity", opt(a.l1_arithmetic_intensity())},
          {"flop_per_s", opt(a.flop_per_s())}};
}

json trace_json(const TraceSummary& t) {
  const JoinStats& j = t.stream.join;
  json metric_configs = json::array();
  for (const MetricConfigSummary& c : t.metric_configs)
    metric_configs.push_back({{"config_id", c.config_id}, {"metrics", c.metrics}, {"passes", c.passes}});
  return {{"path", t.path},
          {"pid", t.pid},
          {"hostname", t.hostname},
          {"process_name", t.process_name},
          {"command_line", t.command_line},
          {"rfprof_version", t.rfprof_version},
          {"mode", t.mode},
          {"format_version", t.format_version.empty() ? json(nullptr) : json(t.format_version)},
          {"truncated", t.truncated},
          {"truncated_at_byte", t.truncated ? json(t.truncated_at) : json(nullptr)},
          {"records", t.records},
          {"start_ns", t.start_ns ? json(*t.start_ns) : json(nullptr)},
          {"last_event_ns", t.last_event_ns ? json(*t.last_event_ns) : json(nullptr)},
          {"dropped_records", t.dropped_records ? json(*t.dropped_records) : json(nullptr)},
          {"launches", t.launches},
          {"nvtx_ranges", t.nvtx_ranges},
          {"nvtx_unmatched_ends", t.nvtx_unmatched_ends},
          {"nvtx_duplicate_starts", t.nvtx_duplicate_starts},
          {"nvtx_backwards_ranges", t.nvtx_backwards_ranges},
          {"memory",
           {{"events", t.memory_events},
            {"peak_bytes", t.memory_events ? json(t.memory_peak_bytes) : json(nullptr)},
            {"peak_timestamp_ns", t.memory_events ? json(t.memory_peak_timestamp_ns) : json(nullptr)}}},
          {"call_stacks", t.call_stacks},
          {"metric_configs", metric_configs},
          {"profiler_overhead", overhead_json(t.overhead, t.traced_ns)},
          {"join",
           {{"unmapped_counter_ranges", j.unmapped_counters},
            {"duplicate_counter_ranges", j.duplicate_counters},
            {"graph_counter_ranges", j.graph_counters},
            {"rows_without_kernel", j.without_kernel},
            {"rows_without_launch", j.without_launch},
            {"rows_without_counters", j.without_counters},
            {"max_buffered_records", j.max_pending},
            {"launches_given_up", j.given_up},
            {"counters_without_metric_config", t.stream.counters_without_config},
            {"kernels_with_negative_duration", t.stream.negative_durations},
            {"durations_from_gpu_time_duration", t.stream.durations_from_gpu_time},
            {"durations_from_gpu_time_without_kernel_record", t.stream.durations_from_gpu_time_without_kernel}}}};
}

json ceilings_json(const DeviceCeilings& c) {
  json j = {{"datasheet_entry", c.datasheet_entry.empty() ? json(nullptr) : json(c.datasheet_entry)},
            {"user_entry", c.user_entry.empty() ? json(nullptr) : json(c.user_entry)}};
  for (const auto& [key, value] : named_ceilings(c)) j[key] = ceiling(*value);
  return j;
}

json device_json(const DeviceSummary& d, const std::vector<TraceSummary>& traces) {
  const auto& i = d.device.info;
  const DeviceCeilings& c = d.ceilings;
  // 0 is unknown (no device has 0 SMs or bytes): an ncu CSV's import has only the compute
  // capability and the raw page's device__attribute_* columns (SMs, clocks, bus width, L2), and a
  // trace lacks a field its driver did not report.
  auto known = [](auto v) { return v ? json(v) : json(nullptr); };
  return {{"trace", d.trace_index < traces.size() ? json(traces[d.trace_index].path) : json(nullptr)},
          {"pid", d.pid},
          {"device_id", i.device_id},
          {"name", d.device.name},
          {"chip", d.device.chip},
          {"compute_capability",
           i.cc_major ? json(std::to_string(i.cc_major) + "." + std::to_string(i.cc_minor)) : json(nullptr)},
          {"sm_count", known(i.sm_count)},
          {"core_clock_khz", known(i.core_clock_khz)},
          {"memory_clock_khz", known(i.memory_clock_khz)},
          {"memory_bus_width_bits", known(i.memory_bus_width_bits)},
          {"global_memory_bytes", known(i.global_memory_bytes)},
          {"l2_cache_bytes", known(i.l2_cache_bytes)},
          {"reported_memory_bandwidth_bytes_per_s",
           known(static_cast<double>(i.global_memory_bandwidth_kbps) * 1000.0)},
          {"ceilings", ceilings_json(c)}};
}

json above_roof_json(const AboveRoof& a) {
  std::string reason;
  if (a.check.above_compute) reason = "FLOP/s above the compute ceiling of its precision mix";
  if (a.check.above_memory)
    reason += std::string(reason.empty() ? "" : "; ") + "DRAM bytes/s above the DRAM bandwidth ceiling";
  if (a.check.only_measured_ceilings_exceeded)
    reason += " (measured ceilings, exceeded by at most " +
              std::to_string(static_cast<int>((kMeasuredCeilingMargin - 1.0) * 100.0 + 0.5)) +
              " %: the benchmark did not reach the hardware's peak)";
  return {{"severity", a.check.severity()},
          {"excess", a.check.excess},
          {"trace", a.trace},
          {"id", a.id},
          {"pid", a.pid},
          {"device", a.device ? json(*a.device) : json(nullptr)},
          {"kernel", a.kernel},
          {"arithmetic_intensity", opt(a.arithmetic_intensity)},
          {"flop_per_s", opt(a.check.achieved_flop_per_s)},
          {"attainable_flop_per_s", opt(a.check.attainable_flop_per_s)},
          {"compute_peak_flop_per_s", opt(a.check.compute_peak_flop_per_s)},
          {"dram_bytes_per_s", opt(a.check.dram_bytes_per_s)},
          {"reason", reason}};
}

}  // namespace

nlohmann::ordered_json Report::uncounted_tensor_work_json() const {
  const UncountedTensorWork& u = uncounted_tensor_;
  if (u.launches == 0) return nullptr;
  std::vector<std::pair<std::string, uint64_t>> kernels(u.kernel_ns.begin(), u.kernel_ns.end());  // name order
  std::stable_sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  json names = json::array();
  for (size_t i = 0; i < kernels.size() && i < kUncountedTensorKernelsListed; ++i) names.push_back(kernels[i].first);
  const bool timed = totals_.timed_launches > 0 && totals_.duration_ns > 0;
  return {{"launches", u.launches},
          {"gpu_time_ns", u.gpu_time_ns},
          {"share_of_gpu_time",
           timed ? json(static_cast<double>(u.gpu_time_ns) / static_cast<double>(totals_.duration_ns)) : json(nullptr)},
          {"kernels", names},
          {"hint", kUncountedTensorHint}};
}

nlohmann::ordered_json Report::summary() const {
  json traces = json::array();
  for (const auto& t : traces_) traces.push_back(trace_json(t));
  json devices = json::array();
  for (const auto& d : devices_) devices.push_back(device_json(d, traces_));
  json errors = json::array();
  uint64_t error_count = 0;
  for (const auto& t : traces_) {
    for (const auto& e : t.stream.errors) {
      error_count += e.count;
      errors.push_back({{"trace", t.path},
                        {"pid", t.pid},
                        {"code", static_cast<uint32_t>(e.code)},
                        {"code_name", error_code_name(e.code)},
                        {"count", e.count},
                        {"message", e.message},
                        {"first_window_id", e.first_window_id},
                        {"first_expected", e.first_expected},
                        {"first_actual", e.first_actual}});
    }
  }
  json above = json::array();
  for (const auto& a : above_roof_) above.push_back(above_roof_json(a));
  // Measured ceilings (rfbench) are expected at 80-100 % of the datasheet's; others are listed.
  json checks = json::array();
  for (const auto& d : devices_)
    for (const auto& [key, value] : named_ceilings(d.ceilings))
      if (auto r = value->ratio_to_datasheet(); r && (*r < 0.8 || *r > 1.0))
        checks.push_back({{"device", d.device.name},
                          {"ceiling", key},
                          {"measured", *value->value},
                          {"datasheet", *value->datasheet},
                          {"ratio_to_datasheet", *r},
                          {"message", key + " measured at " + std::to_string(static_cast<int>(*r * 100 + 0.5)) +
                                          " % of the datasheet value (expected 80-100 %)"}});
  json totals = aggregate(totals_);
  totals["launches_without_ceilings"] = launches_without_ceilings_;
  json by_bound = json::object();
  for (size_t i = 0; i < bound_shares_.size(); ++i)
    by_bound[Report::kBoundNames[i]] = {{"launches", bound_shares_[i].launches},
                                {"duration_ns", bound_shares_[i].duration_ns}};
  totals["by_bound"] = by_bound;
  json out = {{"tool", "rfanalyze"},
          {"version", RFPROF_VERSION},
          {"traces", traces},
          {"devices", devices},
          {"ceiling_checks", checks},
          {"totals", totals},
          {"collector_error_count", error_count},
          {"collector_errors", errors},
          {"above_roof_count", above_roof_count_},
          {"above_roof_errors", above_roof_errors_},
          {"above_roof_listed_max", kMaxAboveRoofListed},
          {"above_roof", above}};
  out["uncounted_tensor_work"] = uncounted_tensor_work_json();
  if (ops_.any()) out["ops"] = ops_.summary([](const Aggregate& a) { return aggregate(a); });
  return out;
}

}  // namespace rf::analyzer
