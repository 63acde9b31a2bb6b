// libFuzzer target: the whole rfanalyze run (analyze.h) on arbitrary trace bytes: both passes over
// the trace (read_context, stream_launches), the roofline rows, NVTX attribution, phases, and every
// report writer (CSV, JSON, HTML, SVG, Chrome trace). Every input must end in exit status 0 (a
// readable or truncated trace) or kExitBadInput with one "rfanalyze:" message: never an exception
// escaping run_analysis (libFuzzer reports it as a crash), a sanitizer report, a hang or an
// unbounded allocation. Built and run by scripts/run-tests like the other two targets.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>
#include <system_error>

#include "rfprof/analyzer/analyze.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  static const std::string base = "/tmp/rfprof-fuzz-analysis-" + std::to_string(::getpid());
  static const fs::path trace = base + ".rftrace";
  static const fs::path out = base + "-report";
  static const struct Cleanup {
    ~Cleanup() {
      std::error_code ec;
      fs::remove(trace, ec);
      fs::remove_all(out, ec);
    }
  } cleanup;
  if (FILE* f = std::fopen(trace.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  rf::analyzer::AnalyzeOptions options;
  options.traces = {trace};
  options.output_dir = out;
  std::ostringstream err;
  const int status = rf::analyzer::run_analysis(options, err);
  // The contract of run_analysis for a trace: analyzed (0), or refused with a message (2). An output
  // error (1) cannot come from the input bytes, so it is a finding too.
  if (status != rf::analyzer::kExitOk && status != rf::analyzer::kExitBadInput) {
    std::fprintf(stderr, "fuzz_analysis: exit status %d\n%s", status, err.str().c_str());
    std::abort();
  }
  if (status == rf::analyzer::kExitBadInput && err.str().rfind("rfanalyze: ", 0) != 0) {
    std::fprintf(stderr, "fuzz_analysis: refused without an rfanalyze: message: '%s'\n", err.str().c_str());
    std::abort();
  }
  return 0;
}
