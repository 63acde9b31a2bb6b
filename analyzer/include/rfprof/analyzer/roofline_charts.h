// The roofline charts of a run (roofline.svg) and of a ceilings entry alone (rfanalyze ceilings):
// ceilings become roofs, kernel groups become points.
#pragma once

#include <vector>

#include "rfprof/analyzer/ceilings.h"
#include "rfprof/analyzer/report.h"
#include "rfprof/analyzer/svg_roofline.h"

namespace rf::analyzer {

/// The compute roofs of `c` that have a value: FP64, FP32, FP16, then the dense tensor peaks of
/// FP64, TF32, FP16, BF16 and FP8 (INT8 OP/s are not FLOP/s and are not drawn). Roofs within
/// 0.1 % of each other are one roof whose label names them all, e.g. "FP32, FP64 tensor".
std::vector<ChartRoof> roofs_of(const DeviceCeilings& c);

/// One chart per device of the run (Report::devices(), so one per trace and device), with the
/// kernel groups of that device as points (AI against DRAM bytes, FLOP/s, GPU time; coloured by
/// phase), plus one chart for launches whose device has no DeviceInfo record, if any. Kernel
/// groups without counters (no AI or FLOP/s) and those with 0 FLOP or 0 DRAM bytes (intensity 0 or
/// infinite: no place on log axes) are counted in notes, with the latter's GPU time, not drawn.
std::vector<RooflineChart> run_charts(const Report& report);

/// Whether the kernel group `a` is a point of run_charts' (and report.html's colours): an
/// arithmetic intensity and FLOP/s both above 0, the intensity finite.
bool drawn_on_roofline(const Aggregate& a);

}  // namespace rf::analyzer
