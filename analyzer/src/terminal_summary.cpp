// rfanalyze's stdout summary and kernel-name folding (rfprof/analyzer/terminal_summary.h).
#include "rfprof/analyzer/terminal_summary.h"

#include "rfprof/analyzer/si.h"
#include "rfprof/analyzer/utf8.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace rf::analyzer {
namespace {

constexpr std::string_view kAnonymous = "(anonymous namespace)";

bool opens(char c) { return c == '<' || c == '('; }
/// Whether name[i] closes a bracket: '>' or ')', but not the '>' of an arrow ("decltype(p->x)").
bool closes(std::string_view name, size_t i) {
  const char c = name[i];
  return c == ')' || (c == '>' && !(i > 0 && name[i - 1] == '-'));
}

/// `name` with the outermost parameter list and template arguments deeper than `keep` folded;
/// nullopt when its brackets do not balance.
std::optional<std::string> fold(std::string_view name, int keep) {
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < name.size(); ++i) {
    if (name.substr(i, kAnonymous.size()) == kAnonymous) {
      out += kAnonymous;
      i += kAnonymous.size() - 1;
      continue;
    }
    const char c = name[i];
    // Inside template arguments a '(' opens a function's parameters only after a name
    // ("impl<float>(at::TensorIteratorBase&)", "lambda(float)"); otherwise it is a cast such as
    // "(cudnnKernelDataType_t)0", which stays.
    const bool cast = c == '(' && depth > 0 && (i == 0 || !(std::isalnum(static_cast<unsigned char>(name[i - 1])) ||
                                                          name[i - 1] == '_' || name[i - 1] == '>'));
    if (opens(c) && !cast && ((c == '(' && depth == 0) || depth >= keep)) {
      int nest = 0;
      size_t j = i;
      for (; j < name.size(); ++j) {
        if (opens(name[j])) ++nest;
        else if (closes(name, j) && --nest == 0) break;
      }
      if (j >= name.size()) return std::nullopt;
      out += c;
      out += "…";
      out += name[j];
      i = j;
    } else {
      if (opens(c)) ++depth;
      else if (closes(name, i) && depth > 0) --depth;
      out += c;
    }
  }
  return out;
}

/// Characters as a terminal counts them: UTF-8 continuation bytes do not count.
size_t width(std::string_view s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::optional<double> number(const nlohmann::ordered_json& o, const char* key) {
  if (!o.is_object()) return std::nullopt;
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

/// Four significant digits with an SI prefix, "-" when missing.
std::string si(std::optional<double> v, const char* unit) { return v ? format_si(*v, unit, 4) : "-"; }

std::string fixed(std::optional<double> v, const char* fmt) {
  if (!v) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, fmt, *v);
  return buf;
}

std::string ms(std::optional<double> ns) { return ns ? fixed(*ns / 1e6, "%.3f ms") : "-"; }

/// A row of right-aligned cells of the given widths, then `last` left-aligned.
std::string row(const std::vector<std::pair<std::string, size_t>>& cells, const std::string& last) {
  std::string line;
  for (const auto& [text, w] : cells) {
    const size_t n = width(text);
    line += std::string(n < w ? w - n : 0, ' ') + text + "  ";
  }
  return line + last + "\n";
}

}  // namespace

std::string fold_kernel_name(std::string_view name, size_t max_chars) {
  if (width(name) <= max_chars) return std::string(name);
  std::optional<std::string> folded;
  for (int keep : {2, 1, 0}) {
    folded = fold(name, keep);
    if (!folded) return std::string(name);
    if (width(*folded) <= max_chars) break;
  }
  return folded->size() < name.size() ? *folded : std::string(name);
}

std::string uncounted_tensor_work_line(const nlohmann::ordered_json& entry) {
  const std::optional<double> launches = number(entry, "launches");
  if (!launches) return {};
  std::string line = "rfanalyze: warning: " + fixed(launches, "%.0f") + (*launches == 1 ? " launch" : " launches");
  if (const auto share = number(entry, "share_of_gpu_time"))
    line += " (" + fixed(100 * *share, "%.1f%%") + " of the GPU time)";
  line += " ran tensor-core instructions that the collected metrics do not count as FLOP";
  const auto kernels = entry.find("kernels");
  if (kernels != entry.end() && kernels->is_array() && !kernels->empty() && kernels->front().is_string())
    line += " (e.g. " + printable(fold_kernel_name(kernels->front().get<std::string>())) + ")";
  return line + ": their FLOP/s and roofline points leave tensor-core work out; collect with rfprof --set "
                "roofline-tensor to count it\n";
}

void print_terminal_summary(std::ostream& out, const nlohmann::ordered_json& data,
                            const std::filesystem::path& output_dir, size_t top,
                            const std::set<std::string>& skipped) {
  using json = nlohmann::ordered_json;
  const json empty = json::object();
  auto field = [&](const json& o, const char* key) -> const json& {
    if (!o.is_object()) return empty;
    auto it = o.find(key);
    return it == o.end() ? empty : *it;
  };
  const json& totals = field(data, "totals");
  const json& traces = field(data, "traces");
  const std::optional<double> total_ns = number(totals, "duration_ns");
  const double total = total_ns.value_or(0.0);
  auto share = [total](std::optional<double> ns) -> std::string {
    if (!ns.has_value() || total <= 0) return "-";
    return fixed(100 * ns.value_or(0.0) / total, "%.1f%%");
  };
  out << "rfanalyze: " << (traces.is_array() ? traces.size() : 0) << " trace(s), "
      << fixed(number(totals, "launches"), "%.0f") << " launches, " << ms(total_ns) << " GPU time, "
      << (number(totals, "flop_per_s") ? si(number(totals, "flop_per_s"), "FLOP/s") : "- FLOP/s") << ", "
      << fixed(number(totals, "arithmetic_intensity"), "%.3g") << " FLOP/byte (DRAM)";
  // The bound shares need launches with counters on a device with ceilings (report.html too
  // leaves them out otherwise: a timing trace has none).
  const json& by_bound = field(totals, "by_bound");
  const double bounded = number(field(by_bound, "memory"), "launches").value_or(0) +
                         number(field(by_bound, "compute"), "launches").value_or(0);
  if (bounded > 0 && total_ns && *total_ns > 0)
    out << "; " << share(number(field(by_bound, "memory"), "duration_ns")) << " of the GPU time in memory-bound "
        << "kernels, " << share(number(field(by_bound, "compute"), "duration_ns")) << " compute-bound";
  out << "\n";

  const std::vector<size_t> w = {9, 12, 16, 10};
  auto columns = [&](const std::string& a, const std::string& b, const std::string& c, const std::string& d) {
    return std::vector<std::pair<std::string, size_t>>{{a, w[0]}, {b, w[1]}, {c, w[2]}, {d, w[3]}};
  };
  const json& phases = field(data, "phases");
  if (phases.is_array() && !phases.empty()) {
    out << "\n" << row(columns("launches", "GPU time", "FLOP/s", "FLOP/byte"), "phase");
    for (const json& p : phases)
      out << row(columns(fixed(number(p, "launches"), "%.0f"), ms(number(p, "duration_ns")),
                         si(number(p, "flop_per_s"), "FLOP/s"), fixed(number(p, "arithmetic_intensity"), "%.3g")),
                 field(p, "phase").is_string() ? printable(field(p, "phase").get<std::string>()) : "-");
  }

  // Kernels summed over phases, ranges and devices, as report.html's "Top kernels" table.
  struct Sum {
    double launches = 0, ns = 0, flop = 0, bytes = 0;
    double rate_flop = 0, rate_ns = 0;       // FLOP and time of the launches with both (FLOP/s)
    bool has_ns = false, has_flop = false, has_bytes = false;  // ns: a point with a duration (else "-")
    double roof_weighted = 0, roof_ns = 0;   // roof fractions weighted by GPU time
    std::map<std::string, double> bound_ns;  // GPU time per bound
  };
  std::map<std::string, Sum> kernels;
  const json& points = field(data, "points");
  if (points.is_array())
    for (const json& p : points) {
      if (!field(p, "kernel").is_string()) continue;
      Sum& s = kernels[field(p, "kernel").get<std::string>()];
      s.launches += number(p, "launches").value_or(0);
      if (auto ns = number(p, "duration_ns")) s.ns += *ns, s.has_ns = true;
      if (auto f = number(p, "flop")) s.flop += *f, s.has_flop = true;
      if (auto f = number(p, "rate_flop")) s.rate_flop += *f, s.rate_ns += number(p, "rate_ns").value_or(0);
      if (auto b = number(p, "dram_bytes")) s.bytes += *b, s.has_bytes = true;
      const double ns = number(p, "duration_ns").value_or(0);
      // Weighted by the GPU time the fraction is over: the launches with FLOP and a duration.
      if (auto f = number(p, "roof_fraction")) {
        const double rate_ns = number(p, "rate_ns").value_or(0);
        s.roof_weighted += *f * rate_ns, s.roof_ns += rate_ns;
      }
      if (field(p, "bound").is_string()) s.bound_ns[field(p, "bound").get<std::string>()] += ns;
    }
  std::vector<std::pair<std::string, Sum>> sorted(kernels.begin(), kernels.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.ns > b.second.ns; });
  if (sorted.size() > top) sorted.resize(top);
  if (!sorted.empty()) {
    out << "\ntop " << sorted.size() << " kernels by GPU time\n"
        << row({{"time", 6}, {"GPU time", 10}, {"launches", 8}, {"FLOP/s", 14}, {"FLOP/byte", 9}, {"bound", 7},
                {"of roof", 7}},
               "kernel");
    for (const auto& [name, s] : sorted) {
      std::optional<double> flop_per_s, ai;
      // Over the launches with FLOP and a duration, as kernels.csv: not all FLOP over all time.
      if (s.rate_ns > 0) flop_per_s = s.rate_flop / (s.rate_ns * 1e-9);
      if (s.has_flop && s.has_bytes && s.bytes > 0) ai = s.flop / s.bytes;
      std::optional<double> of_roof;
      if (s.roof_ns > 0) of_roof = 100 * s.roof_weighted / s.roof_ns;
      std::string bound = "-";
      double most = -1;
      for (const auto& [b, ns] : s.bound_ns)
        if (ns > most) bound = printable(b), most = ns;
      const std::optional<double> ns = s.has_ns ? std::optional<double>(s.ns) : std::nullopt;
      out << row({{share(ns), 6},
                  {ms(ns), 10},
                  {fixed(s.launches, "%.0f"), 8},
                  {si(flop_per_s, "FLOP/s"), 14},
                  {fixed(ai, "%.3g"), 9},
                  {bound, 7},
                  {fixed(of_roof, "%.1f%%"), 7}},
                 printable(fold_kernel_name(name)));
    }
  }
  const std::string dir = output_dir.string();
  out << "\noutputs in " << printable(dir) << "/";
  const char* separator = ": ";
  for (const auto& [name, note] : {std::pair<std::string, std::string_view>{"report.html", " (open it first)"},
                                   {"kernels.csv", ""}, {"ranges.csv", ""}, {"phases.csv", ""},
                                   {"roofline.svg", ""}, {"trace.json", " (ui.perfetto.dev)"},
                                   {"summary.json", ""}}) {
    if (skipped.contains(name)) continue;
    out << separator << name << note;
    separator = ", ";
  }
  out << "\n";
}

}  // namespace rf::analyzer
