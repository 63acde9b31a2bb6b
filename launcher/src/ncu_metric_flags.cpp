// ncu's --set, --section and --metrics flags -> rfprof's metric sets and metric lists
// (ncu_metric_flags.h), for parse_args (ncu_args.cpp).
#include "ncu_metric_flags.h"

#include <algorithm>
#include <cctype>
#include <regex>
#include <sstream>

#include "args_fail.h"
#include "config.h"  // librfinject's reading of RFPROF_METRICS (inject/config.h)
#include "rfprof/analyzer/ncu_csv.h"
#include "rfprof/collector/messages.h"
#include "rfprof/collector/metric_set_names.h"
#include "rfprof/launcher/listings.h"
#include "rfprof/launcher/metric_names.h"

namespace rf::launcher {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

/// "a,b,,c" -> {"a", "b", "", "c"}.
std::vector<std::string> split_commas(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream in(list);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  return parts;
}

/// ncu's --set and --section names mapped onto rfprof's metric sets.
std::string set_for(const std::string& flag, const std::string& value) {
  const std::string v = lower(value);
  // ncu's meaning first: its "roofline" set holds the hierarchical roofline charts.
  if (flag == "set" && v == "roofline") return "hierarchical";
  for (const auto& s : collector::metric_set_names())
    if (v == s) return s;
  if (flag == "set") {
    fail("--set " + value + ": rfprof collects roofline metrics only; accepted: " +
         "timing, roofline, roofline-tensor, hierarchical (ncu's basic, detailed, full, nvlink and "
         "pmsampling sets are not supported)");
  }
  if (const RooflineSection* section = find_roofline_section(value)) return section->set;
  fail("--section " + value + ": not a roofline section; rfprof honours SpeedOfLight_RooflineChart and the "
       "SpeedOfLight_Hierarchical{Single,Double,Half,Tensor}RooflineChart sections");
}

/// --section flags with each "regex:EXPR" (ncu's syntax: EXPR searched in the section identifier)
/// replaced by the roofline sections it matches, with a note in `notes` (unless null) naming them.
/// Throws ArgsError for an invalid expression or one that matches none of them.
std::vector<std::string> expand_section_regexes(const std::vector<std::string>& flags, std::vector<std::string>* notes) {
  std::vector<std::string> out;
  for (const auto& flag : flags) {
    if (flag.rfind("regex:", 0) != 0) {
      out.push_back(flag);
      continue;
    }
    std::regex re;
    try {
      re = std::regex(flag.substr(6), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      fail("--section " + flag + ": not a valid regular expression (" + e.what() + ")");
    }
    std::string matched;
    for (const auto& s : roofline_sections()) {
      if (!std::regex_search(s.identifier, re)) continue;
      out.push_back(s.identifier);
      matched += (matched.empty() ? "" : ", ") + s.identifier;
    }
    if (matched.empty())
      fail("--section " + flag + ": matches none of the roofline sections rfprof honours (rfprof --list-sections "
           "lists them)");
    if (notes)
      notes->push_back("rfprof: note: --section " + flag + ": the roofline sections it matches, " + matched +
                       "; rfprof collects no other section");
  }
  return out;
}

/// The rfprof set that collects every section of `sections` (--section flags): the sets nest
/// (timing, roofline, roofline-tensor, hierarchical), so the largest one needed. Throws ArgsError
/// for a section rfprof does not honour.
std::string set_of_sections(const std::vector<std::string>& sections) {
  const auto& order = collector::metric_set_names();
  size_t largest = 0;
  for (const auto& sec : sections) {
    const std::string s = set_for("section", sec);
    largest = std::max(largest, static_cast<size_t>(std::find(order.begin(), order.end(), s) - order.begin()));
  }
  return order.at(largest);
}

/// The names of the --metrics flags (each a comma-separated list), read as librfinject reads
/// RFPROF_METRICS. Throws ArgsError naming --metrics for a malformed list.
std::vector<std::string> metric_list(const std::vector<std::string>& flags) {
  std::string joined;
  for (const auto& m : flags) joined += (joined.empty() || m.empty() ? "" : ",") + m;
  if (joined.empty()) return {};
  try {
    return inject::parse_metric_list(joined);
  } catch (const inject::ConfigError& e) {
    fail("--metrics: " + collector::detail_of(e));
  }
}

/// --metrics names split into counters (collected through CUPTI) and ncu's launch and device
/// attributes (analyzer::ncu_attributes: launch__grid_size, ...), which the raw page prints for
/// every launch from the trace's records, whatever was collected. Each keeps its order. Throws
/// ArgsError for one of ncu's attributes rfprof does not print (launch__waves_per_multiprocessor).
CountersAndAttributes split_attributes(const std::vector<std::string>& names) {
  CountersAndAttributes out;
  const auto& all = analyzer::ncu_attributes();
  for (const auto& n : names) {
    if (analyzer::is_ncu_attribute(n)) {
      out.attributes.push_back(n);
    } else if (n.rfind("launch__", 0) == 0 || n.rfind("device__attribute_", 0) == 0) {
      std::string printed;
      for (const auto& a : all) printed += (printed.empty() ? "" : ", ") + a.name;
      fail("--metrics " + n + ": one of ncu's launch or device attributes that rfprof does not print (ncu computes "
           "it, or CUPTI does not record it); rfprof's raw page prints " + printed);
    } else {
      out.counters.push_back(n);
    }
  }
  return out;
}

}  // namespace rf::launcher
