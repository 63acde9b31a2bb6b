// ncu CSV pages from rfprof traces (rfprof/analyzer/ncu_csv.h).
#include "rfprof/analyzer/ncu_csv.h"

#include <algorithm>
#include <array>
#include <functional>
#include <cmath>
#include <map>
#include <regex>
#include <stdexcept>

#include "rfprof/analyzer/csv.h"
#include "rfprof/analyzer/phases.h"
#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {
namespace {

/// The section ncu names metrics given with --metrics under.
constexpr const char* kNcuSection = "Command line profiler metrics";
constexpr const char* kGpuTimeDuration = "gpu__time_duration";

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string dim3(const std::optional<std::array<int32_t, 3>>& d) {
  if (!d) return "";
  return "(" + std::to_string((*d)[0]) + ", " + std::to_string((*d)[1]) + ", " + std::to_string((*d)[2]) + ")";
}

std::string with_separators(const std::string& digits) {
  std::string out;
  const size_t n = digits.size();
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    if ((n - 1 - i) % 3 == 0 && i + 1 < n) out += ',';
  }
  return out;
}

/// The function name ncu's -k matches by default: the demangled name up to its parameter list.
std::string function_name(const std::string& demangled) {
  const size_t paren = demangled.find('(');
  return paren == std::string::npos ? demangled : demangled.substr(0, paren);
}

}  // namespace

std::string ncu_number(double value) {
  if (!std::isfinite(value)) return "";
  std::string s = format_number(value);  // shortest round trip, integers as integers
  if (s.find('e') != std::string::npos || s.find('E') != std::string::npos) return s;
  std::string sign;
  if (!s.empty() && s[0] == '-') {
    sign = "-";
    s = s.substr(1);
  }
  const size_t dot = s.find('.');
  const std::string integer = dot == std::string::npos ? s : s.substr(0, dot);
  const std::string fraction = dot == std::string::npos ? "" : s.substr(dot);
  return sign + with_separators(integer) + fraction;
}

std::string ncu_unit(const std::string& m) {
  auto has = [&](const char* x) { return m.find(x) != std::string::npos; };
  if (has("__time_duration")) return "ns";  // ncu 2025.3 (CUDA 13), seen on an H100; older ncu: "nsecond"
  if (has("bytes")) return "byte";
  if (has("sectors")) return "sector";
  if (has("inst_executed")) return "inst";
  if (has("cycles")) return "cycle";
  return "";
}

namespace {

/// One printed launch: ncu's 11 identification fields (ID ... CC) and its metric values in the
/// metric list's order.
struct PrintedLaunch {
  std::vector<std::string> ident;
  std::vector<std::pair<std::string, double>> values;
  const KernelRow* row = nullptr;
};

/// Pass 1 of every trace (each truncated one said once on `warnings`), the metric names in order of
/// first use into `columns`, then pass 2 with ncu's -k, -s, -c applied: `print` per launch kept.
/// Returns the number printed.
uint64_t for_each_printed_launch(const std::vector<std::filesystem::path>& traces, const NcuFilter& filter,
                                 std::ostream* warnings, const std::string& warning_prefix,
                                 std::vector<std::string>& columns,
                                 const std::function<void(const std::vector<std::string>& columns)>& before,
                                 const std::function<void(const PrintedLaunch&)>& print) {
  std::optional<std::regex> re;
  if (filter.kernel_name && filter.kernel_name->rfind("regex:", 0) == 0)
    re.emplace(filter.kernel_name->substr(6), std::regex::ECMAScript);  // throws std::regex_error
  std::vector<TraceContext> contexts;
  for (const auto& t : traces) {
    contexts.push_back(read_context(t));
    if (contexts.back().truncated && warnings)
      *warnings << warning_prefix << t.string() << " is truncated at byte " << contexts.back().truncated_at
                << " (its process was killed?); printing the launches before it\n";
    for (const auto& [id, cfg] : contexts.back().configs)
      for (const auto& name : cfg.names)
        if (std::find(columns.begin(), columns.end(), name) == columns.end()) columns.push_back(name);
  }
  before(columns);
  uint64_t matched = 0, printed = 0;
  const PhaseMap phases = PhaseMap::defaults();
  for (const auto& ctx : contexts) {
    stream_launches(ctx, phases, [&](const LaunchOutput& l) {
      const KernelRow& r = l.row;
      if (filter.kernel_name) {
        const bool ok = re ? std::regex_search(r.kernel, *re)
                         : filter.name_equals
                             ? filter.name_equals(r.kernel, *filter.kernel_name)
                             : (r.kernel == *filter.kernel_name || function_name(r.kernel) == *filter.kernel_name);
        if (!ok) return;
      }
      if (matched++ < filter.launch_skip) return;
      if (filter.launch_count && printed >= *filter.launch_count) return;
      std::string cc;
      if (r.device)
        if (auto d = ctx.devices.find(*r.device); d != ctx.devices.end())
          cc = std::to_string(d->second.info.cc_major) + "." + std::to_string(d->second.info.cc_minor);
      PrintedLaunch p;
      p.row = &r;
      p.ident = {std::to_string(printed), std::to_string(ctx.pid()), ctx.process_name,
                 ctx.hostname, r.kernel, r.context ? std::to_string(*r.context) : "",
                 r.stream ? std::to_string(*r.stream) : "", dim3(r.block), dim3(r.grid),
                 r.device ? std::to_string(*r.device) : "", cc};
      if (l.metric_names && l.metric_values)
        for (size_t i = 0; i < l.metric_names->size() && i < l.metric_values->size(); ++i)
          p.values.emplace_back((*l.metric_names)[i], (*l.metric_values)[i]);
      print(p);
      ++printed;
    });
  }
  return printed;
}

/// Index of each identification field in PrintedLaunch::ident.
enum Ident { kId, kPid, kProcess, kHost, kKernel, kContext, kStream, kBlock, kGrid, kDevice, kCc };

}  // namespace

uint64_t write_ncu_csv(std::ostream& out, const std::vector<std::filesystem::path>& traces,
                       const std::string& page, const NcuFilter& filter, std::ostream* warnings,
                       const std::string& warning_prefix) {
  if (page != "raw" && page != "details")
    throw std::invalid_argument("--page " + page + ": expected raw or details");
  const std::vector<std::string> ident = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context",
                                          "Stream", "Block Size", "Grid Size", "Device", "CC"};
  auto write_row = [&](const std::vector<std::string>& fields) {
    for (size_t i = 0; i < fields.size(); ++i) out << (i ? "," : "") << quoted(fields[i]);
    out << "\n";
  };
  std::vector<std::string> columns;
  auto header = [&](const std::vector<std::string>& cols) {
    std::vector<std::string> h = ident;
    if (page == "raw") {
      h.insert(h.end(), cols.begin(), cols.end());
      write_row(h);
      std::vector<std::string> units(ident.size(), "");
      for (const auto& c : cols) units.push_back(ncu_unit(c));
      write_row(units);
    } else {
      for (const char* c : {"Section Name", "Metric Name", "Metric Unit", "Metric Value"}) h.push_back(c);
      write_row(h);
    }
  };
  return for_each_printed_launch(traces, filter, warnings, warning_prefix, columns, header, [&](const PrintedLaunch& p) {
    if (page == "raw") {
      std::vector<std::string> row = p.ident;
      for (const auto& c : columns) {
        auto it = std::find_if(p.values.begin(), p.values.end(), [&](const auto& v) { return v.first == c; });
        row.push_back(it == p.values.end() ? "" : ncu_number(it->second));
      }
      write_row(row);
      return;
    }
    for (const auto& [name, v] : p.values) {
      std::vector<std::string> row = p.ident;
      for (const std::string& f : {std::string(kNcuSection), name, ncu_unit(name), ncu_number(v)}) row.push_back(f);
      write_row(row);
    }
  });
}

uint64_t write_ncu_text(std::ostream& out, const std::vector<std::filesystem::path>& traces, const NcuFilter& filter,
                        std::ostream* warnings, const std::string& warning_prefix) {
  std::vector<std::string> columns;
  std::string process;  // "[PID] NAME@HOST" of the launches printed last
  return for_each_printed_launch(
      traces, filter, warnings, warning_prefix, columns, [](const std::vector<std::string>&) {},
      [&](const PrintedLaunch& p) {
        const std::vector<std::string>& f = p.ident;
        const std::string proc = "[" + f[kPid] + "] " + f[kProcess] + "@" + f[kHost];
        if (proc != process) out << proc << "\n";
        process = proc;
        out << "  " << f[kKernel] << " " << f[kGrid] << "x" << f[kBlock] << ", Context " << f[kContext]
            << ", Stream " << f[kStream] << ", Device " << f[kDevice] << ", CC " << f[kCc] << "\n";
        std::vector<std::array<std::string, 3>> rows;
        bool has_duration = false;
        for (const auto& [name, v] : p.values) {
          rows.push_back({name, ncu_unit(name), ncu_number(v)});
          has_duration = has_duration || name.rfind(kGpuTimeDuration, 0) == 0;
        }
        // Timing mode has no counters: the kernel's own duration (CUPTI activity) is the metric.
        if (!has_duration && p.row->duration_ns)
          rows.push_back({std::string(kGpuTimeDuration) + ".sum", ncu_unit(kGpuTimeDuration),
                          ncu_number(static_cast<double>(*p.row->duration_ns))});
        std::array<size_t, 3> w = {std::string("Metric Name").size(), std::string("Metric Unit").size(),
                                   std::string("Metric Value").size()};
        for (const auto& r : rows)
          for (size_t c = 0; c < 3; ++c) w[c] = std::max(w[c], r[c].size());
        const std::string rule = "    " + std::string(w[0], '-') + " " + std::string(w[1], '-') + " " +
                                 std::string(w[2], '-') + "\n";
        auto line = [&](const std::string& name, const std::string& unit, const std::string& value) {
          out << "    " << name << std::string(w[0] - name.size(), ' ') << " " << std::string(w[1] - unit.size(), ' ')
              << unit << " " << std::string(w[2] - value.size(), ' ') << value << "\n";
        };
        out << "    Section: " << kNcuSection << "\n" << rule;
        line("Metric Name", "Metric Unit", "Metric Value");
        out << rule;
        for (const auto& r : rows) line(r[0], r[1], r[2]);
        out << rule << "\n";
      });
}

}  // namespace rf::analyzer
