// trace.json of several traces (chrome_trace.h): one time axis from the earliest start of any of
// them, in either order; each process, host and GPU on tracks of its own; epoch time stamps kept
// to the nanosecond.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "chrome_trace_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/chrome_trace.h"

namespace rf::analyzer {
namespace {

using nlohmann::json;
using testing::analyze_to_trace_json;
using testing::events;
using testing::TempDir;
using testing::TraceBuilder;

// Until 2026-11-29 only the first trace's NVTX ranges could move the time axis back: a later
// trace's range that began before every process start got a negative ts (Perfetto drops it), and
// the axis depended on the order of the traces. The axis now starts at the earliest process start
// or NVTX range start of every trace, in either order.
TEST(ChromeTrace, ALaterTracesEarlyRangeMovesTheTimeAxisInEitherOrder) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "late.rftrace");
    t.process(11, trace::CollectionMode::kTiming, 5000);
    t.launch(5, 0, 77, 5100);
    t.kernel(5, 5130, 5230);
    t.finish();
  }
  {
    TraceBuilder t(dir.path / "early.rftrace");
    t.process(12, trace::CollectionMode::kTiming, 3000);
    t.push(1, 88, 1000, "main");  // before either process start
    t.launch(5, 0, 88, 3100);
    t.kernel(5, 3130, 3230);
    t.pop(1, 88, 3300);
    t.finish();
  }
  for (const auto& order : {std::vector<std::string>{"late", "early"}, std::vector<std::string>{"early", "late"}}) {
    const std::filesystem::path out = dir.path / (order[0] + "_first");
    const testing::AnalysisRun run =
        testing::analyze({dir.path / (order[0] + ".rftrace"), dir.path / (order[1] + ".rftrace")}, out);
    ASSERT_EQ(run.status, kExitOk) << run.err;
    const json doc = json::parse(std::ifstream(out / "trace.json"));
    for (const auto& e : doc["traceEvents"]) {
      if (e.contains("ts")) {
        EXPECT_GE(e["ts"].get<double>(), 0.0) << order[0] << " first: " << e;
      }
    }
    auto ranges = events(doc, "X", "nvtx");
    ASSERT_EQ(ranges.size(), 1u);
    EXPECT_DOUBLE_EQ(ranges[0]["ts"].get<double>(), 0.0) << order[0] << " first";  // the axis starts at 1000 ns
    std::map<int64_t, double> call_ts;  // by pid
    for (const auto& c : events(doc, "X", "cuda_api")) call_ts[c["pid"].get<int64_t>()] = c["ts"].get<double>();
    EXPECT_DOUBLE_EQ(call_ts[11], 4.1) << order[0] << " first";  // (5100 - 1000) ns
    EXPECT_DOUBLE_EQ(call_ts[12], 2.1) << order[0] << " first";  // (3100 - 1000) ns
  }
}

// Two traces in one trace.json: one time axis (the earliest process start of the two, the second
// trace's: no event before 0, which Perfetto would drop), and each trace
// with its own device names, thread tracks and graph calls. Process 20 has no DeviceInfo and
// launches from a thread id and a graph call id that process 10 used too; process 10 has a thread
// with NVTX ranges only.
TEST(ChromeTrace, TwoTracesShareOneTimeAxisAndKeepTheirOwnTracks) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "a.rftrace");
    t.process(10, trace::CollectionMode::kTiming, 1000);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.push(1, 300, 1500, "data loading");  // thread 300: ranges, no launches
    t.pop(1, 300, 1800);
    t.launch(5, 0, 100, 2000, 0, /*graph=*/true);
    t.kernel(5, 3000, 4000);
    t.finish();
  }
  {
    TraceBuilder t(dir.path / "b.rftrace");
    t.process(20, trace::CollectionMode::kTiming, 500);  // started before process 10: the axis starts at 500 ns
    t.launch(5, 0, 100, 6000, 0, /*graph=*/true);
    t.kernel(5, 7000, 8000);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "a.rftrace", dir.path / "b.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const json doc = json::parse(std::ifstream(dir.path / "out" / "trace.json"));

  std::map<int64_t, json> kernel_of;  // by the launching process
  std::map<int64_t, std::string> track_name;
  std::set<std::pair<int64_t, uint64_t>> named_threads;
  for (const auto& m : events(doc, "M")) {
    if (m["name"] == "process_name") track_name[m["pid"].get<int64_t>()] = m["args"]["name"];
    if (m["name"] == "thread_name") named_threads.insert({m["pid"].get<int64_t>(), m["tid"].get<uint64_t>()});
  }
  auto calls = events(doc, "X", "cuda_api");
  ASSERT_EQ(calls.size(), 2u);  // graph call 5 of each process
  EXPECT_EQ(calls[0]["pid"], 10);
  EXPECT_EQ(calls[1]["pid"], 20);
  EXPECT_DOUBLE_EQ(calls[0]["ts"].get<double>(), 1.5);  // (2000 - 500) ns
  EXPECT_DOUBLE_EQ(calls[1]["ts"].get<double>(), 5.5);  // (6000 - 500) ns
  EXPECT_EQ(calls[1]["args"]["graph"], true);
  auto kernels = events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(kernels[1]["ts"].get<double>(), 6.5);  // (7000 - 500) ns
  EXPECT_EQ(track_name[kernels[0]["pid"].get<int64_t>()], "GPU 0 NVIDIA H100 80GB HBM3 (pid 10)");
  EXPECT_EQ(track_name[kernels[1]["pid"].get<int64_t>()], "GPU 0 (pid 20)");
  EXPECT_TRUE(named_threads.count({10, 300}));
  EXPECT_TRUE(named_threads.count({10, 100}));
  EXPECT_TRUE(named_threads.count({20, 100}));
}

// CUPTI's time stamps are Unix epoch nanoseconds (~1.8e18), above 2^53: each made a double is
// rounded to 256 ns, so ts was computed from the difference to the time base in integers. A call
// at +1000 ns and its kernel at +1100 ns were both drawn at 999.936 us.
TEST(ChromeTrace, EpochTimeStampsKeepTheirNanoseconds) {
  constexpr uint64_t kEpoch = 1'795'000'000'123'456'789;
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming, kEpoch);
    t.push(1, 100, kEpoch + 1, "step");
    t.launch(11, 0, 100, kEpoch + 1'000'000);
    t.kernel(11, kEpoch + 1'000'100, kEpoch + 1'002'001);
    t.pop(1, 100, kEpoch + 2'000'003);
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  const auto calls = events(doc, "X", "cuda_api");
  const auto kernels = events(doc, "X", "kernel");
  const auto ranges = events(doc, "X", "nvtx");
  ASSERT_EQ(calls.size(), 1u);
  ASSERT_EQ(kernels.size(), 1u);
  ASSERT_EQ(ranges.size(), 1u);
  EXPECT_DOUBLE_EQ(ranges[0]["ts"].get<double>(), 0.001);
  EXPECT_DOUBLE_EQ(ranges[0]["dur"].get<double>(), 2000.002);
  EXPECT_DOUBLE_EQ(calls[0]["ts"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(kernels[0]["ts"].get<double>(), 1000.1);
  EXPECT_DOUBLE_EQ(kernels[0]["dur"].get<double>(), 1.901);
  EXPECT_LT(calls[0]["ts"].get<double>(), kernels[0]["ts"].get<double>());
}

// Perfetto reads pid and tid as unsigned 32-bit values (0 above UINT32_MAX) and process_sort_index
// as a signed one: every GPU track id fits in 31 bits and lies above every Linux pid, so the two
// GPUs of one process and the GPU of another stay three track processes with their own names.
TEST(ChromeTrace, GpuTrackIdsAreDistinct31BitIdsAbovePids) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "a.rftrace");
    t.process(10, trace::CollectionMode::kTiming, 1000);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.device(1, "NVIDIA H100 80GB HBM3", "GH100");
    t.launch(1, 0, 100, 2000);
    t.kernel(1, 3000, 8000, "on_gpu0", 0);
    t.launch(2, 0, 100, 2100);
    t.kernel(2, 3000, 5000, "on_gpu1", 1);
    t.finish();
  }
  {
    TraceBuilder t(dir.path / "b.rftrace");
    t.process(20, trace::CollectionMode::kTiming, 1000);
    t.launch(1, 0, 100, 2000);
    t.kernel(1, 3000, 4000, "other_process", 0);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "a.rftrace", dir.path / "b.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const json doc = json::parse(std::ifstream(dir.path / "out" / "trace.json"));
  std::map<std::string, int64_t> track_of;
  for (const auto& k : events(doc, "X", "kernel")) track_of[k["name"]] = k["pid"].get<int64_t>();
  ASSERT_EQ(track_of.size(), 3u);
  std::set<int64_t> tracks;
  for (const auto& [name, track] : track_of) {
    EXPECT_GT(track, int64_t{1} << 22) << name;
    EXPECT_LT(track, int64_t{1} << 31) << name;
    tracks.insert(track);
  }
  EXPECT_EQ(tracks.size(), 3u);
  std::map<int64_t, std::string> names;
  for (const auto& m : events(doc, "M")) {
    if (m["name"] == "process_name") names[m["pid"].get<int64_t>()] = m["args"]["name"];
    if (m["name"] == "process_sort_index") {
      EXPECT_LT(m["args"]["sort_index"].get<int64_t>(), int64_t{1} << 31);
    }
  }
  EXPECT_EQ(names[track_of["on_gpu0"]], "GPU 0 NVIDIA H100 80GB HBM3 (pid 10)");
  EXPECT_EQ(names[track_of["on_gpu1"]], "GPU 1 NVIDIA H100 80GB HBM3 (pid 10)");
  EXPECT_EQ(names[track_of["other_process"]], "GPU 0 (pid 20)");
}

// Two ranks in containers of two hosts may have one pid: each trace keeps tracks of its own, the
// second named with its host, instead of drawing both ranks' kernels on one GPU track.
TEST(ChromeTrace, TracesOfOnePidOnTwoHostsKeepTheirOwnTracks) {
  TempDir dir;
  for (const std::string host : {"node01", "node02"}) {
    TraceBuilder t(dir.path / (host + ".rftrace"));
    t.process(7, trace::CollectionMode::kTiming, 1000, "python3 train.py", host);
    t.push(1, 7, 1500, host);
    t.launch(1, 0, 7, 2000);
    t.kernel(1, host == "node01" ? 2000 : 2500, host == "node01" ? 8000 : 5000, "k_" + host);
    t.pop(1, 7, 9000);
    t.finish();
  }
  const testing::AnalysisRun run =
      testing::analyze({dir.path / "node01.rftrace", dir.path / "node02.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const json doc = json::parse(std::ifstream(dir.path / "out" / "trace.json"));
  std::map<std::string, int64_t> kernel_track, range_track;
  for (const auto& k : events(doc, "X", "kernel")) kernel_track[k["name"]] = k["pid"].get<int64_t>();
  for (const auto& r : events(doc, "X", "nvtx")) range_track[r["name"]] = r["pid"].get<int64_t>();
  ASSERT_EQ(kernel_track.size(), 2u);
  ASSERT_EQ(range_track.size(), 2u);
  EXPECT_NE(kernel_track["k_node01"], kernel_track["k_node02"]);
  EXPECT_EQ(range_track["node01"], 7);
  EXPECT_NE(range_track["node02"], 7);
  EXPECT_GT(range_track["node02"], int64_t{1} << 22);
  std::map<int64_t, std::string> names;
  for (const auto& m : events(doc, "M"))
    if (m["name"] == "process_name") names[m["pid"].get<int64_t>()] = m["args"]["name"];
  EXPECT_EQ(names[7], "python3 (pid 7)");
  EXPECT_EQ(names[range_track["node02"]], "python3 (pid 7, node02)");
  EXPECT_EQ(names[kernel_track["k_node02"]], "GPU 0 (pid 7, node02)");
}

}  // namespace
}  // namespace rf::analyzer
