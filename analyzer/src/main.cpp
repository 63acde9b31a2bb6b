// rfanalyze: rfprof traces -> roofline CSVs, roofline.svg and summary.json (docs/analyzer.md);
// `rfanalyze ceilings`: one chip's ceilings and rooflines alone (docs/ceilings.md).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <string>
#include <utility>

#ifndef RFPROF_VERSION
#define RFPROF_VERSION "unknown"
#endif

#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/ceilings_command.h"

int main(int argc, char** argv) {
  rf::analyzer::AnalyzeOptions options;
  std::vector<std::string> traces;
  std::string output = options.output_dir.string();
  std::string phase_map, ceilings, device;

  CLI::App app{"rfanalyze: rfprof traces -> kernels.csv, counters.csv, ranges.csv, phases.csv, "
               "roofline.svg, summary.json (docs/analyzer.md)"};
  app.add_option("TRACE", traces, "rfprof trace file(s) (.rftrace)");
  app.set_version_flag("--version", std::string("rfanalyze ") + RFPROF_VERSION);
  // CLI11's own errors as every other message: one line starting with "rfanalyze:".
  app.failure_message([](const CLI::App*, const CLI::Error& e) {
    return std::string("rfanalyze: ") + e.what() + " (see rfanalyze --help)\n";
  });
  std::vector<std::string> import_ncu;
  // One file per --import-ncu (repeat it for more): traces after it stay traces.
  app.add_option("--import-ncu", import_ncu,
                 "Nsight Compute CSV to analyze like a trace: its raw page (ncu --csv --page raw) or its details "
                 "page (ncu --csv); repeat for several")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("-o,--output", output, "output directory (created if needed)")->capture_default_str();
  app.add_option("--phase-map", phase_map,
                 "JSON list of {\"regex\": ..., \"phase\": ...} replacing the default phase rules");
  app.add_option("--ceilings", ceilings,
                 "JSON {\"devices\": [...]} overriding the datasheet ceilings (schema: "
                 "analyzer/data/devices.json; rfbench writes one)");
  app.add_option("--device", device, "use this ceilings entry (e.g. \"H100 SXM5\") for every device");
  bool quiet = false;
  app.add_flag("-q,--quiet", quiet, "print no summary on stdout (messages still go to stderr)");
  std::vector<std::string> skip, only;
  // One comma-separated list per use (repeat the option for more): traces after it stay traces.
  // The names are checked below, with run_analysis's message.
  CLI::Option* skip_option =
      app.add_option("--skip", skip,
                     "outputs not to write, comma-separated; e.g. kernels.csv,counters.csv,trace.json "
                     "(a row or events per launch: most of the time and bytes of a long run)")
          ->delimiter(',')
          ->expected(1)
          ->allow_extra_args(false)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--outputs", only, "the only outputs to write, comma-separated (e.g. ranges.csv,phases.csv,summary.json)")
      ->delimiter(',')
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->excludes(skip_option);

  rf::analyzer::CeilingsOptions copts;
  std::string c_device, c_ceilings, c_output = ".";
  CLI::App* cmd = app.add_subcommand("ceilings", "print one chip's ceilings and write its rooflines "
                                                 "(roofline-<NAME>.svg), or list the known chips");
  cmd->add_option("--device", c_device, "ceilings entry, e.g. \"H100 SXM5\" (see --list)");
  cmd->add_flag("--list", copts.list, "list the ceilings entries");
  cmd->add_option("--ceilings", c_ceilings, "user ceilings file (its entries come first)");
  cmd->add_option("-o,--output", c_output, "directory for the SVG")->capture_default_str();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {  // --help and --version too (exit code 0)
    return app.exit(e) == 0 ? 0 : rf::analyzer::kExitBadInput;
  }

  if (cmd->parsed()) {
    if (!c_device.empty()) copts.device = c_device;
    if (!c_ceilings.empty()) copts.ceilings = c_ceilings;
    copts.output_dir = c_output;
    return rf::analyzer::run_ceilings(copts, std::cout, std::cerr);
  }
  if (traces.empty() && import_ncu.empty()) {
    std::cerr << "rfanalyze: no trace given (expected: rfanalyze TRACE... [-o DIR], or rfanalyze ceilings "
                 "--device NAME); see rfanalyze --help\n";
    return rf::analyzer::kExitBadInput;
  }
  options.traces.assign(traces.begin(), traces.end());
  options.import_ncu.assign(import_ncu.begin(), import_ncu.end());
  options.output_dir = output;
  if (!phase_map.empty()) options.phase_map = phase_map;
  if (!ceilings.empty()) options.ceilings = ceilings;
  if (!device.empty()) options.device = device;
  for (const auto& [option, list] : {std::pair{"--skip", &skip}, std::pair{"--outputs", &only}})
    for (const auto& name : *list)
      if (auto problem = rf::analyzer::output_name_problem(option, name)) {
        std::cerr << *problem << "\n";
        return rf::analyzer::kExitBadInput;
      }
  options.skip.insert(skip.begin(), skip.end());
  if (!only.empty())
    for (const auto& name : rf::analyzer::output_names())
      if (std::find(only.begin(), only.end(), name) == only.end()) options.skip.insert(name);
  try {
    return rf::analyzer::run_analysis(options, std::cerr, quiet ? nullptr : &std::cout);
  } catch (const std::exception& e) {
    // run_analysis throws for no input bytes (fuzz_analysis checks that) and catches its own
    // bugs; what is left (an exception before its outputs open), one line instead of std::terminate.
    std::cerr << "rfanalyze: internal error: " << e.what() << " (no outputs written; please report it)\n";
    return rf::analyzer::kExitInternalError;
  }
}
