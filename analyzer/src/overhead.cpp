// profiler_overhead.csv rows and summary.json's "profiler_overhead" (overhead.h).
#include "rfprof/analyzer/overhead.h"

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {
namespace {

std::optional<double> mean_ns(const OverheadPhaseTotals& t) {
  if (t.count == 0) return std::nullopt;
  return static_cast<double>(t.total_ns) / static_cast<double>(t.count);
}

}  // namespace

std::vector<std::string> overhead_csv_header() {
  return {"trace", "pid", "phase", "count", "total_ns", "mean_ns", "max_ns", "share_of_traced_time"};
}

void write_overhead_rows(std::ostream& out, const std::string& trace, uint32_t pid,
                         const std::map<std::string, OverheadPhaseTotals>& overhead,
                         std::optional<uint64_t> traced_ns) {
  for (const auto& [phase, t] : overhead) {
    std::optional<double> share;
    if (traced_ns && *traced_ns > 0)
      share = static_cast<double>(t.total_ns) / static_cast<double>(*traced_ns);
    write_csv_row(out, {trace, std::to_string(pid), phase, std::to_string(t.count),
                        std::to_string(t.total_ns), format_optional(mean_ns(t)),
                        std::to_string(t.max_ns), format_optional(share)});
  }
}

nlohmann::ordered_json overhead_json(const std::map<std::string, OverheadPhaseTotals>& overhead,
                                     std::optional<uint64_t> traced_ns) {
  using json = nlohmann::ordered_json;
  json phases = json::object();
  for (const auto& [phase, t] : overhead) {
    auto mean = mean_ns(t);
    phases[phase] = {{"count", t.count},
                     {"total_ns", t.total_ns},
                     {"mean_ns", mean ? json(*mean) : json(nullptr)},
                     {"max_ns", t.max_ns}};
  }
  return {{"traced_ns", traced_ns ? json(*traced_ns) : json(nullptr)}, {"phases", phases}};
}

}  // namespace rf::analyzer
