// ncu's --set, --section and --metrics flags read into rfprof's metric sets and metric lists
// (private to launcher/src; parse_args in ncu_args.cpp uses them). Each throws ArgsError (fail(),
// args_fail.h) naming the flag and what was expected.
#pragma once

#include <string>
#include <vector>

namespace rf::launcher {

/// `s` in lower case (ASCII).
std::string lower(std::string s);
/// "a,b,,c" -> {"a", "b", "", "c"}.
std::vector<std::string> split_commas(const std::string& list);
/// rfprof's metric set for ncu's --set VALUE (`flag` "set") or --section VALUE (`flag` "section").
std::string set_for(const std::string& flag, const std::string& value);
/// --section flags with each "regex:EXPR" replaced by the roofline sections it matches, with a
/// note in `notes` (unless null) naming them.
std::vector<std::string> expand_section_regexes(const std::vector<std::string>& flags, std::vector<std::string>* notes);
/// The rfprof set that collects every section of `sections` (the largest one needed).
std::string set_of_sections(const std::vector<std::string>& sections);
/// The names of the --metrics flags (each a comma-separated list), read as librfinject reads
/// RFPROF_METRICS.
std::vector<std::string> metric_list(const std::vector<std::string>& flags);
/// --metrics names split into counters (collected through CUPTI) and ncu's launch and device
/// attributes, which the raw page prints from the trace's records; each keeps its order.
struct CountersAndAttributes {
  std::vector<std::string> counters, attributes;
};
CountersAndAttributes split_attributes(const std::vector<std::string>& names);

}  // namespace rf::launcher
