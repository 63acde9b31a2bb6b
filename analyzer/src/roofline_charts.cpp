// Charts of a run and of a ceilings entry (rfprof/analyzer/roofline_charts.h).
#include "rfprof/analyzer/roofline_charts.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace rf::analyzer {
namespace {

const char* kTensorLabels[kTensorPrecisions] = {"FP64 tensor", "TF32 tensor", "FP16 tensor",
                                                "BF16 tensor", "FP8 tensor",  "INT8 tensor"};

}  // namespace

std::vector<ChartRoof> roofs_of(const DeviceCeilings& c) {
  std::vector<ChartRoof> out;
  for (auto [label, ceiling] : {std::pair{"FP64", &c.fp64}, std::pair{"FP32", &c.fp32}, std::pair{"FP16", &c.fp16}})
    if (ceiling->value) out.push_back({label, *ceiling->value});
  for (size_t p = 0; p < kTensorPrecisions; ++p)
    if (p != kTensorInt8 && c.tensor[p].value) out.push_back({kTensorLabels[p], *c.tensor[p].value});
  // Roofs at the same height (e.g. FP32 and FP64 tensor on H100) are drawn once, labels joined.
  std::vector<ChartRoof> merged;
  for (const auto& r : out) {
    auto same = std::find_if(merged.begin(), merged.end(),
                             [&](const ChartRoof& m) { return std::abs(m.peak - r.peak) <= 1e-3 * r.peak; });
    if (same == merged.end()) merged.push_back(r);
    else same->label += ", " + r.label;
  }
  return merged;
}

std::vector<RooflineChart> run_charts(const Report& report) {
  const auto& devices = report.devices();
  std::vector<RooflineChart> charts(devices.size());
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceSummary& d = devices[i];
    RooflineChart& c = charts[i];
    c.title = "device " + std::to_string(d.device.info.device_id) + ": " + d.device.name + " (pid " +
              std::to_string(d.pid) + ")";
    c.dram_bytes_per_s = d.ceilings.dram.value;
    c.roofs = roofs_of(d.ceilings);
  }
  RooflineChart unknown;
  unknown.title = "launches without a device record";
  std::vector<uint64_t> undrawn(devices.size() + 1, 0);
  for (const auto& [key, agg] : report.kernel_groups()) {
    const bool known = key.device_index >= 0 && static_cast<size_t>(key.device_index) < devices.size();
    RooflineChart& c = known ? charts[static_cast<size_t>(key.device_index)] : unknown;
    auto ai = agg.arithmetic_intensity();
    auto rate = agg.flop_per_s();
    if (!ai || !rate || *ai <= 0 || *rate <= 0) {
      ++undrawn[known ? static_cast<size_t>(key.device_index) : devices.size()];
      continue;
    }
    c.points.push_back({key.kernel, key.phase, *ai, *rate, static_cast<double>(agg.duration_ns)});
  }
  for (size_t i = 0; i <= devices.size(); ++i)
    if (undrawn[i] > 0)
      (i < devices.size() ? charts[i] : unknown)
          .notes.push_back(std::to_string(undrawn[i]) + " kernel group(s) without counters not drawn");
  if (!unknown.points.empty() || undrawn[devices.size()] > 0) charts.push_back(std::move(unknown));
  return charts;
}

}  // namespace rf::analyzer
