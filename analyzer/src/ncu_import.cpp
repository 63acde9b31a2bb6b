// ncu raw CSV import (rfprof/analyzer/ncu_import.h).
#include "rfprof/analyzer/ncu_import.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>

#include "rfprof/analyzer/flops.h"

namespace rf::analyzer {
namespace {

constexpr size_t kIdentColumns = 11;  // "ID" .. "CC"

[[noreturn]] void fail(const std::string& where, size_t column, const std::string& what) {
  throw NcuImportError(where + ":" + std::to_string(column) + ": " + what);
}

std::optional<uint32_t> uint_field(const std::string& s);

/// "(256, 1, 1)" or "(1,024, 1, 1)" (thousands separators) -> {256, 1, 1}; nullopt when it is
/// not that shape. The parts are separated by ", " (comma and space), separators have no space.
std::optional<std::array<int32_t, 3>> dims(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return std::nullopt;
  const std::string inner = s.substr(1, s.size() - 2);
  std::array<int32_t, 3> d{};
  size_t start = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t sep = inner.find(", ", start);
    if ((i < 2) != (sep != std::string::npos)) return std::nullopt;
    auto v = uint_field(inner.substr(start, i < 2 ? sep - start : std::string::npos));
    if (!v) return std::nullopt;
    d[static_cast<size_t>(i)] = static_cast<int32_t>(*v);
    start = sep + 2;
  }
  return d;
}

std::optional<uint32_t> uint_field(const std::string& s) {
  std::string t;
  for (char c : s)
    if (c != ',') t += c;
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

}  // namespace

std::vector<std::string> split_csv_record(std::string_view line, const std::string& where) {
  std::vector<std::string> out(1);
  size_t i = 0;
  while (i <= line.size()) {
    if (i < line.size() && line[i] == '"') {
      const size_t open = i++;
      for (;;) {
        if (i >= line.size()) fail(where, open + 1, "unterminated quoted field");
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            out.back() += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        out.back() += line[i++];
      }
      if (i < line.size() && line[i] != ',') fail(where, i + 1, "text after a closing quote");
    } else {
      while (i < line.size() && line[i] != ',') out.back() += line[i++];
    }
    if (i >= line.size()) break;
    ++i;  // the comma
    out.emplace_back();
  }
  return out;
}

std::optional<double> ncu_cell_value(const std::string& cell, const std::string& unit, const std::string& where) {
  if (cell.empty() || cell == "n/a" || cell == "N/A") return std::nullopt;
  std::string t;
  for (char c : cell)
    if (c != ',') t += c;
  double v = 0;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) throw NcuImportError(where + ": \"" + cell + "\" is not a number");
  static const std::map<std::string, double> scale = {
      {"", 1},          {"byte", 1},       {"Kbyte", 1e3},    {"Mbyte", 1e6},   {"Gbyte", 1e9},
      {"Tbyte", 1e12},  {"nsecond", 1},    {"usecond", 1e3},  {"msecond", 1e6}, {"second", 1e9},
      {"ns", 1},        {"us", 1e3},       {"ms", 1e6},       {"s", 1e9},  // ncu 2025.3 (seen on an H100)
      {"inst", 1},      {"Kinst", 1e3},    {"Minst", 1e6},    {"Ginst", 1e9},   {"sector", 1},
      {"Ksector", 1e3}, {"Msector", 1e6},  {"cycle", 1},      {"Kcycle", 1e3},  {"Mcycle", 1e6},
      {"Gcycle", 1e9},  {"%", 1},          {"math_op", 1},    {"Kmath_op", 1e3}, {"Mmath_op", 1e6},
      {"Gmath_op", 1e9}};
  auto it = scale.find(unit);
  if (it == scale.end()) throw NcuImportError(where + ": unit \"" + unit + "\" is not known (expected base or K/M/G units of byte, second, inst, sector, cycle)");
  return v * it->second;
}

NcuImport read_ncu_csv(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw NcuImportError(path.string() + ":0:0: cannot be opened");
  NcuImport out;
  std::vector<std::string> units;
  std::string line;
  size_t lineno = 0;
  bool have_header = false;
  std::optional<MetricLayout> layout;
  std::optional<size_t> time_col, name_col;
  while (std::getline(in, line)) {
    ++lineno;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string where = path.string() + ":" + std::to_string(lineno);
    if (!have_header) {
      if (line.rfind("\"ID\",", 0) != 0) continue;  // ==PROF== lines and application output before it
      auto h = split_csv_record(line, where);
      if (h.size() < kIdentColumns || h[4] != "Kernel Name" || h[10] != "CC")
        throw NcuImportError(where + ":1: not ncu's raw page header (expected \"ID\",...,\"Kernel Name\",...,\"CC\",<metrics>)");
      out.metric_names.assign(h.begin() + kIdentColumns, h.end());
      units.assign(out.metric_names.size(), "");
      layout.emplace(out.metric_names);
      for (size_t i = 0; i < out.metric_names.size(); ++i) {
        if (out.metric_names[i] == metric::kGpuTime) time_col = i;
        if (out.metric_names[i] == "device__attribute_display_name") name_col = i;
      }
      have_header = true;
      continue;
    }
    if (line.empty() || line[0] != '"') continue;  // ==PROF== and application lines between records
    auto f = split_csv_record(line, where);
    if (f.size() != kIdentColumns + out.metric_names.size())
      throw NcuImportError(where + ":1: " + std::to_string(f.size()) + " fields, expected " +
                           std::to_string(kIdentColumns + out.metric_names.size()) + " as in the header");
    if (f[0].empty()) {  // the units row
      units.assign(f.begin() + kIdentColumns, f.end());
      continue;
    }
    KernelRow r;
    auto id = uint_field(f[0]);
    if (!id) throw NcuImportError(where + ":1: ID \"" + f[0] + "\" is not a number");
    r.id = *id;
    r.pid = uint_field(f[1]).value_or(0);
    r.kernel = f[4];
    r.context = uint_field(f[5]);
    r.stream = uint_field(f[6]);
    r.block = dims(f[7]);
    r.grid = dims(f[8]);
    r.device = uint_field(f[9]);
    std::vector<double> values(out.metric_names.size(), std::numeric_limits<double>::quiet_NaN());
    for (size_t i = 0; i < values.size(); ++i) {
      const std::string cell_where = where + ":" + std::to_string(kIdentColumns + i + 1);
      try {
        if (auto v = ncu_cell_value(f[kIdentColumns + i], units[i], cell_where)) values[i] = *v;
      } catch (const NcuImportError&) {
        // ncu's raw page also holds text columns (device__attribute_display_name,
        // device__attribute_confidential_computing_mode "No-CC") and units such as "block" or
        // "register/thread": only the metrics that enter a formula must be numbers in known units.
        if (layout->uses(i)) throw;
      }
    }
    if (r.device && !out.devices.count(*r.device)) {
      NcuImport::Device d;
      if (name_col) d.name = f[kIdentColumns + *name_col];
      const std::string& cc = f[10];  // "9.0"
      if (const size_t dot = cc.find('.'); dot != std::string::npos) {
        d.cc_major = static_cast<uint32_t>(uint_field(cc.substr(0, dot)).value_or(0));
        d.cc_minor = static_cast<uint32_t>(uint_field(cc.substr(dot + 1)).value_or(0));
      }
      out.devices.emplace(*r.device, std::move(d));
    }
    r.metrics = layout->evaluate(values);
    // A duration is a finite, non-negative number of ns below 2^63: anything else (a hostile
    // "-5", "inf" or "1e30", which llround cannot represent) leaves the launch untimed.
    if (time_col) {
      const double t = values[*time_col];
      if (std::isfinite(t) && t >= 0 && t < 9.2e18) r.duration_ns = static_cast<uint64_t>(std::llround(t));
    }
    if (out.rows.empty()) {
      out.pid = r.pid;
      out.process_name = f[2];
      out.host_name = f[3];
    }
    out.rows.push_back(std::move(r));
    out.values.push_back(std::move(values));
  }
  if (!have_header)
    throw NcuImportError(path.string() + ":" + std::to_string(lineno) + ":1: no ncu raw CSV header (a line starting with \"ID\"); "
                         "was it written with ncu --csv --page raw?");
  return out;
}

}  // namespace rf::analyzer
