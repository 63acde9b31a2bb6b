// roofline.svg: log-log roofline charts as SVG text, one chart per device. Geometry (log scales,
// ridge points, axis ranges) is in pure functions; render_roofline_svg only lays the text out.
// Roofline model: attainable FLOP/s = min(peak FLOP/s, arithmetic intensity x DRAM bandwidth)
// (Williams, Waterman, Patterson, CACM 52(4), 2009); ridge point = peak / bandwidth (FLOP/byte).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace rf::analyzer {

/// A compute ceiling drawn as a flat roof.
struct ChartRoof {
  std::string label;   ///< e.g. "FP32", "TF32 tensor"
  double peak = 0;     ///< FLOP/s
};

/// One point: a kernel (or kernel group) at its arithmetic intensity and achieved FLOP/s.
struct ChartPoint {
  std::string label;        ///< kernel name (shown as the point's tooltip)
  std::string group;        ///< colour group, e.g. the phase
  double ai = 0;            ///< FLOP/byte (DRAM)
  double flop_per_s = 0;    ///< FLOP/s
  double time_ns = 0;       ///< GPU time of the point (sets its size)
};

/// One chart.
struct RooflineChart {
  std::string title;                       ///< e.g. "device 0: NVIDIA H100 80GB HBM3"
  std::optional<double> dram_bytes_per_s;  ///< the memory roof's slope (bytes/s); none: no slope
  std::vector<ChartRoof> roofs;
  std::vector<ChartPoint> points;
  std::vector<std::string> notes;          ///< lines printed under the chart
};

/// Decade exponents an axis may span: 1e-300 .. 1e300, at most kMaxAxisDecades decades.
constexpr int kMinDecade = -300, kMaxDecade = 300, kMaxAxisDecades = 30;
/// How far outside [px_lo, px_hi] a pixel may lie, in axis lengths (map() clamps there).
constexpr double kAxisOverflow = 2.0;

/// A base-10 logarithmic axis mapping [lo, hi] (lo > 0) onto pixels [px_lo, px_hi].
struct LogAxis {
  double lo = 1, hi = 10, px_lo = 0, px_hi = 1;
  /// Pixel of `v`; values outside [lo, hi] map outside [px_lo, px_hi], at most kAxisOverflow
  /// axis lengths away (v <= 0 or NaN maps to that far below lo).
  double map(double v) const;
  /// Whether `v` lies in [lo, hi] (within rounding).
  bool contains(double v) const;
  /// The powers of ten in [lo, hi], ascending, with exponents in [kMinDecade, kMaxDecade]; empty
  /// when lo <= 0, hi < lo or hi is infinite.
  std::vector<double> decades() const;
};

/// Ridge point of a roof: peak / bandwidth (FLOP/byte). Both must be > 0.
double ridge_point(double peak_flop_per_s, double bandwidth_bytes_per_s);

/// Vertical gap between two stacked roof labels (px): one 11 px line of text and a pixel.
constexpr double kRoofLabelGap = 12;

/// Baselines (px, y growing downwards) for labels that want to sit at `wanted`, moved apart so
/// that any two are at least `gap` px apart: a label never moves below its wanted y, except
/// when the stack would rise above `top`, where it is pushed down from `top` instead. Same
/// order and size as `wanted`. Never throws.
std::vector<double> stack_labels(const std::vector<double>& wanted, double gap, double top);

/// Decade-aligned [lo, hi] covering every finite value > 0 of `values` with one decade of margin
/// on each side; {0.01, 1e4} when there is none. Exponents are clamped to [kMinDecade, kMaxDecade]
/// and the span to kMaxAxisDecades (the top kept): values below lo are then off the axis.
std::pair<double, double> decade_range(const std::vector<double>& values);

/// The whole SVG document: charts stacked vertically, each with labelled log-log axes (arithmetic
/// intensity [FLOP/byte], performance [FLOP/s]), the memory roof, every compute roof with its ridge
/// point marked and labelled, the points (area proportional to GPU time, colour by group, a
/// <title> tooltip), and a legend of groups and roofs. Roof labels are drawn last, on a white
/// halo, stacked apart (stack_labels); the memory roof's runs along its slope. Text is XML-escaped.
std::string render_roofline_svg(const std::vector<RooflineChart>& charts);

/// Colour of a group: forward, backward, optimizer and other have fixed colours; other names get
/// colours from a palette in order of first use (`seen`). render_roofline_svg and report.html
/// (ReportPage::data's phase_colours) first call it for every group in name order.
std::string group_colour(const std::string& group, std::vector<std::string>& seen);

}  // namespace rf::analyzer
