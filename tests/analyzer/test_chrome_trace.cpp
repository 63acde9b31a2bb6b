// trace.json (chrome_trace.h): kernels on device/stream tracks, NVTX ranges on thread tracks,
// timestamps in microseconds from the process start, valid JSON with kernel names that need
// escaping. Several traces on one time axis: test_chrome_trace_traces.cpp.
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
using testing::TempDir;
using testing::TraceBuilder;

using testing::analyze_to_trace_json;
using testing::events;

TEST(ChromeTrace, KernelsOnStreamTracksAndNvtxOnThreadTracks) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);  // ProcessInfo start_ns = 0
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.push(1, 100, 1000, "step");
    t.push(2, 100, 2000, "forward");
    t.launch(11, 0, 100, 2500);
    t.kernel(11, 3000, 8000, "gemm<float, \"tile\"> </script>");
    t.pop(2, 100, 9000);
    t.launch(12, 0, 101, 9500);  // autograd-like thread, no ranges of its own
    t.kernel(12, 10000, 10500, "relu");
    t.push(3, 100, 20000, "never ended");
    t.pop(1, 100, 30000);
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  EXPECT_EQ(doc["displayTimeUnit"], "ns");

  auto kernels = events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0]["name"], "gemm<float, \"tile\"> </script>");
  EXPECT_DOUBLE_EQ(kernels[0]["ts"].get<double>(), 3.0);   // 3000 ns after the process start
  EXPECT_DOUBLE_EQ(kernels[0]["dur"].get<double>(), 5.0);  // 5000 ns
  EXPECT_EQ(kernels[0]["tid"], 7);                         // stream
  EXPECT_EQ(kernels[0]["args"]["nvtx"], "step/forward");
  EXPECT_EQ(kernels[0]["args"]["phase"], "forward");
  EXPECT_EQ(kernels[1]["name"], "relu");
  EXPECT_EQ(kernels[1]["args"]["nvtx"], "step");  // the main thread's open range
  const auto gpu_track = kernels[0]["pid"];
  EXPECT_EQ(kernels[1]["pid"], gpu_track);
  EXPECT_NE(gpu_track, 4242);

  auto ranges = events(doc, "X", "nvtx");
  ASSERT_EQ(ranges.size(), 3u);
  std::map<std::string, json> by_name;
  for (const auto& r : ranges) by_name[r["name"]] = r;
  EXPECT_EQ(by_name["step"]["pid"], 4242);
  EXPECT_EQ(by_name["step"]["tid"], 100);
  EXPECT_DOUBLE_EQ(by_name["step"]["ts"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(by_name["step"]["dur"].get<double>(), 29.0);
  EXPECT_DOUBLE_EQ(by_name["forward"]["dur"].get<double>(), 7.0);
  // A range never ended lasts until the last range end of its trace (30000 ns).
  EXPECT_DOUBLE_EQ(by_name["never ended"]["dur"].get<double>(), 10.0);
  EXPECT_EQ(by_name["never ended"]["args"]["never_ended"], true);

  // Track names: the process, its thread, the GPU and its stream.
  std::map<std::string, int> names;
  for (const auto& m : events(doc, "M")) names[m["args"].value("name", "")]++;
  EXPECT_EQ(names["python3 (pid 4242)"], 1);
  EXPECT_EQ(names["thread 100"], 1);
  EXPECT_EQ(names["GPU 0 NVIDIA H100 80GB HBM3 (pid 4242)"], 1);
  EXPECT_EQ(names["stream 7"], 1);
}

}  // namespace
}  // namespace rf::analyzer

namespace rf::analyzer {
namespace {

TEST(ChromeTrace, GpuMemoryInUseIsACounterTrackOfTheProcess) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);
    t.memory(true, 2000, 0x10, 1000);
    t.memory(true, 3000, 0x20, 500);
    t.memory(false, 4000, 0x10, 0);
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  auto counters = events(doc, "C");
  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[0]["pid"], 4242);
  EXPECT_EQ(counters[0]["name"], "GPU memory in use (bytes)");
  EXPECT_DOUBLE_EQ(counters[1]["ts"].get<double>(), 3.0);
  EXPECT_EQ(counters[0]["args"]["in_use_bytes"], 1000);
  EXPECT_EQ(counters[1]["args"]["in_use_bytes"], 1500);
  EXPECT_EQ(counters[2]["args"]["in_use_bytes"], 500);
}

}  // namespace
}  // namespace rf::analyzer

namespace rf::analyzer {
namespace {

// Kernel replay (counters mode, H100, CUPTI 13.0) leaves the kernel record without timestamps
// (start = end = 0). trace.json must not draw such a kernel at time 0 (1.8e15 us before the process
// start on that H100 trace) but inside its launch call, where it ran: at the call's end, lasting
// gpu__time_duration.sum, and say so.
TEST(ChromeTrace, AKernelWithoutTimestampsIsDrawnAtTheEndOfItsLaunchCall) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kCounters);  // ProcessInfo start_ns = 0
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.config(1, testing::roofline_metrics());
    testing::Counts c;
    c.ffma = 1000;
    c.gpu_time = 4000;
    t.counters(1, 11, c.values());
    t.counters(1, 12, c.values());
    trace::LaunchApi l;  // a 59 us launch call: the kernel and its replays ran inside it
    l.correlation_id = 11;
    l.thread_id = 100;
    l.api_start_ns = 1000;
    l.api_end_ns = 60000;
    l.kernel_name = t.writer().intern("_Z9ffma_loopPfi");
    t.writer().append(l);
    t.kernel(11, 0, 0);
    t.launch(12, 0, 100, 70000);
    t.kernel(12, 80000, 81000);  // timestamps of its own: kept
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  auto kernels = events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_DOUBLE_EQ(kernels[0]["ts"].get<double>(), 56.0);  // 60000 - 4000 ns
  EXPECT_DOUBLE_EQ(kernels[0]["dur"].get<double>(), 4.0);
  EXPECT_TRUE(kernels[0]["args"].contains("start"));
  EXPECT_DOUBLE_EQ(kernels[1]["ts"].get<double>(), 80.0);
  EXPECT_DOUBLE_EQ(kernels[1]["dur"].get<double>(), 1.0);
  EXPECT_FALSE(kernels[1]["args"].contains("start"));
}

}  // namespace
}  // namespace rf::analyzer

namespace rf::analyzer {
namespace {

// Launch calls are drawn on their thread's track and joined to their kernels by flow arrows, as
// the PyTorch profiler's traces show cudaLaunchKernel: a graph launch's call once for all its
// kernels; a call without an end time (api_end_ns 0, only in a hand-made or damaged trace: the
// collector writes LaunchApi at the call's exit) is not drawn, its kernel is.
TEST(ChromeTrace, LaunchCallsAreOnTheirThreadAndFlowToTheirKernels) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);  // ProcessInfo start_ns = 0
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    trace::LaunchApi l;
    l.correlation_id = 11;
    l.cbid = 652;  // cuLaunchKernelEx
    l.thread_id = 100;
    l.api_start_ns = 2000;
    l.api_end_ns = 6000;
    l.kernel_name = t.writer().intern("_Z4relui");
    t.writer().append(l);
    t.kernel(11, 7000, 9000, "relu(int)");
    t.launch(20, 0, 101, 10000, 0, /*graph=*/true);  // cuGraphLaunch-like: one call, two kernels
    t.kernel(20, 12000, 13000, "a");
    t.kernel(20, 13000, 15000, "b");
    trace::LaunchApi open = l;  // no end time
    open.correlation_id = 30;
    open.api_start_ns = 20000;
    open.api_end_ns = 0;
    t.writer().append(open);
    t.kernel(30, 21000, 22000, "relu(int)");
    l.correlation_id = 40;  // after the graph launch: an ordinary call again
    l.api_start_ns = 30000;
    l.api_end_ns = 31000;
    t.writer().append(l);
    t.kernel(40, 32000, 33000, "relu(int)");
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  auto calls = events(doc, "X", "cuda_api");
  ASSERT_EQ(calls.size(), 3u);
  EXPECT_EQ(calls[0]["name"], "cuLaunchKernelEx");
  EXPECT_EQ(calls[0]["pid"], 4242);
  EXPECT_EQ(calls[0]["tid"], 100);
  EXPECT_DOUBLE_EQ(calls[0]["ts"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(calls[0]["dur"].get<double>(), 4.0);
  EXPECT_EQ(calls[0]["args"]["correlation"], 11);
  EXPECT_FALSE(calls[0]["args"].contains("graph"));
  EXPECT_EQ(calls[1]["tid"], 101);
  EXPECT_EQ(calls[1]["name"], "driver API call (cbid 0)");  // TraceBuilder::launch sets no cbid
  EXPECT_EQ(calls[1]["args"]["graph"], true);
  EXPECT_DOUBLE_EQ(calls[1]["ts"].get<double>(), 10.0);
  EXPECT_EQ(calls[2]["args"], json({{"correlation", 40}}));  // no "graph" left from the one before
  EXPECT_DOUBLE_EQ(calls[2]["dur"].get<double>(), 1.0);

  auto kernels = events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 5u);
  kernels.erase(kernels.begin() + 3);  // the kernel of the call without an end has no flow
  auto starts = events(doc, "s", "ac2g");
  auto ends = events(doc, "f", "ac2g");
  ASSERT_EQ(starts.size(), 4u);  // relu, a and b of the graph, relu; none for the call without an end
  ASSERT_EQ(ends.size(), 4u);
  std::set<uint64_t> ids;
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(starts[i]["id"], ends[i]["id"]);
    ids.insert(starts[i]["id"].get<uint64_t>());
    EXPECT_EQ(ends[i]["bp"], "e");
    EXPECT_EQ(ends[i]["pid"], kernels[i]["pid"]);  // the GPU track
    EXPECT_EQ(ends[i]["tid"], kernels[i]["tid"]);
    EXPECT_DOUBLE_EQ(ends[i]["ts"].get<double>(), kernels[i]["ts"].get<double>());
  }
  EXPECT_EQ(ids.size(), 4u);
  EXPECT_EQ(starts[0]["tid"], 100);
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), 2.0);
  EXPECT_EQ(starts[2]["tid"], 101);
  EXPECT_DOUBLE_EQ(starts[2]["ts"].get<double>(), 10.0);

  // Both launching threads have a named track although neither pushed an NVTX range.
  std::map<std::string, int> names;
  for (const auto& m : events(doc, "M")) names[m["args"].value("name", "")]++;
  EXPECT_EQ(names["thread 100"], 1);
  EXPECT_EQ(names["thread 101"], 1);
}

}  // namespace
}  // namespace rf::analyzer

namespace rf::analyzer {
namespace {

// Where trace.json puts things when the trace does not start tidily: an NVTX range that began
// before the collector's start (base of the time axis: the earlier), a process without a name, a
// never-ended range that starts after every ended one, a kernel that ends before it starts (not
// drawn), and a counters-mode kernel whose args carry the sums over precisions and directions.
TEST(ChromeTrace, TimeAxisTracksAndArgsOfAnUntidyTrace) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    trace::ProcessInfo p;  // no process name; injected at 5000 ns
    p.pid = 31;
    p.start_ns = 5000;
    p.mode = trace::CollectionMode::kCounters;
    t.writer().append(p);
    t.device(0, "NVIDIA H100 80GB HBM3", "GH100");
    t.config(1, testing::roofline_metrics());
    t.push(1, 100, 1000, "setup");  // before the process start
    t.pop(1, 100, 6000);
    t.launch(11, 0, 100, 7000);
    t.kernel(11, 8000, 10000);
    testing::Counts c;
    c.dfma = 10;   // 20 FP64 FLOP
    c.ffma = 100;  // 200 FP32 FLOP
    c.read = 300;
    c.write = 100;
    t.counters(1, 11, c.values());
    t.launch(12, 0, 100, 11000);
    t.kernel(12, 13000, 12000);      // ends before it starts
    t.push(2, 100, 20000, "tail");  // never ended, after the last ended range (6000 ns)
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  for (const auto& e : doc["traceEvents"])
    if (e.contains("ts")) {
      EXPECT_GE(e["ts"].get<double>(), 0.0) << e;
    }
  auto ranges = events(doc, "X", "nvtx");
  ASSERT_EQ(ranges.size(), 2u);
  std::map<std::string, json> by_name;
  for (const auto& r : ranges) by_name[r["name"]] = r;
  EXPECT_DOUBLE_EQ(by_name["setup"]["ts"].get<double>(), 0.0);  // the axis starts at 1000 ns
  EXPECT_DOUBLE_EQ(by_name["tail"]["ts"].get<double>(), 19.0);
  EXPECT_DOUBLE_EQ(by_name["tail"]["dur"].get<double>(), 0.0);  // nothing ended after it started
  EXPECT_EQ(by_name["tail"]["args"]["never_ended"], true);

  auto kernels = events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);  // launch 12's kernel has no duration
  const json& k = kernels[0];
  EXPECT_EQ(k["args"]["id"], 11);
  EXPECT_DOUBLE_EQ(k["ts"].get<double>(), 7.0);
  EXPECT_EQ(k["args"]["flop"], 220.0);
  EXPECT_EQ(k["args"]["dram_bytes"], 400.0);
  EXPECT_DOUBLE_EQ(k["args"]["arithmetic_intensity"].get<double>(), 220.0 / 400.0);
  EXPECT_DOUBLE_EQ(k["args"]["flop_per_s"].get<double>(), 220.0 / 2e-6);

  // The GPU's track id lies above every Linux pid (pid_max <= 2^22) and sorts by that id.
  const int64_t gpu = k["pid"].get<int64_t>();
  EXPECT_GT(gpu, int64_t{1} << 22);
  std::map<std::string, json> process_meta;
  for (const auto& m : events(doc, "M"))
    if (m["pid"] == gpu || m["pid"] == 31) process_meta[m["name"].get<std::string>() + " " + m["pid"].dump()] = m;
  EXPECT_EQ(process_meta["process_sort_index " + std::to_string(gpu)]["args"]["sort_index"], gpu);
  EXPECT_EQ(process_meta["process_name 31"]["args"]["name"], "process (pid 31)");
}

// A range never ended is open to the end of the trace (the attribution's rule), drawn to the
// trace's last event, not to the last range end: here the kernel the attribution puts inside it.
TEST(ChromeTrace, ARangeNeverEndedLastsToTheTracesLastEvent) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(31, trace::CollectionMode::kTiming, 0);
    t.push(1, 100, 1000, "step 0");
    t.pop(1, 100, 2000);
    t.push(2, 100, 2100, "backward");  // never ended: the process was killed
    t.launch(11, 0, 100, 3000);
    t.kernel(11, 4000, 9000);
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  std::map<std::string, json> by_name;
  for (const auto& r : events(doc, "X", "nvtx")) by_name[r["name"]] = r;
  ASSERT_EQ(by_name.size(), 2u);
  EXPECT_DOUBLE_EQ(by_name["backward"]["ts"].get<double>(), 2.1);
  EXPECT_DOUBLE_EQ(by_name["backward"]["dur"].get<double>(), 6.9);  // to the kernel's end, 9000 ns
  EXPECT_EQ(by_name["backward"]["args"]["never_ended"], true);
  const auto kernels = events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0]["args"]["nvtx"], "backward");
}

// nvtxRangeStart/End ranges need not nest: one that overlaps a range drawn before it on its thread
// partially is an async slice of the process ("b"/"e", one id), never an "X" event that Perfetto
// would move aside or nest wrongly. Ranges that nest stay "X" events on the thread.
TEST(ChromeTrace, RangesThatDoNotNestAreAsyncSlices) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(31, trace::CollectionMode::kTiming, 0);
    t.push(1, 100, 1000, "A");
    t.push(2, 100, 2000, "inside A");
    t.pop(2, 100, 2500);
    t.push(3, 100, 3000, "B");  // ends after A: overlaps it partially
    t.pop(1, 100, 5000);
    t.push(4, 100, 6000, "inside B");  // B is not drawn on the thread: nests in nothing
    t.pop(4, 100, 7000);
    t.pop(3, 100, 8000);
    t.finish();
  }
  json doc;
  ASSERT_NO_FATAL_FAILURE(analyze_to_trace_json(dir.path, doc));
  std::set<std::string> slices;
  for (const auto& r : events(doc, "X", "nvtx")) slices.insert(r["name"]);
  EXPECT_EQ(slices, (std::set<std::string>{"A", "inside A", "inside B"}));
  const auto begins = events(doc, "b", "nvtx");
  const auto ends = events(doc, "e", "nvtx");
  ASSERT_EQ(begins.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(begins[0]["name"], "B");
  EXPECT_EQ(begins[0]["id"], ends[0]["id"]);
  EXPECT_EQ(begins[0]["pid"], 31);
  EXPECT_DOUBLE_EQ(begins[0]["ts"].get<double>(), 3.0);
  EXPECT_DOUBLE_EQ(ends[0]["ts"].get<double>(), 8.0);
}

// rfanalyze serializes trace.json on a thread of its own, in batches of 1,024 launches
// (batch_thread.h). Two traces of 2,500 launches each (partial batches at each trace's end): every
// launch once, in order, and the second trace's track names after the first trace's last kernel.
TEST(ChromeTrace, ManyLaunchesOfTwoTracesStayInOrderAndApart) {
  constexpr uint32_t kLaunches = 2500;
  TempDir dir;
  for (const uint32_t pid : {10u, 20u}) {
    TraceBuilder t(dir.path / (std::to_string(pid) + ".rftrace"));
    t.process(pid, trace::CollectionMode::kTiming, 1000);
    for (uint32_t i = 1; i <= kLaunches; ++i) {
      t.launch(i, 0, 100, 2000 + 100 * uint64_t{i});
      t.kernel(i, 2050 + 100 * uint64_t{i}, 2090 + 100 * uint64_t{i});
    }
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "10.rftrace", dir.path / "20.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const json doc = json::parse(std::ifstream(dir.path / "out" / "trace.json"));
  std::vector<std::pair<int64_t, int64_t>> kernels;  // (launching pid, correlation id) in file order
  std::map<int64_t, int64_t> track_pid;  // GPU track -> launching pid, from its process_name
  size_t last_kernel_of_10 = 0, first_name_of_20 = 0, index = 0;
  for (const auto& e : doc["traceEvents"]) {
    ++index;
    if (e["ph"] == "M" && e["name"] == "process_name") {
      const std::string name = e["args"]["name"];
      const int64_t pid = name.find("(pid 20)") != std::string::npos ? 20 : 10;
      track_pid[e["pid"].get<int64_t>()] = pid;
      if (pid == 20 && first_name_of_20 == 0) first_name_of_20 = index;
    }
    if (e["ph"] == "X" && e.value("cat", "") == "kernel") {
      const int64_t pid = track_pid.at(e["pid"].get<int64_t>());
      kernels.emplace_back(pid, e["args"]["id"].get<int64_t>());
      if (pid == 10) last_kernel_of_10 = index;
    }
  }
  ASSERT_EQ(kernels.size(), 2 * size_t{kLaunches});
  for (size_t i = 0; i < kernels.size(); ++i) {
    const int64_t pid = i < kLaunches ? 10 : 20;
    const auto id = static_cast<int64_t>(i % kLaunches + 1);
    ASSERT_EQ(kernels[i], std::make_pair(pid, id)) << "kernel event " << i;
  }
  EXPECT_LT(last_kernel_of_10, first_name_of_20);
  EXPECT_EQ(events(doc, "X", "cuda_api").size(), 2 * size_t{kLaunches});
}

}  // namespace
}  // namespace rf::analyzer

namespace rf::analyzer {
namespace {

// Events are serialized into a buffer that reaches the stream in blocks (chrome_trace.h): a
// document of many blocks holds every event once, in order, and names that are not UTF-8 come out
// with U+FFFD, as nlohmann::json's dump(..., replace) writes them.
TEST(ChromeTrace, ADocumentOfManyWriteBlocksHoldsEveryEventOnceInOrder) {
  std::ostringstream out;
  TraceContext ctx;
  ctx.process = trace::ProcessInfo{};
  ctx.process->pid = 77;
  const uint32_t launches = 3000;  // 4 events each, hundreds of bytes: many 64 KiB blocks
  {
    ChromeTrace t(out);
    t.begin_trace(ctx);
    for (uint32_t i = 1; i <= launches; ++i) {
      KernelRow row;
      row.id = i;
      row.kernel = i % 2 ? "gemm<" + std::to_string(i) + ">" : std::string("bad\xff\xfename");
      row.start_ns = 10'000 + 1'000ull * i;
      row.duration_ns = 500;
      row.thread_id = 5;
      row.launch_start_ns = 1'000ull * i;
      row.launch_end_ns = 1'000ull * i + 200;
      row.nvtx = "step/forward";
      row.phase = "forward";
      t.add_launch(row);
    }
    const size_t before_finish = out.str().size();
    EXPECT_GT(before_finish, 0u) << "nothing written before finish(): no blocks";
    t.finish();
    EXPECT_GT(out.str().size(), before_finish);
    // + names and sort index: the process, its thread, the GPU track and its stream
    EXPECT_EQ(t.events(), 4u * launches + 5);
  }
  ASSERT_GT(out.str().size(), 10u * (size_t{1} << 16)) << "too small to span many blocks";
  const json doc = json::parse(out.str());  // throws, failing the test, on a torn document
  // Each event's text is what json::dump writes for it (compact, UTF-8 not escaped to \u).
  const std::string text = out.str();
  const std::string open = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", close = "\n]}\n";
  ASSERT_EQ(text.substr(0, open.size()), open);
  ASSERT_EQ(text.substr(text.size() - close.size()), close);
  size_t texts = 0;
  for (size_t at = open.size(), end = text.size() - close.size(); at < end; ++texts) {
    size_t next = text.find(",\n", at);  // JSON strings escape line feeds: only between events
    if (next == std::string::npos || next > end) next = end;
    const std::string event = text.substr(at, next - at);
    ASSERT_EQ(event, json::parse(event).dump(-1, ' ', false, json::error_handler_t::replace));
    at = next + 2;
  }
  EXPECT_EQ(texts, doc["traceEvents"].size());
  const auto kernels = events(doc, "X", "kernel");
  ASSERT_EQ(kernels.size(), launches);
  for (uint32_t i = 1; i <= launches; ++i) {
    const json& k = kernels[i - 1];
    ASSERT_EQ(k["args"]["id"], i);
    EXPECT_EQ(k["name"], i % 2 ? "gemm<" + std::to_string(i) + ">" : std::string("bad\xEF\xBF\xBD\xEF\xBF\xBDname"));
  }
  EXPECT_EQ(events(doc, "X", "cuda_api").size(), launches);
  EXPECT_EQ(events(doc, "s").size(), launches);
  EXPECT_EQ(events(doc, "f").size(), launches);
}

}  // namespace
}  // namespace rf::analyzer
