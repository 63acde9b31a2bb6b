// libFuzzer target: the whole rfanalyze run (analyze.h) on arbitrary trace bytes: both passes over
// the trace (read_context, stream_launches), the roofline rows, NVTX attribution, phases, and every
// report writer (CSV, JSON, HTML, SVG, Chrome trace). Every input must end in exit status 0 (a
// readable or truncated trace) or kExitBadInput with one "rfanalyze:" message: never an internal
// error (exit 3: an unexpected exception), an exception escaping run_analysis, a sanitizer report,
// a hang or an unbounded allocation; after exit 0 the JSON outputs parse, the SVG and HTML are
// UTF-8, and rfprof -i's ncu pages (CSV raw and details, text, per-kernel summary) print it without
// an exception. Built and run by scripts/run-tests like the other two targets.
#include <unistd.h>

#include <cstdint>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

#include <nlohmann/json.hpp>

#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/html_report.h"
#include "rfprof/analyzer/ncu_csv.h"
#include "rfprof/analyzer/utf8.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  static const std::string base = (fs::temp_directory_path() / ("rfprof-fuzz-analysis-" + std::to_string(::getpid()))).string();
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
  std::ostringstream err, summary;
  const int status = rf::analyzer::run_analysis(options, err, &summary);
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
  if (status != rf::analyzer::kExitOk) return 0;
  // The JSON outputs parse (nlohmann's parser also refuses text that is not UTF-8), and the SVG and
  // HTML are UTF-8: names from the trace are the application's bytes.
  for (const char* name : {"summary.json", "trace.json"}) {
    std::ifstream in(out / name, std::ios::binary);
    if (!nlohmann::json::accept(in)) {
      std::fprintf(stderr, "fuzz_analysis: %s is not valid JSON\n", name);
      std::abort();
    }
  }
  // The stdout summary: UTF-8, and no control character but its newlines (no escape sequence
  // from a name reaches the terminal).
  const std::string printed = summary.str();
  if (!rf::analyzer::is_valid_utf8(printed) ||
      std::any_of(printed.begin(), printed.end(),
                  [](char c) { return c != '\n' && (static_cast<unsigned char>(c) < 0x20 || c == 0x7f); })) {
    std::fprintf(stderr, "fuzz_analysis: the summary is not printable UTF-8\n");
    std::abort();
  }
  // report.html inlines the fixed scripts (Vega, Vega-Lite, vega-embed, report.js: about 0.8 MB of
  // its 0.85 MB), the same bytes for every input: they are checked once, and each page without
  // them. Checking the whole page made the UTF-8 check about 40% of each run (perf, 2026-11-28).
  // Each script is found as html_report.cpp and report.html.in place it, between its tags: the
  // trace's data is spliced with '<' escaped, so no match is inside it, and what is left around a
  // removed script is ASCII, so no bytes that were apart are joined into a sequence.
  struct Script {
    std::string_view open, js, close;
  };
  namespace assets = rf::analyzer::assets;
  static const Script scripts[] = {{"<script>", assets::vega_js(), "</script>"},
                                   {"<script>", assets::vega_lite_js(), "</script>"},
                                   {"<script>", assets::vega_embed_js(), "</script>"},
                                   {"<script>\n", assets::report_js(), "\n</script>"}};
  static const bool scripts_are_utf8 =
      std::all_of(std::begin(scripts), std::end(scripts), [](const Script& s) { return rf::analyzer::is_valid_utf8(s.js); });
  if (!scripts_are_utf8) {
    std::fprintf(stderr, "fuzz_analysis: a script report.html inlines is not UTF-8\n");
    std::abort();
  }
  for (const char* name : {"roofline.svg", "report.html"}) {
    std::ifstream in(out / name, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const auto& script : scripts) {
      for (auto at = text.find(script.open); at != std::string::npos; at = text.find(script.open, at + 1)) {
        const std::string_view rest = std::string_view(text).substr(at + script.open.size());
        if (rest.starts_with(script.js) && rest.substr(script.js.size()).starts_with(script.close)) {
          text.erase(at + script.open.size(), script.js.size());
          break;
        }
      }
    }
    if (!rf::analyzer::is_valid_utf8(text)) {
      std::fprintf(stderr, "fuzz_analysis: %s is not UTF-8\n", name);
      std::abort();
    }
  }
  // rfprof -i's pages (ncu_csv.h) read the trace as the analysis did, so they print it: an
  // exception escaping them (it aborts the fuzzer) or a sanitizer report is a finding.
  for (const char* page : {"raw", "details"}) {
    std::ostringstream csv;
    rf::analyzer::write_ncu_csv(csv, {trace}, page, {});
  }
  std::ostringstream text, summary_text;
  rf::analyzer::write_ncu_text(text, {trace}, {});
  rf::analyzer::write_ncu_summary_text(summary_text, {trace}, {});
  return 0;
}
