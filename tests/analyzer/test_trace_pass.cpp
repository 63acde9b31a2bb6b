// The two passes over a trace (trace_pass.h): what read_context keeps of the process, metric
// lists and time stamps, and how stream_launches turns joined records into KernelRows, record
// field by record field, for the edges a real trace rarely shows (a hostile one may).
#include "rfprof/analyzer/trace_pass.h"

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analyzer_samples.h"
#include "rfprof/analyzer/phases.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::TraceBuilder;
using trace::CollectionMode;

/// A KernelRow as the sink saw it, with its mangled name copied (the row's view dies with the sink).
struct SeenRow {
  KernelRow row;
  std::string mangled;
};

/// The rows of `path`, by id, and the pass's counts.
std::map<uint32_t, SeenRow> rows_of(const fs::path& path, StreamStats* stats = nullptr) {
  const TraceContext ctx = read_context(path);
  std::map<uint32_t, SeenRow> out;
  StreamStats s = stream_launches(ctx, PhaseMap::defaults(), [&](const LaunchOutput& l) {
    out[l.row.id] = {l.row, std::string(l.row.mangled)};
  });
  if (stats) *stats = s;
  return out;
}

TEST(TraceContextPass, TheFirstProcessAndTheLastDefinitionOfAConfig) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    TraceBuilder t(p);
    trace::Writer& w = t.writer();
    trace::ProcessInfo first;
    first.pid = 11;
    first.mode = CollectionMode::kCounters;
    first.command_line = w.intern("python first.py");
    first.rfprof_version = w.intern("0.9.1");
    w.append(first);
    trace::ProcessInfo second = first;  // a second one (a hostile trace): ignored
    second.pid = 12;
    second.command_line = w.intern("python second.py");
    second.rfprof_version = w.intern("9.9");
    w.append(second);
    t.config(1, {"sm__cycles_elapsed.avg"});
    t.config(1, testing::roofline_metrics());  // config 1 again: the later one holds
    t.finish();
  }
  const TraceContext ctx = read_context(p);
  EXPECT_EQ(ctx.pid(), 11u);
  EXPECT_EQ(ctx.command_line, "python first.py");
  EXPECT_EQ(ctx.rfprof_version, "0.9.1");
  ASSERT_EQ(ctx.configs.size(), 1u);
  EXPECT_EQ(ctx.configs.at(1).names, testing::roofline_metrics());
}

// last_event_ns is the latest of launch call ends, kernel ends, window changes, NVTX events and
// memory events: each kind can be the last one of a killed process.
TEST(TraceContextPass, TheLastEventIsTheLatestOfEveryKind) {
  TempDir dir;
  int n = 0;
  auto last_with = [&](const std::function<void(TraceBuilder&)>& extra) {
    const fs::path p = dir.path / ("t" + std::to_string(++n) + ".rftrace");
    {
      TraceBuilder t(p);
      t.process(1, CollectionMode::kTiming);
      t.launch(1, 0, 5, 100);     // call ends at 103
      t.kernel(1, 500, 1000);     // kernel ends at 1000
      extra(t);
      t.finish();
    }
    return read_context(p).last_event_ns;
  };
  EXPECT_EQ(last_with([](TraceBuilder&) {}), 1000u);
  EXPECT_EQ(last_with([](TraceBuilder& t) { t.launch(2, 0, 5, 4997); }), 5000u);  // its kernel never came
  EXPECT_EQ(last_with([](TraceBuilder& t) { t.window(0, false, 6000); }), 6000u);
  EXPECT_EQ(last_with([](TraceBuilder& t) { t.push(1, 5, 7000, "step"); }), 7000u);
  EXPECT_EQ(last_with([](TraceBuilder& t) { t.memory(true, 8000, 0x1000, 64); }), 8000u);
  // Records of other streams come out of order: a kernel recorded later that ended earlier, or an
  // earlier event of any kind, does not move it back.
  EXPECT_EQ(last_with([](TraceBuilder& t) {
              t.launch(2, 0, 5, 200);
              t.kernel(2, 300, 400);
              t.push(1, 5, 150, "step");
              t.memory(true, 160, 0x1000, 64);
              t.window(0, false, 170);
            }),
            1000u);
}

TEST(TracePassRows, KernelFieldsNamesAndLaunchCalls) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    TraceBuilder t(p);
    trace::Writer& w = t.writer();
    t.process(1, CollectionMode::kTiming);
    // 1: every kernel field, and a start time stamp of 0 beside an end that is not.
    trace::LaunchApi l;
    l.correlation_id = 1;
    l.domain = trace::ApiDomain::kRuntime;
    l.cbid = 211;
    l.thread_id = 5;
    l.api_start_ns = 100;
    l.api_end_ns = 140;
    l.stack_id = 3;
    l.kernel_name = w.intern("_Z9ffma_loopPfi");
    w.append(l);
    trace::KernelActivity k;
    k.correlation_id = 1;
    k.context_id = 5;
    k.dynamic_shared_bytes = 1024;
    k.static_shared_bytes = 2048;
    k.registers_per_thread = 40;
    k.start_ns = 0;
    k.end_ns = 500;
    t.kernel(k, "ffma_loop(float*, int)", "_Z9ffma_loopPfi");
    // 2: a kernel of zero length; its call ended before it started (a hostile trace).
    l = {};
    l.correlation_id = 2;
    l.thread_id = 5;
    l.api_start_ns = 900;
    l.api_end_ns = 800;
    l.kernel_name = w.intern("_Z3foov");
    w.append(l);
    k = {};
    k.correlation_id = 2;
    k.start_ns = 3000;
    k.end_ns = 3000;
    t.kernel(k, "foo()", "");  // no symbol in the kernel record: the launch's
    // 3: an extern "C" kernel (no demangled name) whose launch record is missing.
    k = {};
    k.correlation_id = 3;
    k.start_ns = 4000;
    k.end_ns = 4100;
    t.kernel(k, "", "vectorAdd");
    // 4: a launch call without time stamps.
    l = {};
    l.correlation_id = 4;
    l.thread_id = 5;
    l.kernel_name = w.intern("_Z3foov");
    w.append(l);
    t.kernel(4, 5000, 5100, "foo()", 0, "_Z3foov");
    t.finish();
  }
  StreamStats stats;
  auto rows = rows_of(p, &stats);
  ASSERT_EQ(rows.size(), 4u);
  const KernelRow& r1 = rows.at(1).row;
  EXPECT_EQ(r1.context, 5u);
  EXPECT_EQ(r1.shared_bytes, 1024u);
  EXPECT_EQ(r1.static_shared_bytes, 2048u);
  EXPECT_EQ(r1.registers_per_thread, 40u);
  EXPECT_EQ(r1.start_ns, 0u);
  EXPECT_EQ(r1.duration_ns, 500u);
  EXPECT_EQ(r1.launch_start_ns, 100u);
  EXPECT_EQ(r1.launch_end_ns, 140u);
  EXPECT_EQ(r1.launch_domain, trace::ApiDomain::kRuntime);
  EXPECT_EQ(r1.launch_cbid, 211u);
  EXPECT_EQ(r1.stack_id, 3u);

  const SeenRow& r2 = rows.at(2);
  EXPECT_EQ(r2.row.duration_ns, 0u);
  EXPECT_EQ(stats.negative_durations, 0u);
  EXPECT_EQ(r2.row.kernel, "foo()");
  EXPECT_EQ(r2.mangled, "_Z3foov");
  EXPECT_EQ(r2.row.launch_start_ns, std::nullopt);  // a call that ends before it starts
  EXPECT_EQ(r2.row.launch_end_ns, std::nullopt);
  EXPECT_EQ(r2.row.thread_id, 5u);                   // still the launching thread

  EXPECT_EQ(rows.at(3).row.kernel, "vectorAdd");
  EXPECT_EQ(rows.at(3).mangled, "vectorAdd");
  EXPECT_EQ(rows.at(4).row.launch_start_ns, std::nullopt);  // 0, 0: not recorded
  EXPECT_EQ(rows.at(4).row.duration_ns, 100u);
}

// Counters mode: under kernel replay a kernel record has no time stamps, so the duration is
// gpu__time_duration.sum, and the kernel is placed at the end of its launch call.
TEST(TracePassRows, DurationsFromGpuTimeAndPlacementAtTheLaunchCall) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  auto gpu_time = [](double ns) {
    testing::Counts c;
    c.gpu_time = ns;
    return c.values();
  };
  {
    TraceBuilder t(p);
    t.process(1, CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    t.launch(1, 0, 5, 1000);  // call 1000..1003
    t.kernel(1, 0, 0);
    t.counters(1, 1, gpu_time(500.6));
    t.launch(2, 0, 5, 2000);
    t.kernel(2, 3000, 3000);  // time stamps of zero length: gpu__time_duration instead
    t.counters(1, 2, gpu_time(700));
    t.launch(3, 0, 5, 4000);
    t.kernel(3, 0, 0);
    t.counters(1, 3, gpu_time(0));  // no time at all
    t.launch(4, 0, 5, 5000);        // no kernel record: grid, block and name from the call
    t.counters(1, 4, gpu_time(100));
    t.launch(5, 0, 5, 6000);
    t.kernel(5, 6100, 6200);
    t.counters(9, 5, gpu_time(100));  // config 9 was never defined
    trace::LaunchApi untimed;         // a call without time stamps
    untimed.correlation_id = 6;
    untimed.thread_id = 5;
    untimed.kernel_name = t.writer().intern("_Z9ffma_loopPfi");
    t.writer().append(untimed);
    t.kernel(6, 0, 0);
    t.counters(1, 6, gpu_time(300));
    t.launch(7, 0, 5, 7000, 0, /*graph=*/true);
    t.kernel(7, 0, 0);  // a graph's kernel runs after the call returned: not placed at it
    t.window(0, false, 9000);
    t.finish();
  }
  StreamStats stats;
  auto rows = rows_of(p, &stats);
  ASSERT_EQ(rows.size(), 7u);
  const KernelRow& r1 = rows.at(1).row;
  EXPECT_EQ(r1.duration_ns, 501u);  // rounded
  EXPECT_EQ(r1.start_ns, 1000u);    // 1003 - 501, kept inside the call: its start
  EXPECT_TRUE(r1.start_from_launch);
  EXPECT_EQ(rows.at(2).row.duration_ns, 700u);
  EXPECT_EQ(rows.at(2).row.start_ns, 3000u);
  EXPECT_EQ(stats.negative_durations, 0u);
  EXPECT_EQ(stats.durations_from_gpu_time, 3u);  // launches 1, 2 and 6; not 3 (0 ns) nor 5
  EXPECT_EQ(stats.durations_from_gpu_time_without_kernel, 1u);  // launch 4: no kernel record at all
  EXPECT_EQ(rows.at(4).row.duration_ns, 100u);
  EXPECT_EQ(rows.at(3).row.duration_ns, std::nullopt);
  EXPECT_EQ(rows.at(3).row.start_ns, 4003u);  // no duration: at the call's end
  const SeenRow& r4 = rows.at(4);
  EXPECT_EQ(r4.row.kernel, "ffma_loop(float*, int)");
  EXPECT_EQ(r4.mangled, "_Z9ffma_loopPfi");
  EXPECT_EQ(r4.row.grid, (std::array<int32_t, 3>{1024, 1, 1}));
  EXPECT_EQ(r4.row.block, (std::array<int32_t, 3>{256, 1, 1}));
  EXPECT_EQ(stats.counters_without_config, 1u);
  EXPECT_FALSE(rows.at(5).row.metrics.gpu_time_ns);
  EXPECT_EQ(rows.at(6).row.duration_ns, 300u);
  EXPECT_EQ(rows.at(6).row.start_ns, std::nullopt);  // no call end to place it at
  EXPECT_EQ(rows.at(7).row.start_ns, std::nullopt);
  EXPECT_FALSE(rows.at(7).row.start_from_launch);
}

// Launch calls of odd shapes: a call of no duration is still a call; one that ends before it
// starts places its kernel at its end, never before; a kernel record that never came leaves the
// call's grid and block, each dimension where it was; the NVTX path is the one open on the
// launching thread when the call began, even if the range ended before the call returned.
TEST(TracePassRows, LaunchCallsOfNoLengthOrBackwardsAndRangesEndingDuringTheCall) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    TraceBuilder t(p);
    t.process(1, CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    testing::Counts c;
    c.gpu_time = 50;
    trace::LaunchApi l;
    l.correlation_id = 1;
    l.thread_id = 5;
    l.api_start_ns = 1000;
    l.api_end_ns = 1000;  // no duration
    l.cbid = 211;
    l.kernel_name = t.writer().intern("_Z9ffma_loopPfi");
    t.writer().append(l);
    t.kernel(1, 1100, 1200);
    l.correlation_id = 2;
    l.api_start_ns = 2000;
    l.api_end_ns = 1900;  // ends before it starts
    t.writer().append(l);
    t.kernel(2, 0, 0);
    t.counters(1, 2, c.values());
    l.correlation_id = 3;
    l.api_start_ns = 3000;
    l.api_end_ns = 3010;
    l.grid[0] = 7, l.grid[1] = 5, l.grid[2] = 3;
    l.block[0] = 32, l.block[1] = 4, l.block[2] = 2;
    t.writer().append(l);  // its kernel record never came
    t.push(1, 5, 4000, "r");
    t.launch(4, 0, 5, 4100);  // call 4100..4103
    t.pop(1, 5, 4101);
    t.kernel(4, 4200, 4300);
    t.window(0, false, 9000);
    t.finish();
  }
  auto rows = rows_of(p);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows.at(1).row.launch_start_ns, 1000u);
  EXPECT_EQ(rows.at(1).row.launch_end_ns, 1000u);
  EXPECT_EQ(rows.at(1).row.launch_cbid, 211u);
  EXPECT_EQ(rows.at(2).row.duration_ns, 50u);
  EXPECT_EQ(rows.at(2).row.start_ns, 1900u);
  EXPECT_EQ(rows.at(3).row.grid, (std::array<int32_t, 3>{7, 5, 3}));
  EXPECT_EQ(rows.at(3).row.block, (std::array<int32_t, 3>{32, 4, 2}));
  EXPECT_EQ(rows.at(4).row.nvtx, "r");
}

// A graph launch whose kernels never arrived is one row without a grid (a graph call has none).
TEST(TracePassRows, AGraphCallWithoutKernelsHasNoGrid) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    TraceBuilder t(p);
    t.process(1, CollectionMode::kTiming);
    t.launch(1, 0, 5, 1000, 0, /*graph=*/true);
    t.finish();
  }
  auto rows = rows_of(p);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows.at(1).row.grid, std::nullopt);
  EXPECT_EQ(rows.at(1).row.block, std::nullopt);
  EXPECT_TRUE(rows.at(1).row.launch_is_graph);
}

// A launch waiting for counters that never come is emitted when its profiling window ends, not
// held to the end of the trace: rows come in the order they completed.
TEST(TracePassRows, AWindowsEndReleasesItsLaunchesWithoutCounters) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    TraceBuilder t(p);
    t.process(1, CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    t.window(1, true, 100);
    t.launch(1, 0, 5, 200, /*window=*/1);
    t.kernel(1, 300, 400);  // its counters never come
    t.window(1, false, 500);
    t.window(2, true, 600);
    t.launch(2, 0, 5, 700, /*window=*/2);
    t.kernel(2, 800, 900);
    t.counters(1, 2, testing::Counts{}.values(), /*window=*/2);
    t.window(2, false, 1000);
    t.finish();
  }
  const TraceContext ctx = read_context(p);
  std::vector<uint32_t> order;
  const StreamStats stats =
      stream_launches(ctx, PhaseMap::defaults(), [&](const LaunchOutput& l) { order.push_back(l.row.id); });
  EXPECT_EQ(order, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(stats.join.without_counters, 1u);
}

// Collector errors are grouped by code and message together, counted, in order of first sight.
TEST(TracePassRows, CollectorErrorsGroupedByCodeAndMessage) {
  TempDir dir;
  const fs::path p = dir.path / "t.rftrace";
  {
    TraceBuilder t(p);
    t.process(1, CollectionMode::kCounters);
    t.error(trace::ErrorCode::kCuptiCall, "cuptiProfilerBeginPass failed");
    t.error(trace::ErrorCode::kCuptiCall, "cuptiProfilerEndPass failed");
    t.error(trace::ErrorCode::kDecodeFailed, "cuptiProfilerEndPass failed");
    t.error(trace::ErrorCode::kCuptiCall, "cuptiProfilerBeginPass failed");
    t.finish();
  }
  StreamStats stats;
  rows_of(p, &stats);
  ASSERT_EQ(stats.errors.size(), 3u);
  EXPECT_EQ(stats.errors[0].code, trace::ErrorCode::kCuptiCall);
  EXPECT_EQ(stats.errors[0].message, "cuptiProfilerBeginPass failed");
  EXPECT_EQ(stats.errors[0].count, 2u);
  EXPECT_EQ(stats.errors[1].message, "cuptiProfilerEndPass failed");
  EXPECT_EQ(stats.errors[1].count, 1u);
  EXPECT_EQ(stats.errors[2].code, trace::ErrorCode::kDecodeFailed);
  EXPECT_EQ(stats.errors[2].count, 1u);
}

}  // namespace
}  // namespace rf::analyzer
