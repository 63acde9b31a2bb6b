// A real trace (the shipped H100 ResNet-18 step) with single bytes flipped: every analysis ends,
// exits ok or with a bad-input status, and writes no negative count and no unbounded roofline.
// Found by hand: byte 125933 set to 163 turned an FP64 count into 4.1e-319 FLOP, byte 68013 set
// to 143 another; roofline.svg's axis then looped without end while its memory grew.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/trace/reader.h"
#include "rfprof/analyzer/utf8.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::CsvTable;
using testing::TempDir;

/// Columns of kernels.csv that hold counts, bytes, intensities or rates: never negative.
bool is_count_column(const std::string& name) {
  for (const char* suffix : {"_flop", "_ops", "_bytes", "intensity", "flop_per_s", "duration_ns"})
    if (name.ends_with(suffix)) return true;
  return false;
}

TEST(CorruptTraces, FlippedBytesNeverHangCrashOrWriteNegativeCounts) {
  const std::string original = testing::slurp(testing::shipped_trace());
  ASSERT_GT(original.size(), 200000u) << testing::shipped_trace();
  std::vector<std::pair<size_t, unsigned char>> flips = {{125933, 163}, {68013, 143}};
  for (size_t at = 7; at < original.size(); at += 1999) flips.push_back({at, static_cast<unsigned char>(original[at] ^ 0x80)});
  TempDir dir;
  size_t analyzed = 0, refused = 0;
  for (const auto& [at, byte] : flips) {
    SCOPED_TRACE("byte " + std::to_string(at) + " set to " + std::to_string(byte));
    std::string bytes = original;
    bytes[at] = static_cast<char>(byte);
    const fs::path trace = dir.path / "flipped.rftrace";
    std::ofstream(trace, std::ios::binary | std::ios::trunc) << bytes;
    const fs::path out = dir.path / ("out-" + std::to_string(at));
    const testing::AnalysisRun run = testing::analyze({trace}, out);
    ASSERT_TRUE(run.status == kExitOk || run.status == kExitBadInput) << run.status << ": " << run.err;
    if (run.status != kExitOk) {
      ++refused;
      EXPECT_EQ(run.err.rfind("rfanalyze: ", 0), 0u) << run.err;
      continue;
    }
    ++analyzed;
    EXPECT_LT(fs::file_size(out / "roofline.svg"), 1u << 20);
    const CsvTable k = CsvTable::read(out / "kernels.csv");
    for (size_t c = 0; c < k.header.size(); ++c) {
      if (!is_count_column(k.header[c])) continue;
      for (const auto& row : k.rows)
        ASSERT_FALSE(c < row.size() && row[c].starts_with("-")) << k.header[c] << " = " << row[c];
    }
    fs::remove_all(out);
  }
  // Most flips land in values or names and leave a readable trace; some break a record.
  EXPECT_GT(analyzed, flips.size() / 2);
  std::cout << flips.size() << " flips: " << analyzed << " analyzed, " << refused << " refused\n";
}

// Found by fuzz_analysis in its first minute: a trace whose strings are not UTF-8 (an NVTX range
// named in Latin-1 by the application, a collector message, a flipped byte) made summary.json's
// nlohmann::json::dump throw type_error 316 out of run_analysis, and rfanalyze died in
// std::terminate with no outputs. Every JSON writer now replaces invalid bytes with U+FFFD.
TEST(CorruptTraces, NamesThatAreNotUtf8AreReplacedInJsonAndKeptInCsv) {
  TempDir dir;
  const std::string bad_device = "H100 \xb1";              // Latin-1 plus-minus sign
  const std::string bad_kernel = "gemm_\xff\xfe(float*)";  // never valid in UTF-8
  const std::string bad_range = "layer\xc3";               // a truncated two-byte sequence
  const std::string bad_message = "counters busy \xe2\x82";
  {
    testing::TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);
    t.device(0, bad_device, "GH100");
    t.push(1, 100, 1000, bad_range);
    t.launch(11, 0, 100, 2500);
    t.kernel(11, 3000, 8000, bad_kernel);
    t.pop(1, 100, 9000);
    t.error(trace::ErrorCode::kCountersUnavailable, bad_message);
    t.finish();
  }
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  // summary.json is valid UTF-8 JSON (nlohmann's parser refuses anything else) with U+FFFD.
  const nlohmann::json summary = nlohmann::json::parse(testing::slurp(out / "summary.json"));
  EXPECT_EQ(summary["devices"][0]["name"], "H100 \xef\xbf\xbd");
  EXPECT_EQ(summary["collector_errors"][0]["message"], "counters busy \xef\xbf\xbd");
  const nlohmann::json chrome = nlohmann::json::parse(testing::slurp(out / "trace.json"));
  bool kernel_seen = false;
  for (const auto& e : chrome["traceEvents"])
    if (e.value("cat", "") == "kernel") {
      kernel_seen = true;
      EXPECT_EQ(e["name"], "gemm_\xef\xbf\xbd\xef\xbf\xbd(float*)");
    }
  EXPECT_TRUE(kernel_seen);
  // roofline.svg (XML) and report.html too: the SVG once kept the bytes and was not well-formed.
  EXPECT_TRUE(is_valid_utf8(testing::slurp(out / "roofline.svg")));
  EXPECT_NE(testing::slurp(out / "roofline.svg").find("H100 \xef\xbf\xbd"), std::string::npos);
  const std::string html = testing::slurp(out / "report.html");
  EXPECT_TRUE(is_valid_utf8(html));
  EXPECT_NE(html.find("gemm_\xef\xbf\xbd\xef\xbf\xbd(float*)"), std::string::npos);  // replaced, not dropped
  // The CSVs keep the application's bytes as they were: they are the data, not a JSON document.
  const testing::CsvTable k = testing::CsvTable::read(out / "kernels.csv");
  ASSERT_EQ(k.rows.size(), 1u);
  EXPECT_EQ(k.cell(0, "kernel"), bad_kernel);
  EXPECT_EQ(k.cell(0, "nvtx"), bad_range);
}

/// read_context's TraceError on `path`, or "" when it reads.
std::string context_error(const fs::path& path) {
  try {
    (void)read_context(path);
  } catch (const trace::TraceError& e) {
    EXPECT_EQ(e.kind(), trace::TraceErrorKind::kBadRecord) << e.what();
    return e.what();
  }
  return "";
}

// Small files whose ids name big strings again and again: pass 1 copied each name per id, so a
// 1 MB file asked for gigabytes (a CallStack of 3,000 frames naming one 1 MiB string: 4 GB, then
// bad_alloc; 400 metric ids: 417 MB). Now what pass 1 copies is bounded by 8 times the file, at
// least 256 MiB, and a file past it is refused at the record that crosses it (a review).
TEST(CorruptTraces, IdsNamingOneBigStringOverAndOverAreRefused) {
  TempDir dir;
  const std::string big(1u << 20, 'm');
  {
    testing::TraceBuilder t(dir.path / "config.rftrace");
    t.config(1, std::vector<std::string>(300, big));  // 300 ids, one 1 MiB string
    t.finish();
  }
  EXPECT_NE(context_error(dir.path / "config.rftrace").find("a MetricConfig names strings that"), std::string::npos);
  {
    testing::TraceBuilder t(dir.path / "stack.rftrace");
    t.call_stack(1, std::vector<std::pair<std::string, std::string>>(300, {big, "libx.so"}));
    t.finish();
  }
  EXPECT_NE(context_error(dir.path / "stack.rftrace").find("a CallStack names strings that"), std::string::npos);
  {
    testing::TraceBuilder t(dir.path / "devices.rftrace");  // 300 devices, one 1 MiB chip name
    for (uint32_t d = 0; d < 300; ++d) t.device(d, "NVIDIA H100 80GB HBM3", big);
    t.finish();
  }
  EXPECT_NE(context_error(dir.path / "devices.rftrace").find("a DeviceInfo names strings that"), std::string::npos);
  {
    testing::TraceBuilder t(dir.path / "fine.rftrace");  // 100 MiB named: under the 256 MiB floor
    t.config(1, std::vector<std::string>(100, big));
    t.finish();
  }
  EXPECT_EQ(context_error(dir.path / "fine.rftrace"), "");
}

// NVTX ranges nested d deep have d paths of up to d names: 8,000 nested 16-byte names took
// 2.85 GB from a 336 KB file. finalize() stops at the path budget (read_context sets 8 times the
// file, at least 256 MiB); here a budget of 1 MiB: 100 nested 1,000-byte names (about 10 MB of
// paths) are refused, 20 (about 0.4 MB) are read.
TEST(CorruptTraces, RangesNestedDeeperThanThePathBudgetAreRefusedNotExpanded) {
  const std::string name(1000, 'r');
  for (const uint64_t depth : {20, 100}) {
    NvtxIndex x;
    x.set_path_budget(1u << 20);
    for (uint64_t i = 0; i < depth; ++i) {
      trace::NvtxEvent e;
      e.id = i + 1;
      e.kind = trace::NvtxEventKind::kStart;
      e.thread_id = 5;
      e.timestamp_ns = 100 + i;
      x.add(e, name);
    }
    if (depth == 20) {
      EXPECT_NO_THROW(x.finalize());
      EXPECT_EQ(x.path(x.attribute(5, 200)).names.size(), 20u);
    } else {
      EXPECT_THROW(x.finalize(), NvtxPathBudgetError);
    }
  }
}

TEST(Utf8, WellFormedSequencesOnly) {
  EXPECT_TRUE(is_valid_utf8(""));
  EXPECT_TRUE(is_valid_utf8("plain ascii \x7f"));
  EXPECT_TRUE(is_valid_utf8("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5 \xf4\x8f\xbf\xbf"));  // é € U+1F525 U+10FFFF
  for (const char* bad : {"\x80", "\xc3", "\xc0\x80", "\xe0\x80\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80",
                          "\xf5\x80\x80\x80", "\xe2\x82", "\xff",
                          "\xf0\x80\x80\x80",   // overlong 4-byte form
                          "\xe2\x82\x41",        // third byte not a continuation (below 0x80)
                          "\xe2\x82\xc0"})       // third byte not a continuation (above 0xBF)
    EXPECT_FALSE(is_valid_utf8(bad)) << ::testing::PrintToString(std::string(bad));
  // A sequence cut by the end of the view is invalid, whatever bytes follow in memory.
  EXPECT_FALSE(is_valid_utf8(std::string_view("\xc3\xa9", 1)));
  EXPECT_EQ(valid_utf8("ok \xc3\xa9"), "ok \xc3\xa9");
  EXPECT_EQ(valid_utf8("a\xff" "b"), "a\xef\xbf\xbd" "b");
  EXPECT_EQ(valid_utf8("\xe2\x82"), "\xef\xbf\xbd\xef\xbf\xbd");  // each stray byte, as nlohmann
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
}

}  // namespace
}  // namespace rf::analyzer
