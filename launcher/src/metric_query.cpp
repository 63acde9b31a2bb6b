// ncu's --query-metrics and --list-chips from the profiler host API (rfprof/launcher/metric_query.h).
#include "rfprof/launcher/metric_query.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

#include "rfprof/analyzer/csv.h"
#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/local_devices.h"

namespace rf::launcher {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

/// The factors CUPTI 13.0 writes run together in a product ("gpc_cyclewarp"), collected from
/// the units of every chip of cuptiProfilerHostGetSupportedChips; a product is split into the
/// longest of these that each part starts with.
constexpr std::array<std::string_view, 44> kFactors = {
    "l2_sector",      "l2_request",  "instruction",     "sysl2_sector",  "sysl2_request",   "byte",
    "gpc_cycle",      "math_op",     "l1tex_wavefront", "l1tex_request", "percent",         "warp",
    "l1data_bank_conflict", "gcc_request", "l1tex_tag", "sys_cycle",     "fbp_cycle",       "dram_cycle",
    "nanosecond",     "idc_request", "branch_target",   "cta",           "thread",          "pcie_cycle",
    "lrc_sector",     "l1data_bank_access", "L2_tag",   "tmem_access",   "fe_op",           "register",
    "workid",         "nvltx_cycle", "nvlrx_cycle",     "cga",           "lrc_req",         "syslrc_sector",
    "sysl2_tag",      "syslrc_request", "kilobyte",     "l1tex_line",    "ctc_cycle",       "mcc_cycle",
    "workload",       "rf_quantum"};

bool is_cycle(std::string_view factor) { return factor == "cycle" || ends_with(factor, "_cycle"); }

/// One factor as ncu prints it.
std::string short_factor(std::string_view f) {
  if (is_cycle(f)) return "cycle";
  if (ends_with(f, "_sector")) return "sector";
  if (ends_with(f, "_request") || ends_with(f, "_req")) return "request";
  if (f == "instruction") return "inst";
  if (f == "nanosecond") return "nsecond";
  if (f == "percent") return "%";
  if (f == "cta") return "block";
  return std::string(f);
}

/// The factors of a product as CUPTI writes it ("gpc_cyclewarp" -> gpc_cycle, warp).
std::vector<std::string_view> factors_of(std::string_view term) {
  std::vector<std::string_view> factors;
  while (!term.empty()) {
    size_t best = 0;
    for (std::string_view f : kFactors)
      if (f.size() > best && term.substr(0, f.size()) == f) best = f.size();
    if (best == 0) best = term.size();  // a factor CUPTI 13.0 did not use: kept whole
    factors.push_back(term.substr(0, best));
    term.remove_prefix(best);
  }
  return factors;
}

/// True for a count summed over cycles, such as "gpc_cyclewarp" (a cycle factor and another).
bool summed_over_cycles(std::string_view term) {
  const auto factors = factors_of(term);
  return std::any_of(factors.begin(), factors.end(), is_cycle) &&
         !std::all_of(factors.begin(), factors.end(), is_cycle);
}

/// A product of factors ("gpc_cycleinstruction") as ncu prints it.
std::string short_product(std::string_view term) {
  const bool summed = summed_over_cycles(term);
  std::string out;
  for (std::string_view f : factors_of(term)) {
    if (summed && is_cycle(f)) continue;  // a count summed over cycles is printed as the count
    out += (out.empty() ? "" : "*") + short_factor(f);
  }
  return out;
}

constexpr std::array<std::string_view, 4> kRollups = {".sum", ".avg", ".min", ".max"};

/// The rollup a suffix starts with (".avg"), or "".
std::string_view rollup_of(std::string_view suffix) {
  for (std::string_view r : kRollups)
    if (suffix.substr(0, r.size()) == r && (suffix.size() == r.size() || suffix[r.size()] == '.')) return r;
  return {};
}

/// `unit` per `denominator`: "byte/second"; cycles per cycle have no unit.
std::string per(const std::string& unit, const std::string& denominator) {
  if (unit.empty()) return "1/" + denominator;
  if (unit == denominator) return "";
  return unit + "/" + denominator;
}

const char* kind_name(collector::MetricKind kind) {
  switch (kind) {
    case collector::MetricKind::kRatio:
      return "Ratio";
    case collector::MetricKind::kThroughput:
      return "Throughput";
    case collector::MetricKind::kCounter:
      break;
  }
  return "Counter";
}

/// A base metric's row and CUPTI's own unit of it.
struct Base {
  MetricRow row;
  std::string cupti_unit;
};

Base base_row(const collector::MetricHost& host, const std::string& base) {
  const collector::MetricProperties p = host.base_properties(base);
  return {{base, kind_name(p.kind), ncu_unit(p.dim_unit), p.description}, p.dim_unit};
}

/// The row of full metric `base + suffix`, from its base's row.
MetricRow full_row(const Base& base, const std::string& suffix) {
  const std::string meaning = suffix_meaning(suffix);
  const MetricRow& b = base.row;
  return {b.name + suffix, b.type, suffix_unit(b.type, base.cupti_unit, suffix),
          meaning.empty() ? b.description : b.description + " (" + meaning + ")"};
}

/// `text` cut into lines of at most `width` characters at spaces (a longer word is cut).
std::vector<std::string> wrap(const std::string& text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && text[i] == ' ') ++i;
    size_t end = text.find(' ', i);
    if (end == std::string::npos) end = text.size();
    std::string word = text.substr(i, end - i);
    i = end;
    while (word.size() > width) {
      if (!line.empty()) lines.push_back(std::move(line));
      line.clear();
      lines.push_back(word.substr(0, width));
      word.erase(0, width);
    }
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string rstrip(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

/// One chip to query: the header its table gets, its CSV label, and the host API's chip name.
struct Target {
  std::string header;
  std::string label;
  std::string chip;
};

}  // namespace

std::string ncu_unit(std::string_view cupti_unit) {
  std::string out;
  size_t start = 0;
  while (true) {
    const size_t slash = cupti_unit.find('/', start);
    const std::string_view term = cupti_unit.substr(start, slash == std::string_view::npos ? slash : slash - start);
    if (start > 0) out += '/';
    out += short_product(term);
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return out;
}

std::string suffix_unit(const std::string& type, std::string_view cupti_unit, std::string_view suffix) {
  const std::string unit = ncu_unit(cupti_unit);
  if (type == "Throughput") return unit;
  if (type == "Ratio") return suffix == ".pct" ? "%" : unit;
  const std::string_view rest = suffix.substr(rollup_of(suffix).size());
  if (rest.substr(0, 4) == ".pct") return "%";
  if (ends_with(rest, ".per_second")) return per(unit, "second");
  if (rest == ".peak_sustained" || rest.substr(0, 10) == ".per_cycle") {
    // A count summed over cycles ("gpc_cyclewarp") per cycle is the count itself (warps).
    if (summed_over_cycles(cupti_unit.substr(0, cupti_unit.find('/')))) return unit;
    return per(unit, "cycle");
  }
  return unit;
}

std::string suffix_meaning(std::string_view suffix) {
  static const std::map<std::string_view, std::string_view> rollups = {
      {".sum", "sum over the unit's instances"},
      {".avg", "average over the unit's instances"},
      {".min", "minimum over the unit's instances"},
      {".max", "maximum over the unit's instances"}};
  static const std::map<std::string_view, std::string_view> rates = {
      {"", ""},
      {".peak_sustained", "peak sustained rate per cycle"},
      {".peak_sustained_active", "peak sustained rate times the unit's active cycles"},
      {".peak_sustained_active.per_second", "peak sustained rate per second of the unit's active cycles"},
      {".peak_sustained_elapsed", "peak sustained rate times the elapsed cycles"},
      {".peak_sustained_elapsed.per_second", "peak sustained rate per second of elapsed cycles"},
      {".per_cycle_active", "per active cycle of the unit"},
      {".per_cycle_elapsed", "per elapsed cycle"},
      {".per_second", "per second"},
      {".pct_of_peak_sustained_active", "percent of the peak sustained rate over the unit's active cycles"},
      {".pct_of_peak_sustained_elapsed", "percent of the peak sustained rate over the elapsed cycles"},
      // ratios
      {".ratio", "as a ratio"},
      {".pct", "as a percentage"},
      {".max_rate", "the largest value the ratio can take"}};
  const std::string_view rollup = rollup_of(suffix);
  const auto rate = rates.find(suffix.substr(rollup.size()));
  if (rate == rates.end()) return "";
  std::string out = rollup.empty() ? std::string() : std::string(rollups.at(rollup));
  if (!rate->second.empty()) out += (out.empty() ? "" : ", ") + std::string(rate->second);
  return out;
}

std::vector<MetricRow> metric_rows(const collector::MetricHost& host, const MetricQuery& query,
                                   std::vector<std::string>& unknown) {
  std::vector<MetricRow> rows;
  auto add_with_suffixes = [&](const std::string& base) {
    const Base b = base_row(host, base);
    for (const auto& s : host.suffixes(base)) rows.push_back(full_row(b, s));
  };
  if (query.metrics.empty()) {
    std::vector<std::string> bases = host.base_metrics();
    std::sort(bases.begin(), bases.end());
    for (const auto& b : bases) {
      if (query.mode == "all")
        add_with_suffixes(b);
      else
        rows.push_back(base_row(host, b).row);
    }
    return rows;
  }
  const std::set<std::string> names(query.metrics.begin(), query.metrics.end());
  for (const auto& n : names) {
    if (!host.suffixes(n).empty()) {
      add_with_suffixes(n);
    } else if (host.is_valid(n)) {
      const auto [base, suffix] = collector::split_metric_name(n);
      rows.push_back(full_row(base_row(host, base), suffix));
    } else {
      unknown.push_back(n);
    }
  }
  return rows;
}

void write_metric_table(std::ostream& out, const std::string& header, const std::vector<MetricRow>& rows) {
  constexpr size_t kType = 15, kDescription = 70;
  size_t name_width = 75, unit_width = 15;
  for (const auto& r : rows) {
    name_width = std::max(name_width, r.name.size());
    unit_width = std::max(unit_width, r.unit.size());
  }
  const std::string rule = std::string(name_width, '-') + " " + std::string(kType, '-') + " " +
                           std::string(unit_width, '-') + " " + std::string(kDescription, '-');
  out << header << "\n" << rule << "\n"
      << pad("Metric Name", name_width) << " " << pad("Metric Type", kType) << " " << pad("Metric Unit", unit_width)
      << " Metric Description\n"
      << rule << "\n";
  const std::string indent(name_width + kType + unit_width + 3, ' ');
  for (const auto& r : rows) {
    const auto lines = wrap(r.description, kDescription);
    out << rstrip(pad(r.name, name_width) + " " + pad(r.type, kType) + " " + pad(r.unit, unit_width) + " " + lines[0])
        << "\n";
    for (size_t i = 1; i < lines.size(); ++i) out << indent << lines[i] << "\n";
  }
}

void write_metric_csv(std::ostream& out, const std::vector<std::string>& labels,
                      const std::vector<std::vector<MetricRow>>& per_chip) {
  std::vector<std::string> header = {"Metric name", "Metric type", "Metric unit", "Metric description"};
  header.insert(header.end(), labels.begin(), labels.end());
  analyzer::write_ncu_csv_row(out, header);
  std::map<std::string, std::pair<const MetricRow*, std::vector<bool>>> table;  // sorted by name
  for (size_t c = 0; c < per_chip.size(); ++c)
    for (const auto& r : per_chip[c]) {
      auto& entry = table[r.name];
      if (!entry.first) entry = {&r, std::vector<bool>(per_chip.size(), false)};
      entry.second[c] = true;
    }
  for (const auto& [name, entry] : table) {
    std::vector<std::string> fields = {name, entry.first->type, entry.first->unit, entry.first->description};
    for (bool has : entry.second) fields.emplace_back(has ? "1" : "");
    analyzer::write_ncu_csv_row(out, fields);
  }
}

std::string chip_list(const std::vector<std::string>& chips) {
  std::vector<std::string> names;
  for (const auto& c : chips) names.push_back(lower(c));
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

int run_metric_query(const MetricQuery& query, std::ostream& out, std::ostream& err) {
  std::vector<Target> targets;
  try {
    if (!query.chips.empty()) {
      const auto supported = collector::MetricHost::supported_chips();
      for (const auto& typed : query.chips) {
        const auto found = std::find_if(supported.begin(), supported.end(),
                                        [&](const std::string& c) { return lower(c) == lower(typed); });
        if (found == supported.end()) {
          err << "rfprof: --chips " << typed << ": not a chip CUPTI knows (rfprof --list-chips lists them)\n";
          return 2;
        }
        if (std::none_of(targets.begin(), targets.end(), [&](const Target& t) { return t.chip == *found; }))
          targets.push_back({"Chip " + typed, typed, *found});
      }
      std::sort(targets.begin(), targets.end(),
                [](const Target& a, const Target& b) { return lower(a.chip) < lower(b.chip); });
    } else {
      const auto devices = collector::local_devices();
      if (devices.empty()) {
        err << "rfprof: --query-metrics: the driver reports no CUDA device; name the chips with --chips "
               "(rfprof --list-chips lists them)\n";
        return 2;
      }
      for (uint32_t ordinal : query.devices)
        if (ordinal >= devices.size()) {
          err << "rfprof: --devices " << ordinal << ": no such CUDA device (this machine has " << devices.size()
              << ", 0 to " << devices.size() - 1 << ")\n";
          return 2;
        }
      for (const auto& d : devices) {
        if (!query.devices.empty() &&
            std::find(query.devices.begin(), query.devices.end(), d.ordinal) == query.devices.end())
          continue;
        if (query.csv && std::any_of(targets.begin(), targets.end(), [&](const Target& t) { return t.chip == d.chip; }))
          continue;  // one column per chip
        targets.push_back({"Device " + d.name + " (" + d.chip + ")", d.chip, d.chip});
      }
    }
  } catch (const collector::HostApiError& e) {
    err << e.what() << "; name the chips with --chips (rfprof --list-chips lists them)\n";
    return 2;
  }

  std::vector<std::vector<MetricRow>> per_chip;
  std::map<std::string, std::vector<std::string>> unknown_on;  // --metrics name -> chips lacking it
  std::string closest;  // for each name no chip knows: the first chip's closest names
  try {
    for (const auto& t : targets) {
      const collector::MetricHost host(t.chip);
      std::vector<std::string> unknown;
      per_chip.push_back(metric_rows(host, query, unknown));
      for (const auto& n : unknown) unknown_on[n].push_back(lower(t.chip));
    }
    const collector::MetricHost first(targets.front().chip);
    for (const auto& [name, chips] : unknown_on) {
      if (chips.size() != targets.size()) continue;
      std::string names;
      for (const auto& c : first.close_names(name, 3)) names += (names.empty() ? "" : ", ") + c;
      if (!names.empty()) closest += "rfprof:   closest to " + name + " on " + lower(first.chip()) + ": " + names + "\n";
    }
  } catch (const std::exception& e) {
    err << e.what() << "\n";
    return 2;
  }

  if (query.csv) {
    std::vector<std::string> labels;
    for (const auto& t : targets) labels.push_back(t.label);
    write_metric_csv(out, labels, per_chip);
  } else {
    for (size_t i = 0; i < targets.size(); ++i) {
      if (i) out << "\n";
      write_metric_table(out, targets[i].header, per_chip[i]);
    }
  }
  if (query.mode == "base" && query.metrics.empty() && !query.quiet)
    err << "rfprof: note: these are base names; a metric to collect adds a suffix (.sum, .avg, ...): "
           "rfprof --query-metrics-mode suffix --metrics NAME lists a base name's full names\n";
  int status = 0;
  for (const auto& [name, chips] : unknown_on) {
    if (chips.size() == targets.size()) {
      err << "rfprof: --metrics " << name << ": neither a base nor a full metric name on " << chip_list(chips)
          << "\n";
      status = 2;
    } else if (!query.quiet) {
      err << "rfprof: note: --metrics " << name << ": not a metric of " << chip_list(chips) << "\n";
    }
  }
  if (status) err << closest;
  return status;
}

}  // namespace rf::launcher
