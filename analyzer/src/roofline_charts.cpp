// Charts of a run and of a ceilings entry (rfprof/analyzer/roofline_charts.h).
#include "rfprof/analyzer/roofline_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

bool drawn_on_roofline(const Aggregate& a) {
  const auto ai = a.arithmetic_intensity();
  const auto rate = a.flop_per_s();
  return ai && rate && *ai > 0 && *rate > 0 && std::isfinite(*ai);
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
  // Per chart (the unknown device's last): groups not drawn, without counters and with 0 FLOP or 0
  // bytes (a copy kernel: intensity 0 has no place on a log axis), and the GPU time of the latter.
  std::vector<uint64_t> uncounted(devices.size() + 1, 0), zero(devices.size() + 1, 0), untimed(devices.size() + 1, 0);
  std::vector<uint64_t> zero_ns(devices.size() + 1, 0);
  for (const auto& [key, agg] : report.kernel_groups()) {
    const bool known = key.device_index >= 0 && static_cast<size_t>(key.device_index) < devices.size();
    const size_t slot = known ? static_cast<size_t>(key.device_index) : devices.size();
    RooflineChart& c = known ? charts[slot] : unknown;
    auto ai = agg.arithmetic_intensity();
    auto rate = agg.flop_per_s();
    if (agg.counted_launches == 0) {  // no launch with FLOP and DRAM bytes
      ++uncounted[slot];
      continue;
    }
    if (!rate) {  // counters, but no launch with a duration: no FLOP/s
      ++untimed[slot];
      continue;
    }
    if (!drawn_on_roofline(agg)) {  // 0 FLOP, or 0 bytes (no AI)
      ++zero[slot];
      zero_ns[slot] += agg.duration_ns;
      continue;
    }
    c.points.push_back({key.kernel, key.phase, *ai, *rate, static_cast<double>(agg.duration_ns)});
  }
  for (size_t i = 0; i <= devices.size(); ++i) {
    RooflineChart& c = i < devices.size() ? charts[i] : unknown;
    // Short lines: the legend column is about 35 characters wide.
    if (uncounted[i] > 0) {
      c.notes.push_back(std::to_string(uncounted[i]) + " kernel group(s) without");
      c.notes.push_back("counters not drawn");
    }
    if (untimed[i] > 0) {
      c.notes.push_back(std::to_string(untimed[i]) + " kernel group(s) without");
      c.notes.push_back("GPU time (no FLOP/s) not drawn");
    }
    if (zero[i] > 0) {
      char ms[32];
      std::snprintf(ms, sizeof ms, "%.3g", static_cast<double>(zero_ns[i]) * 1e-6);
      c.notes.push_back(std::to_string(zero[i]) + " kernel group(s) with 0 FLOP");
      c.notes.push_back("or 0 DRAM bytes not drawn");
      c.notes.push_back("(" + std::string(ms) + " ms GPU time; in kernels.csv)");
    }
  }
  if (!unknown.points.empty() || uncounted[devices.size()] > 0 || zero[devices.size()] > 0 || untimed[devices.size()] > 0)
    charts.push_back(std::move(unknown));
  return charts;
}

}  // namespace rf::analyzer
