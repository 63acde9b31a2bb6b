// ncu flags -> rfprof plan (rfprof/launcher/ncu_args.h): parse_args. The flag tables are in
// ncu_flag_tables.cpp, the --set/--section/--metrics readings in ncu_metric_flags.cpp, the checks
// before the run in check_plan.cpp.
#include "rfprof/analyzer/ncu_csv.h"
#include "rfprof/collector/device_filter.h"
#include "rfprof/collector/launch_filter.h"
#include "rfprof/collector/launch_selection.h"
#include "rfprof/launcher/ncu_args.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "config.h"  // librfinject's reading of the RFPROF_* variables (inject/config.h)
#include "rfprof/collector/messages.h"
#include "rfprof/collector/metric_set_names.h"
#include "rfprof/launcher/listings.h"
#include "rfprof/launcher/metric_names.h"
#include "args_fail.h"
#include "ncu_metric_flags.h"

namespace rf::launcher {
namespace {

/// The words of ncu's response file `path`: whitespace-separated, '...' and "..." quote (the quotes
/// dropped), a backslash escapes the next character. Throws ArgsError for an unreadable file or an
/// unclosed quote.
std::vector<std::string> response_file_words(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("@" + path + ": cannot read this response file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == '\\' && i + 1 < text.size()) {
      word += text[++i];
      in_word = true;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (quote) fail("@" + path + ": a quote is not closed");
  if (in_word) words.push_back(std::move(word));
  return words;
}

bool on_off(const std::string& flag, const std::string& value) {
  const std::string v = boolean_spelling(value);
  if (v == "yes") return true;
  if (v == "no") return false;
  fail(flag + " " + value + ": expected one of on, off, yes, no, true, false, 1, 0");
}

/// Checks the placeholders of the -o pattern as typed (before ".rftrace" is appended), as librfinject
/// expands them; any %q{VAR} counts as set (a launcher inside the command may set it). Throws
/// ArgsError naming -o and the pattern typed.
void check_export_pattern(const std::string& pattern) {
  inject::PatternContext context;
  context.pid = 1;
  context.env = [](const std::string&) -> std::optional<std::string> { return std::string("x"); };
  context.exists = [](const std::filesystem::path&) { return false; };
  try {
    (void)inject::expand_output_pattern(pattern, context);
  } catch (const inject::ConfigError& e) {
    const std::string what = collector::detail_of(e);  // RFPROF_OUTPUT="...": expected ...
    const size_t expected = what.find(": expected ");
    fail("-o/--export " + pattern + (expected == std::string::npos ? ": " + what : what.substr(expected)));
  }
}

}  // namespace

Plan parse_args(const std::vector<std::string>& given) {
  std::vector<std::string> raw = given;  // response files (@FILE) are spliced in below
  int response_files = 0;
  // Before CLI11 parses: expand unique prefixes of long options (ncu accepts them, e.g.
  // `--target-process all`) and reject ncu flags rfprof does not support, naming them. Only the
  // tokens before the application are looked at: the first token that is neither an option nor an
  // option's value starts the application's command line.
  // Flags without a value (ncu's switches), rfprof's own and those of unsupported_flags().
  static const std::vector<std::string> kNoValue = {
      "help", "csv", "force-overwrite", "disable-profiler-start-stop", "nvtx", "list-sets", "call-stack",
      "version", "disable-extra-suffixes", "quiet", "verbose", "null-stdin", "forward-signals",
      "list-sections", "query-metrics", "list-rules", "list-metrics", "list-chips", "open-in-ui",
      "section-folder-restore", "disable-pm-warp-sampling", "print-rule-details", "print-metric-attribution",
      "print-fp", "lockstep-kernel-launch", "support-32bit", "details-all"};
  static const std::vector<std::string> kShortWithValue = {"-o", "-i", "-k", "-s", "-c"};
  std::vector<std::string> all = long_options();
  for (const auto& [flag, why] : unsupported_flags())
    if (std::find(all.begin(), all.end(), flag) == all.end()) all.push_back(flag);
  std::vector<std::string> args;
  std::vector<std::string> nvtx_include, nvtx_exclude;  // NVTX rules, in order
  std::vector<std::string> notes;
  size_t i = 0;
  for (; i < raw.size(); ++i) {
    const std::string& a = raw[i];
    if (a.rfind("--", 0) == 0 && a.size() > 2) {
      std::string name = a.substr(2), attached;
      const auto eq = name.find('=');
      if (eq != std::string::npos) {
        attached = name.substr(eq);
        name = name.substr(0, eq);
      }
      if (std::find(all.begin(), all.end(), name) == all.end()) {
        std::vector<std::string> matches;
        for (const auto& o : all)
          if (o.rfind(name, 0) == 0) matches.push_back(o);
        // The shortest match wins when every other one extends it (--target-process: not
        // --target-processes-filter but --target-processes).
        std::sort(matches.begin(), matches.end(),
                  [](const std::string& x, const std::string& y) { return x.size() < y.size(); });
        bool extends = true;
        for (const auto& m : matches) extends = extends && m.rfind(matches.front(), 0) == 0;
        if (matches.size() > 1 && !extends) {
          std::sort(matches.begin(), matches.end());
          std::string could;
          for (size_t m = 0; m < matches.size(); ++m)
            could += (m == 0 ? "--" : m + 1 == matches.size() ? " or --" : ", --") + matches[m];
          fail("--" + name + " is ambiguous: could be " + could);
        }
        if (matches.empty()) fail("unknown option --" + name + " (see rfprof --help and docs/ncu-flags.md)");
        name = matches[0];
      }
      const bool takes_value = std::find(kNoValue.begin(), kNoValue.end(), name) == kNoValue.end();
      const std::string value = !attached.empty() ? attached.substr(1) : (takes_value && i + 1 < raw.size() ? raw[i + 1] : "");
      // ncu's switches take on/off, yes/no, true/false and 1/0 alike: compared as yes or no.
      const std::string spelled = is_boolean_flag(name) ? boolean_spelling(value) : lower(value);
      const auto accepted = std::find_if(accepted_values().begin(), accepted_values().end(), [&](const AcceptedValue& v) {
        return v.flag == name && v.value == spelled;
      });
      if (accepted != accepted_values().end()) {  // what rfprof does anyway: skipped
        if (!accepted->note.empty()) notes.push_back("rfprof: note: " + accepted->note);
        if (attached.empty() && i + 1 < raw.size()) ++i;
        continue;
      }
      if (name == "clock-control" && spelled == "reset")  // ncu's reset unlocks what it locked before
        fail("--clock-control reset is not supported: rfprof never locks clocks, so there are none to reset "
             "(kernels run at the application's clocks)");
      if (auto it = unsupported_flags().find(name); it != unsupported_flags().end() && !it->second.empty()) {
        if (!(name == "replay-mode" && (value == "kernel" || value == "step")))  // rfprof's modes
          fail("--" + name + (value.empty() ? "" : " " + value) + " is not supported: " + it->second);
      }
      if (name == "nvtx-include" || name == "nvtx-exclude") {
        // Taken here, not by CLI11, which would read "[A/B]" as a list and drop its brackets.
        if (attached.empty() && i + 1 >= raw.size()) fail("--" + name + " needs an NVTX rule");
        (name == "nvtx-include" ? nvtx_include : nvtx_exclude).push_back(value);
        if (attached.empty()) ++i;
        continue;
      }
      args.push_back("--" + name + attached);
      if (takes_value && attached.empty() && i + 1 < raw.size()) args.push_back(raw[++i]);
    } else if (a.size() > 1 && a[0] == '-') {
      args.push_back(a);
      if (a.size() == 2 && std::find(kShortWithValue.begin(), kShortWithValue.end(), a) != kShortWithValue.end() &&
          i + 1 < raw.size())
        args.push_back(raw[++i]);
    } else if (a.size() > 1 && a[0] == '@') {
      // ncu's response file: its words replace the @FILE token (which may name more of them).
      if (++response_files > 64) fail(a + ": more than 64 response files (does one name itself?)");
      std::vector<std::string> words = response_file_words(a.substr(1));
      raw.erase(raw.begin() + static_cast<std::ptrdiff_t>(i));
      raw.insert(raw.begin() + static_cast<std::ptrdiff_t>(i), words.begin(), words.end());
      --i;
    } else {
      break;  // the application
    }
  }
  const std::vector<std::string> command(raw.begin() + static_cast<std::ptrdiff_t>(i), raw.end());

  CLI::App app{"rfprof: a transparent roofline profiler with Nsight Compute's command line: "
               "rfprof [ncu options] application [arguments] (docs/ncu-flags.md)",
               "rfprof"};
  Plan plan;
  std::vector<std::string> metrics_flags, section_flags, call_stack_types;
  std::string set, page = "details", log_file, export_pattern, import, from_start,
      targets = "all", kernel_name, replay = "kernel";
  bool force = false, no_start_stop = false, nvtx = false, call_stack = false;
  std::string memory_usage, name_base, devices, kernel_id, filter_mode = "global";
  uint64_t skip = 0, count = 0, skip_before_match = 0;
  // Repeatable as in ncu: each occurrence takes one value, and the values add up.
  app.add_option("--metrics", metrics_flags,
                 "metrics to collect, comma-separated, spelled as NVIDIA spells them (repeatable); a base "
                 "name gets .sum, .avg, .min and .max as in ncu")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--section", section_flags,
                 "a roofline section (SpeedOfLight_RooflineChart, ...; repeatable: the largest set they need)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  bool no_extra_suffixes = false;
  app.add_flag("--disable-extra-suffixes", no_extra_suffixes,
               "collect base metric names as given, without ncu's .sum/.avg/.min/.max");
  app.add_option("--set", set,
                 "metric set: timing, roofline-tensor, hierarchical; roofline is ncu's set of all roofline charts, "
                 "i.e. hierarchical (the 2-pass roofline set: --section SpeedOfLight_RooflineChart)");
  app.add_flag("--csv", plan.csv, "print ncu's CSV after the run");
  app.add_option("--page", page, "CSV page: raw or details")->check(CLI::IsMember({"raw", "details"}));
  std::string summary = "none";
  app.add_option("--print-summary", summary, "none or per-kernel: one table per kernel (min, max, average)")
      ->check(CLI::IsMember({"none", "per-kernel", "per-gpu", "per-nvtx"}));
  app.add_option("--log-file", log_file, "write the printed report to this file");
  app.add_option("-o,--export", export_pattern, "trace path pattern (%h %p %q{ENV} %i %%)");
  app.add_flag("-f,--force-overwrite", force, "overwrite existing traces");
  app.add_option("-i,--import", import, "print an existing rfprof trace instead of running");
  app.add_option("--profile-from-start", from_start, "on|off|yes|no|true|false|1|0 (default on)");
  app.add_flag("--disable-profiler-start-stop", no_start_stop, "ignore cu(da)ProfilerStart/Stop");
  app.add_option("--target-processes", targets, "application-only or all (default all)")
      ->check(CLI::IsMember({"application-only", "all"}));
  app.add_flag("--nvtx", nvtx, "record NVTX ranges (always on in rfprof)");
  app.add_option("-k,--kernel-name", kernel_name, "kernel name filter: exact, or regex:EXPR");
  // Checked as text first: CLI11 would read "-1" into a uint64_t as 2^64 - 1.
  // And as a number that fits, as librfinject reads it: CLI11 would store a larger one as 2^64 - 1.
  const CLI::Validator count_at_least = CLI::Validator(
      [](std::string& v) {
        uint64_t n = 0;
        const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        return !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); }) &&
                       ec == std::errc() && end == v.data() + v.size()
                   ? std::string()
                   : "expected a whole number of launches below 2^64, got " + v;
      },
      "COUNT");
  app.add_option("-s,--launch-skip", skip, "selected kernel launches to skip before profiling")->check(count_at_least);
  app.add_option("-c,--launch-count", count, "selected kernel launches to profile (at least 1)")
      ->check(count_at_least)
      ->check(CLI::Validator([](std::string& v) { return v.find_first_not_of('0') == std::string::npos
                                                            ? std::string("expected at least 1 launch, got ") + v
                                                            : std::string(); }, "COUNT"));
  app.add_option("--devices", devices, "CUDA devices whose launches are profiled, comma-separated (default: all)");
  app.add_option("--kernel-id", kernel_id,
                 "CONTEXT:STREAM:[regex:]NAME:INVOCATION, empty fields matching anything (::foo:2: the second "
                 "launch of foo)");
  app.add_option("--filter-mode", filter_mode,
                 "what -s/-c count separately: global (default), per-gpu, per-launch-config")
      ->check(CLI::IsMember({"global", "per-gpu", "per-launch-config"}));
  app.add_option("--launch-skip-before-match", skip_before_match,
                 "kernel launches to skip before any filter is applied (all launches count)")
      ->check(count_at_least);
  app.add_option("--kernel-name-base", name_base, "what -k compares: function (default), demangled, mangled")
      ->check(CLI::IsMember({"function", "demangled", "mangled"}));
  app.add_option("--print-kernel-base", plan.print_kernel_base,
                 "how kernel names are printed: demangled (default), function (name only), mangled")
      ->check(CLI::IsMember({"function", "demangled", "mangled"}));
  // --nvtx-include/--nvtx-exclude RULE (repeatable) are taken before CLI11 parses (above); listed
  // here for --help only.
  std::vector<std::string> help_only;
  app.add_option("--nvtx-include", help_only, "profile launches inside this NVTX range rule (repeatable)");
  app.add_option("--nvtx-exclude", help_only, "do not profile launches inside this NVTX range rule (repeatable)");
  app.add_option("--replay-mode", replay,
                 "kernel (ncu's default), or step: replay across training steps, one pass per "
                 "cudaProfilerStart/Stop window (rfprof's own; docs/collector.md)")
      ->check(CLI::IsMember({"kernel", "step"}));
  std::string replay_range;
  app.add_option("--replay-range", replay_range,
                 "with --replay-mode step: the NVTX range that is one step (name or regex:EXPR), "
                 "instead of cudaProfilerStart/Stop windows");
  uint32_t replay_groups = 0;
  app.add_option("--replay-groups", replay_groups,
                 "with --replay-mode step: groups (passes + one timing window) to collect (default 1)")
      ->check(CLI::Range(1, 1000));
  app.add_flag("--call-stack", call_stack, "record the native call stack of each launch (RFPROF_CALLSTACKS)");
  app.add_option("--call-stack-type", call_stack_types, "native (the only type rfprof records; repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--cuda-memory-usage", memory_usage,
                 "true|false: record GPU memory allocations (RFPROF_MEMORY; the nsys flag)");
  std::string list_chip;
  bool list_sets = false, list_sections = false, list_metrics = false, query_metrics = false, list_chips = false;
  app.add_flag("--list-sets", list_sets, "list rfprof's metric sets, their passes and metrics, and exit");
  app.add_flag("--list-sections", list_sections,
               "list the roofline sections rfprof honours (Enabled: those --section or --set select) and exit");
  app.add_flag("--list-metrics", list_metrics,
               "list the metrics --metrics, --set or --section would collect, and exit");
  app.add_option("--chips,--chip", list_chip,
                 "chip for --list-sets and --list-metrics (default: this machine's GPU, else GH100), or chips for "
                 "--query-metrics, comma-separated (gh100,ga100)");
  app.add_flag("--list-chips", list_chips, "list the chips --chips takes and exit");
  app.add_flag("--query-metrics", query_metrics,
               "list the metrics of --chips (or of this machine's CUDA devices) and exit");
  std::string query_mode = "base", query_collection = "profiling";
  app.add_option("--query-metrics-mode", query_mode,
                 "base (base names), suffix (the full names of the --metrics base names) or all")
      ->check(CLI::IsMember({"base", "suffix", "all"}));
  app.add_option("--query-metrics-collection", query_collection,
                 "profiling (the Range Profiler's metrics, the only collection rfprof has)");
  app.add_flag("-v,--version", plan.version, "print rfprof's version and exit");
  bool& quiet = plan.quiet;
  bool verbose = false;
  app.add_flag("--quiet", quiet, "print no notes and no trace names (rfprof's errors are still printed)");
  app.add_flag("--verbose", verbose, "accepted (rfprof prints the same)");
  app.add_flag("--null-stdin", plan.null_stdin, "run the application with /dev/null as its standard input");
  app.add_flag("--forward-signals", plan.forward_signals,
               "forward SIGUSR1 and SIGUSR2 to the application too (rfprof always forwards SIGINT, SIGTERM, "
               "SIGHUP, SIGQUIT, SIGALRM, SIGVTALRM, SIGPROF and SIGXCPU; without this flag it ignores SIGUSR1/2)");
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    plan.help = true;
    plan.help_text = app.help();
    return plan;
  } catch (const CLI::ParseError& e) {
    fail(std::string(e.what()) + " (see rfprof --help)");
  }
  plan.command = command;
  if (!quiet) plan.notes = notes;
  if (summary == "per-gpu" || summary == "per-nvtx")
    fail("--print-summary " + summary + ": only per-kernel is printed; rfanalyze's phases.csv and ranges.csv "
         "sum kernels per phase and per NVTX range");
  plan.print_summary = summary == "per-kernel";
  plan.page_given = app.count("--page") > 0;
  if (plan.print_summary && plan.csv)
    fail("--print-summary per-kernel with --csv: the summary is printed as text; for CSV use --csv --page raw "
         "(one row per launch) and group by \"Kernel Name\"");
  if (plan.version) return plan;
  section_flags = expand_section_regexes(section_flags, quiet ? nullptr : &plan.notes);
  const bool query_flags = app.count("--query-metrics-mode") > 0 || app.count("--query-metrics-collection") > 0;
  const int listings = int(list_sets) + int(list_sections) + int(list_metrics);
  const char* listing_flag = list_sets ? "--list-sets" : list_sections ? "--list-sections" : "--list-metrics";
  if ((listings > 0 || list_chips || query_metrics || query_flags) && (!command.empty() || !import.empty()))
    fail(std::string(listings > 0 ? listing_flag : list_chips ? "--list-chips" : "--query-metrics") +
         " lists and exits; drop the application and -i");
  if (listings + int(list_chips) + int(query_metrics || query_flags) > 1)
    fail("give one of --list-sets, --list-sections, --list-metrics, --list-chips and --query-metrics");
  if (listings > 0) {
    if (list_chip.find(',') != std::string::npos) fail(std::string(listing_flag) + " --chip " + list_chip + ": one chip at a time");
    if (list_sections && !list_chip.empty()) fail("--list-sections --chip " + list_chip + ": the sections are the same on every chip; drop --chip");
    Listing listing;
    listing.kind = list_sets ? Listing::Kind::kSets : list_sections ? Listing::Kind::kSections : Listing::Kind::kMetrics;
    listing.chip = list_chip;
    listing.quiet = quiet;
    if (!set.empty() && !section_flags.empty()) fail("--set with --section: give one of them");
    if (list_sets && (!set.empty() || !section_flags.empty() || !metrics_flags.empty()))
      fail("--list-sets lists every set; drop --set, --section and --metrics (or use --list-metrics)");
    if (list_sections && !metrics_flags.empty())
      fail("--list-sections lists sections; drop --metrics (or use --list-metrics)");
    if (!set.empty()) listing.set = set_for("set", set);
    if (!section_flags.empty()) listing.set = set_of_sections(section_flags);
    listing.sections = section_flags;
    if (list_metrics && !metrics_flags.empty()) {
      const auto named = split_attributes(metric_list(metrics_flags));
      if (listing.set == "timing" && !named.counters.empty())
        fail("--metrics with --set timing: the timing set collects no counters; give one of them");
      listing.from_metrics = set.empty() && section_flags.empty();  // else after the set's, as a run collects them
      std::vector<std::string> metric_notes;
      if (!named.counters.empty()) listing.metrics = resolve_metric_names(named.counters, !no_extra_suffixes, metric_notes);
      for (const auto& a : named.attributes)  // what a run prints, but does not collect
        metric_notes.push_back("rfprof: note: --metrics " + a + ": printed from each launch's kernel and device "
                               "records, not collected as a counter: not listed");
      if (!quiet) plan.notes.insert(plan.notes.end(), metric_notes.begin(), metric_notes.end());
    }
    if (!log_file.empty()) plan.log_file = log_file;
    plan.listing = std::move(listing);
    return plan;
  }
  if (list_chips) {
    if (!list_chip.empty() || plan.csv || !set.empty() || !section_flags.empty() || !metrics_flags.empty())
      fail("--list-chips lists every chip; drop --chips, --csv, --set, --section and --metrics (or use "
           "--query-metrics)");
    plan.list_chips = true;
    if (!log_file.empty()) plan.log_file = log_file;
    return plan;
  }
  if (query_metrics || query_flags) {
    if (query_collection == "pmsampling")
      fail("--query-metrics-collection pmsampling: rfprof has no PM sampling; its metrics are the Range "
           "Profiler's (--query-metrics-collection profiling)");
    if (query_collection != "profiling")
      fail("--query-metrics-collection " + query_collection + ": expected profiling (the Range Profiler's "
           "metrics, the only collection rfprof has)");
    MetricQuery query;
    query.mode = query_mode;
    query.csv = plan.csv;
    query.quiet = quiet;
    for (const auto& m : metrics_flags)
      for (auto& name : split_commas(m))
        if (!name.empty()) query.metrics.push_back(name);
    if (query.mode == "suffix" && query.metrics.empty())
      fail("--query-metrics-mode suffix lists the full names of base metrics: name them with --metrics "
           "(e.g. --metrics dram__bytes_read)");
    for (auto& chip : split_commas(list_chip))
      if (!chip.empty()) query.chips.push_back(chip);
    if (!list_chip.empty() && query.chips.empty()) fail("--chips " + list_chip + ": expected chip names such as gh100");
    if (!devices.empty()) {
      auto list = collector::parse_device_list(devices);
      if (!list) fail("--devices " + devices + ": expected CUDA device ordinals separated by commas, such as 0 or 0,2");
      if (query.chips.empty())
        query.devices = std::move(*list);
      else if (!quiet)  // as in ncu, --chips decides
        plan.notes.push_back("rfprof: note: --devices " + devices + ": --chips " + list_chip +
                             " names the chips to list; the devices are not asked");
    }
    if (!log_file.empty()) plan.log_file = log_file;
    plan.metric_query = std::move(query);
    return plan;
  }
  if (!list_chip.empty())
    fail("--chips " + list_chip + ": goes with --query-metrics (or --chip with --list-sets and --list-metrics)");
  if (!import.empty()) {
    // ncu -o rep.ncu-rep then ncu -i rep.ncu-rep: rfprof wrote rep.rftrace.
    const std::filesystem::path asked(import);
    std::error_code ec;
    if (asked.extension() == ".ncu-rep" && !std::filesystem::exists(asked, ec)) {
      std::filesystem::path ours = asked;
      ours.replace_extension(".rftrace");
      if (std::filesystem::exists(ours, ec)) import = ours.string();
    }
    plan.import_files.push_back(import);
    if (!export_pattern.empty())
      fail("-i with -o: rfprof does not export a filtered copy of a trace; -i prints it (--csv), "
           "rfanalyze analyzes it");
    // As ncu, which ignores them with --import and --page raw: the raw page prints every metric.
    if ((!set.empty() || !section_flags.empty()) && page == "raw") {
      if (!quiet)
        plan.notes.push_back("rfprof: note: --set/--section: ignored with -i and --page raw, as ncu ignores them (the "
                             "raw page prints every metric of the trace; --metrics a,b chooses them)");
      set.clear();
      section_flags.clear();
    }
    if (!set.empty() || !section_flags.empty())
      fail("-i with --set/--section: rfprof's traces have one section (the metrics collected); choose the "
           "printed metrics with --metrics a,b");
  }
  if (plan.command.empty() && plan.import_files.empty())
    fail("no application given (expected: rfprof [options] application [arguments], or -i TRACE)");
  if (!plan.command.empty() && !plan.import_files.empty())
    fail("-i/--import reads a trace instead of running; drop the application or -i");
  if (!plan.import_files.empty() && (!nvtx_include.empty() || !nvtx_exclude.empty()))
    fail("--nvtx-include/--nvtx-exclude select launches while profiling; with -i, use rfanalyze's "
         "ranges.csv or the nvtx column of kernels.csv instead");
  if (!devices.empty() && !plan.import_files.empty()) {  // a run: check_plan names RFPROF_DEVICES' problem
    auto list = collector::parse_device_list(devices);
    if (!list) fail("--devices " + devices + ": expected CUDA device ordinals separated by commas, such as 0 or 0,2");
    plan.devices = std::move(*list);
  }
  if (app.count("--kernel-id") > 0 && kernel_id.empty())
    fail("--kernel-id: expected CONTEXT:STREAM:[regex:]NAME:INVOCATION, empty fields matching anything (e.g. ::foo:2)");
  if (!kernel_id.empty()) {
    try {
      (void)collector::KernelId::parse(kernel_id);
    } catch (const collector::FilterError& e) {
      fail(e.what());
    }
    plan.kernel_id = kernel_id;
  }
  plan.filter_mode = filter_mode;
  plan.launch_skip_before_match = skip_before_match;

  std::vector<std::string> names = metric_list(metrics_flags);
  if (!set.empty() && !section_flags.empty()) fail("--set with --section: give one of them");
  // With --set/--section, ncu collects the listed metrics besides the set's: so does librfinject.
  // Launch and device attributes come from the kernel records: they go with the timing set.
  if (!set.empty() && set_for("set", set) == "timing" && !split_attributes(names).counters.empty())
    fail("--metrics with --set timing: the timing set collects no counters; give one of them");
  if (!names.empty()) {
    // The syntax first (metric_list, as librfinject reads it), then each name against CUPTI's host
    // API, so that a name the collector would refuse inside the application is refused here.
    std::vector<std::string> metric_notes;
    const auto named = split_attributes(names);
    if (!plan.import_files.empty()) {
      // -i: the names select what is printed. Checked as for a run (a typo gets the closest names);
      // the analyzer then refuses a name the trace lacks.
      if (!named.counters.empty()) (void)resolve_metric_names(named.counters, !no_extra_suffixes, metric_notes);
      plan.print_metrics = names;
    } else if (named.counters.empty()) {
      // Only attributes: they come from the kernel records, so no counters are collected.
      plan.print_attributes = named.attributes;
      plan.env["RFPROF_METRIC_SET"] = "timing";
      if (!quiet)
        plan.notes.push_back("rfprof: note: --metrics names launch and device attributes only: printed for every "
                             "launch from its kernel record, with no counters collected (no replay)");
    } else {
      plan.print_attributes = named.attributes;
      names = named.counters;
      if (!command.empty()) names = resolve_metric_names(names, !no_extra_suffixes, metric_notes);
      if (!quiet) plan.notes.insert(plan.notes.end(), metric_notes.begin(), metric_notes.end());
      std::string metrics;
      for (const auto& n : names) metrics += (metrics.empty() ? "" : ",") + n;
      plan.env["RFPROF_METRICS"] = metrics;
    }
  }
  if (!set.empty()) plan.env["RFPROF_METRIC_SET"] = set_for("set", set);
  if (!section_flags.empty()) plan.env["RFPROF_METRIC_SET"] = set_of_sections(section_flags);
  // --set, --section and --metrics decide what is collected: an inherited RFPROF_METRICS,
  // RFPROF_METRIC_SET or RFPROF_MODE that they do not set is removed, not added to it.
  if (!command.empty() && (!names.empty() || !set.empty() || !section_flags.empty()))
    for (const char* var : {"RFPROF_METRICS", "RFPROF_METRIC_SET", "RFPROF_MODE"})
      if (!plan.env.count(var)) plan.env_unset.insert(var);
  if (!from_start.empty())
    plan.env["RFPROF_PROFILE_FROM_START"] = on_off("--profile-from-start", from_start) ? "on" : "off";
  if (no_start_stop) plan.env["RFPROF_DISABLE_PROFILER_START_STOP"] = "1";
  if (force) plan.env["RFPROF_FORCE_OVERWRITE"] = "1";
  for (const auto& type : call_stack_types)
    if (lower(type) != "native")
      fail("--call-stack-type " + type + ": only native call stacks are recorded (python call stacks are not supported)");
  if (call_stack || !call_stack_types.empty()) plan.env["RFPROF_CALLSTACKS"] = "1";  // ncu: the type implies --call-stack
  if (!memory_usage.empty()) {
    const std::string m = lower(memory_usage);
    if (m != "true" && m != "false") fail("--cuda-memory-usage " + memory_usage + ": expected true or false");
    plan.env["RFPROF_MEMORY"] = m == "true" ? "1" : "0";
  }
  plan.env["RFPROF_TARGET_PROCESSES"] = targets;
  plan.export_given = !export_pattern.empty();
  if (plan.export_given) check_export_pattern(export_pattern);
  plan.output_pattern = export_pattern.empty() ? "rfprof_%p" : export_pattern;
  constexpr std::string_view kNcuRep = ".ncu-rep";  // -o rep.ncu-rep writes rep.rftrace
  if (plan.output_pattern.size() > kNcuRep.size() && plan.output_pattern.ends_with(kNcuRep))
    plan.output_pattern.resize(plan.output_pattern.size() - kNcuRep.size());
  if (plan.output_pattern.size() < 8 || plan.output_pattern.compare(plan.output_pattern.size() - 8, 8, ".rftrace") != 0)
    plan.output_pattern += ".rftrace";
  plan.env["RFPROF_OUTPUT"] = plan.output_pattern;
  plan.page = page;
  if (!log_file.empty()) plan.log_file = log_file;
  if (!kernel_name.empty()) {
    if (kernel_name.rfind("regex:", 0) == 0) {
      try {
        std::regex check(kernel_name.substr(6));
      } catch (const std::regex_error& e) {
        fail("-k " + kernel_name + ": not a valid regular expression: " + e.what());
      }
    }
    plan.kernel_name = kernel_name;
  }
  plan.launch_skip = skip;
  if (count > 0) plan.launch_count = count;
  // The filters act in the collector (launch_filter.h): filtered-out launches are not profiled.
  if (!kernel_name.empty()) plan.env["RFPROF_KERNEL_NAME"] = kernel_name;
  if (!name_base.empty()) {
    plan.env["RFPROF_KERNEL_NAME_BASE"] = name_base;
    plan.kernel_name_base = name_base;
  }
  // A flag given decides its variable, at its default value too: rfprof's own environment, which
  // the application inherits, may hold another (RFPROF_LAUNCH_SKIP=5 rfprof -s 0 app).
  if (app.count("--launch-skip") > 0) plan.env["RFPROF_LAUNCH_SKIP"] = std::to_string(skip);
  if (!devices.empty()) plan.env["RFPROF_DEVICES"] = devices;
  if (!kernel_id.empty()) plan.env["RFPROF_KERNEL_ID"] = kernel_id;
  if (app.count("--filter-mode") > 0) plan.env["RFPROF_FILTER_MODE"] = filter_mode;
  if (app.count("--launch-skip-before-match") > 0)
    plan.env["RFPROF_LAUNCH_SKIP_BEFORE_MATCH"] = std::to_string(skip_before_match);
  if (count > 0) plan.env["RFPROF_LAUNCH_COUNT"] = std::to_string(count);
  if (app.count("--replay-mode") > 0) plan.env["RFPROF_REPLAY"] = replay;
  if (replay == "step") {
    // Each window is one step: the profile window does not start with the process.
    if (!plan.env.count("RFPROF_PROFILE_FROM_START")) plan.env["RFPROF_PROFILE_FROM_START"] = "off";
  }
  if (!replay_range.empty()) {
    if (replay != "step") fail("--replay-range needs --replay-mode step");
    plan.env["RFPROF_REPLAY_RANGE"] = replay_range;
  }
  if (replay_groups > 0) {
    if (replay != "step") fail("--replay-groups needs --replay-mode step");
    plan.env["RFPROF_REPLAY_GROUPS"] = std::to_string(replay_groups);
  }
  auto rules = [&](const char* flag, const char* var, const std::vector<std::string>& list) {
    std::string joined;
    for (const auto& r : list) {
      if (r.find(';') != std::string::npos)
        fail(std::string(flag) + " " + r + ": rfprof cannot pass a rule containing ';' to the collector");
      try {
        (void)collector::NvtxRule::parse(r);
      } catch (const collector::FilterError& e) {
        fail(std::string(flag) + " " + r + ": " + e.what());
      }
      joined += (joined.empty() ? "" : ";") + r;
    }
    if (!joined.empty()) plan.env[var] = joined;
  };
  rules("--nvtx-include", "RFPROF_NVTX_INCLUDE", nvtx_include);
  rules("--nvtx-exclude", "RFPROF_NVTX_EXCLUDE", nvtx_exclude);
  if (replay == "step" && no_start_stop && replay_range.empty())
    fail("--replay-mode step with --disable-profiler-start-stop: no cudaProfilerStart/Stop window would open; "
         "give --replay-range NAME (an NVTX range that is one step) or drop --disable-profiler-start-stop");
  if (replay == "step") {  // named as typed; librfinject would refuse them and run unprofiled
    if (plan.env["RFPROF_PROFILE_FROM_START"] == "on")
      fail("--replay-mode step needs --profile-from-start off: each cudaProfilerStart/Stop window is one step");
    if (!kernel_name.empty() || skip > 0 || count > 0 || !nvtx_include.empty() || !nvtx_exclude.empty() ||
        !devices.empty() || !kernel_id.empty() || filter_mode != "global" || skip_before_match > 0)
      fail("--replay-mode step profiles every kernel of a step: drop -k, -s, -c, --nvtx-include, --nvtx-exclude, "
           "--devices, --kernel-id, --filter-mode and --launch-skip-before-match");
  }
  return plan;
}

}  // namespace rf::launcher
