// Memory over time (memory.h) and GPU time / FLOP by call site (callsites.h): units, then a trace
// written with rf::trace::Writer analyzed end to end, checked number by number.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <tuple>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/callsites.h"
#include "rfprof/analyzer/memory.h"
#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;
using testing::Counts;
using testing::CsvTable;
using testing::lines_of;
using testing::TempDir;
using testing::TraceBuilder;
using trace::MemoryKind;
using trace::MemoryOperation;

trace::MemoryActivity mem(MemoryOperation op, uint64_t t, uint64_t address, uint64_t bytes,
                          MemoryKind kind = MemoryKind::kDevice, uint32_t device = 0) {
  trace::MemoryActivity m;
  m.operation = op;
  m.timestamp_ns = t;
  m.address = address;
  m.bytes = bytes;
  m.memory_kind = kind;
  m.device_id = device;
  return m;
}
constexpr auto kAlloc = MemoryOperation::kAllocation;
constexpr auto kFree = MemoryOperation::kRelease;

TEST(MemoryTimeline, InUseAfterEachEventInTimeOrder) {
  MemoryTimeline m;
  m.add(mem(kFree, 400, 0xA, 0));            // release of A: takes back A's 100, whatever it says
  m.add(mem(kAlloc, 100, 0xA, 100));
  m.add(mem(kAlloc, 200, 0xB, 50, MemoryKind::kDevice, 1));  // another device: summed
  m.add(mem(kAlloc, 300, 0xC, 1000, MemoryKind::kPinned));   // host memory: not counted
  m.add(mem(kAlloc, 500, 0xA, 30));
  m.add(mem(kFree, 600, 0xDEAD, 20));        // unknown allocation: its own bytes
  m.finalize();
  std::vector<uint64_t> in_use;
  for (const auto& p : m.points()) in_use.push_back(p.in_use_bytes);
  EXPECT_EQ(in_use, (std::vector<uint64_t>{100, 150, 150, 50, 80, 60}));
  EXPECT_EQ(m.peak_bytes(), 150u);
  EXPECT_EQ(m.peak_timestamp_ns(), 200u);
}

// Which memory is on the GPU (CUpti_ActivityMemoryKind), each kind's name in memory.csv, the same
// address on two devices, and a release larger than what is in use.
TEST(MemoryTimeline, KindsDevicesAndOversizedReleases) {
  for (auto [kind, name, resident] : std::vector<std::tuple<MemoryKind, std::string, bool>>{
           {MemoryKind::kUnknown, "unknown", false}, {MemoryKind::kPageable, "pageable", false},
           {MemoryKind::kPinned, "pinned", false}, {MemoryKind::kDevice, "device", true},
           {MemoryKind::kArray, "array", true}, {MemoryKind::kManaged, "managed", true},
           {MemoryKind::kDeviceStatic, "device_static", true}, {MemoryKind::kManagedStatic, "managed_static", true}}) {
    EXPECT_EQ(memory_kind_name(kind), name);
    EXPECT_EQ(gpu_resident(kind), resident) << name;
  }
  MemoryTimeline m;
  m.add(mem(kAlloc, 100, 0xA, 100, MemoryKind::kDevice, 0));
  m.add(mem(kAlloc, 200, 0xA, 30, MemoryKind::kManaged, 1));  // the same address on device 1
  m.add(mem(kFree, 300, 0xA, 0, MemoryKind::kManaged, 1));    // releases device 1's 30 only
  m.add(mem(kAlloc, 400, 0xB, 8, MemoryKind::kArray));
  m.add(mem(kAlloc, 450, 0xC, 2, MemoryKind::kDeviceStatic));
  m.add(mem(kFree, 500, 0xDEAD, 1000));                       // unknown and larger than in use: 0
  m.finalize();
  std::vector<uint64_t> in_use;
  for (const auto& p : m.points()) in_use.push_back(p.in_use_bytes);
  EXPECT_EQ(in_use, (std::vector<uint64_t>{100, 130, 100, 108, 110, 0}));
}

// An address allocated twice before its release (a release record lost) gives back both
// allocations at its release, and only then: a second release of it is an unknown one.
TEST(MemoryTimeline, AnAddressAllocatedTwiceIsReleasedWholeOnce) {
  MemoryTimeline m;
  m.add(mem(kAlloc, 50, 0xB, 50));
  m.add(mem(kAlloc, 100, 0xA, 100));
  m.add(mem(kAlloc, 200, 0xA, 30));
  m.add(mem(kFree, 300, 0xA, 0));
  m.add(mem(kFree, 400, 0xA, 0));
  m.finalize();
  std::vector<uint64_t> in_use;
  for (const auto& p : m.points()) in_use.push_back(p.in_use_bytes);
  EXPECT_EQ(in_use, (std::vector<uint64_t>{50, 150, 180, 50, 50}));
}

TEST(MemoryTimeline, PeakBetweenCountsTheStateAtStartAndEveryEventUpToEnd) {
  MemoryTimeline m;
  m.add(mem(kAlloc, 100, 1, 10));
  m.add(mem(kAlloc, 200, 2, 20));   // 30
  m.add(mem(kFree, 300, 2, 20));    // 10
  m.add(mem(kAlloc, 400, 3, 5));    // 15
  m.add(mem(kFree, 500, 1, 10));    // 5
  m.finalize();
  EXPECT_EQ(m.peak_between(0, 50), 0u);     // before any allocation
  EXPECT_EQ(m.peak_between(0, 100), 10u);   // an event exactly at the end counts
  EXPECT_EQ(m.peak_between(150, 250), 30u);
  EXPECT_EQ(m.peak_between(300, 350), 10u); // the state at start (after the release at 300)
  EXPECT_EQ(m.peak_between(310, 450), 15u);
  EXPECT_EQ(m.peak_between(450, 10000), 15u);
  EXPECT_EQ(m.peak_between(600, 700), 5u);
  EXPECT_EQ(m.peak_between(0, 10000), 30u);
  EXPECT_FALSE(m.peak_between(500, 400).has_value());
  MemoryTimeline none;
  none.finalize();
  EXPECT_TRUE(none.empty());
  EXPECT_FALSE(none.peak_between(0, 100).has_value());
}

TEST(MemoryTimeline, PeakBetweenMatchesAScanOnManyEvents) {
  MemoryTimeline m;
  uint64_t seed = 12345;
  auto next = [&] { return seed = seed * 6364136223846793005ull + 1442695040888963407ull; };
  for (uint64_t i = 0; i < 997; ++i) {
    const uint64_t addr = next() % 40;
    m.add(mem(next() % 3 == 0 ? kFree : kAlloc, 10 * i, addr, 1 + next() % 1000));
  }
  m.finalize();
  const auto& pts = m.points();
  for (int q = 0; q < 300; ++q) {
    uint64_t a = next() % 10100, b = next() % 10100;
    if (a > b) std::swap(a, b);
    uint64_t expect = 0;
    for (const auto& p : pts)
      if (p.event.timestamp_ns <= a) expect = p.in_use_bytes;  // state at a
    for (const auto& p : pts)
      if (p.event.timestamp_ns > a && p.event.timestamp_ns <= b) expect = std::max(expect, p.in_use_bytes);
    EXPECT_EQ(m.peak_between(a, b), expect) << a << ".." << b;
  }
}

TEST(CallSites, CallSiteIsTheInnermostFrameOutsideCudaLibraries) {
  CallStackFrames s;
  s.functions = {"cudaLaunchKernel", "cudnn::conv_fwd", "at::native::cudnn_convolution", "main"};
  s.modules = {"/usr/local/cuda/lib64/libcudart.so.13", "/usr/lib/libcudnn_engines_precompiled.so.9",
               "/opt/torch/lib/libtorch_cuda.so", "/usr/bin/python3.12"};
  EXPECT_EQ(call_site_of(s), "at::native::cudnn_convolution");
  s.modules[2] = "/usr/lib/libcublasLt.so.13";
  EXPECT_EQ(call_site_of(s), "main");
  s.modules[3] = "/usr/lib/libcublas.so.13";
  EXPECT_EQ(call_site_of(s), "main");  // all in CUDA libraries: the outermost frame
  EXPECT_EQ(call_site_of(CallStackFrames{}), "[empty stack]");
  // Frames beyond the module list are not in a CUDA library.
  s.modules = {"/usr/local/cuda/lib64/libcudart.so.13"};
  EXPECT_EQ(call_site_of(s), "cudnn::conv_fwd");
  s.modules = {"/opt/app/libmine.so"};  // the innermost frame itself, when it is not CUDA's
  EXPECT_EQ(call_site_of(s), "cudaLaunchKernel");
  for (const char* lib : {"libcudart.so.13", "libcublasLt.so.13", "libcudnn_ops.so.9", "libcufft.so.12",
                          "libcurand.so.10", "libcusparse.so.12", "libcusolver.so.11", "libnccl.so.2",
                          "libnvrtc.so.13", "libnvJitLink.so.13", "libcuda.so.1", "libcuda-loader.so", "libcupti.so.13"})
    EXPECT_TRUE(is_cuda_library(std::string("/usr/lib/x86_64-linux-gnu/") + lib)) << lib;
  // A prefix of the file name, not a part of it or of its folder.
  for (const char* other : {"libcudax.so", "libtorch_cuda.so", "/usr/lib/libcudart/python3", "my_libcublas.so",
                            "/opt/x/pylibnccl.so"})
    EXPECT_FALSE(is_cuda_library(other)) << other;
}

TEST(Aggregate, MergeEqualsAddingEachLaunch) {
  KernelRow a, b;
  a.duration_ns = 100;
  a.metrics.fp32_flop = 2000;
  a.metrics.dram_read_bytes = 600;
  a.metrics.dram_write_bytes = 400;
  a.metrics.l2_bytes = 50;
  b.duration_ns = 300;
  b.metrics.fp64_flop = 10;
  b.metrics.tensor_dense[0] = 4096;
  Aggregate each, left, right;
  each.add(a);
  each.add(b);
  left.add(a);
  right.add(b);
  left.merge(right);
  EXPECT_EQ(left.csv_fields("k"), each.csv_fields("k"));
  EXPECT_EQ(left.launches, 2u);
}

/// pid 4242: forward (thread 100) then backward launched by an autograd thread (200) while the
/// main thread holds "backward" open. Memory: 1 GiB weights before, 3 GiB activations in forward,
/// 2 GiB freed in backward with a 512 MiB workspace; call stacks 1 (conv), 2 (gemm), launches of
/// stack 3 have no CallStack record, one launch has no stack.
void write_trace(const fs::path& path) {
  TraceBuilder t(path, 600);
  t.process(4242, trace::CollectionMode::kCounters);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100", 3352320000ull);
  t.config(1, testing::roofline_metrics());
  constexpr uint64_t GiB = 1ull << 30;
  t.memory(true, 500, 0x1000, GiB);
  t.push(1, 100, 1000, "forward");
  t.memory(true, 1500, 0x2000, 3 * GiB);
  Counts conv;
  conv.ffma = 1000;  // 2000 FLOP
  conv.read = 500;
  conv.write = 500;
  Counts gemm;
  gemm.ffma = 250;   // 500 FLOP
  gemm.read = 100;
  t.launch(11, 0, 100, 2000, 0, false, 1);
  t.kernel(11, 2100, 2200, "conv_kernel");
  t.counters(1, 11, conv.values());
  t.launch(12, 0, 100, 3000, 0, false, 2);
  t.kernel(12, 3100, 3400, "gemm_kernel");
  t.counters(1, 12, gemm.values());
  t.pop(1, 100, 4000);
  t.push(2, 100, 5000, "backward");
  t.memory(true, 6000, 0x3000, GiB / 2);
  t.launch(13, 0, 200, 6500, 0, false, 1);  // autograd thread, same call stack as 11
  t.kernel(13, 6600, 6800, "conv_kernel");
  t.counters(1, 13, conv.values());
  t.memory(false, 7000, 0x2000, 0);         // releases the 3 GiB
  t.launch(14, 0, 200, 7500, 0, false, 3);  // stack 3: no CallStack record
  t.kernel(14, 7600, 7700, "gemm_kernel");
  t.counters(1, 14, gemm.values());
  t.launch(15, 0, 200, 8000);               // no stack
  t.kernel(15, 8100, 8150, "gemm_kernel");
  t.pop(2, 100, 9000);
  t.call_stack(1, {{"cudaLaunchKernel", "/usr/local/cuda/lib64/libcudart.so.13"},
                   {"at::native::cudnn_convolution", "/opt/torch/lib/libtorch_cuda.so"},
                   {"train;step", "/usr/bin/python3"}});  // ';' must not split the folded line
  t.call_stack(2, {{"cublasGemmEx", "/usr/lib/libcublas.so.13"},
                   {"at::native::addmm_out_cuda", "/opt/torch/lib/libtorch_cuda.so"},
                   {"train;step", "/usr/bin/python3"}});
  t.finish();
}

// A range's memory peak is its own path's, also when another range was pushed inside it in the
// same nanosecond (until 2026-11-29 X's whole interval went to "X/Y", and row X had no peak).
TEST(MemoryAndCallSitesEndToEnd, ARangesPeakIsItsOwnPathsWhenAnInnerOneStartsWithIt) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(7, trace::CollectionMode::kTiming);
    t.push(1, 100, 1000, "X");
    t.push(2, 100, 1000, "Y");  // the same nanosecond
    t.memory(true, 1200, 0x1000, 100);
    t.launch(1, 0, 100, 1500);
    t.kernel(1, 1600, 1700);
    t.pop(2, 100, 2000);
    t.launch(2, 0, 100, 3000);
    t.kernel(2, 3100, 3200);
    t.memory(true, 5000, 0x2000, 1000000);
    t.pop(1, 100, 9000);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable ranges = CsvTable::read(dir.path / "r" / "ranges.csv");
  ASSERT_LT(ranges.find("nvtx", "X"), ranges.rows.size());
  ASSERT_LT(ranges.find("nvtx", "X/Y"), ranges.rows.size());
  EXPECT_EQ(ranges.cell(ranges.find("nvtx", "X"), "peak_memory_bytes"), "1000100");
  EXPECT_EQ(ranges.cell(ranges.find("nvtx", "X/Y"), "peak_memory_bytes"), "100");
}

TEST(MemoryAndCallSitesEndToEnd, OutputsNumberByNumber) {
  TempDir dir;
  write_trace(dir.path / "t.rftrace");
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  constexpr uint64_t GiB = 1ull << 30;

  const CsvTable mem_csv = CsvTable::read(out / "memory.csv");
  EXPECT_EQ(mem_csv.header, memory_csv_header());
  ASSERT_EQ(mem_csv.rows.size(), 4u);
  EXPECT_EQ(mem_csv.cell(0, "pid"), "4242");
  EXPECT_EQ(mem_csv.cell(0, "device"), "0");
  EXPECT_EQ(mem_csv.cell(0, "operation"), "allocation");
  EXPECT_EQ(mem_csv.cell(0, "memory_kind"), "device");
  EXPECT_EQ(mem_csv.cell(0, "address"), "0x1000");
  EXPECT_EQ(mem_csv.cell(1, "in_use_bytes"), std::to_string(4 * GiB));
  EXPECT_EQ(mem_csv.cell(2, "in_use_bytes"), std::to_string(4 * GiB + GiB / 2));
  EXPECT_EQ(mem_csv.cell(3, "operation"), "release");
  EXPECT_EQ(mem_csv.cell(3, "bytes"), "0");
  EXPECT_EQ(mem_csv.cell(3, "in_use_bytes"), std::to_string(GiB + GiB / 2));

  // forward: 1 GiB at its start, 4 GiB after 1500; backward: 4 GiB at its start, 4.5 GiB at 6000.
  const CsvTable ranges = CsvTable::read(out / "ranges.csv");
  EXPECT_EQ(ranges.header, range_csv_header("nvtx"));
  EXPECT_EQ(ranges.cell(ranges.find("nvtx", "forward"), "peak_memory_bytes"), std::to_string(4 * GiB));
  EXPECT_EQ(ranges.cell(ranges.find("nvtx", "backward"), "peak_memory_bytes"),
            std::to_string(4 * GiB + GiB / 2));
  const CsvTable phases = CsvTable::read(out / "phases.csv");
  EXPECT_EQ(phases.cell(phases.find("phase", "forward"), "peak_memory_bytes"), std::to_string(4 * GiB));
  EXPECT_EQ(phases.cell(phases.find("phase", "backward"), "peak_memory_bytes"),
            std::to_string(4 * GiB + GiB / 2));

  auto summary = nlohmann::json::parse(testing::slurp(out / "summary.json"));
  const auto& m = summary["traces"][0]["memory"];
  EXPECT_EQ(m["events"], 4);
  EXPECT_EQ(m["peak_bytes"].get<uint64_t>(), 4 * GiB + GiB / 2);
  EXPECT_EQ(m["peak_timestamp_ns"], 6000);
  EXPECT_EQ(summary["traces"][0]["call_stacks"], 2);

  // Folded stacks, outermost first; ';' inside a frame became ':'. GPU ns: conv 100 + 200, gemm
  // 300; stack 3 unsymbolized 100; no stack 50. FLOP: conv 2 x 2000, gemm 500 (+ 500 unsymbolized).
  EXPECT_EQ(lines_of(out / "callsites_time.folded"),
            (std::vector<std::string>{
                "[no call stack];gemm_kernel 50",
                "[unsymbolized];gemm_kernel 100",
                "train:step;at::native::addmm_out_cuda;cublasGemmEx;gemm_kernel 300",
                "train:step;at::native::cudnn_convolution;cudaLaunchKernel;conv_kernel 300",
            }));
  EXPECT_EQ(lines_of(out / "callsites_flop.folded"),
            (std::vector<std::string>{
                "[unsymbolized];gemm_kernel 500",
                "train:step;at::native::addmm_out_cuda;cublasGemmEx;gemm_kernel 500",
                "train:step;at::native::cudnn_convolution;cudaLaunchKernel;conv_kernel 4000",
            }));
  const CsvTable sites = CsvTable::read(out / "callsites.csv");
  EXPECT_EQ(sites.header, aggregate_csv_header("call_site"));
  ASSERT_EQ(sites.rows.size(), 4u);
  const size_t conv = sites.find("call_site", "at::native::cudnn_convolution");
  ASSERT_LT(conv, sites.rows.size());
  EXPECT_EQ(sites.cell(conv, "launches"), "2");
  EXPECT_EQ(sites.cell(conv, "duration_ns"), "300");
  EXPECT_EQ(sites.cell(conv, "fp32_flop"), "4000");
  EXPECT_EQ(sites.cell(conv, "arithmetic_intensity"), "2");  // 4000 FLOP / 2000 bytes
  const size_t gemm = sites.find("call_site", "at::native::addmm_out_cuda");
  EXPECT_EQ(sites.cell(gemm, "launches"), "1");
  EXPECT_EQ(sites.cell(gemm, "fp32_flop"), "500");
  EXPECT_EQ(sites.cell(sites.find("call_site", "[no call stack]"), "launches"), "1");
}

// Folded lines stay one line each and split only at frames: ';', '\n' and '\r' inside a frame or a
// kernel name are replaced; a CallStack with no frames is "[empty stack]"; FLOP that is not whole
// (a counter ncu averaged) is rounded, not cut.
TEST(MemoryAndCallSitesEndToEnd, FoldedLinesOfOddNamesAndStacks) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(7, trace::CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    Counts c;
    c.ffma = 0.75;  // 1.5 FP32 FLOP
    t.launch(1, 0, 5, 100, 0, false, 1);
    t.kernel(1, 200, 300, "k;a\nb\rc");
    t.counters(1, 1, c.values());
    t.launch(2, 0, 5, 400, 0, false, 2);
    t.kernel(2, 500, 540, "k2");
    t.launch(3, 0, 5, 600, 0, false, 2);  // its kernel record never came: no duration, a line of 0 ns
    t.call_stack(1, {{"f\r\ng", "/usr/bin/python3"}});
    t.call_stack(2, {});
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  EXPECT_EQ(lines_of(dir.path / "out" / "callsites_time.folded"),
            (std::vector<std::string>{"[empty stack];ffma_loop(float*, int) 0", "[empty stack];k2 40",
                                      "f  g;k:a b c 100"}));
  EXPECT_EQ(lines_of(dir.path / "out" / "callsites_flop.folded"), (std::vector<std::string>{"f  g;k:a b c 2"}));
}

// A process killed before its trace ended wrote stack ids but no CallStack record (written at the
// end): its launches count under [unsymbolized], as the docs say. They were dropped (empty files,
// "call_stacks": 0) since only CallStack records made a trace's call sites count.
TEST(MemoryAndCallSitesEndToEnd, StackIdsWithoutStacksAreUnsymbolized) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(7, trace::CollectionMode::kTiming);
    for (uint32_t i = 1; i <= 3; ++i) {
      t.launch(i, 0, 5, 100 * i, 0, false, 5);
      t.kernel(i, 1000 * i, 1000 * i + 500, "k");
    }
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  EXPECT_EQ(lines_of(dir.path / "out" / "callsites_time.folded"), (std::vector<std::string>{"[unsymbolized];k 1500"}));
  CsvTable sites = CsvTable::read(dir.path / "out" / "callsites.csv");
  ASSERT_EQ(sites.rows.size(), 1u);
  EXPECT_EQ(sites.cell(0, "call_site"), "[unsymbolized]");
  EXPECT_EQ(sites.cell(0, "launches"), "3");
}

// Two traces of one job (two ranks): folded lines and call sites they share are summed.
TEST(MemoryAndCallSitesEndToEnd, TwoTracesAreSummed) {
  TempDir dir;
  write_trace(dir.path / "rank0.rftrace");
  write_trace(dir.path / "rank1.rftrace");
  const fs::path out = dir.path / "out";
  const testing::AnalysisRun run = testing::analyze({dir.path / "rank0.rftrace", dir.path / "rank1.rftrace"}, out);
  ASSERT_EQ(run.status, kExitOk) << run.err;
  EXPECT_EQ(lines_of(out / "callsites_time.folded"),
            (std::vector<std::string>{
                "[no call stack];gemm_kernel 100",
                "[unsymbolized];gemm_kernel 200",
                "train:step;at::native::addmm_out_cuda;cublasGemmEx;gemm_kernel 600",
                "train:step;at::native::cudnn_convolution;cudaLaunchKernel;conv_kernel 600",
            }));
  EXPECT_EQ(lines_of(out / "callsites_flop.folded"),
            (std::vector<std::string>{
                "[unsymbolized];gemm_kernel 1000",
                "train:step;at::native::addmm_out_cuda;cublasGemmEx;gemm_kernel 1000",
                "train:step;at::native::cudnn_convolution;cudaLaunchKernel;conv_kernel 8000",
            }));
  const CsvTable sites = CsvTable::read(out / "callsites.csv");
  ASSERT_EQ(sites.rows.size(), 4u);
  const size_t conv = sites.find("call_site", "at::native::cudnn_convolution");
  ASSERT_LT(conv, sites.rows.size());
  EXPECT_EQ(sites.cell(conv, "launches"), "4");
  EXPECT_EQ(sites.cell(conv, "duration_ns"), "600");
  EXPECT_EQ(sites.cell(conv, "fp32_flop"), "8000");
}

TEST(MemoryAndCallSitesEndToEnd, TraceWithoutThemHasEmptyOutputsAndEmptyPeaks) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, trace::CollectionMode::kTiming);
    t.push(1, 5, 100, "forward");
    t.launch(10, 0, 5, 200);  // no stack id (a stack id without CallStack records: StackIdsWithoutStacksAreUnsymbolized)
    t.kernel(10, 300, 400);
    t.pop(1, 5, 500);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "out");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  EXPECT_EQ(lines_of(dir.path / "out" / "memory.csv").size(), 1u);  // header only
  EXPECT_TRUE(lines_of(dir.path / "out" / "callsites_time.folded").empty());
  EXPECT_EQ(lines_of(dir.path / "out" / "callsites.csv").size(), 1u);
  const CsvTable ranges = CsvTable::read(dir.path / "out" / "ranges.csv");
  EXPECT_EQ(ranges.cell(ranges.find("nvtx", "forward"), "peak_memory_bytes"), "");
  auto summary = nlohmann::json::parse(testing::slurp(dir.path / "out" / "summary.json"));
  EXPECT_TRUE(summary["traces"][0]["memory"]["peak_bytes"].is_null());
}

}  // namespace
}  // namespace rf::analyzer
