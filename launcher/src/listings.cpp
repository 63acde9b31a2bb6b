// --list-sets, --list-sections and --list-metrics (rfprof/launcher/listings.h).
#include "rfprof/launcher/listings.h"

#include <strings.h>

#include <algorithm>
#include <exception>

#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/local_devices.h"
#include "rfprof/collector/messages.h"
#include "rfprof/collector/metric_set_names.h"
#include "rfprof/collector/metric_sets.h"

namespace rf::launcher {
namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && strncasecmp(a.data(), b.data(), a.size()) == 0;
}

/// Where a set stands among the nested sets (timing < roofline < roofline-tensor < hierarchical).
size_t set_rank(const std::string& set) {
  const auto& order = collector::metric_set_names();
  return static_cast<size_t>(std::find(order.begin(), order.end(), set) - order.begin());
}

/// The chip a listing is for: --chip matched case-insensitively against CUPTI's chips, else this
/// machine's first CUDA device, else GH100 (with a note on `err` unless quiet). Empty after one
/// "rfprof:" line on `err` for a chip CUPTI does not know.
std::string listing_chip(const Listing& listing, std::ostream& err) {
  if (!listing.chip.empty()) {
    for (const auto& c : collector::MetricHost::supported_chips())
      if (same_name(c, listing.chip)) return c;
    err << "rfprof: --chip " << listing.chip << ": not a chip CUPTI knows (rfprof --list-chips lists them)\n";
    return "";
  }
  std::string why;
  try {
    const auto devices = collector::local_devices();
    if (!devices.empty()) return devices.front().chip;
    why = "the driver reports no CUDA device";
  } catch (const std::exception& e) {
    why = collector::detail_of(e);
  }
  if (!listing.quiet)
    err << "rfprof: note: listing for GH100, since no --chip is given and this machine has no CUDA device to ask: "
        << why << "; --chip CHIP lists for another chip\n";
  return "GH100";
}

void write_sets(std::ostream& out, const std::string& chip) {
  collector::MetricHost host(chip);
  for (const auto& name : collector::metric_set_names()) {
    auto plan = collector::plan_metric_set(host, name);
    out << name << ": " << plan.passes << " pass(es), " << plan.metrics.size() << " metric(s) on " << chip << " -- "
        << collector::metric_set_description(name) << "\n";
    for (const auto& m : plan.metrics) out << "    " << m << "\n";
    for (const auto& n : plan.notes) out << "    note: " << n << "\n";
    if (name == "roofline")  // ncu's --set roofline is all of its roofline charts (ncu_args.cpp)
      out << "    note: this set is --section SpeedOfLight_RooflineChart (or RFPROF_METRIC_SET=roofline); "
             "--set roofline means ncu's roofline set, all its roofline charts: hierarchical below\n";
  }
}

}  // namespace

const std::vector<RooflineSection>& roofline_sections() {
  static const std::vector<RooflineSection> sections = {
      {"SpeedOfLight_HierarchicalDoubleRooflineChart",
       "GPU Speed Of Light Hierarchical Roofline Chart (Double Precision)", "hierarchical"},
      {"SpeedOfLight_HierarchicalHalfRooflineChart", "GPU Speed Of Light Hierarchical Roofline Chart (Half Precision)",
       "hierarchical"},
      {"SpeedOfLight_HierarchicalSingleRooflineChart",
       "GPU Speed Of Light Hierarchical Roofline Chart (Single Precision)", "hierarchical"},
      {"SpeedOfLight_HierarchicalTensorRooflineChart", "GPU Speed Of Light Hierarchical Roofline Chart (Tensor Core)",
       "roofline-tensor"},
      {"SpeedOfLight_RooflineChart", "GPU Speed Of Light Roofline Chart", "roofline"},
  };
  return sections;
}

const RooflineSection* find_roofline_section(std::string_view identifier) {
  for (const auto& s : roofline_sections())
    if (same_name(s.identifier, identifier)) return &s;
  return nullptr;
}

std::vector<std::string> sections_of_set(const std::string& set) {
  std::vector<std::string> ids;
  for (const auto& s : roofline_sections())
    if (set_rank(s.set) <= set_rank(set)) ids.push_back(s.identifier);
  return ids;
}

void write_section_table(std::ostream& out, const std::vector<std::string>& enabled) {
  std::vector<std::vector<std::string>> rows = {{"Identifier", "Display Name", "Enabled", "Filename"}};
  for (const auto& s : roofline_sections()) {
    const bool on = std::any_of(enabled.begin(), enabled.end(),
                                [&](const std::string& e) { return same_name(e, s.identifier); });
    rows.push_back({s.identifier, s.display_name, on ? "yes" : "no", "(rfprof set " + s.set + ")"});
  }
  std::vector<size_t> width(4, 0);
  for (const auto& row : rows)
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  auto line = [&](const std::vector<std::string>& cells) {
    for (size_t c = 0; c < cells.size(); ++c)
      out << (c ? " " : "") << cells[c] << std::string(width[c] - cells[c].size(), ' ');
    out << "\n";
  };
  std::vector<std::string> rule;
  for (size_t w : width) rule.emplace_back(w, '-');
  line(rule);
  line(rows.front());
  line(rule);
  for (size_t r = 1; r < rows.size(); ++r) line(rows[r]);
}

void write_metric_list(std::ostream& out, const std::vector<std::string>& metrics) {
  for (const auto& m : metrics) out << m << "\n -" << m << "\n";
}

int run_listing(const Listing& listing, std::ostream& out, std::ostream& err) {
  if (listing.kind == Listing::Kind::kSections) {  // needs no chip: the sections are rfprof's own
    write_section_table(out, listing.sections.empty() ? sections_of_set(listing.set) : listing.sections);
    return 0;
  }
  if (listing.kind == Listing::Kind::kMetrics && listing.from_metrics) {
    // The names were checked against every chip when the flags were read; a --chip is checked too.
    if (!listing.chip.empty() && listing_chip(listing, err).empty()) return 2;
    write_metric_list(out, listing.metrics);
    return 0;
  }
  const char* flag = listing.kind == Listing::Kind::kSets ? "--list-sets" : "--list-metrics";
  try {
    const std::string chip = listing_chip(listing, err);
    if (chip.empty()) return 2;
    if (listing.kind == Listing::Kind::kSets) {
      write_sets(out, chip);
    } else {
      const auto plan = collector::plan_metric_set(collector::MetricHost(chip), listing.set);
      if (plan.metrics.empty() && listing.metrics.empty() && !listing.quiet)
        err << "rfprof: note: set " << listing.set << " collects no metrics (" << collector::metric_set_description(listing.set)
            << ")\n";
      std::vector<std::string> metrics = plan.metrics;
      for (const auto& m : listing.metrics)  // --metrics besides --set/--section, as a run collects them
        if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
      write_metric_list(out, metrics);
    }
  } catch (const std::exception& e) {
    err << "rfprof: " << flag << ": " << collector::detail_of(e) << "\n";
    return 2;
  }
  return 0;
}

}  // namespace rf::launcher
