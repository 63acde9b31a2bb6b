// One rfanalyze run (analyze.h, run_analysis) when its inputs or outputs fail: the exit status,
// one line naming the path and what was expected, and no outputs left behind; and where the
// terminal summary goes.
#include "rfprof/analyzer/analyze.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "analyzer_samples.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/trace/reader.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::analyze;
using testing::AnalysisRun;
using testing::TempDir;

/// A timing-mode trace of three ffma_loop launches.
void write_trace(const fs::path& path) {
  testing::TraceBuilder t(path);
  t.process(777, trace::CollectionMode::kTiming);
  for (uint32_t i = 0; i < 3; ++i) {
    t.launch(10 + i, 0, 5, 1000 + 100 * i);
    t.kernel(10 + i, 1020 + 100 * i, 1070 + 100 * i);
  }
  t.finish();
}

// Every input or output problem: its exit status and one line naming the path and what was
// expected; nothing left behind.
TEST(RunAnalysis, InputAndOutputProblemsAreNamedOnce) {
  TempDir dir;
  const fs::path good = dir.path / "good.rftrace";
  write_trace(good);
  const fs::path out = dir.path / "out";
  AnalysisRun r = analyze({}, out);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.err, "rfanalyze: no trace given (expected one or more .rftrace files, or --import-ncu FILE.csv)\n");
  r = analyze({dir.path}, out);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.err, "rfanalyze: " + dir.path.string() + ": not a regular file (expected an rfprof trace)\n");
  AnalyzeOptions ncu;
  ncu.import_ncu = {dir.path};
  r = analyze({}, out, ncu);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.err, "rfanalyze: " + dir.path.string() +
                       ": not a regular file (expected an ncu CSV: its raw page, ncu --csv --page raw, or its details "
                       "page, ncu --csv)\n");
  ncu.import_ncu = {dir.path / "missing.csv"};
  r = analyze({}, out, ncu);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.err, "rfanalyze: " + (dir.path / "missing.csv").string() +
                       ": no such file (expected an ncu CSV: its raw page, ncu --csv --page raw, or its details "
                       "page, ncu --csv)\n");
  AnalyzeOptions device;
  device.device = "No Such GPU";
  r = analyze({good}, out, device);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_NE(r.err.find("No Such GPU"), std::string::npos) << r.err;
  // A corrupt trace: its path once, the offset once, not the reader's "(at byte N)".
  std::string bytes = testing::slurp(good);
  bytes.replace(16, 4, "XXXX");
  const fs::path bad = dir.path / "bad.rftrace";
  std::ofstream(bad, std::ios::binary) << bytes;
  r = analyze({bad}, out);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.err.rfind("rfanalyze: " + bad.string() + ": ", 0), 0u) << r.err;
  EXPECT_EQ(r.err.find(bad.string(), bad.string().size()), std::string::npos) << r.err;
  EXPECT_TRUE(r.err.ends_with(" at byte 16\n")) << r.err;
  EXPECT_EQ(r.err.find("(at byte"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out / "kernels.csv"));
  const fs::path text = dir.path / "notes.txt";  // the reader's message starts with the path too
  std::ofstream(text) << "these are notes, not a trace\n";
  r = analyze({text}, out);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.err, "rfanalyze: " + text.string() + ": is not an rfprof trace at byte 0\n");

  // An output directory that cannot be created (a regular file in its path), with the reason.
  r = analyze({good}, good / "out");
  EXPECT_EQ(r.status, kExitOutputError);
  EXPECT_EQ(r.err, "rfanalyze: cannot create output directory " + (good / "out").string() + ": " +
                       std::make_error_code(std::errc::not_a_directory).message() + "\n");

  // An output that cannot be created (a directory where its file goes), written (/dev/full) or
  // renamed (a directory with a file in it where the final name goes).
  fs::create_directories(out / "kernels.csv.partial");
  r = analyze({good}, out);
  EXPECT_EQ(r.status, kExitOutputError);
  EXPECT_EQ(r.err, "rfanalyze: cannot create " + (out / "kernels.csv.partial").string() + "\n");
  fs::remove(out / "kernels.csv.partial");
  if (fs::exists("/dev/full")) {
    fs::create_symlink("/dev/full", out / "summary.json.partial");
    r = analyze({good}, out);
    EXPECT_EQ(r.status, kExitOutputError);
    EXPECT_EQ(r.err, "rfanalyze: cannot write " + (out / "summary.json.partial").string() + "\n");
    EXPECT_FALSE(fs::exists(out / "kernels.csv"));
    EXPECT_FALSE(fs::is_symlink(out / "summary.json.partial"));  // removed with the other partial files
  }
  fs::create_directories(out / "kernels.csv" / "in_the_way");
  r = analyze({good}, out);
  EXPECT_EQ(r.status, kExitOutputError);
  EXPECT_EQ(r.err.rfind("rfanalyze: cannot rename " + (out / "kernels.csv.partial").string() + ": ", 0), 0u) << r.err;
}

// Given a stream, run_analysis prints the terminal summary there once the outputs are written.
/// File offset of the first record of `type` in the trace bytes (format: docs/trace-format.md);
/// 0 when there is none.
size_t first_record_of(const std::string& bytes, trace::RecordType type) {
  for (size_t chunk = 16; chunk + 16 <= bytes.size();) {
    uint32_t payload = 0;
    std::memcpy(&payload, bytes.data() + chunk + 4, 4);
    for (size_t at = chunk + 16; at + 8 <= chunk + 16 + payload;) {
      uint16_t tag = 0;
      uint32_t size = 0;
      std::memcpy(&tag, bytes.data() + at, 2);
      std::memcpy(&size, bytes.data() + at + 4, 4);
      if (tag == static_cast<uint16_t>(type)) return at;
      at += 8 + size;
    }
    chunk += 16 + payload;
  }
  return 0;
}

// The first pass does not decode launch records (trace_pass.h); a corrupt one is reported by the
// second, as any corrupt record: one line with its offset, the exit status, no outputs left.
TEST(RunAnalysis, ACorruptLaunchRecordIsReportedAtItsOffsetByTheSecondPass) {
  TempDir dir;
  const fs::path good = dir.path / "good.rftrace";
  write_trace(good);
  std::string bytes = testing::slurp(good);
  const size_t launch = first_record_of(bytes, trace::RecordType::kLaunch);
  ASSERT_NE(launch, 0u);
  const size_t domain_at = launch + 8 + 8;  // record header, the two correlation ids
  bytes[domain_at] = 9;                     // ApiDomain has 0 and 1
  const fs::path bad = dir.path / "bad.rftrace";
  std::ofstream(bad, std::ios::binary) << bytes;
  EXPECT_NO_THROW(read_context(bad));
  const fs::path out = dir.path / "out";
  const AnalysisRun r = analyze({bad}, out);
  EXPECT_EQ(r.status, kExitBadInput);
  EXPECT_EQ(r.err, "rfanalyze: " + bad.string() + ": invalid launch.domain 9 at byte " +
                       std::to_string(domain_at) + "\n");
  EXPECT_FALSE(fs::exists(out / "kernels.csv"));
  EXPECT_FALSE(fs::exists(out / "kernels.csv.partial"));
}

// A corrupt launch record and, after it, a corrupt NVTX event: pass 1 meets the NVTX event first
// (it does not decode launches), yet the error is the launch's, the first bad byte of the file.
TEST(RunAnalysis, TheFirstBadByteIsReportedWhenASkimmedRecordIsCorrupt) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    testing::TraceBuilder t(p);
    t.process(777, trace::CollectionMode::kTiming);
    t.launch(10, 0, 5, 1000);
    t.kernel(10, 1020, 1070);
    t.push(1, 5, 1100, "step");
    t.finish();
  }
  std::string bytes = testing::slurp(p);
  const size_t launch = first_record_of(bytes, trace::RecordType::kLaunch);
  const size_t nvtx = first_record_of(bytes, trace::RecordType::kNvtx);
  ASSERT_NE(launch, 0u);
  ASSERT_GT(nvtx, launch);
  bytes[launch + 8 + 8] = 9;  // launch.domain: 0 or 1
  bytes[nvtx + 8 + 8] = 7;    // nvtx.kind: 0 to 2
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
  try {
    read_context(p);
    ADD_FAILURE() << "the corrupt records were not reported";
  } catch (const trace::TraceError& e) {
    EXPECT_EQ(e.offset(), launch + 16) << e.what();
    EXPECT_NE(std::string(e.what()).find("launch.domain"), std::string::npos) << e.what();
  }
}

TEST(RunAnalysis, TheSummaryGoesToTheGivenStream) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  AnalyzeOptions o;
  o.traces = {dir.path / "t.rftrace"};
  o.output_dir = dir.path / "out";
  std::ostringstream err, summary;
  ASSERT_EQ(run_analysis(o, err, &summary), kExitOk) << err.str();
  EXPECT_NE(summary.str().find("ffma_loop"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find(o.output_dir.string()), std::string::npos) << summary.str();
}

}  // namespace
}  // namespace rf::analyzer
