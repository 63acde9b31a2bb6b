// GPU test (CTest label gpu): profiles gpu_app.cu through CUDA_INJECTION64_PATH and
// NVTX_INJECTION64_PATH with profile-from-start off, and checks the trace against what the program
// is known to do: one window, 7 launch calls inside it (5 kernels, 1 graph, 1 kernel), nothing
// outside, every kernel record joined to a launch, counters mapped range i -> launch i except the
// graph image (refused, correlation id 0), FFMA counts equal to the element counts, NVTX "step".
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "rfprof/trace/reader.h"

namespace {

namespace fs = std::filesystem;
using namespace rf::trace;

constexpr const char* kFfma = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";

struct Trace {
  std::vector<Record> records;
  std::map<StringId, std::string> strings;
  bool truncated = false;

  template <typename T>
  std::vector<T> all() const {
    std::vector<T> out;
    for (const auto& r : records)
      if (auto* p = std::get_if<T>(&r)) out.push_back(*p);
    return out;
  }
  std::string str(StringId id) const { return id == 0 ? "" : strings.at(id); }
};

Trace read_trace(const fs::path& p) {
  Trace t;
  Reader reader(p);
  Record r;
  while (reader.next(r)) {
    if (auto* s = std::get_if<StringDef>(&r)) t.strings[s->id] = s->value;
    t.records.push_back(r);
  }
  t.truncated = reader.truncated();
  return t;
}

/// Runs gpu_app under librfinject with the RFPROF_* settings `env` ("VAR=value ..."), writing
/// DIR/app.rftrace, DIR/out and DIR/err in a fresh DIR; returns std::system's status.
int run_app(const fs::path& dir, const std::string& env, const std::string& args = "") {
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::string cmd = std::string("env CUDA_INJECTION64_PATH='") + RFINJECT_PATH + "' NVTX_INJECTION64_PATH='" +
                    RFINJECT_PATH + "' RFPROF_OUTPUT='" + (dir / "app.rftrace").string() + "' " + env + " '" +
                    GPU_APP_PATH + "' " + args + " > '" + (dir / "out").string() + "' 2> '" + (dir / "err").string() + "'";
  return std::system(cmd.c_str());
}

class InjectGpu : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("rfinject_gpu_" + std::to_string(::getpid()));
    trace_path_ = dir_ / "app.rftrace";
    exit_status_ = run_app(dir_, std::string("RFPROF_PROFILE_FROM_START=off RFPROF_MODE=counters RFPROF_METRICS=") +
                                     kFfma + ",gpu__time_duration.sum");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static inline fs::path dir_, trace_path_;
  static inline int exit_status_ = -1;
};

TEST_F(InjectGpu, AppRunsUnharmedAndTheTraceIsFinished) {
  ASSERT_EQ(exit_status_, 0);
  ASSERT_TRUE(fs::exists(trace_path_));
  EXPECT_FALSE(fs::exists(trace_path_.string() + ".part"));
  Trace t = read_trace(trace_path_);
  EXPECT_FALSE(t.truncated);
  ASSERT_FALSE(t.all<TraceEnd>().empty());
  auto procs = t.all<ProcessInfo>();
  ASSERT_EQ(procs.size(), 1u);
  EXPECT_EQ(procs[0].mode, CollectionMode::kCounters);
  EXPECT_TRUE(t.all<CollectorError>().size() >= 1u);  // the graph image (below)
  for (const auto& e : t.all<CollectorError>())
    EXPECT_NE(e.code, ErrorCode::kCountersUnavailable) << t.str(e.message);
}

TEST_F(InjectGpu, OneWindowAndNothingCollectedOutsideIt) {
  Trace t = read_trace(trace_path_);
  auto windows = t.all<ProfilingWindow>();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_TRUE(windows[0].begin);
  EXPECT_FALSE(windows[1].begin);
  EXPECT_EQ(windows[0].window_id, 1u);
  EXPECT_EQ(windows[1].window_id, 1u);
  for (const auto& k : t.all<KernelActivity>()) {
    std::string name = t.str(k.mangled_name);
    EXPECT_EQ(name.find("before_window"), std::string::npos) << name;
    EXPECT_EQ(name.find("after_window"), std::string::npos) << name;
  }
  auto launches = t.all<LaunchApi>();
  ASSERT_EQ(launches.size(), 7u);
  for (const auto& l : launches) EXPECT_EQ(l.window_id, 1u);
  EXPECT_EQ(std::count_if(launches.begin(), launches.end(), [](auto& l) { return l.is_graph; }), 1);
}

// The device record's memory clock and bus width come from the driver (cuDeviceGetAttribute), its
// bandwidth from CUPTI: CUPTI's figure is the DDR rate over the bus, 2 * clock * width / 8
// (H100 80GB HBM3: 2 * 2,619,000 kHz * 5,120 bits / 8 = 3,352,320,000 KB/s).
TEST_F(InjectGpu, TheDeviceRecordHasTheMemoryClockAndBusWidth) {
  Trace t = read_trace(trace_path_);
  auto devices = t.all<DeviceInfo>();
  ASSERT_FALSE(devices.empty());
  for (const auto& d : devices) {
    EXPECT_GT(d.memory_clock_khz, 0u) << t.str(d.name);
    EXPECT_GT(d.memory_bus_width_bits, 0u) << t.str(d.name);
    const double kbps = 2.0 * d.memory_clock_khz * d.memory_bus_width_bits / 8.0;
    EXPECT_NEAR(kbps, static_cast<double>(d.global_memory_bandwidth_kbps), 0.01 * kbps) << t.str(d.name);
  }
}

TEST_F(InjectGpu, EveryKernelJoinsALaunch) {
  Trace t = read_trace(trace_path_);
  std::set<uint32_t> ids;
  for (const auto& l : t.all<LaunchApi>()) {
    ids.insert(l.correlation_id);
    if (l.runtime_correlation_id) ids.insert(l.runtime_correlation_id);
  }
  auto kernels = t.all<KernelActivity>();
  EXPECT_GE(kernels.size(), 8u);  // 5 + 2 (graph) + 1; kernel replay may add no others
  for (const auto& k : kernels) {
    EXPECT_TRUE(ids.count(k.correlation_id)) << "kernel " << t.str(k.demangled_name);
    EXPECT_NE(t.str(k.demangled_name).find("scale"), std::string::npos)
        << "mangled '" << t.str(k.mangled_name) << "' demangled '" << t.str(k.demangled_name)
        << "' grid " << k.grid[0] << " correlation " << k.correlation_id << " graph node "
        << k.graph_node_id;
  }
}

TEST_F(InjectGpu, CountersMapRangeIToLaunchIAndCountFfmas) {
  Trace t = read_trace(trace_path_);
  auto configs = t.all<MetricConfig>();
  ASSERT_EQ(configs.size(), 1u);
  size_t ffma = configs[0].metrics.size();
  for (size_t i = 0; i < configs[0].metrics.size(); ++i)
    if (t.str(configs[0].metrics[i]) == kFfma) ffma = i;
  ASSERT_LT(ffma, configs[0].metrics.size());

  std::map<uint32_t, LaunchApi> by_id;
  std::vector<LaunchApi> kernels_in_order;
  for (const auto& l : t.all<LaunchApi>()) {
    by_id[l.correlation_id] = l;
    if (!l.is_graph) kernels_in_order.push_back(l);
  }
  ASSERT_EQ(kernels_in_order.size(), 6u);
  std::vector<uint32_t> mapped;
  for (const auto& rc : t.all<RangeCounters>()) {
    if (rc.correlation_id == 0) continue;  // the graph's image
    ASSERT_TRUE(by_id.count(rc.correlation_id));
    const LaunchApi& l = by_id[rc.correlation_id];
    EXPECT_EQ(rc.range_index, l.launch_index);
    // scale<<<g, 128>>> with n = g * 128 elements: one FFMA per element.
    double expected = static_cast<double>(l.grid[0]) * l.block[0];
    EXPECT_EQ(rc.values[ffma], expected) << "launch " << l.correlation_id;
    mapped.push_back(rc.correlation_id);
  }
  std::vector<uint32_t> expected_order;
  for (const auto& l : kernels_in_order) expected_order.push_back(l.correlation_id);
  EXPECT_EQ(mapped, expected_order);

  bool graph_refused = false;
  for (const auto& e : t.all<CollectorError>())
    if (e.code == ErrorCode::kRangeLaunchMismatch && t.str(e.message).find("graph") != std::string::npos)
      graph_refused = true;
  EXPECT_TRUE(graph_refused);
}

/// No CollectorError (a refused decode would be one), `launches` scale<<<g, 128>>> launches and one
/// RangeCounters per launch holding g * 128 FFMAs (the trace's first metric); `why` names a
/// missing count.
void expect_one_ffma_count_per_launch(const Trace& t, size_t launches, const std::string& why) {
  for (const auto& e : t.all<CollectorError>()) ADD_FAILURE() << t.str(e.message);
  std::map<uint32_t, int32_t> grid_of;
  for (const auto& l : t.all<LaunchApi>()) grid_of[l.correlation_id] = l.grid[0];
  ASSERT_EQ(grid_of.size(), launches);
  auto counters = t.all<RangeCounters>();
  ASSERT_EQ(counters.size(), launches) << why;
  for (const auto& c : counters) {
    ASSERT_TRUE(grid_of.count(c.correlation_id)) << c.correlation_id;
    ASSERT_FALSE(c.values.empty());
    EXPECT_EQ(c.values[0], grid_of[c.correlation_id] * 128.0);
  }
}

// A context that stops launching: its last counter image is decoded by the collector's own thread
// within the flush interval, so a SIGKILL during the pause keeps those counters. Before, only the
// next launch (or the exit) decoded it, and this .part had launches but no RangeCounters.
TEST(InjectGpuKill, CountersOfAnIdleContextSurviveASigkill) {
  const fs::path dir = fs::temp_directory_path() / ("rfinject_gpu_idle_" + std::to_string(::getpid()));
  const int status = run_app(dir, std::string("RFPROF_MODE=counters RFPROF_FLUSH_MS=200 RFPROF_METRICS=") + kFfma,
                             "idle-kill 1500");
  EXPECT_NE(status, 0);  // killed
  ASSERT_TRUE(fs::exists(dir / "app.rftrace.part")) << "a killed run leaves its .part";
  Trace t = read_trace(dir / "app.rftrace.part");
  fs::remove_all(dir);
  EXPECT_TRUE(t.truncated);
  expect_one_ffma_count_per_launch(t, 5, "the idle image was not decoded before the SIGKILL");
}

// Contexts destroyed (cudaDeviceReset) right after a launch while the flush thread decodes images
// every millisecond: the run ends (no wait between the driver's destruction and the decode hangs
// it), finished, and every launch has its counters, decoded by whichever thread came first.
TEST(InjectGpuKill, ContextsDestroyedWhileTheFlushThreadDecodes) {
  const fs::path dir = fs::temp_directory_path() / ("rfinject_gpu_reset_" + std::to_string(::getpid()));
  const int status = run_app(dir, std::string("RFPROF_MODE=counters RFPROF_FLUSH_MS=1 RFPROF_METRICS=") + kFfma,
                             "reset-loop 8");
  ASSERT_EQ(status, 0);
  Trace t = read_trace(dir / "app.rftrace");
  fs::remove_all(dir);
  EXPECT_FALSE(t.truncated);
  expect_one_ffma_count_per_launch(t, 8, "");
}

// The collector's own cost (ProfilerOverhead, format 1.2): the last record of each phase holds its
// totals. In counters mode every launch in the window ran under the Range Profiler.
TEST_F(InjectGpu, TheTraceSaysWhatTheCollectorCostPerPhase) {
  Trace t = read_trace(trace_path_);
  std::map<std::string, ProfilerOverhead> last;
  for (const auto& o : t.all<ProfilerOverhead>()) last[t.str(o.phase)] = o;
  for (const char* phase : {"session.start", "counters.setup", "counters.enable", "counters.start",
                            "counters.decode", "launch.counters", "launch.callbacks", "session.finish"})
    EXPECT_TRUE(last.count(phase)) << phase;
  EXPECT_EQ(last["session.start"].count, 1u);
  EXPECT_EQ(last["session.finish"].count, 1u);
  EXPECT_EQ(last["counters.profiler_initialize"].count, 1u);
  // The 7 launches of the window (6 kernels, 1 graph) ran with the Range Profiler started.
  EXPECT_EQ(last["launch.counters"].count, 7u);
  EXPECT_GE(last["launch.counters"].total_ns, last["launch.counters"].max_ns);
  // Counters mode times every launch callback: entry and exit of each of the 9 launch calls (the
  // window's 7, before_window, after_window), and of the launches captured into the graph.
  EXPECT_GE(last["launch.callbacks"].count, 18u);
  for (const auto& [phase, o] : last) {
    EXPECT_GT(o.count, 0u) << phase;
    EXPECT_LE(o.max_ns, o.total_ns) << phase;
  }
}

TEST_F(InjectGpu, NvtxStepRangeIsRecorded) {
  Trace t = read_trace(trace_path_);
  auto events = t.all<NvtxEvent>();
  auto start = std::find_if(events.begin(), events.end(), [&](const NvtxEvent& e) {
    return e.kind == NvtxEventKind::kStart && t.str(e.name) == "step";
  });
  ASSERT_NE(start, events.end());
  auto end = std::find_if(events.begin(), events.end(), [&](const NvtxEvent& e) {
    return e.kind == NvtxEventKind::kEnd && e.id == start->id;
  });
  ASSERT_NE(end, events.end());
  EXPECT_LT(start->timestamp_ns, end->timestamp_ns);
  EXPECT_NE(start->style, NvtxRangeStyle::kStartEnd);
}

// ---- RFPROF_CALLSTACKS=1 RFPROF_MEMORY=1 in timing mode, profiling from the start ----

class InjectGpuStacksMemory : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("rfinject_gpu_sm_" + std::to_string(::getpid()));
    trace_path_ = dir_ / "app.rftrace";
    exit_status_ = run_app(dir_, "RFPROF_MODE=timing RFPROF_CALLSTACKS=1 RFPROF_MEMORY=1");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  static inline fs::path dir_, trace_path_;
  static inline int exit_status_ = -1;
};

TEST_F(InjectGpuStacksMemory, TheBufferAllocationAndItsReleaseAreRecorded) {
  ASSERT_EQ(exit_status_, 0);
  Trace t = read_trace(trace_path_);
  constexpr uint64_t kBytes = 8 * 128 * sizeof(float);  // gpu_app's cudaMalloc
  std::optional<MemoryActivity> alloc, release;
  for (const auto& m : t.all<MemoryActivity>()) {
    if (m.memory_kind != MemoryKind::kDevice) continue;
    if (m.operation == MemoryOperation::kAllocation && m.bytes == kBytes) alloc = m;
    if (m.operation == MemoryOperation::kRelease && alloc && m.address == alloc->address) release = m;
  }
  ASSERT_TRUE(alloc.has_value());
  ASSERT_TRUE(release.has_value());
  EXPECT_LT(alloc->timestamp_ns, release->timestamp_ns);
}

TEST_F(InjectGpuStacksMemory, LaunchesFromOneCallSiteShareAStackSymbolizedToMain) {
  ASSERT_EQ(exit_status_, 0);
  Trace t = read_trace(trace_path_);
  std::map<uint32_t, CallStack> stacks;
  for (const auto& cs : t.all<CallStack>()) stacks[cs.stack_id] = cs;
  ASSERT_FALSE(stacks.empty());
  std::vector<uint32_t> loop_ids;  // the 5 scale<<<g, 128>>> launches of the loop
  uint32_t before_id = 0;
  for (const auto& l : t.all<LaunchApi>()) {
    EXPECT_NE(l.stack_id, 0u) << t.str(l.kernel_name);
    EXPECT_TRUE(stacks.count(l.stack_id)) << l.stack_id;
    const std::string name = t.str(l.kernel_name);
    if (name.find("before_window") != std::string::npos) before_id = l.stack_id;
    if (name.find("scale") != std::string::npos && l.grid[0] >= 1 && l.grid[0] <= 5 && loop_ids.size() < 5)
      loop_ids.push_back(l.stack_id);
  }
  ASSERT_EQ(loop_ids.size(), 5u);
  for (uint32_t id : loop_ids) EXPECT_EQ(id, loop_ids[0]);
  EXPECT_NE(before_id, 0u);
  EXPECT_NE(before_id, loop_ids[0]);
  const CallStack& cs = stacks.at(loop_ids[0]);
  ASSERT_FALSE(cs.functions.empty());
  // The launch machinery is left out: the innermost frame is the CUDA runtime or the app.
  const std::string first_module = t.str(cs.modules[0]);
  for (const char* m : {"librfinject", "libcupti", "libcuda.so"})
    EXPECT_EQ(first_module.find(m), std::string::npos) << first_module;
  bool has_main = false;
  for (auto f : cs.functions) has_main = has_main || t.str(f) == "main";
  EXPECT_TRUE(has_main) << "gpu_app is linked with -rdynamic; main must be named";
}

// ---- filters in the collector: -k scale -s 1 -c 2 --nvtx-include step/ (counters mode) ----

TEST(InjectGpuFilters, OnlySelectedLaunchesAreRecordedAndReplayed) {
  const fs::path dir = fs::temp_directory_path() / ("rfinject_gpu_filter_" + std::to_string(::getpid()));
  const int status = run_app(dir, std::string("RFPROF_MODE=counters RFPROF_METRICS=") + kFfma +
                                      " RFPROF_KERNEL_NAME=scale RFPROF_LAUNCH_SKIP=1 RFPROF_LAUNCH_COUNT=2"
                                      " RFPROF_NVTX_INCLUDE=step/");
  ASSERT_EQ(status, 0);
  Trace t = read_trace(dir / "app.rftrace");
  // Inside "step": scale<<<1..5>>>, a graph (no kernel name: not selected), scale<<<7>>>. Skip 1,
  // keep 2: the grid-2 and grid-3 launches; before_window/after_window are outside "step".
  auto launches = t.all<LaunchApi>();
  ASSERT_EQ(launches.size(), 2u);
  EXPECT_EQ(launches[0].grid[0], 2);
  EXPECT_EQ(launches[1].grid[0], 3);
  std::set<uint32_t> ids;
  for (const auto& l : launches) ids.insert(l.correlation_id);
  auto kernels = t.all<KernelActivity>();
  EXPECT_EQ(kernels.size(), 2u);
  auto counters = t.all<RangeCounters>();
  ASSERT_EQ(counters.size(), 2u);  // only the selected launches were replayed
  for (const auto& c : counters) EXPECT_TRUE(ids.count(c.correlation_id)) << c.correlation_id;
  fs::remove_all(dir);
}

// --devices (RFPROF_DEVICES) on a machine whose only device is 0: listing device 1 profiles
// nothing and sets no Range Profiler up (no MetricConfig); listing 0 profiles every launch.
TEST(InjectGpuFilters, OnlyLaunchesOnListedDevicesAreProfiled) {
  const fs::path dir = fs::temp_directory_path() / ("rfinject_gpu_devices_" + std::to_string(::getpid()));
  const std::string env = std::string("RFPROF_MODE=counters RFPROF_PROFILE_FROM_START=off RFPROF_METRICS=") + kFfma;
  ASSERT_EQ(run_app(dir, env + " RFPROF_DEVICES=1"), 0);
  Trace none = read_trace(dir / "app.rftrace");
  EXPECT_TRUE(none.all<LaunchApi>().empty());
  EXPECT_TRUE(none.all<KernelActivity>().empty());
  EXPECT_TRUE(none.all<RangeCounters>().empty());
  EXPECT_TRUE(none.all<MetricConfig>().empty());
  ASSERT_EQ(run_app(dir, env + " RFPROF_DEVICES=0"), 0);
  Trace all = read_trace(dir / "app.rftrace");
  fs::remove_all(dir);
  // The window's 7 launch calls: scale<<<1..5>>>, the graph, scale<<<7>>>.
  EXPECT_EQ(all.all<LaunchApi>().size(), 7u);
  EXPECT_EQ(all.all<MetricConfig>().size(), 1u);
}

// ncu's --kernel-id and --filter-mode in the collector, on the window's scale<<<1..5>>>, graph,
// scale<<<7>>>. The context and stream ids the kernel id matches are the ones the trace's kernel
// records carry (callback contextUid and cuptiGetStreamIdEx against the activity records' ids).
TEST(InjectGpuFilters, KernelIdAndFilterModeCountAsNcu) {
  const fs::path dir = fs::temp_directory_path() / ("rfinject_gpu_kernel_id_" + std::to_string(::getpid()));
  const std::string env = std::string("RFPROF_MODE=counters RFPROF_PROFILE_FROM_START=off RFPROF_METRICS=") + kFfma;
  ASSERT_EQ(run_app(dir, env + " RFPROF_KERNEL_ID=::scale:3"), 0);
  Trace third = read_trace(dir / "app.rftrace");
  ASSERT_EQ(third.all<LaunchApi>().size(), 1u);
  EXPECT_EQ(third.all<LaunchApi>()[0].grid[0], 3);
  EXPECT_EQ(third.all<RangeCounters>().size(), 1u);  // only that launch was replayed
  ASSERT_EQ(third.all<KernelActivity>().size(), 1u);
  const KernelActivity k = third.all<KernelActivity>()[0];
  const std::string ids = std::to_string(k.context_id) + ":" + std::to_string(k.stream_id);
  ASSERT_EQ(run_app(dir, env + " RFPROF_KERNEL_ID=" + ids + ":scale:2"), 0);
  Trace second = read_trace(dir / "app.rftrace");
  ASSERT_EQ(second.all<LaunchApi>().size(), 1u) << "kernel id " << ids << ":scale:2";
  EXPECT_EQ(second.all<LaunchApi>()[0].grid[0], 2);
  ASSERT_EQ(run_app(dir, env + " RFPROF_KERNEL_ID=:" + std::to_string(k.stream_id + 1000) + "::"), 0);
  EXPECT_TRUE(read_trace(dir / "app.rftrace").all<LaunchApi>().empty());  // no such stream
  // Every launch configuration of the window occurs once: skipping one per configuration leaves none.
  ASSERT_EQ(run_app(dir, env + " RFPROF_FILTER_MODE=per-launch-config RFPROF_LAUNCH_SKIP=1"), 0);
  EXPECT_TRUE(read_trace(dir / "app.rftrace").all<LaunchApi>().empty());
  ASSERT_EQ(run_app(dir, env + " RFPROF_LAUNCH_SKIP_BEFORE_MATCH=5"), 0);
  Trace last = read_trace(dir / "app.rftrace");
  fs::remove_all(dir);
  ASSERT_EQ(last.all<LaunchApi>().size(), 2u);  // the graph and scale<<<7>>>
  EXPECT_EQ(last.all<LaunchApi>()[1].grid[0], 7);
}

/// Runs `gpu_app ARGS` under replay across steps (FFMA + time, 2 passes) with `extra` settings
/// and checks that each of the `groups` timing windows' 5 launches carry g * 128 FFMAs each, in
/// their own window; the trace goes to `out` for more checks.
void expect_groups_of_five(const std::string& name, const std::string& extra, const std::string& args,
                           Trace* out = nullptr, size_t groups = 1) {
  const fs::path dir = fs::temp_directory_path() / (name + "_" + std::to_string(::getpid()));
  const int status = run_app(dir, std::string("RFPROF_MODE=counters RFPROF_PROFILE_FROM_START=off RFPROF_REPLAY=step ") +
                                      extra + " RFPROF_METRICS=" + kFfma + ",gpu__time_duration.sum",
                             args);
  ASSERT_EQ(status, 0);
  Trace t = read_trace(dir / "app.rftrace");
  fs::remove_all(dir);
  for (const auto& e : t.all<CollectorError>()) ADD_FAILURE() << t.str(e.message);
  std::map<uint32_t, int32_t> grid_of;
  std::map<uint32_t, uint32_t> window_of;
  for (const auto& l : t.all<LaunchApi>()) {
    grid_of[l.correlation_id] = l.grid[0];
    window_of[l.correlation_id] = l.window_id;
  }
  ASSERT_EQ(grid_of.size(), 5 * groups);
  auto counters = t.all<RangeCounters>();
  ASSERT_EQ(counters.size(), 5 * groups);
  for (const auto& c : counters) {
    ASSERT_TRUE(grid_of.count(c.correlation_id)) << c.correlation_id;
    ASSERT_FALSE(c.values.empty());
    EXPECT_EQ(c.values[0], grid_of[c.correlation_id] * 128.0) << "grid " << grid_of[c.correlation_id];
    EXPECT_EQ(c.window_id, window_of[c.correlation_id]);
  }
  if (out) *out = std::move(t);
}

// Replay across steps: `gpu_app steps 4` runs 4 windows of scale<<<1..5, 128>>>. The FFMA metric
// (instrumented) and gpu__time_duration (hardware) need 2 passes: windows 1 and 2 run them and are
// not recorded, window 3 is recorded without instrumentation and gets the counters, window 4 is
// past the one group asked for. Counts must equal kernel replay's: g * 128 FFMAs.
TEST(InjectGpuStepReplay, TwoPassWindowsThenATimingWindowWithTheCounters) {
  Trace t;
  expect_groups_of_five("rfinject_gpu_steps", "", "steps 4", &t);
  if (HasFatalFailure()) return;
  auto configs = t.all<MetricConfig>();
  ASSERT_EQ(configs.size(), 1u);
  EXPECT_EQ(configs[0].num_passes, 2u);
  auto windows = t.all<ProfilingWindow>();
  ASSERT_EQ(windows.size(), 2u);  // only the timing window is recorded (its start and end)
  auto kernels = t.all<KernelActivity>();
  EXPECT_EQ(kernels.size(), 5u);
  for (const auto& k : kernels) EXPECT_GT(k.end_ns, k.start_ns);  // uninstrumented durations
  for (const auto& c : t.all<RangeCounters>()) EXPECT_EQ(c.window_id, windows[0].window_id);
}

// A training loop's warm-up steps run every kernel before the first profiled window: the
// instrumented pass must count kernels loaded and run before the Range Profiler was enabled.
TEST(InjectGpuStepReplay, KernelsRunBeforeTheFirstWindowAreCounted) {
  expect_groups_of_five("rfinject_gpu_steps_warm", "", "steps-warm 4");
}

// PyTorch launches backward kernels from its autograd thread: if CUPTI's user replay followed only
// the thread that started the pass, each pass would decode 3 ranges for 5 launches and the
// collector's message would say "2 of the last pass window's launches came from threads other".
TEST(InjectGpuStepReplay, KernelsFromASecondThreadAreCounted) {
  expect_groups_of_five("rfinject_gpu_threads", "", "steps-threads 4");
}

// cudaProfilerStop on another thread than the window's launches: cuptiRangeProfilerStop and
// DecodeData then run there, the step's context pushed (NVIDIA's sample and Kineto stop on the
// launching thread; no document says whether another thread may).
TEST(InjectGpuStepReplay, AWindowStoppedFromAnotherThread) {
  expect_groups_of_five("rfinject_gpu_stop_thread", "", "steps-stop-thread 4");
}

// RFPROF_STEP_PASS_START=window: cuptiRangeProfilerStart when the window opens (NVIDIA's
// range_profiling order), not in the first launch's entry callback.
TEST(InjectGpuStepReplay, PassesStartedWhenTheWindowOpens) {
  expect_groups_of_five("rfinject_gpu_window_start", "RFPROF_STEP_PASS_START=window", "steps 4");
  expect_groups_of_five("rfinject_gpu_window_start_threads", "RFPROF_STEP_PASS_START=window", "steps-threads 4");
}

// Two groups: the Range Profiler is disabled after each group's decode and enabled again for the
// next group's pass 0 (session_step_replay.cpp). Each group's counters go to its own timing window.
TEST(InjectGpuStepReplay, TwoGroupsEachWithItsOwnTimingWindowAndCounters) {
  Trace t;
  // 2 x (pass 0, pass 1, timing), then one window not recorded.
  expect_groups_of_five("rfinject_gpu_groups", "RFPROF_REPLAY_GROUPS=2", "steps 7", &t, 2);
  if (HasFatalFailure()) return;
  auto windows = t.all<ProfilingWindow>();
  ASSERT_EQ(windows.size(), 4u);  // two timing windows, opened and closed
  auto kernels = t.all<KernelActivity>();
  EXPECT_EQ(kernels.size(), 10u);
  for (const auto& k : kernels) EXPECT_GT(k.end_ns, k.start_ns);  // the Range Profiler was disabled
  std::set<uint32_t> counted_windows;
  for (const auto& c : t.all<RangeCounters>()) counted_windows.insert(c.window_id);
  EXPECT_EQ(counted_windows.size(), 2u);
}

#ifdef RFPROF_BIN
std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// ncu's --query-metrics without --chips: the machine's devices, each under "Device NAME (CHIP)"
// (launcher/metric_query.h), chips named by cuptiDeviceGetChipName.
TEST(InjectGpuQuery, QueryMetricsListsTheLocalDevices) {
  const fs::path dir = fs::temp_directory_path() / ("rfprof_query_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "out").string(), err = (dir / "err").string();
  const int rc = std::system((std::string(RFPROF_BIN) + " --query-metrics --devices 0 --metrics dram__bytes_read.sum > '" +
                              out + "' 2> '" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(rc));
  EXPECT_EQ(WEXITSTATUS(rc), 0) << slurp(err);
  const std::string text = slurp(out);
  EXPECT_EQ(text.rfind("Device NVIDIA ", 0), 0u) << text;
  const std::string first = text.substr(0, text.find('\n'));
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first.back(), ')') << first;
  EXPECT_NE(first.find(" (G"), std::string::npos) << first;  // GH100, GA100, GB100, ...
  EXPECT_NE(text.find("\ndram__bytes_read.sum "), std::string::npos) << text;
  const int missing = std::system((std::string(RFPROF_BIN) + " --query-metrics --devices 999 2> '" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(missing));
  EXPECT_EQ(WEXITSTATUS(missing), 2);
  EXPECT_NE(slurp(err).find("rfprof: --devices 999: no such CUDA device"), std::string::npos) << slurp(err);
  // --list-sets without --chip plans the sets for the device's chip (the one the header named),
  // with no note about GH100 being assumed.
  const std::string chip = first.substr(first.rfind(" (") + 2, first.size() - first.rfind(" (") - 3);
  const int sets = std::system((std::string(RFPROF_BIN) + " --list-sets > '" + out + "' 2> '" + err + "'").c_str());
  ASSERT_TRUE(WIFEXITED(sets));
  EXPECT_EQ(WEXITSTATUS(sets), 0) << slurp(err);
  EXPECT_EQ(slurp(err), "");
  EXPECT_NE(slurp(out).find(" metric(s) on " + chip + " -- "), std::string::npos) << slurp(out);
  fs::remove_all(dir);
}
#endif

}  // namespace
