// Helpers of the trace.json tests (test_chrome_trace.cpp, test_chrome_trace_traces.cpp).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"

namespace rf::analyzer::testing {

/// Runs the analysis of DIR/t.rftrace into DIR/out and parses its trace.json into `doc` (the
/// parse throws, failing the test, on invalid JSON).
inline void analyze_to_trace_json(const std::filesystem::path& dir, nlohmann::json& doc) {
  const AnalysisRun run = analyze({dir / "t.rftrace"}, dir / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  std::ifstream in(dir / "out" / "trace.json");
  doc = nlohmann::json::parse(in);
}

/// The events of `doc` with phase `ph` and category `cat` ("" = any).
inline std::vector<nlohmann::json> events(const nlohmann::json& doc, const std::string& ph,
                                         const std::string& cat = "") {
  std::vector<nlohmann::json> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  return out;
}

}  // namespace rf::analyzer::testing
