// roofline.svg rendering (rfprof/analyzer/svg_roofline.h).
#include "rfprof/analyzer/svg_roofline.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>

#include "rfprof/analyzer/si.h"
#include "rfprof/analyzer/utf8.h"

namespace rf::analyzer {
namespace {

constexpr double kWidth = 900, kChartHeight = 560;
constexpr double kLeft = 90, kRight = 230, kTop = 50, kBottom = 70;  // margins; legend on the right
/// Average advance of an 11 px sans-serif character (px), to tell whether a label fits.
constexpr double kCharWidth = 6.2;
/// White outline drawn under a label's glyphs, so that lines and points behind it stay readable.
constexpr const char* kHalo = " stroke=\"white\" stroke-width=\"3\" stroke-linejoin=\"round\" paint-order=\"stroke\"";

std::string xml(const std::string& text) {
  // Names from the trace need not be UTF-8; an SVG that is not is not well-formed XML.
  std::string s = valid_utf8(text);
  // U+FFFE and U+FFFF are valid UTF-8 but no XML 1.0 characters (xmllint: "Char 0xFFFE out of
  // allowed range"; browsers stop drawing there): U+FFFD, as invalid bytes become.
  for (size_t i = 0; i + 2 < s.size(); ++i)
    if (s[i] == '\xEF' && s[i + 1] == '\xBF' && (s[i + 2] == '\xBE' || s[i + 2] == '\xBF')) s[i + 2] = '\xBD';
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') out += ' ';
        else out += c;
    }
  }
  return out;
}

/// `v` with three significant digits ("0.00147", "35.2", "1.2e+03"): an intensity in a tooltip,
/// where num()'s two decimals made 1.47e-3 FLOP/B read "0.00".
std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

/// "67 TFLOP/s", "3.35 TB/s": three significant digits.
std::string si(double v, const char* unit) { return format_si(v, unit, 3); }

/// GPU time in ms with three significant digits ("0.00213 ms"), as the terminal summary's unit:
/// format_si has no prefixes below one, so seconds would read "2.13e-06 s".
std::string milliseconds(double ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", ns * 1e-6);
  return buf;
}

std::string decade_label(double d) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "1e%d", static_cast<int>(std::lround(std::log10(d))));
  return buf;
}

}  // namespace

double LogAxis::map(double v) const {
  double t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
  if (!(t > -kAxisOverflow)) t = -kAxisOverflow;  // also NaN, from v <= 0
  if (t > 1 + kAxisOverflow) t = 1 + kAxisOverflow;
  return px_lo + t * (px_hi - px_lo);
}

bool LogAxis::contains(double v) const {
  return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9);
}

std::vector<double> LogAxis::decades() const {
  std::vector<double> out;
  if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi)) return out;
  const int first = std::max(static_cast<int>(std::ceil(std::log10(lo) - 1e-9)), kMinDecade);
  const int last = std::min(static_cast<int>(std::floor(std::log10(hi) + 1e-9)), kMaxDecade);
  for (int e = first; e <= last; ++e) out.push_back(std::pow(10.0, e));
  return out;
}

double ridge_point(double peak, double bandwidth) { return peak / bandwidth; }

std::vector<double> stack_labels(const std::vector<double>& wanted, double gap, double top) {
  std::vector<size_t> order(wanted.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Lowest on the page (largest y) first; ties keep their input order.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return wanted[a] > wanted[b]; });
  std::vector<double> placed(wanted);
  // Upwards: each label at most at its wanted y and at least `gap` above the one below it.
  for (size_t k = 1; k < order.size(); ++k)
    placed[order[k]] = std::min(wanted[order[k]], placed[order[k - 1]] - gap);
  // Then downwards from `top`, if the stack ran above it.
  if (!order.empty() && placed[order.back()] < top) {
    placed[order.back()] = top;
    for (size_t k = order.size() - 1; k-- > 0;)
      placed[order[k]] = std::max(placed[order[k]], placed[order[k + 1]] + gap);
  }
  return placed;
}

std::pair<double, double> decade_range(const std::vector<double>& values) {
  double lo = 0, hi = 0;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) continue;
    lo = lo == 0 ? v : std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo == 0) return {0.01, 1e4};
  // Integer exponents, clamped: a corrupt counter (a denormal, 1e308) must not give an axis of
  // 0 or infinity, or thousands of decades.
  const int e_hi = std::clamp(static_cast<int>(std::ceil(std::log10(hi))) + 1, kMinDecade + 1, kMaxDecade);
  const int e_lo = std::clamp(static_cast<int>(std::floor(std::log10(lo))) - 1,
                              std::max(e_hi - kMaxAxisDecades, kMinDecade), e_hi - 1);
  return {std::pow(10.0, e_lo), std::pow(10.0, e_hi)};
}

std::string group_colour(const std::string& group, std::vector<std::string>& seen) {
  if (group == "forward") return "#1f77b4";
  if (group == "backward") return "#d62728";
  if (group == "optimizer") return "#2ca02c";
  if (group == "other" || group.empty()) return "#7f7f7f";
  static const char* palette[] = {"#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#ff7f0e"};
  auto it = std::find(seen.begin(), seen.end(), group);
  size_t i = static_cast<size_t>(it - seen.begin());
  if (it == seen.end()) seen.push_back(group);
  return palette[i % 6];
}

std::string render_roofline_svg(const std::vector<RooflineChart>& charts) {
  std::ostringstream o;
  const double height = kChartHeight * static_cast<double>(std::max<size_t>(charts.size(), 1));
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
    << "\" viewBox=\"0 0 " << kWidth << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  if (charts.empty())
    o << "<text x=\"20\" y=\"40\">no device with ceilings or points in this run</text>\n";
  // Palette colours go to the groups in name order, as report.html's (phase_colours), whatever
  // order the points are drawn in.
  std::vector<std::string> seen, names;
  for (const auto& c : charts)
    for (const auto& p : c.points) names.push_back(p.group);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& g : names) (void)group_colour(g, seen);
  for (size_t ci = 0; ci < charts.size(); ++ci) {
    const RooflineChart& c = charts[ci];
    const double y0 = kChartHeight * static_cast<double>(ci);
    std::vector<double> xs, ys;
    for (const auto& p : c.points) {
      xs.push_back(p.ai);
      ys.push_back(p.flop_per_s);
    }
    const size_t point_values = xs.size();
    for (const auto& r : c.roofs) {
      ys.push_back(r.peak);
      if (c.dram_bytes_per_s) xs.push_back(ridge_point(r.peak, *c.dram_bytes_per_s));
    }
    // Axes cover points and roofs; when together they span too many decades (an absurd ceiling),
    // the points alone decide and the roofs are clipped.
    auto axis_range = [&](std::vector<double>& values, size_t points) {
      auto range = decade_range(values);
      if (points > 0 && std::log10(range.second) - std::log10(range.first) > kMaxAxisDecades - 0.5) {
        values.resize(points);
        range = decade_range(values);
      }
      return range;
    };
    auto [xlo, xhi] = axis_range(xs, point_values);
    // Nothing but the DRAM slope (no point drawn, no compute ceiling): the y axis covers it over
    // the x axis, or the default axes clipped it away entirely.
    if (point_values == 0 && c.roofs.empty() && c.dram_bytes_per_s)
      ys = {*c.dram_bytes_per_s * xlo, *c.dram_bytes_per_s * xhi};
    auto [ylo, yhi] = axis_range(ys, point_values);
    LogAxis ax{xlo, xhi, kLeft, kWidth - kRight};
    LogAxis ay{ylo, yhi, y0 + kChartHeight - kBottom, y0 + kTop};
    o << "<g class=\"chart\" data-index=\"" << ci << "\">\n"
      << "<text class=\"title\" x=\"" << kLeft << "\" y=\"" << num(y0 + 25) << "\" font-size=\"15\" font-weight=\"bold\">"
      << xml(c.title) << "</text>\n";
    // Frame, grid and decade labels.
    o << "<rect x=\"" << num(ax.px_lo) << "\" y=\"" << num(ay.px_hi) << "\" width=\"" << num(ax.px_hi - ax.px_lo)
      << "\" height=\"" << num(ay.px_lo - ay.px_hi) << "\" fill=\"none\" stroke=\"black\"/>\n";
    for (double d : ax.decades())
      o << "<line class=\"grid\" x1=\"" << num(ax.map(d)) << "\" y1=\"" << num(ay.px_lo) << "\" x2=\"" << num(ax.map(d))
        << "\" y2=\"" << num(ay.px_hi) << "\" stroke=\"#ddd\"/><text x=\"" << num(ax.map(d)) << "\" y=\""
        << num(ay.px_lo + 16) << "\" text-anchor=\"middle\">" << decade_label(d) << "</text>\n";
    for (double d : ay.decades())
      o << "<line class=\"grid\" x1=\"" << num(ax.px_lo) << "\" y1=\"" << num(ay.map(d)) << "\" x2=\"" << num(ax.px_hi)
        << "\" y2=\"" << num(ay.map(d)) << "\" stroke=\"#ddd\"/><text x=\"" << num(ax.px_lo - 6) << "\" y=\""
        << num(ay.map(d) + 4) << "\" text-anchor=\"end\">" << decade_label(d) << "</text>\n";
    o << "<text class=\"xlabel\" x=\"" << num((ax.px_lo + ax.px_hi) / 2) << "\" y=\"" << num(ay.px_lo + 40)
      << "\" text-anchor=\"middle\">Arithmetic intensity [FLOP/byte, DRAM]</text>\n"
      << "<text class=\"ylabel\" transform=\"translate(" << num(kLeft - 60) << "," << num((ay.px_lo + ay.px_hi) / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">Performance [FLOP/s]</text>\n";
    // Roofs and points are clipped to the frame.
    o << "<clipPath id=\"plot-" << ci << "\"><rect x=\"" << num(ax.px_lo) << "\" y=\"" << num(ay.px_hi)
      << "\" width=\"" << num(ax.px_hi - ax.px_lo) << "\" height=\"" << num(ay.px_lo - ay.px_hi)
      << "\"/></clipPath>\n<g class=\"plot\" clip-path=\"url(#plot-" << ci << ")\">\n";
    // Roofs: the DRAM slope up to the highest ridge, each compute roof flat from its ridge on.
    // Their labels are written after the points, so that no point hides them.
    struct RoofLabel {
      std::string text;
      double y;      // wanted baseline (px)
      double x_end;  // where the text ends (px; text-anchor end)
    };
    std::vector<RoofLabel> roof_labels;
    std::optional<std::string> memory_label;
    double top_ridge = 0;
    for (const auto& r : c.roofs)
      if (c.dram_bytes_per_s) top_ridge = std::max(top_ridge, ridge_point(r.peak, *c.dram_bytes_per_s));
    // Without a compute roof (a device no ceilings entry names: CUPTI's DRAM bandwidth only), the
    // slope runs across the chart: it is the roof kernels.csv places those launches under.
    const double slope_end = top_ridge > 0 ? top_ridge : xhi;
    if (c.dram_bytes_per_s) {
      const double x_start = xlo, y_start = xlo * *c.dram_bytes_per_s;
      o << "<line class=\"roof memory\" x1=\"" << num(ax.map(x_start)) << "\" y1=\"" << num(ay.map(y_start))
        << "\" x2=\"" << num(ax.map(slope_end)) << "\" y2=\"" << num(ay.map(slope_end * *c.dram_bytes_per_s))
        << "\" stroke=\"black\" stroke-width=\"2\"><title>DRAM " << xml(si(*c.dram_bytes_per_s, "B/s"))
        << "</title></line>\n";
      // Its label runs along the slope, one decade of intensity in from the left edge, if it ends
      // before the lowest ridge point (whose roof's label is there).
      double low_ridge = slope_end;
      for (const auto& r : c.roofs) low_ridge = std::min(low_ridge, ridge_point(r.peak, *c.dram_bytes_per_s));
      const double lx = xlo * 10, ly = lx * *c.dram_bytes_per_s;
      const double angle = std::atan2(ay.map(ly * 10) - ay.map(ly), ax.map(lx * 10) - ax.map(lx));
      const std::string text = "DRAM " + si(*c.dram_bytes_per_s, "B/s");
      const double reach = kCharWidth * static_cast<double>(text.size()) * std::cos(angle);
      if (ay.contains(ly) && ax.map(lx) + reach < ax.map(low_ridge) - 10)
        memory_label = "<text class=\"roof-label memory\" transform=\"translate(" + num(ax.map(lx)) + "," +
                       num(ay.map(ly) - 5) + ") rotate(" + num(angle * 180 / M_PI) + ")\" font-size=\"11\"" + kHalo +
                       ">" + xml(text) + "</text>\n";
    }
    for (const auto& r : c.roofs) {
      const double ridge = c.dram_bytes_per_s ? ridge_point(r.peak, *c.dram_bytes_per_s) : xlo;
      o << "<line class=\"roof compute\" x1=\"" << num(ax.map(ridge)) << "\" y1=\"" << num(ay.map(r.peak))
        << "\" x2=\"" << num(ax.px_hi) << "\" y2=\"" << num(ay.map(r.peak))
        << "\" stroke=\"black\" stroke-width=\"1.5\"/>\n";
      std::string label = r.label + " " + si(r.peak, "FLOP/s");
      if (c.dram_bytes_per_s) {
        char ridge_txt[48];
        std::snprintf(ridge_txt, sizeof ridge_txt, ", ridge %.3g FLOP/B", ridge);
        label += ridge_txt;
        o << "<circle class=\"ridge\" cx=\"" << num(ax.map(ridge)) << "\" cy=\"" << num(ay.map(r.peak))
          << "\" r=\"3.5\" fill=\"black\"/>\n";
      }
      // A roof the axes left out (an absurd ceiling) is clipped away: no label outside the frame.
      if (!ay.contains(r.peak)) continue;
      // Left of the ridge point, on the roof's line: above the memory slope, where no kernel can
      // be (attainable FLOP/s <= intensity x bandwidth). Where that does not fit, above the
      // roof's right end.
      const double ridge_px = ax.map(ridge) - 7;
      if (c.dram_bytes_per_s && ridge_px - kCharWidth * static_cast<double>(label.size()) > ax.px_lo + 2)
        roof_labels.push_back({label, ay.map(r.peak) + 4, ridge_px});
      else
        roof_labels.push_back({label, ay.map(r.peak) - 4, ax.px_hi - 4});
    }
    // Points, largest first so that small ones stay visible on top.
    double max_time = 0;
    for (const auto& p : c.points) max_time = std::max(max_time, p.time_ns);
    std::vector<const ChartPoint*> order;
    for (const auto& p : c.points) order.push_back(&p);
    std::stable_sort(order.begin(), order.end(), [](auto* a, auto* b) { return a->time_ns > b->time_ns; });
    size_t off_axes = 0;
    for (const ChartPoint* p : order) {
      if (!ax.contains(p->ai) || !ay.contains(p->flop_per_s)) {  // only after the span was clamped
        ++off_axes;
        continue;
      }
      const double radius = 3 + 12 * (max_time > 0 ? std::sqrt(p->time_ns / max_time) : 0);
      o << "<circle class=\"point\" data-group=\"" << xml(p->group) << "\" cx=\"" << num(ax.map(p->ai)) << "\" cy=\""
        << num(ay.map(p->flop_per_s)) << "\" r=\"" << num(radius) << "\" fill=\"" << group_colour(p->group, seen)
        << "\" fill-opacity=\"0.6\" stroke=\"#333\" stroke-width=\"0.5\"><title>"
        << xml(p->label + " [" + p->group + "]: " + si(p->flop_per_s, "FLOP/s") + ", AI " + three_digits(p->ai) +
               " FLOP/B, " + milliseconds(p->time_ns) + " GPU time")
        << "</title></circle>\n";
    }
    o << "</g>\n";
    // Roof labels on top of everything, on a white halo, stacked apart where roofs lie closer
    // than a line of text (FP16 134 and FP32 67 TFLOP/s are 12 px apart on an 11-decade axis).
    std::vector<double> wanted;
    for (const auto& l : roof_labels) wanted.push_back(l.y);
    const std::vector<double> placed = stack_labels(wanted, kRoofLabelGap, ay.px_hi + kRoofLabelGap);
    for (size_t i = 0; i < roof_labels.size(); ++i)
      o << "<text class=\"roof-label\" x=\"" << num(roof_labels[i].x_end) << "\" y=\"" << num(placed[i])
        << "\" text-anchor=\"end\" font-size=\"11\"" << kHalo << ">" << xml(roof_labels[i].text) << "</text>\n";
    if (memory_label) o << *memory_label;
    // Legend: groups, then the meaning of the size.
    std::vector<std::string> groups;
    for (const auto& p : c.points)
      if (std::find(groups.begin(), groups.end(), p.group) == groups.end()) groups.push_back(p.group);
    std::sort(groups.begin(), groups.end());
    double ly = ay.px_hi + 10;
    const double lx = kWidth - kRight + 20;
    o << "<g class=\"legend\"><text x=\"" << lx << "\" y=\"" << num(ly) << "\" font-weight=\"bold\">phase</text>\n";
    for (const auto& g : groups) {
      ly += 18;
      o << "<circle class=\"legend-entry\" cx=\"" << lx + 6 << "\" cy=\"" << num(ly - 4) << "\" r=\"6\" fill=\""
        << group_colour(g, seen) << "\" fill-opacity=\"0.6\"/><text x=\"" << lx + 18 << "\" y=\"" << num(ly) << "\">"
        << xml(g.empty() ? "(none)" : g) << "</text>\n";
    }
    ly += 26;
    o << "<text x=\"" << lx << "\" y=\"" << num(ly) << "\" font-size=\"11\">point area: GPU time</text>\n";
    std::vector<std::string> notes = c.notes;
    if (off_axes > 0) {
      notes.push_back(std::to_string(off_axes) + " point(s) more than " + std::to_string(kMaxAxisDecades) + " decades");
      notes.push_back("below the others not drawn");
    }
    for (const auto& n : notes) {
      ly += 16;
      o << "<text class=\"note\" x=\"" << lx << "\" y=\"" << num(ly) << "\" font-size=\"11\">" << xml(n) << "</text>\n";
    }
    o << "</g>\n</g>\n";
  }
  o << "</svg>\n";
  return o.str();
}

}  // namespace rf::analyzer
