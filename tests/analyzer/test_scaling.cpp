// processes.csv: per-trace rows of a merged run and the batch-size scaling table (scaling.h).
#include "rfprof/analyzer/scaling.h"

#include <gtest/gtest.h>

#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"

namespace rf::analyzer {
namespace {

using testing::CsvTable;
using testing::TempDir;
using testing::TraceBuilder;

TEST(Scaling, BatchSizeFromTheCommandLine) {
  EXPECT_EQ(batch_size_of("python main.py -a resnet18 --batch-size 64 --dummy"), 64u);
  EXPECT_EQ(batch_size_of("python main.py --batch-size=256"), 256u);
  EXPECT_EQ(batch_size_of("python main.py -b 32"), 32u);
  EXPECT_EQ(batch_size_of("python train.py --batch_size 8"), 8u);
  EXPECT_FALSE(batch_size_of("python main.py --dummy"));
  EXPECT_FALSE(batch_size_of("python main.py --batch-size big"));
  EXPECT_FALSE(batch_size_of("python main.py --batch-size 0"));
  EXPECT_FALSE(batch_size_of("python main.py -b"));
  EXPECT_FALSE(batch_size_of("python main.py -b x12"));
  EXPECT_FALSE(batch_size_of("python main.py --batch-sizes 4"));
  EXPECT_EQ(batch_size_of("python main.py --bs 4"), 4u);
  EXPECT_FALSE(batch_size_of("python main.py -b=4"));  // '=' only after a long flag
  EXPECT_FALSE(batch_size_of("python main.py --batch-size 12x"));  // the whole word is the number
  EXPECT_FALSE(batch_size_of("python main.py --fast -b"));        // the flag is the last word
  // A longer flag that starts like a known one is another flag: the search goes on past it.
  EXPECT_EQ(batch_size_of("python main.py --batch-sizes 4 --batch-size 8"), 8u);
  // Found by the eighth mutation round: argparse keeps an option's last occurrence, and so does
  // rfanalyze (the first one was taken, giving 32 where the program ran with 64). A last value that
  // is no number is unknown, whatever came before it; a last flag without a value changes nothing.
  EXPECT_EQ(batch_size_of("python main.py -b 32 --batch-size 64"), 64u);
  EXPECT_EQ(batch_size_of("python main.py --batch-size=64 -b 32"), 32u);
  EXPECT_FALSE(batch_size_of("python main.py -b 32 --bs auto"));
  EXPECT_EQ(batch_size_of("python main.py --bs auto -b 4"), 4u);
  EXPECT_EQ(batch_size_of("python main.py -b 8 --fast -b"), 8u);
  // argparse's attached short form, and the other spellings common training scripts use.
  EXPECT_EQ(batch_size_of("python main.py -b64"), 64u);
  EXPECT_FALSE(batch_size_of("python main.py -bx"));
  EXPECT_EQ(batch_size_of("python train.py --batch 16"), 16u);
  EXPECT_EQ(batch_size_of("python train.py --train-batch-size=32"), 32u);
  EXPECT_EQ(batch_size_of("python train.py --train_batch_size 12"), 12u);
  // Anything attached is the value, as argparse reads it: the last -b is -1, no batch size.
  EXPECT_FALSE(batch_size_of("python main.py --batch-size 32 -b-1"));
  EXPECT_FALSE(batch_size_of("python main.py --batch-size 32 -bx"));
}

TEST(Scaling, IterationsFromTheCommandLine) {
  EXPECT_EQ(iterations_of("x --steps 10 -b 2"), 10u);
  EXPECT_EQ(iterations_of("x --iterations=3"), 3u);
  EXPECT_EQ(iterations_of("x --iters 5 --profile-iters 1"), 5u);
  EXPECT_EQ(iterations_of("x --iters 5 --steps 7"), 7u);
  EXPECT_EQ(iterations_of("x --epochs 3"), std::nullopt);
  EXPECT_EQ(iterations_of("x --max_steps 200"), 200u);    // HuggingFace
  EXPECT_EQ(iterations_of("x --train-iters 50"), 50u);    // Megatron
  EXPECT_EQ(iterations_of("x --num-iterations=9"), 9u);
}

TEST(Scaling, TraceLabelIsTheBatchOrTheFileStem) {
  EXPECT_EQ(trace_label("runs/rank0.rftrace", 64u), "batch 64");
  EXPECT_EQ(trace_label("runs/rank0.rftrace", std::nullopt), "rank0");
  EXPECT_EQ(trace_label("all_parent.rftrace.part", std::nullopt), "all_parent.rftrace");
}

TEST(Scaling, StepRangeNames) {
  for (const char* yes : {"step", "step 5", "Step:3", "ITERATION 2", "iter", "iter-7"})
    EXPECT_TRUE(is_step_range_name(yes)) << yes;
  // Every letter of the stem counts, the first and the last: "xtep 1" and "stex 1" are no steps, nor
  // is a name as long as a stem that is another word.
  for (const char* no : {"", "ste", "stepper", "steps", "step_3", "iter2", "forward", " step 1", "xtep 1",
                         "stex 1", "data", "iteratiom 3"})
    EXPECT_FALSE(is_step_range_name(no)) << no;
  // A view into a longer name ends where it ends: "ste" of "step 1" is no step, "step" of "steps"
  // is one (the characters past the view are not read).
  EXPECT_FALSE(is_step_range_name(std::string_view("step 1").substr(0, 3)));
  EXPECT_TRUE(is_step_range_name(std::string_view("steps").substr(0, 4)));
}

TEST(Scaling, RowsWithoutStepsTimeOrWallTimeLeaveTheirCellsEmpty) {
  ProcessRow row;
  row.trace = "t.rftrace";
  row.batch_size = 64;
  row.steps = {.count = 2, .wall_ns = 0};  // two steps that took no time: no rate, not infinity
  EXPECT_EQ(row.samples_per_s(), std::nullopt);
  row.totals.launches = 3;  // launches, none timed
  const std::vector<std::string> header = processes_csv_header();
  auto cell = [&](const ProcessRow& r, const std::string& column) {
    const auto fields = processes_csv_fields(r);
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == column) return fields.at(i);
    return std::string("no column ") + column;
  };
  EXPECT_EQ(cell(row, "steps"), "2");
  EXPECT_EQ(cell(row, "step_wall_ns"), "0");
  EXPECT_EQ(cell(row, "samples_per_s"), "");
  EXPECT_EQ(cell(row, "launches"), "3");
  EXPECT_EQ(cell(row, "duration_ns"), "");  // not 0 ns
  row.steps = {};
  EXPECT_EQ(cell(row, "steps"), "0");
  EXPECT_EQ(cell(row, "step_wall_ns"), "");  // not 0 ns
  row.totals.timed_launches = 1;
  row.totals.duration_ns = 500;
  EXPECT_EQ(cell(row, "duration_ns"), "500");
}

// Until 2026-11-29 batch size times steps was multiplied in uint64_t: --batch-size 2^62 and 8
// steps wrapped to 0 samples/s in processes.csv (scaling.csv, in double, said 9.2e25).
TEST(Scaling, SamplesPerSecondOfAHugeBatchDoNotWrap) {
  ProcessRow row;
  row.batch_size = uint64_t{1} << 62;
  row.steps = {.count = 8, .wall_ns = 1'000'000'000};
  ASSERT_TRUE(row.samples_per_s());
  EXPECT_DOUBLE_EQ(*row.samples_per_s(), 8.0 * 4611686018427387904.0);
  row.batch_size = 64;
  EXPECT_DOUBLE_EQ(*row.samples_per_s(), 512.0);
}

/// A timing-mode trace of `pid` running `command`: `steps` "step i" ranges of 1 ms (each holding
/// a 100 us kernel with known counters), plus an unrelated range and, with `unclosed_step`, a
/// step range still open when the trace ends.
void write_run(const std::filesystem::path& p, uint32_t pid, const std::string& command, int steps,
               bool unclosed_step = false, const std::string& step_name = "") {
  trace::Writer w(p, {.force_overwrite = true});
  trace::ProcessInfo info;
  info.pid = pid;
  info.hostname = w.intern("node01");
  info.process_name = w.intern("python3");
  info.command_line = w.intern(command);
  info.mode = trace::CollectionMode::kCounters;
  w.append(info);
  trace::MetricConfig mc;
  mc.config_id = 1;
  for (const auto& m : testing::roofline_metrics()) mc.metrics.push_back(w.intern(m));
  w.append(mc);
  uint64_t t = 1'000'000;
  uint32_t corr = 1;
  const auto name = w.intern("gemm");
  for (int s = 0; s < steps; ++s, t += 2'000'000, ++corr) {
    w.append(trace::NvtxEvent{.id = corr, .kind = trace::NvtxEventKind::kStart, .style = trace::NvtxRangeStyle::kPushPop,
                              .timestamp_ns = t, .thread_id = 1,
                              .name = w.intern(step_name.empty() ? "step " + std::to_string(s) : step_name)});
    trace::LaunchApi l;
    l.correlation_id = corr;
    l.thread_id = 1;
    l.api_start_ns = t + 10;
    l.api_end_ns = t + 20;
    l.kernel_name = name;
    w.append(l);
    trace::KernelActivity k;
    k.correlation_id = corr;
    k.start_ns = t + 100;
    k.end_ns = t + 100'100;
    k.demangled_name = name;
    w.append(k);
    testing::Counts c;
    c.ffma = 1e6;  // 2e6 FLOP
    c.read = 5e5;
    c.write = 5e5;  // 1e6 bytes
    trace::RangeCounters rc;
    rc.config_id = 1;
    rc.correlation_id = corr;
    rc.values = c.values();
    w.append(rc);
    w.append(trace::NvtxEvent{.id = corr, .kind = trace::NvtxEventKind::kEnd, .style = trace::NvtxRangeStyle::kPushPop,
                              .timestamp_ns = t + 1'000'000, .thread_id = 1});
  }
  w.append(trace::NvtxEvent{.id = 999, .kind = trace::NvtxEventKind::kStart, .style = trace::NvtxRangeStyle::kPushPop,
                            .timestamp_ns = t, .thread_id = 1, .name = w.intern("evaluation")});
  w.append(trace::NvtxEvent{.id = 999, .kind = trace::NvtxEventKind::kEnd, .style = trace::NvtxRangeStyle::kPushPop,
                            .timestamp_ns = t + 5'000'000, .thread_id = 1});
  if (unclosed_step)
    w.append(trace::NvtxEvent{.id = 1000, .kind = trace::NvtxEventKind::kStart, .style = trace::NvtxRangeStyle::kPushPop,
                              .timestamp_ns = t + 5'500'000, .thread_id = 1, .name = w.intern("step 99")});
  w.append(trace::ProfilingWindow{0, false, t + 6'000'000, 0});
  w.finish();
}

TEST(Scaling, OneRowPerTraceWithThroughputAndRates) {
  TempDir dir;
  write_run(dir.path / "b64.rftrace", 101, "python main.py --batch-size 64", 3);
  write_run(dir.path / "b256.rftrace", 102, "python main.py -b 256", 2);
  write_run(dir.path / "plain.rftrace", 103, "python other.py", 1, /*unclosed_step=*/true);
  const testing::AnalysisRun run = testing::analyze({dir.path / "b64.rftrace", dir.path / "b256.rftrace", dir.path / "plain.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  CsvTable p = CsvTable::read(dir.path / "r" / "processes.csv");
  EXPECT_EQ(p.header, processes_csv_header());
  ASSERT_EQ(p.rows.size(), 3u);
  // batch 64: 3 steps of 1 ms -> 192 samples in 3 ms = 64,000 samples/s; 3 launches of 100 us,
  // 2e6 FLOP and 1e6 bytes each -> AI 2, 2e6 FLOP / 100 us = 2e10 FLOP/s.
  EXPECT_EQ(p.cell(0, "pid"), "101");
  EXPECT_EQ(p.cell(0, "label"), "batch 64");
  EXPECT_EQ(p.cell(0, "batch_size"), "64");
  EXPECT_EQ(p.cell(0, "steps"), "3");
  EXPECT_EQ(p.cell(0, "step_wall_ns"), "3000000");
  EXPECT_EQ(p.cell(0, "samples_per_s"), "64000");
  EXPECT_EQ(p.cell(0, "launches"), "3");
  EXPECT_EQ(p.cell(0, "duration_ns"), "300000");
  EXPECT_EQ(p.cell(0, "total_flop"), "6000000");
  EXPECT_EQ(p.cell(0, "dram_bytes"), "3000000");
  EXPECT_EQ(p.cell(0, "arithmetic_intensity"), "2");
  EXPECT_EQ(p.cell(0, "flop_per_s"), "20000000000");
  // batch 256: 2 steps of 1 ms -> 512 samples in 2 ms = 256,000 samples/s
  EXPECT_EQ(p.cell(1, "label"), "batch 256");
  EXPECT_EQ(p.cell(1, "samples_per_s"), "256000");
  EXPECT_EQ(p.cell(1, "launches"), "2");
  // no batch size: labelled by its file, no throughput
  EXPECT_EQ(p.cell(2, "label"), "plain");
  EXPECT_EQ(p.cell(2, "batch_size"), "");
  EXPECT_EQ(p.cell(2, "steps"), "1");  // the step range left open is no step
  EXPECT_EQ(p.cell(2, "step_wall_ns"), "1000000");
  EXPECT_EQ(p.cell(2, "samples_per_s"), "");
  // the combined view: every launch of the three traces
  CsvTable ph = CsvTable::read(dir.path / "r" / "phases.csv");
  uint64_t launches = 0;
  for (size_t r = 0; r < ph.rows.size(); ++r) launches += std::stoull(ph.cell(r, "launches"));
  EXPECT_EQ(launches, 6u);
}

// Steps that share a name ("iteration" each time) are as many steps as ranges: until 2026-11-29
// scaling.csv counted distinct names (1 here), which cut the throughput by the number of steps.
TEST(Scaling, StepRangesOfOneNameAreCountedOneByOne) {
  TempDir dir;
  write_run(dir.path / "b64.rftrace", 101, "python main.py --batch-size 64", 3, false, "iteration");
  const testing::AnalysisRun run = testing::analyze({dir.path / "b64.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable s = CsvTable::read(dir.path / "r" / "scaling.csv");
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.cell(0, "iterations"), "3");
  // 64 samples x 3 steps in 3 kernels of 100 us
  EXPECT_EQ(s.cell(0, "throughput_samples_per_s"), "640000");
  EXPECT_EQ(CsvTable::read(dir.path / "r" / "processes.csv").cell(0, "steps"), "3");
}

// A trace whose launches have no duration (a killed counters run: no kernel records) has an
// unknown GPU time in scaling.csv, as in processes.csv and phases.csv: empty, never 0.
TEST(Scaling, AnUntimedTracesGpuTimeIsEmpty) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(5, trace::CollectionMode::kTiming);
    t.launch(1, 0, 1, 100);  // its kernel record never came
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable s = CsvTable::read(dir.path / "r" / "scaling.csv");
  EXPECT_EQ(s.cell(0, "launches"), "1");
  EXPECT_EQ(s.cell(0, "gpu_time_ns"), "");
}

// A step range inside another ("iteration N/step", "step/iter"): one training step, as scaling.csv
// counts it. processes.csv counted both, 4 steps for 2, and twice the samples/s.
TEST(Scaling, StepRangesInsideAStepRangeAreNotStepsOfTheirOwn) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(5, trace::CollectionMode::kTiming, 0, "python train.py --batch-size 64");
    for (uint64_t i = 0; i < 2; ++i) {
      const uint64_t at = 1'000'000 * i;
      t.push(10 * i + 1, 1, at, "iteration " + std::to_string(i));
      t.push(10 * i + 2, 1, at + 100, "forward");
      t.launch(static_cast<uint32_t>(i + 1), 0, 1, at + 200);
      t.kernel(static_cast<uint32_t>(i + 1), at + 300, at + 400);
      t.pop(10 * i + 2, 1, at + 500);
      t.push(10 * i + 3, 1, at + 600, "step");  // nested: part of iteration i
      t.pop(10 * i + 3, 1, at + 700);
      t.pop(10 * i + 1, 1, at + 100'000);
    }
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable p = CsvTable::read(dir.path / "r" / "processes.csv");
  EXPECT_EQ(p.cell(0, "steps"), "2");
  EXPECT_EQ(p.cell(0, "step_wall_ns"), "200000");
  EXPECT_EQ(p.cell(0, "samples_per_s"), "640000");  // 64 x 2 / 200 us
  EXPECT_EQ(CsvTable::read(dir.path / "r" / "scaling.csv").cell(0, "iterations"), "2");
}

// Start/end step ranges that overlap without nesting (step 2 starts before step 1 ends) are two
// steps, as scaling.csv counts them; a test by path took step 2 for one inside step 1.
TEST(Scaling, OverlappingStepRangesAreTwoSteps) {
  const auto ranges = [](bool nested) {
    NvtxIndex nvtx;
    auto event = [](uint64_t id, trace::NvtxEventKind kind, uint64_t t) {
      trace::NvtxEvent e;
      e.id = id;
      e.kind = kind;
      e.style = trace::NvtxRangeStyle::kStartEnd;
      e.timestamp_ns = t;
      e.thread_id = 1;
      return e;
    };
    nvtx.add(event(1, trace::NvtxEventKind::kStart, 0), "step 1");
    nvtx.add(event(2, trace::NvtxEventKind::kStart, 900), "step 2");
    nvtx.add(event(1, trace::NvtxEventKind::kEnd, nested ? 3000 : 1000), "");
    nvtx.add(event(2, trace::NvtxEventKind::kEnd, 2000), "");
    nvtx.finalize();
    return step_ranges(nvtx);
  };
  EXPECT_EQ(ranges(false).count, 2u);
  EXPECT_EQ(ranges(false).wall_ns, 1000u + 1100u);
  EXPECT_EQ(ranges(true).count, 1u);  // step 2 inside step 1
  EXPECT_EQ(ranges(true).wall_ns, 3000u);
}

}  // namespace
}  // namespace rf::analyzer
