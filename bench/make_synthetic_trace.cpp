// make_synthetic_trace PATH [LAUNCHES]: writes the benchmarks' synthetic training trace
// (synthetic_trace.h) to PATH, so that rfanalyze's time and memory can be measured on it.
#include <CLI/CLI.hpp>
#include <iostream>

#include "rfprof/trace/writer.h"
#include "synthetic_trace.h"

int main(int argc, char** argv) {
  CLI::App app{"Write a synthetic rfprof trace shaped like a training run (bench/README.md)"};
  std::string path;
  rf::bench::SyntheticShape shape;
  app.add_option("PATH", path, "trace file to write (overwritten)")->required();
  app.add_option("LAUNCHES", shape.launches, "kernel launches")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--kernels", shape.distinct_kernels, "distinct kernel names")
      ->capture_default_str()->check(CLI::PositiveNumber);
  bool no_counters = false;
  app.add_flag("--no-counters", no_counters,
               "a counters-mode run whose counters were unavailable: launches without counters and "
               "one CollectorError");
  app.add_flag("--op-ranges", shape.op_ranges,
               "each launch inside an operator's NVTX push/pop range, as torch.autograd.profiler.emit_nvtx records");
  CLI11_PARSE(app, argc, argv);
  shape.counters = !no_counters;
  try {
    std::cout << rf::bench::write_synthetic_trace(path, shape) << " launches written to " << path << "\n";
  } catch (const rf::trace::WriteError& e) {
    std::cerr << "make_synthetic_trace: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
