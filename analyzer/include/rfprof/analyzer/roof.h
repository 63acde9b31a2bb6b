// Roofline check of one launch: a point above its roof is a measurement or formula bug, reported.
//
// attainable FLOP/s = min(peak FLOP/s of the launch's precision mix, AI * DRAM bandwidth)
// (roofline model, Williams, Waterman, Patterson, CACM 52(4), 2009). The peak of a mix is
// total FLOP / sum_p(FLOP_p / peak_p): the rate if each precision ran at its own peak in turn.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "rfprof/analyzer/ceilings.h"
#include "rfprof/analyzer/flops.h"

namespace rf::analyzer {

/// Result of check_roof(). Rates in FLOP/s, bandwidths in bytes/s.
struct RoofCheck {
  std::optional<double> achieved_flop_per_s;
  std::optional<double> compute_peak_flop_per_s;  ///< peak of the precision mix
  std::optional<double> attainable_flop_per_s;    ///< min(compute peak, AI * bandwidth)
  std::optional<double> memory_roof_flop_per_s;   ///< AI * DRAM bandwidth (the roof's slope at AI)
  std::optional<double> dram_bytes_per_s;         ///< achieved DRAM bandwidth
  std::optional<double> dram_bandwidth;           ///< the device's DRAM ceiling (bytes/s)
  /// Tensor-core FLOP were measured (a roofline-tensor trace), so a total of 0 FLOP means none;
  /// without them a tensor-core kernel's total counts only its CUDA-core FLOP.
  bool tensor_flop_measured = false;
  bool no_dram_bytes = false;  ///< DRAM bytes measured and 0: arithmetic intensity infinite
  /// Seconds the launch's INT8 tensor ops take at the INT8 peak (ops / OP/s); absent without INT8
  /// ops or without that ceiling. INT8 ops are not FLOP, so they are in no FLOP/s figure, but a
  /// launch doing them is placed by time: its compute work at peak (FLOP at the mix's peak plus
  /// INT8 ops at theirs) against its DRAM bytes at the bandwidth.
  std::optional<double> int8_seconds_at_peak;
  /// total FLOP / compute peak of the mix: 0 for 0 FLOP, absent when FLOP or a needed peak is unknown
  std::optional<double> flop_seconds_at_peak;
  std::optional<double> memory_seconds;        ///< DRAM bytes / DRAM bandwidth
  std::optional<double> duration_seconds;      ///< the kernel's duration (absent or > 0)
  /// Seconds at peak of all compute work (FLOP and INT8 ops); absent when a term is unknown.
  std::optional<double> compute_seconds() const noexcept {
    if (!int8_seconds_at_peak || !flop_seconds_at_peak) return std::nullopt;
    return *int8_seconds_at_peak + *flop_seconds_at_peak;
  }
  bool int8_ops = false;  ///< INT8 tensor ops measured and above 0
  /// True when the launch did INT8 tensor ops and the INT8 ceiling is known: bound() and
  /// roof_fraction() compare times.
  bool placed_by_time() const noexcept { return int8_seconds_at_peak && *int8_seconds_at_peak > 0.0; }
  /// Achieved FLOP/s > compute peak; with INT8 ops, compute work at peak longer than the duration.
  bool above_compute = false;
  bool above_memory = false;                      ///< achieved DRAM bytes/s > DRAM bandwidth
  /// Largest achieved / ceiling among the exceeded ceilings (1 when none is exceeded).
  double excess = 1.0;
  /// Every exceeded ceiling is measured (rfbench), none by more than kMeasuredCeilingMargin, and
  /// DRAM bytes/s stay within the datasheet's bandwidth where one is known.
  bool only_measured_ceilings_exceeded = false;
  bool above() const noexcept { return above_compute || above_memory; }
  /// Which roof limits the launch: "memory" when its arithmetic intensity is left of the ridge
  /// point (AI × DRAM bandwidth < compute peak of its mix), else "compute"; "" when either roof is
  /// unknown (a ceiling missing, no FLOP and no DRAM bytes). Roofline model, Williams et al. 2009.
  /// A launch without FLOP that moves DRAM bytes (a copy, a transpose, integer work) has AI 0, left
  /// of every ridge point: "memory", though its mix has no compute peak, when tensor-core FLOP
  /// were measured too (otherwise its 0 may be a tensor-core kernel's uncounted work: ""). A launch
  /// with FLOP and no DRAM byte has an infinite AI, right of every ridge point: "compute".
  /// With INT8 tensor ops (placed_by_time()): "compute" when its compute work at peak takes at
  /// least as long as its DRAM bytes at the bandwidth (the same ridge test in time: F/P >= B/BW
  /// is AI >= P/BW), else "memory"; "" when either time is unknown.
  const char* bound() const noexcept {
    if (int8_ops && !placed_by_time()) return "";  // INT8 work without an INT8 ceiling
    if (placed_by_time()) {
      if (no_dram_bytes) return "compute";
      const std::optional<double> tc = compute_seconds();
      if (!tc || !memory_seconds) return "";
      return *tc >= *memory_seconds ? "compute" : "memory";
    }
    if (memory_roof_flop_per_s && *memory_roof_flop_per_s == 0.0) return tensor_flop_measured ? "memory" : "";
    if (no_dram_bytes && compute_peak_flop_per_s) return "compute";
    if (!memory_roof_flop_per_s || !compute_peak_flop_per_s) return "";
    return *memory_roof_flop_per_s < *compute_peak_flop_per_s ? "memory" : "compute";
  }
  /// Achieved / attainable FLOP/s (1 = on the roof; above 1 only for a point above its roof);
  /// absent when either is unknown. Under the memory roof this is achieved DRAM bytes/s over the
  /// DRAM bandwidth ((F/t) / (F/B × BW) = (B/t) / BW), which is also the fraction given a launch
  /// with AI 0, whose attainable FLOP/s is 0.
  /// With INT8 tensor ops: the longer of its compute and memory times at peak over its duration
  /// (the same ratio in time: achieved / attainable = max(F/P, B/BW) / t).
  std::optional<double> roof_fraction() const noexcept {
    if (int8_ops && !placed_by_time()) return std::nullopt;  // INT8 work without an INT8 ceiling
    if (placed_by_time()) {
      const std::optional<double> tc = compute_seconds();
      if (!tc || !duration_seconds) return std::nullopt;
      return std::max(*tc, memory_seconds.value_or(0.0)) / *duration_seconds;
    }
    if (memory_roof_flop_per_s && *memory_roof_flop_per_s == 0.0) {  // AI 0: see bound()
      if (!tensor_flop_measured || !dram_bytes_per_s || !dram_bandwidth || *dram_bandwidth <= 0.0) return std::nullopt;
      return *dram_bytes_per_s / *dram_bandwidth;
    }
    if (!achieved_flop_per_s || !attainable_flop_per_s || *attainable_flop_per_s <= 0.0) return std::nullopt;
    return *achieved_flop_per_s / *attainable_flop_per_s;
  }
  /// "warning" for a launch only slightly above measured ceilings: a benchmark gives a lower
  /// bound of the hardware's peak, and a real kernel can beat it (on an H100 a ReLU backward kernel
  /// read DRAM at 2.85 TB/s where rfbench's float4 copy reached 2.82 TB/s). "error" otherwise:
  /// a point above its roof is a measurement or formula error.
  const char* severity() const noexcept {
    return only_measured_ceilings_exceeded ? "warning" : "error";
  }
};

/// How far a launch may exceed measured ceilings before it is an error (10 %).
inline constexpr double kMeasuredCeilingMargin = 1.10;

/// Peak FLOP/s of the mix of `m` (FLOP per precision, tensor terms included: dense at their
/// ceiling, sparse at twice it); absent when total FLOP is absent or 0, or a term with FLOP > 0
/// has no ceiling.
std::optional<double> mix_peak_flop_per_s(const LaunchMetrics& m, const DeviceCeilings& c);

/// Places one launch (counters `m`, kernel duration `duration_ns`) under the ceilings `c`.
/// The roofs (compute peak, memory roof, attainable, bound()) need no duration; achieved rates
/// and flags do. Nothing is flagged when the duration is absent or 0 or a needed ceiling is unknown.
RoofCheck check_roof(const LaunchMetrics& m, const std::optional<uint64_t>& duration_ns,
                     const DeviceCeilings& c);

}  // namespace rf::analyzer
