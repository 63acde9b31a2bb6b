// --metrics checked against the profiler host API (rfprof/launcher/metric_names.h).
#include "rfprof/launcher/metric_names.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

#include "rfprof/collector/host_metrics.h"
#include "rfprof/launcher/ncu_args.h"
#include "args_fail.h"

namespace rf::launcher {
namespace {

/// The host API of each chip, made when first asked (about 10 ms each).
class Chips {
 public:
  Chips() {
    order_.push_back("GH100");
    for (const auto& c : collector::MetricHost::supported_chips())
      if (c != "GH100") order_.push_back(c);
  }
  /// The first chip (in order) on which `valid` holds, or nullopt.
  template <typename F>
  std::optional<std::string> first(F&& valid) {
    for (const auto& chip : order_) {
      const collector::MetricHost* h = host(chip);
      if (h && valid(*h)) return chip;
    }
    return std::nullopt;
  }
  const collector::MetricHost* host(const std::string& chip) {
    auto it = hosts_.find(chip);
    if (it == hosts_.end()) {
      std::unique_ptr<collector::MetricHost> h;
      try {
        h = std::make_unique<collector::MetricHost>(chip);
      } catch (const collector::HostApiError&) {
      }
      it = hosts_.emplace(chip, std::move(h)).first;
    }
    return it->second.get();
  }

 private:
  std::vector<std::string> order_;
  std::map<std::string, std::unique_ptr<collector::MetricHost>> hosts_;
};

bool has_form_prefix(const std::string& name) {
  for (const char* p : {"breakdown:", "group:", "regex:"})
    if (name.rfind(p, 0) == 0) return true;
  return false;
}

}  // namespace

std::vector<std::string> resolve_metric_names(const std::vector<std::string>& names, bool extra_suffixes,
                                              std::vector<std::string>& notes) {
  for (const auto& n : names)
    if (has_form_prefix(n))
      fail("--metrics " + n + ": ncu's breakdown:, group: and regex: forms are not supported; give full metric "
           "names (e.g. dram__bytes_read.sum), or --set (rfprof --list-sets --chip GH100 lists the sets)");
  std::vector<std::string> out;
  try {
    Chips chips;
    for (const auto& n : names) {
      if (chips.first([&](const collector::MetricHost& h) { return h.is_valid(n); })) {
        if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
        continue;
      }
      // A base name: ncu collects it with its extra suffixes (.avg, .min, .max, .sum).
      const auto chip = chips.first([&](const collector::MetricHost& h) { return h.is_valid(n + ".sum"); });
      if (chip && !extra_suffixes)
        fail("--metrics " + n + ": a base metric name, which --disable-extra-suffixes leaves without a suffix; "
             "give the full name, e.g. " + n + ".sum");
      if (chip) {
        std::string added;
        for (const char* suffix : {".sum", ".avg", ".min", ".max"}) {
          const std::string full = n + suffix;
          if (!chips.host(*chip)->is_valid(full)) continue;
          if (std::find(out.begin(), out.end(), full) == out.end()) out.push_back(full);
          added += (added.empty() ? "" : ", ") + full;
        }
        notes.push_back("rfprof: note: --metrics " + n + ": a base name; collecting " + added + " (as ncu does)");
        continue;
      }
      std::string hint;
      if (const collector::MetricHost* gh100 = chips.host("GH100"))
        for (const auto& c : gh100->close_names(n, 3)) hint += (hint.empty() ? "" : ", ") + c;
      fail("--metrics " + n + ": not a metric CUPTI knows on any chip" +
           (hint.empty() ? std::string() : " (closest on GH100: " + hint + ")"));
    }
  } catch (const collector::HostApiError&) {
    return names;  // the host API is unusable here: the collector checks on the device
  }
  return out;
}

}  // namespace rf::launcher
