// roofline.svg geometry and rendering (svg_roofline.h, roofline_charts.h) and `rfanalyze ceilings`.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/ceilings_command.h"
#include "rfprof/analyzer/roofline_charts.h"
#include "rfprof/analyzer/svg_roofline.h"

namespace rf::analyzer {
namespace {

size_t count(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

/// The value of attribute `attr` of the first element matching `element_regex` (a regex over the
/// element's text up to the attribute).
double attribute(const std::string& svg, const std::string& element_prefix, const std::string& attr) {
  std::smatch m;
  std::regex re(element_prefix + "[^>]*?" + attr + "=\"([-0-9.]+)\"");
  if (!std::regex_search(svg, m, re)) return NAN;
  return std::stod(m[1]);
}

TEST(SvgGeometry, LogAxisMapsDecadesLinearly) {
  LogAxis a{1e-1, 1e3, 100, 500};
  EXPECT_DOUBLE_EQ(a.map(1e-1), 100);
  EXPECT_DOUBLE_EQ(a.map(1e3), 500);
  EXPECT_DOUBLE_EQ(a.map(1e1), 300);  // two of four decades
  EXPECT_NEAR(a.map(std::sqrt(10.0)), 250, 1e-9);
  EXPECT_EQ(a.decades(), (std::vector<double>{0.1, 1, 10, 100, 1000}));
  LogAxis inverted{1e10, 1e14, 490, 50};  // y grows upwards
  EXPECT_DOUBLE_EQ(inverted.map(1e12), 270);
}

TEST(SvgGeometry, RidgePointAndDecadeRange) {
  EXPECT_DOUBLE_EQ(ridge_point(67e12, 3.35e12), 20.0);
  auto [lo, hi] = decade_range({2.5, 40, 0, -1, NAN});
  EXPECT_DOUBLE_EQ(lo, 0.1);  // floor(log10 2.5) = 0, minus one decade
  EXPECT_DOUBLE_EQ(hi, 1000);  // ceil(log10 40) = 2, plus one decade
  EXPECT_EQ(decade_range({}), (std::pair<double, double>{0.01, 1e4}));
}

// A corrupt counter (one flipped byte gave FLOP = 4.1e-319) or an absurd ceiling (1e308) once
// made decade_range return 0 or infinity and decades() loop without end.
TEST(SvgGeometry, ExtremeValuesGiveABoundedAxis) {
  for (const std::vector<double>& values :
       {std::vector<double>{6e-323, 1e12}, {4.1e-319}, {1e308}, {1e308, 4e-323}, {1e-300, 1e300}}) {
    auto [lo, hi] = decade_range(values);
    ASSERT_GT(lo, 0);
    ASSERT_TRUE(std::isfinite(hi));
    const double decades = std::log10(hi) - std::log10(lo);
    EXPECT_GE(decades, 1.0 - 1e-9);
    EXPECT_LE(decades, kMaxAxisDecades + 1e-9);
    LogAxis a{lo, hi, 0, 100};
    EXPECT_EQ(a.decades().size(), static_cast<size_t>(std::lround(decades)) + 1);
  }
  // The span keeps the top: 1e12 stays on the axis, the denormal falls off it.
  auto [lo, hi] = decade_range({6e-323, 1e12});
  EXPECT_DOUBLE_EQ(hi, 1e13);
  LogAxis a{lo, hi, 0, 100};
  EXPECT_TRUE(a.contains(1e12));
  EXPECT_FALSE(a.contains(6e-323));
  EXPECT_DOUBLE_EQ(a.map(6e-323), -kAxisOverflow * 100);  // clamped, not -1e300 pixels
  EXPECT_DOUBLE_EQ(a.map(0), -kAxisOverflow * 100);
  EXPECT_TRUE((LogAxis{0, 10, 0, 1}.decades().empty()));
  EXPECT_TRUE((LogAxis{1, INFINITY, 0, 1}.decades().empty()));
}

TEST(SvgRender, PointsFarBelowTheOthersAreCountedNotDrawn) {
  RooflineChart c;
  c.title = "device 0";
  c.dram_bytes_per_s = 3.35e12;
  c.roofs = {{"FP32", 1e308}};  // an absurd ceiling: its roof lies off the axis, clipped
  c.points = {{"good", "forward", 10, 1e12, 2000}, {"corrupt", "forward", 6e-323, 4.1e-310, 500}};
  const std::string svg = render_roofline_svg({c});
  EXPECT_EQ(count(svg, "class=\"point\""), 1u);
  EXPECT_NE(svg.find(">good [forward]"), std::string::npos);
  EXPECT_EQ(svg.find(">corrupt"), std::string::npos);
  EXPECT_NE(svg.find(">1 point(s) more than 30 decades</text>"), std::string::npos);
  // The absurd roof's label is clipped with it (labels are drawn outside the plot's clip path).
  EXPECT_EQ(svg.find(">FP32 "), std::string::npos);
  EXPECT_EQ(count(svg, "class=\"roof-label\""), 0u);
  EXPECT_NE(svg.find(">below the others not drawn</text>"), std::string::npos);
  EXPECT_NE(svg.find("clip-path=\"url(#plot-0)\""), std::string::npos);
  EXPECT_LT(svg.size(), 20000u);
}

TEST(SvgRender, RoofsRidgesPointsAndLegend) {
  RooflineChart c;
  c.title = "device 0: test <GPU> & co";
  c.dram_bytes_per_s = 1e12;
  c.roofs = {{"FP32", 1e13}, {"FP16 tensor", 1e15}};
  c.points = {{"gemm<float>", "forward", 10, 1e12, 2000}, {"relu", "backward", 0.5, 1e11, 500},
              {"sgd", "optimizer", 1, 1e10, 100}};
  const std::string svg = render_roofline_svg({c});
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count(svg, "class=\"roof compute\""), 2u);
  EXPECT_EQ(count(svg, "class=\"roof memory\""), 1u);
  EXPECT_EQ(count(svg, "class=\"ridge\""), 2u);
  EXPECT_EQ(count(svg, "class=\"point\""), 3u);
  EXPECT_EQ(count(svg, "class=\"legend-entry\""), 3u);
  EXPECT_NE(svg.find("ridge 10 FLOP/B"), std::string::npos);   // 1e13 / 1e12
  EXPECT_NE(svg.find("ridge 1e+03 FLOP/B"), std::string::npos);  // 1e15 / 1e12
  // Decades are labelled by their exponent: x from 1e-2 to 1e4, y from 1e9 to 1e16.
  for (const char* label : {">1e-2</text>", ">1e0</text>", ">1e3</text>", ">1e4</text>", ">1e9</text>", ">1e16</text>"})
    EXPECT_EQ(count(svg, label), 1u) << label;
  EXPECT_EQ(count(svg, ">1e17</text>"), 0u);
  EXPECT_NE(svg.find("Arithmetic intensity [FLOP/byte, DRAM]"), std::string::npos);
  EXPECT_NE(svg.find("Performance [FLOP/s]"), std::string::npos);
  EXPECT_NE(svg.find("test &lt;GPU&gt; &amp; co"), std::string::npos);
  EXPECT_EQ(svg.find("<GPU>"), std::string::npos);
  EXPECT_NE(svg.find("<title>gemm&lt;float&gt; [forward]: 1 TFLOP/s, AI 10 FLOP/B, 0.002 ms GPU time</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>relu [backward]: 100 GFLOP/s, AI 0.5 FLOP/B, 0.0005 ms GPU time</title>"),
            std::string::npos);
  // The x axis spans 0.01 .. 1e4 (points 0.5..10 and ridges 10, 1000, widened to decades plus
  // one decade of margin) over pixels 90..670: AI 10 sits half way, at 380. The y axis spans
  // 1e9 .. 1e16 over 490..50.
  LogAxis ax{0.01, 1e4, 90, 670}, ay{1e9, 1e16, 490, 50};
  EXPECT_DOUBLE_EQ(ax.map(10), 380);
  EXPECT_NEAR(attribute(svg, "<circle class=\"point\" data-group=\"forward\"", "cx"), ax.map(10), 0.01);
  EXPECT_NEAR(attribute(svg, "<circle class=\"point\" data-group=\"forward\"", "cy"), ay.map(1e12), 0.01);
  EXPECT_NEAR(attribute(svg, "<circle class=\"ridge\"", "cx"), ax.map(10), 0.01);
  EXPECT_NEAR(attribute(svg, "<circle class=\"ridge\"", "cy"), ay.map(1e13), 0.01);
  // Area follows time: the 2000 ns point has the largest radius (15), the others sqrt-scaled.
  EXPECT_NEAR(attribute(svg, "<circle class=\"point\" data-group=\"forward\"", "r"), 15, 0.01);
  EXPECT_NEAR(attribute(svg, "<circle class=\"point\" data-group=\"backward\"", "r"), 3 + 12 * std::sqrt(0.25), 0.01);
}

// The axis' edges: values a rounding error outside still belong to it, values far outside (or not
// positive) are clamped to just past it, and an axis to infinity has no decades.
TEST(SvgGeometry, AxisEdgesAndValuesOutsideIt) {
  LogAxis a{1e-1, 1e3, 100, 500};
  EXPECT_TRUE(a.contains(1e-1 * (1 - 1e-12)));
  EXPECT_TRUE(a.contains(1e3 * (1 + 1e-12)));
  EXPECT_FALSE(a.contains(1e-1 * (1 - 1e-6)));
  EXPECT_FALSE(a.contains(1e3 * (1 + 1e-6)));
  EXPECT_DOUBLE_EQ(a.map(1e300), 100 + (1 + kAxisOverflow) * 400);
  EXPECT_DOUBLE_EQ(a.map(-1), 100 - kAxisOverflow * 400);  // log10 of a negative value is NaN
  EXPECT_DOUBLE_EQ(a.map(0), 100 - kAxisOverflow * 400);
  EXPECT_TRUE((LogAxis{1, INFINITY, 100, 500}.decades().empty()));
  const auto tiny = LogAxis{1e-320, 1e-290, 100, 500}.decades();  // below 1e-300: from 1e-300 on
  ASSERT_EQ(tiny.size(), 11u);
  EXPECT_EQ(tiny.front(), 1e-300);
  EXPECT_EQ(decade_range({INFINITY, 10}), (std::pair<double, double>{1, 100}));
}

// Pushed down from the top, a stack moves only the labels it reaches: one far below stays put.
TEST(SvgGeometry, StackLabelsPushedDownLeaveALabelFarBelow) {
  EXPECT_EQ(stack_labels({300, 15, 14}, 10, 10), (std::vector<double>{300, 20, 10}));
}

TEST(SvgGeometry, StackLabelsKeepsThemAGapApart) {
  // Roofs a factor 2 apart on an 11-decade axis lie about 12 px apart; closer ones overlap.
  const std::vector<double> wanted = {100, 95, 300, 104, 60};
  const auto placed = stack_labels(wanted, 12, 0);
  ASSERT_EQ(placed.size(), wanted.size());
  EXPECT_DOUBLE_EQ(placed[2], 300);  // alone: where it wants to be
  EXPECT_DOUBLE_EQ(placed[3], 104);  // the lowest of the crowd stays
  EXPECT_DOUBLE_EQ(placed[0], 92);   // pushed up above it
  EXPECT_DOUBLE_EQ(placed[1], 80);
  EXPECT_DOUBLE_EQ(placed[4], 60);   // already 20 px above the one below
  for (size_t i = 0; i < placed.size(); ++i) {
    EXPECT_LE(placed[i], wanted[i]) << i;
    for (size_t j = 0; j < i; ++j) EXPECT_GE(std::abs(placed[i] - placed[j]), 12 - 1e-9) << i << "," << j;
  }
  // A stack that would rise above `top` starts at `top` and goes down instead.
  const auto clamped = stack_labels({20, 20, 20}, 12, 10);
  EXPECT_EQ(clamped, (std::vector<double>{34, 22, 10}));
  EXPECT_TRUE(stack_labels({}, 12, 0).empty());
  // Half a pixel above `top` is above it.
  EXPECT_EQ(stack_labels({20, 20}, 12, 8.5), (std::vector<double>{20.5, 8.5}));
}

// Labels once sat at the roofs' right ends, under the points drawn after them: on the shipped
// H100 trace the tensor-core GEMMs (AI 100-300, ~1e14 FLOP/s) covered four of six labels.
TEST(SvgRender, RoofLabelsSitLeftOfTheirRidgeAboveEveryPoint) {
  RooflineChart c;
  c.title = "device 0";
  c.dram_bytes_per_s = 3.35e12;
  c.roofs = {{"FP64", 34e12}, {"FP32, FP64 tensor", 67e12}, {"FP16", 134e12}};
  c.points = {{"gemm", "forward", 150, 1e14, 2000}, {"relu", "backward", 0.2, 4e11, 500}};
  const std::string svg = render_roofline_svg({c});
  const size_t last_point = svg.rfind("class=\"point\"");
  ASSERT_NE(last_point, std::string::npos);
  std::regex label_re("<text class=\"roof-label\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\"[^>]*>([^<]*)</text>");
  std::vector<double> ys;
  size_t labels = 0;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), label_re); it != std::sregex_iterator(); ++it) {
    ++labels;
    EXPECT_GT(static_cast<size_t>(it->position()), last_point) << "drawn under the points: " << (*it)[3];
    EXPECT_NE(it->str().find("paint-order=\"stroke\""), std::string::npos) << "no halo: " << (*it)[3];
    ys.push_back(std::stod((*it)[2]));
  }
  ASSERT_EQ(labels, 3u);
  for (size_t i = 0; i < ys.size(); ++i)
    for (size_t j = 0; j < i; ++j) EXPECT_GE(std::abs(ys[i] - ys[j]), kRoofLabelGap - 0.01);
  // Each ends 7 px left of its ridge dot (FP64: 34e12 / 3.35e12 = 10.1 FLOP/B).
  const double ridge_cx = attribute(svg, "<circle class=\"ridge\"", "cx");
  EXPECT_NEAR(attribute(svg, "<text class=\"roof-label\"", "x"), ridge_cx - 7, 0.01);
  EXPECT_NE(svg.find(">FP64 34 TFLOP/s, ridge 10.1 FLOP/B</text>"), std::string::npos);
  // The memory roof is named along its slope.
  EXPECT_NE(svg.find("class=\"roof-label memory\""), std::string::npos);
  EXPECT_NE(svg.find(">DRAM 3.35 TB/s</text>"), std::string::npos);
}

// The DRAM label runs along the slope only when it ends before the lowest ridge point, where that
// roof's label is: a ridge a third of a decade from its start leaves no room.
TEST(SvgRender, TheDramLabelStaysClearOfTheLowestRidge) {
  RooflineChart c;
  c.title = "device 0";
  c.dram_bytes_per_s = 1e12;
  c.points = {{"k", "forward", 10, 1e11, 10}, {"j", "forward", 0.5, 1e10, 10}};  // x axis 0.01 .. 100
  c.roofs = {{"FP32", 2e11}};  // ridge 0.2: the label would start at 0.1 and run past it
  EXPECT_EQ(render_roofline_svg({c}).find("roof-label memory"), std::string::npos);
  c.roofs = {{"FP32", 5e13}};  // ridge 50: room enough
  EXPECT_NE(render_roofline_svg({c}).find("roof-label memory"), std::string::npos);
  c.roofs = {{"FP32", 5e13}, {"FP64", 2e11}};  // the lowest ridge decides, not the highest
  EXPECT_EQ(render_roofline_svg({c}).find("roof-label memory"), std::string::npos);
  // Without a compute roof (CUPTI's DRAM bandwidth only) the slope runs to the right edge: it is
  // the roof kernels.csv places the launches under. It had no line at all.
  c.roofs.clear();
  const std::string svg = render_roofline_svg({c});
  const size_t memory = svg.find("class=\"roof memory\"");
  ASSERT_NE(memory, std::string::npos);
  EXPECT_NE(svg.substr(memory, svg.find('>', memory) - memory).find("x2=\"670.00\""), std::string::npos)
      << svg.substr(memory, 200);
}

// A device with CUPTI's DRAM bandwidth only and no point drawn: the slope is inside the frame
// (pixels 50..490 of y), where the default axes put it thousands of pixels above it.
TEST(SvgRender, ADramOnlyChartWithoutPointsShowsItsSlope) {
  RooflineChart c;
  c.title = "device 0";
  c.dram_bytes_per_s = 2e12;
  c.notes = {"1 kernel group(s) without", "counters not drawn"};
  const std::string svg = render_roofline_svg({c});
  const size_t at = svg.find("class=\"roof memory\"");
  ASSERT_NE(at, std::string::npos) << svg;
  const std::string line = svg.substr(at, svg.find('>', at) - at);
  auto attr = [&](const std::string& name) {
    const size_t p = line.find(name + "=\"");
    return std::stod(line.substr(p + name.size() + 2));
  };
  for (const char* y : {"y1", "y2"}) {
    EXPECT_GE(attr(y), 50.0 - 0.01) << line;
    EXPECT_LE(attr(y), 490.0 + 0.01) << line;
  }
}

// Tooltips give an intensity to three significant digits: 1.47e-3 FLOP/B read "AI 0.00".
// Names holding U+FFFE or U+FFFF (valid UTF-8, but no XML 1.0 characters) become U+FFFD.
TEST(SvgRender, SmallIntensitiesAndXmlNonCharacters) {
  RooflineChart c;
  c.title = "device \xEF\xBF\xBE";
  c.dram_bytes_per_s = 1e12;
  c.roofs = {{"FP32", 1e13}};
  c.points = {{"k\xEF\xBF\xBE\xEF\xBF\xBF", "forward", 0.00147, 1e9, 2000}, {"j", "forward", 5, 1e12, 10}};
  const std::string svg = render_roofline_svg({c});
  EXPECT_NE(svg.find("AI 0.00147 FLOP/B"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("\xEF\xBF\xBE"), std::string::npos);
  EXPECT_EQ(svg.find("\xEF\xBF\xBF"), std::string::npos);
  EXPECT_NE(svg.find("k\xEF\xBF\xBD\xEF\xBF\xBD ["), std::string::npos);
  EXPECT_NE(svg.find("device \xEF\xBF\xBD"), std::string::npos);
}

// Charts stack down the page, each in its own band of 560 px with its own clip path.
TEST(SvgRender, ChartsStackDownThePage) {
  RooflineChart c;
  c.dram_bytes_per_s = 1e12;
  c.roofs = {{"FP32", 1e13}};
  c.points = {{"k", "forward", 1, 1e11, 10}};
  c.title = "first";
  RooflineChart d = c;
  d.title = "second";
  const std::string svg = render_roofline_svg({c, d});
  EXPECT_NE(svg.find(" height=\"1120\" viewBox=\"0 0 900 1120\""), std::string::npos);
  EXPECT_NE(svg.find("<text class=\"title\" x=\"90\" y=\"25.00\" font-size=\"15\" font-weight=\"bold\">first</text>"),
            std::string::npos);
  EXPECT_NE(svg.find("<text class=\"title\" x=\"90\" y=\"585.00\" font-size=\"15\" font-weight=\"bold\">second</text>"),
            std::string::npos);
  const size_t second = svg.find("data-index=\"1\"");
  ASSERT_NE(second, std::string::npos);
  EXPECT_NE(svg.find("<clipPath id=\"plot-1\">", second), std::string::npos);
  EXPECT_NE(svg.find("clip-path=\"url(#plot-1)\"", second), std::string::npos);
  EXPECT_EQ(svg.find("url(#plot-0)", second), std::string::npos);
  // The second frame's top is 560 px below the first's.
  const size_t first = svg.find("data-index=\"0\"");
  EXPECT_NEAR(attribute(svg.substr(second), "<rect", "y"), attribute(svg.substr(first), "<rect", "y") + 560, 0.01);
}

// Without points the roofs alone decide the axes, however many decades apart they are.
TEST(SvgRender, WithoutPointsTheRoofsDecideTheAxes) {
  RooflineChart c;
  c.title = "device 0";
  c.roofs = {{"FP32", 1e13}, {"tiny", 1e-20}};
  const std::string svg = render_roofline_svg({c});
  EXPECT_NE(svg.find(">FP32 10 TFLOP/s</text>"), std::string::npos) << svg;
}

// Without a memory roof there is no ridge to stand by: labels go above the roofs' right ends.
TEST(SvgRender, WithoutBandwidthRoofLabelsAreAtTheRightEnd) {
  RooflineChart c;
  c.title = "device 0";
  c.roofs = {{"FP32", 1e13}};
  c.points = {{"k", "forward", 1, 1e12, 10}};
  const std::string svg = render_roofline_svg({c});
  EXPECT_EQ(svg.find("roof-label memory"), std::string::npos);
  LogAxis ax{0.1, 10, 90, 670}, ay{1e11, 1e14, 490, 50};
  EXPECT_NEAR(attribute(svg, "<text class=\"roof-label\"", "x"), ax.px_hi - 4, 0.01);
  EXPECT_NEAR(attribute(svg, "<text class=\"roof-label\"", "y"), ay.map(1e13) - 4, 0.01);  // above the roof
  // The roof runs over the whole axis.
  EXPECT_NEAR(attribute(svg, "<line class=\"roof compute\"", "x1"), ax.px_lo, 0.01);
  EXPECT_NEAR(attribute(svg, "<line class=\"roof compute\"", "x2"), ax.px_hi, 0.01);
}

// Palette colours follow the groups' names, as report.html's phase_colours do, not the order in
// which points are drawn (largest GPU time first).
TEST(SvgRender, PaletteColoursFollowGroupNames) {
  RooflineChart c;
  c.title = "device 0";
  c.dram_bytes_per_s = 1e12;
  c.roofs = {{"FP32", 1e13}};
  c.points = {{"a", "zeta", 1, 1e11, 100}, {"b", "alpha", 1, 1e11, 10}};
  const std::string svg = render_roofline_svg({c});
  std::vector<std::string> seen;
  const std::string alpha = group_colour("alpha", seen), zeta = group_colour("zeta", seen);
  EXPECT_NE(svg.find("data-group=\"alpha\" cx=\"") , std::string::npos);
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("data-group=\"alpha\"[^>]*fill=\"(#[0-9a-f]+)\"")));
  EXPECT_EQ(m[1], alpha);
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("data-group=\"zeta\"[^>]*fill=\"(#[0-9a-f]+)\"")));
  EXPECT_EQ(m[1], zeta);
  EXPECT_NE(alpha, zeta);
}

// Text from the trace is XML-escaped, control characters blanked (tabs kept); the legend lists
// groups by name, an empty one as "(none)"; points are drawn largest first; the fixed phases have
// fixed colours.
TEST(SvgRender, EscapingLegendOrderAndFixedColours) {
  RooflineChart c;
  c.title = "a\"b'c\x01" "d\te";
  c.dram_bytes_per_s = 3.3521e12;  // three significant digits: 3.35 TB/s
  c.roofs = {{"FP32", 67e12}};
  c.points = {{"small", "zeta", 10, 1e12, 10}, {"big", "", 20, 2e12, 1000}, {"mid", "alpha", 5, 1e12, 100}};
  const std::string svg = render_roofline_svg({c});
  EXPECT_NE(svg.find(">a&quot;b&apos;c d\te</text>"), std::string::npos);
  EXPECT_NE(svg.find("<title>DRAM 3.35 TB/s</title>"), std::string::npos);
  const size_t legend = svg.find("<g class=\"legend\">");
  ASSERT_NE(legend, std::string::npos);
  const size_t none = svg.find(">(none)</text>", legend), alpha = svg.find(">alpha</text>", legend),
               zeta = svg.find(">zeta</text>", legend);
  ASSERT_NE(zeta, std::string::npos);
  EXPECT_LT(none, alpha);
  EXPECT_LT(alpha, zeta);
  EXPECT_LT(svg.find(">big ["), svg.find(">mid ["));
  EXPECT_LT(svg.find(">mid ["), svg.find(">small ["));
  std::vector<std::string> seen;
  EXPECT_EQ(group_colour("optimizer", seen), "#2ca02c");
  EXPECT_EQ(group_colour("", seen), "#7f7f7f");
  EXPECT_EQ(group_colour("other", seen), "#7f7f7f");
  EXPECT_TRUE(seen.empty());
  const std::string empty = render_roofline_svg({});
  EXPECT_NE(empty.find(">no device with ceilings or points in this run</text>"), std::string::npos);
  EXPECT_NE(empty.find(" width=\"900\" height=\"560\" viewBox=\"0 0 900 560\""), std::string::npos) << empty;
}

// A point far below the others on one axis alone is counted, not drawn at the edge.
TEST(SvgRender, APointFarBelowInFlopPerSecondOnlyIsCounted) {
  RooflineChart c;
  c.title = "device 0";
  c.points = {{"good", "forward", 10, 1e12, 2000}, {"slow", "forward", 10, 1e-30, 500}};
  const std::string svg = render_roofline_svg({c});
  EXPECT_EQ(count(svg, "class=\"point\""), 1u);
  EXPECT_NE(svg.find(">1 point(s) more than 30 decades</text>"), std::string::npos);
  c.points = {{"good", "forward", 10, 1e12, 2000}, {"sparse", "forward", 1e-30, 1e12, 500}};
  const std::string x = render_roofline_svg({c});
  EXPECT_EQ(count(x, "class=\"point\""), 1u);
  EXPECT_EQ(x.find(">sparse ["), std::string::npos);
  EXPECT_NE(x.find(">1 point(s) more than 30 decades</text>"), std::string::npos);
}

// The DRAM label is left out where its place on the slope lies below the y axis; a roof label
// that does not fit left of its ridge goes to the roof's right end.
TEST(SvgRender, LabelsThatDoNotFitMove) {
  RooflineChart low;
  low.title = "device 0";
  low.dram_bytes_per_s = 1e9;
  low.roofs = {{"FP32", 1e15}};                    // ridge at 1e6 FLOP/B
  low.points = {{"k", "forward", 1, 1e14, 100}};  // y axis from 1e13: the slope at AI 1 is 1e9
  EXPECT_EQ(count(render_roofline_svg({low}), "roof-label memory"), 0u);
  RooflineChart left;
  left.title = "device 0";
  left.dram_bytes_per_s = 1e12;
  left.roofs = {{"FP32", 1e12}};                    // ridge at 1 FLOP/B, 193 px right of the axis
  left.points = {{"k", "forward", 10, 1e11, 100}};  // x axis 0.1 .. 100
  const std::string svg = render_roofline_svg({left});
  EXPECT_NEAR(attribute(svg, "<text class=\"roof-label\"", "x"), 900 - 230 - 4, 0.01);
}

TEST(SvgRender, EqualRoofsAreDrawnOnce) {
  DeviceCeilings c;
  c.fp32.value = 67e12;
  c.tensor[0].value = 67e12;  // FP64 tensor, as on H100
  c.tensor[2].value = 989e12;
  c.tensor[3].value = 989e12;
  c.tensor[5].value = 1979e12;  // INT8: not a FLOP roof
  auto roofs = roofs_of(c);
  ASSERT_EQ(roofs.size(), 2u);
  EXPECT_EQ(roofs[0].label, "FP32, FP64 tensor");
  EXPECT_EQ(roofs[1].label, "FP16 tensor, BF16 tensor");
}

// Every launch of the shipped trace has counters; its copy and layout kernels (0 FLOP) cannot sit
// on log axes. The chart once said they had no counters.
TEST(RunCharts, ZeroFlopGroupsAreNotCalledUncounted) {
  testing::TempDir dir;
  const testing::AnalysisRun run = testing::analyze({testing::shipped_trace()}, dir.path);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const std::string svg = testing::slurp(dir.path / "roofline.svg");
  EXPECT_EQ(svg.find("without"), std::string::npos);
  EXPECT_NE(svg.find(" kernel group(s) with 0 FLOP</text>"), std::string::npos);
  EXPECT_NE(svg.find(" ms GPU time; in kernels.csv)</text>"), std::string::npos);
  EXPECT_GT(count(svg, "class=\"point\""), 10u);
}

TEST(CeilingsCommand, PrintsTheTableAndWritesTheSvg) {
  testing::TempDir dir;
  CeilingsOptions o;
  o.device = "a100 sxm4 80gb";
  o.output_dir = dir.path;
  std::ostringstream out, err;
  ASSERT_EQ(run_ceilings(o, out, err), kExitOk) << err.str();
  const std::string text = out.str();
  // Every ceiling the entry has, in this order; compute ceilings with their ridge point (value /
  // DRAM bandwidth 2.039e12 bytes/s), memory ones without; no FP8 row (A100 has none).
  const std::string src = ",\"datasheet: A100 SXM4 80GB\"\n";
  EXPECT_EQ(text.substr(0, text.find("source: ")),
            "ceilings of A100 SXM4 80GB\n"
            "ceiling,value,unit,ridge_flop_per_byte,source\n"
            "fp64,9.7e+12,FLOP/s,4.757" + src +
            "fp32,1.95e+13,FLOP/s,9.564" + src +
            "fp16,7.8e+13,FLOP/s,38.25" + src +
            "tensor_fp64,1.95e+13,FLOP/s,9.564" + src +
            "tensor_tf32,1.56e+14,FLOP/s,76.51" + src +
            "tensor_fp16,3.12e+14,FLOP/s,153" + src +
            "tensor_bf16,3.12e+14,FLOP/s,153" + src +
            "tensor_int8,6.24e+14,OP/s,306" + src +
            "dram,2.039e+12,bytes/s," + src +
            "l2_size,4.194e+07,bytes," + src);
  EXPECT_NE(text.find("source: datasheet: A100 SXM4 80GB (NVIDIA A100"), std::string::npos);
  const std::string svg = testing::slurp(dir.path / "roofline-A100-SXM4-80GB.svg");
  EXPECT_NE(svg.find("A100 SXM4 80GB: datasheet rooflines"), std::string::npos);
  EXPECT_GE(count(svg, "class=\"roof compute\""), 4u);  // FP64, FP32, FP16, TF32, FP16/BF16 tensor
  EXPECT_EQ(count(svg, "class=\"point\""), 0u);
}

// A user file's entry: listed first, printed whole (only the ceilings it has; a ridge for compute
// roofs only; each source once), its chart written into a folder made for it, named with the
// entry's spaces, slashes and backslashes as dashes.
TEST(CeilingsCommand, AUserEntryPrintedWholeAndItsChartWritten) {
  testing::TempDir dir;
  const auto file = dir.path / "lab.json";
  std::ofstream(file) << R"json({"devices": [{"name": "Lab GPU/rev\\2", "fp64_flop_per_s": 5e11,
      "fp32_flop_per_s": 1e12, "dram_bytes_per_s": 5e11, "l2_bytes_per_s": 2e12, "l2_bytes": 5e7,
      "citation": "lab notes"}]})json";
  CeilingsOptions list;
  list.list = true;
  list.ceilings = file;
  std::ostringstream listed, err;
  ASSERT_EQ(run_ceilings(list, listed, err), kExitOk) << err.str();
  EXPECT_EQ(listed.str().rfind("Lab GPU/rev\\2  (chip any, user file " + file.string() + ")\nH100 SXM5  (chip GH100, datasheet)\n", 0), 0u)
      << listed.str();

  CeilingsOptions o;
  o.ceilings = file;
  o.device = "Lab GPU/rev\\2";
  o.output_dir = dir.path / "charts" / "lab";  // not there yet
  std::ostringstream out;
  ASSERT_EQ(run_ceilings(o, out, err), kExitOk) << err.str();
  const std::string src = "\"user file: " + file.string() + "\"";
  const auto svg_path = o.output_dir / "roofline-Lab-GPU-rev-2.svg";
  EXPECT_EQ(out.str(), "ceilings of Lab GPU/rev\\2\n"
                       "ceiling,value,unit,ridge_flop_per_byte,source\n"
                       "fp64,5e+11,FLOP/s,1," + src + "\n"
                       "fp32,1e+12,FLOP/s,2," + src + "\n"
                       "dram,5e+11,bytes/s,," + src + "\n"
                       "l2_bandwidth,2e+12,bytes/s,," + src + "\n"
                       "l2_size,5e+07,bytes,," + src + "\n"
                       "source: user file: " + file.string() + "\n"
                       "wrote " + svg_path.string() + "\n");
  const std::string svg = testing::slurp(svg_path);
  EXPECT_EQ(count(svg, "class=\"roof memory\""), 1u);
  EXPECT_EQ(count(svg, "class=\"roof compute\""), 2u);

  // The chart cannot be written: a folder where its file goes.
  std::filesystem::create_directories(dir.path / "blocked" / "roofline-Lab-GPU-rev-2.svg");
  o.output_dir = dir.path / "blocked";
  std::ostringstream err2;
  EXPECT_EQ(run_ceilings(o, out, err2), kExitOutputError);
  EXPECT_EQ(err2.str(), "rfanalyze: cannot write " + (o.output_dir / "roofline-Lab-GPU-rev-2.svg").string() + "\n");
}

// rfbench's file, shown as docs/ceilings.md shows it (--device "<GPU> (measured)"): the measured
// values, and the datasheet's for what it did not measure (FP8 tensor, the L2 size), as a trace of
// that GPU gets them. Before, only the measured values were printed, under "datasheet rooflines".
TEST(CeilingsCommand, AMeasuredEntryTakesWhatItLacksFromItsGpusDatasheet) {
  testing::TempDir dir;
  const auto file = dir.path / "h100-ceilings.json";
  std::ofstream(file) << R"json({"devices": [{"name": "NVIDIA H100 80GB HBM3 (measured)", "chip": "GH100",
      "patterns": ["NVIDIA H100 80GB HBM3"], "measured": true, "fp32_flop_per_s": 6.0e13,
      "dram_bytes_per_s": 2.8e12, "citation": "rfbench"}]})json";
  CeilingsOptions o;
  o.ceilings = file;
  o.device = "NVIDIA H100 80GB HBM3 (measured)";
  o.output_dir = dir.path;
  std::ostringstream out, err;
  ASSERT_EQ(run_ceilings(o, out, err), kExitOk) << err.str();
  const std::string text = out.str();
  EXPECT_NE(text.find("fp32,6e+13,FLOP/s,"), std::string::npos) << text;           // measured
  EXPECT_NE(text.find("dram,2.8e+12,bytes/s,,\"measured: "), std::string::npos) << text;
  EXPECT_NE(text.find("tensor_fp8,1.979e+15,FLOP/s,"), std::string::npos) << text;  // datasheet
  EXPECT_NE(text.find("l2_size,5.243e+07,bytes,,\"datasheet: H100 SXM5\""), std::string::npos) << text;
  const std::string svg = testing::slurp(dir.path / "roofline-NVIDIA-H100-80GB-HBM3-(measured).svg");
  EXPECT_NE(svg.find("NVIDIA H100 80GB HBM3 (measured): rooflines"), std::string::npos);
}

TEST(CeilingsCommand, ListAndErrors) {
  std::ostringstream out, err;
  CeilingsOptions list;
  list.list = true;
  EXPECT_EQ(run_ceilings(list, out, err), kExitOk);
  EXPECT_NE(out.str().find("RTX 4090  (chip AD102, datasheet)"), std::string::npos);
  CeilingsOptions none;
  EXPECT_EQ(run_ceilings(none, out, err), kExitBadInput);
  EXPECT_NE(err.str().find("expected --device NAME or --list"), std::string::npos);
  CeilingsOptions unknown;
  unknown.device = "H999";
  std::ostringstream err2;
  EXPECT_EQ(run_ceilings(unknown, out, err2), kExitBadInput);
  EXPECT_EQ(err2.str().rfind("rfanalyze: ", 0), 0u) << err2.str();
  EXPECT_NE(err2.str().find("no such ceilings entry; known entries: \"H100 SXM5\""), std::string::npos);
  // --list with --device: the list, then the entry's table.
  CeilingsOptions both;
  both.list = true;
  both.device = "RTX 4090";
  testing::TempDir dir;
  both.output_dir = dir.path;
  std::ostringstream out3, err3;
  EXPECT_EQ(run_ceilings(both, out3, err3), kExitOk) << err3.str();
  const std::string text = out3.str();
  const size_t listed = text.find("RTX 4090  (chip AD102, datasheet)\n"), table = text.find("ceilings of RTX 4090\n");
  EXPECT_NE(listed, std::string::npos) << text;
  EXPECT_NE(table, std::string::npos) << text;
  EXPECT_LT(listed, table) << text;
  EXPECT_TRUE(std::filesystem::exists(dir.path / "roofline-RTX-4090.svg"));
}

}  // namespace
}  // namespace rf::analyzer
