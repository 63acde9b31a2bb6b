// rfanalyze: rfprof traces -> roofline CSVs and summary.json (docs/analyzer.md).
#include <CLI/CLI.hpp>
#include <iostream>

#include "rfprof/analyzer/analyze.h"

int main(int argc, char** argv) {
  rf::analyzer::AnalyzeOptions options;
  std::vector<std::string> traces;
  std::string output = options.output_dir.string();
  std::string phase_map, ceilings, device;

  CLI::App app{"rfanalyze: rfprof traces -> kernels.csv, counters.csv, ranges.csv, phases.csv, "
               "summary.json (docs/analyzer.md)"};
  app.add_option("TRACE", traces, "rfprof trace file(s) (.rftrace)")->required();
  app.add_option("-o,--output", output, "output directory (created if needed)")->capture_default_str();
  app.add_option("--phase-map", phase_map,
                 "JSON list of {\"regex\": ..., \"phase\": ...} replacing the default phase rules");
  app.add_option("--ceilings", ceilings,
                 "JSON {\"devices\": [...]} overriding the datasheet ceilings (schema: "
                 "analyzer/data/devices.json)");
  app.add_option("--device", device, "use this ceilings entry (e.g. \"H100 SXM5\") for every device");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return rf::analyzer::kExitBadInput;
  }

  options.traces.assign(traces.begin(), traces.end());
  options.output_dir = output;
  if (!phase_map.empty()) options.phase_map = phase_map;
  if (!ceilings.empty()) options.ceilings = ceilings;
  if (!device.empty()) options.device = device;
  return rf::analyzer::run_analysis(options, std::cerr);
}
