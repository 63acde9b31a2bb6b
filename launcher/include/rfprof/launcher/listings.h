// ncu's listing flags answered from rfprof's own metric sets: --list-sets, --list-sections and
// --list-metrics (the metric queries of --query-metrics are in metric_query.h). The listings need
// CUPTI's profiler host API only: no GPU, except to name this machine's chip when --chip is not
// given.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rf::launcher {

/// One of ncu's roofline sections, the only sections rfprof honours.
struct RooflineSection {
  std::string identifier;    ///< ncu's section identifier, e.g. "SpeedOfLight_RooflineChart"
  std::string display_name;  ///< ncu's display name, e.g. "GPU Speed Of Light Roofline Chart"
  std::string set;           ///< the rfprof metric set that collects what it draws, e.g. "roofline"
};

/// ncu's five roofline sections in ncu's order (identifiers and display names as ncu 2024.1.1's
/// --list-sections prints them), each with the smallest rfprof set that collects it.
const std::vector<RooflineSection>& roofline_sections();

/// The section whose identifier is `identifier`, compared case-insensitively (as ncu does);
/// nullptr for any other section.
const RooflineSection* find_roofline_section(std::string_view identifier);

/// What --list-sets, --list-sections and --list-metrics print, from the other flags given.
struct Listing {
  /// Which listing: --list-sets, --list-sections or --list-metrics.
  enum class Kind { kSets, kSections, kMetrics };
  Kind kind = Kind::kSets;
  /// --chip as typed; empty: the chip of this machine's first CUDA device, else GH100 with a note.
  std::string chip;
  /// --list-sections: the sections given with --section (as typed); empty: the sections of `set`.
  std::vector<std::string> sections;
  /// The rfprof metric set the flags select (--set, --section or the default "roofline").
  std::string set = "roofline";
  /// --list-metrics with --metrics: the counters named (checked and completed as for a run; empty
  /// when only launch or device attributes were named, which are not collected). `from_metrics`:
  /// these alone; otherwise (with --set or --section) listed after the set's, as a run collects them.
  std::vector<std::string> metrics;
  bool from_metrics = false;
  bool quiet = false;  ///< --quiet: no note about the chip chosen
};

/// Writes ncu's --list-sections table: dash rules, then the header "Identifier Display Name Enabled
/// Filename" and one row per roofline section, columns as wide as their longest cell and separated by
/// one space. Enabled is "yes" for a section named in `enabled` (case-insensitively), else "no";
/// Filename names the rfprof set ("(rfprof set roofline)"): rfprof reads no section files.
void write_section_table(std::ostream& out, const std::vector<std::string>& enabled);

/// Writes ncu's --list-metrics layout: each metric on its own line, then " -" and the counter it
/// is collected from on the next (rfprof collects every listed metric directly, so the metric
/// itself).
void write_metric_list(std::ostream& out, const std::vector<std::string>& metrics);

/// The sections --list-sections marks enabled for rfprof set `set`: those whose own set is part
/// of it (the sets nest: timing, roofline, roofline-tensor, hierarchical). Identifiers.
std::vector<std::string> sections_of_set(const std::string& set);

/// Runs one listing: the table, the metric list or the sets, on `out`; one "rfprof: ..." line on
/// `err` for a chip CUPTI does not know, or when the host API fails. Returns the exit status: 0,
/// or 2 after such a line.
int run_listing(const Listing& listing, std::ostream& out, std::ostream& err);

}  // namespace rf::launcher
