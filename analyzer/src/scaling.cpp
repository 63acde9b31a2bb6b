// processes.csv rows (rfprof/analyzer/scaling.h).
#include "rfprof/analyzer/scaling.h"

#include <charconv>
#include <limits>
#include <regex>
#include <sstream>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {

std::optional<uint64_t> batch_size_of(const std::string& command_line) {
  std::istringstream in(command_line);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  auto number = [](const std::string& s) -> std::optional<uint64_t> {
    uint64_t v = 0;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || p != s.data() + s.size() || v == 0) return std::nullopt;
    return v;
  };
  for (size_t i = 0; i < words.size(); ++i) {
    for (const char* flag : {"--batch-size", "--batch_size", "--bs", "-b"}) {
      const std::string f = flag;
      if (words[i] == f && i + 1 < words.size()) return number(words[i + 1]);
      if (f.size() > 2 && words[i].rfind(f + "=", 0) == 0) return number(words[i].substr(f.size() + 1));
    }
  }
  return std::nullopt;
}

StepRanges step_ranges(const NvtxIndex& nvtx) {
  static const std::regex step(R"(^(step|iter|iteration)\b)", std::regex::icase);
  StepRanges s;
  for (const auto& r : nvtx.ranges()) {
    if (r.end_ns == std::numeric_limits<uint64_t>::max()) continue;
    const std::string name(r.name);
    if (!std::regex_search(name, step)) continue;
    ++s.count;
    s.wall_ns += r.end_ns - r.start_ns;
  }
  return s;
}

std::optional<double> ProcessRow::samples_per_s() const {
  if (!batch_size || steps.count == 0 || steps.wall_ns == 0) return std::nullopt;
  return static_cast<double>(*batch_size * steps.count) * 1e9 / static_cast<double>(steps.wall_ns);
}

std::vector<std::string> processes_csv_header() {
  return {"trace", "pid", "hostname", "label", "batch_size", "steps", "step_wall_ns", "samples_per_s",
          "launches", "duration_ns", "total_flop", "dram_bytes", "arithmetic_intensity", "flop_per_s"};
}

std::vector<std::string> processes_csv_fields(const ProcessRow& r) {
  const Aggregate& a = r.totals;
  return {r.trace,
          std::to_string(r.pid),
          r.hostname,
          r.label,
          r.batch_size ? std::to_string(*r.batch_size) : "",
          std::to_string(r.steps.count),
          r.steps.count ? std::to_string(r.steps.wall_ns) : "",
          format_optional(r.samples_per_s()),
          std::to_string(a.launches),
          a.timed_launches ? std::to_string(a.duration_ns) : "",
          format_optional(a.total_flop.value()),
          format_optional(a.dram_bytes.value()),
          format_optional(a.arithmetic_intensity()),
          format_optional(a.flop_per_s())};
}

}  // namespace rf::analyzer
