// emit_nvtx per-op and per-layer breakdown (ops.h): names parsed, backward Functions matched to
// their forward op by sequence number across threads, ratios number by number.
#include "rfprof/analyzer/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"

namespace rf::analyzer {
namespace {

using testing::CsvTable;
using testing::TempDir;
using testing::TraceBuilder;

TEST(OpRanges, PyTorchNamesAreParsed) {
  auto f = parse_op_range("aten::conv2d, seq = 12, op_id = 40, sizes = [[64, 3, 224, 224], [64, 3, 7, 7]]");
  ASSERT_TRUE(f);
  EXPECT_EQ(f->op, "aten::conv2d");
  EXPECT_EQ(f->seq, 12u);
  EXPECT_FALSE(f->backward);
  auto b = parse_op_range("ConvolutionBackward0, seq = 12, op_id = 95");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->op, "ConvolutionBackward0");
  EXPECT_TRUE(b->backward);
  auto old = parse_op_range("CudnnConvolutionBackward, stashed seq=7");
  ASSERT_TRUE(old);
  EXPECT_EQ(old->seq, 7u);
  EXPECT_TRUE(old->backward);
  auto wrapped = parse_op_range("autograd::engine::evaluate_function: AddmmBackward0, seq = 3");
  ASSERT_TRUE(wrapped);
  EXPECT_EQ(wrapped->op, "AddmmBackward0");
  EXPECT_TRUE(wrapped->backward);
  EXPECT_FALSE(parse_op_range("forward"));
  EXPECT_FALSE(parse_op_range("step 3"));
  EXPECT_FALSE(parse_op_range("autograd::engine::evaluate_function: AddmmBackward0"));
  EXPECT_FALSE(parse_op_range(", seq = 3"));           // no op name
  EXPECT_FALSE(parse_op_range("aten::mm, seq = "));    // no number
  EXPECT_FALSE(parse_op_range("aten::mm, seq = 3x"));  // not a number
  EXPECT_FALSE(parse_op_range("aten::mm, seq = -3"));
  EXPECT_FALSE(parse_op_range("aten::mm,seq = 3"));
  auto no_spaces = parse_op_range("aten::mm, seq=4");
  ASSERT_TRUE(no_spaces);
  EXPECT_EQ(no_spaces->seq, 4u);
  EXPECT_FALSE(parse_op_range("aten::mm,_seq = 3"));  // ", " exactly
  EXPECT_FALSE(parse_op_range("aten::mm, sum = 3"));  // "seq", not any word
  EXPECT_FALSE(parse_op_range("aten::mm, seq: 3"));   // '=' and nothing else
  EXPECT_FALSE(parse_op_range("aten::mm, seq  = 3"));  // at most one space on each side of '='
  EXPECT_FALSE(parse_op_range("aten::mm, seq =  3"));
  // Backward Functions whose names lack "Backward": the evaluate_function wrapper or "stashed"
  // says so.
  auto copy_slices = parse_op_range("autograd::engine::evaluate_function: torch::autograd::CopySlices, seq = 4");
  ASSERT_TRUE(copy_slices);
  EXPECT_EQ(copy_slices->op, "torch::autograd::CopySlices");
  EXPECT_TRUE(copy_slices->backward);
  auto stashed = parse_op_range("torch::autograd::CopySlices, stashed seq=4");
  ASSERT_TRUE(stashed);
  EXPECT_EQ(stashed->seq, 4u);
  EXPECT_TRUE(stashed->backward);
}

// Found reviewing fuzz_analysis (2026-11-23): names from a trace that broke the analysis.
TEST(OpRanges, HostileNamesAreNotOpRanges) {
  // std::stoull threw std::out_of_range out of run_analysis (exit 3, no outputs).
  EXPECT_FALSE(parse_op_range("aten::mm, seq = 99999999999999999999999"));
  auto max = parse_op_range("aten::mm, seq = 18446744073709551615");
  ASSERT_TRUE(max);
  EXPECT_EQ(max->seq, 18446744073709551615ull);
  // std::regex_match recursed once per character: 60,000 overflowed the stack (SIGSEGV).
  EXPECT_FALSE(parse_op_range(std::string(1 << 20, 'a')));
  auto long_op = parse_op_range(std::string(1 << 20, 'a') + ", seq = 5, sizes = []");
  ASSERT_TRUE(long_op);
  EXPECT_EQ(long_op->op.size(), 1u << 20);
}

/// A training step as emit_nvtx records it: forward ops on the main thread (1) inside module
/// ranges, backward Functions on the autograd thread (2); each kernel with FFMA counts.
void write_step(const std::filesystem::path& p) {
  TraceBuilder t(p);
  t.process(77, trace::CollectionMode::kCounters);
  t.config(1, testing::roofline_metrics());
  uint32_t corr = 0;
  auto kernel = [&](uint64_t thread, uint64_t at, uint64_t dur, double ffma) {
    ++corr;
    t.launch(corr, 0, thread, at);
    t.kernel(corr, at + 5, at + 5 + dur);
    testing::Counts c;
    c.ffma = ffma;
    c.read = 100;
    c.write = 0;
    t.counters(1, corr, c.values());
  };
  t.push(1, 1, 100, "step 0");
  t.push(2, 1, 110, "forward");
  t.push(3, 1, 120, "layer1");
  t.push(4, 1, 130, "aten::linear, seq = 5, op_id = 1");
  t.push(5, 1, 140, "aten::addmm, seq = 5, op_id = 2");
  kernel(1, 150, 100, 1000);  // forward linear: 2000 FLOP, 100 ns
  t.pop(5, 1, 300);
  t.pop(4, 1, 310);
  t.pop(3, 1, 320);
  t.push(6, 1, 330, "layer2");
  t.push(7, 1, 340, "aten::relu, seq = 6, op_id = 3");
  kernel(1, 350, 50, 10);  // forward relu: 20 FLOP, 50 ns
  t.pop(7, 1, 420);
  t.pop(6, 1, 430);
  t.pop(2, 1, 440);
  t.push(8, 1, 450, "backward");
  t.push(9, 2, 460, "ReluBackward0, seq = 6, op_id = 9");
  kernel(2, 470, 50, 10);  // 20 FLOP, 50 ns
  t.pop(9, 2, 540);
  t.push(10, 2, 550, "autograd::engine::evaluate_function: AddmmBackward0");
  t.push(11, 2, 560, "AddmmBackward0, seq = 5, op_id = 10");
  kernel(2, 570, 100, 1000);  // dgrad: 2000 FLOP, 100 ns
  kernel(2, 700, 100, 1000);  // wgrad: 2000 FLOP, 100 ns
  t.pop(11, 2, 900);
  t.pop(10, 2, 910);
  t.push(12, 2, 920, "MulBackward0, seq = 99");  // its forward op launched nothing
  kernel(2, 930, 10, 1);
  t.pop(12, 2, 960);
  t.pop(8, 1, 970);
  kernel(1, 980, 10, 1);  // outside op ranges: not in the breakdown
  t.pop(1, 1, 1000);
  t.window(0, false, 2000);
  t.finish();
}

TEST(OpBreakdown, ForwardAndBackwardPerOpAndLayer) {
  TempDir dir;
  write_step(dir.path / "t.rftrace");
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;

  CsvTable ops = CsvTable::read(dir.path / "r" / "ops.csv");
  ASSERT_EQ(ops.rows.size(), 3u);  // aten::linear, aten::relu, MulBackward0 (no forward op)
  size_t lin = ops.find("op", "aten::linear"), relu = ops.find("op", "aten::relu"), mul = ops.find("op", "MulBackward0");
  ASSERT_LT(lin, 3u);
  EXPECT_EQ(ops.cell(lin, "forward_launches"), "1");
  EXPECT_EQ(ops.cell(lin, "forward_flop"), "2000");
  EXPECT_EQ(ops.cell(lin, "forward_duration_ns"), "100");
  EXPECT_EQ(ops.cell(lin, "backward_launches"), "2");
  EXPECT_EQ(ops.cell(lin, "backward_flop"), "4000");
  EXPECT_EQ(ops.cell(lin, "backward_duration_ns"), "200");
  EXPECT_EQ(ops.cell(lin, "forward_dram_bytes"), "100");  // 100 bytes read per kernel
  EXPECT_EQ(ops.cell(lin, "backward_dram_bytes"), "200");
  EXPECT_EQ(ops.cell(lin, "flop_ratio_backward_to_forward"), "2");
  EXPECT_EQ(ops.cell(lin, "time_ratio_backward_to_forward"), "2");
  EXPECT_EQ(ops.cell(relu, "flop_ratio_backward_to_forward"), "1");
  EXPECT_EQ(ops.cell(relu, "time_ratio_backward_to_forward"), "1");
  EXPECT_EQ(ops.cell(mul, "forward_launches"), "0");
  EXPECT_EQ(ops.cell(mul, "backward_flop"), "2");
  EXPECT_EQ(ops.cell(mul, "flop_ratio_backward_to_forward"), "");  // no forward
  EXPECT_EQ(ops.cell(mul, "time_ratio_backward_to_forward"), "");

  CsvTable layers = CsvTable::read(dir.path / "r" / "layers.csv");
  size_t l1 = layers.find("layer", "layer1"), l2 = layers.find("layer", "layer2");
  ASSERT_LT(l1, layers.rows.size());
  EXPECT_EQ(layers.cell(l1, "forward_flop"), "2000");
  EXPECT_EQ(layers.cell(l1, "backward_flop"), "4000");  // backward Functions take their forward op's layer
  EXPECT_EQ(layers.cell(l2, "backward_flop"), "20");

  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "r" / "summary.json"));
  ASSERT_TRUE(s.contains("ops"));
  const auto& overall = s["ops"]["overall"];
  EXPECT_EQ(overall["forward"]["launches"], 2);
  EXPECT_EQ(overall["backward"]["launches"], 4);
  EXPECT_DOUBLE_EQ(overall["flop_ratio_backward_to_forward"].get<double>(), (4000.0 + 20 + 2) / 2020.0);
  EXPECT_DOUBLE_EQ(overall["time_ratio_backward_to_forward"].get<double>(), (200.0 + 50 + 10) / 150.0);
  ASSERT_EQ(s["ops"]["by_op"].size(), 3u);
  const auto by_op = s["ops"]["by_op"];
  const auto mul_op =
      std::find_if(by_op.begin(), by_op.end(), [](const auto& e) { return e.value("op", "") == "MulBackward0"; });
  ASSERT_NE(mul_op, by_op.end()) << by_op;
  EXPECT_EQ((*mul_op)["backward"]["launches"], 1);
  EXPECT_TRUE((*mul_op)["flop_ratio_backward_to_forward"].is_null()) << *mul_op;  // no forward: null, not 0
  EXPECT_TRUE((*mul_op)["time_ratio_backward_to_forward"].is_null()) << *mul_op;
  EXPECT_EQ(s["ops"]["by_layer"][0].contains("layer"), true);
  // report.html's page carries the same section (its per-op tables).
  const std::string html = testing::slurp(dir.path / "r" / "report.html");
  const std::string open = "<script type=\"application/json\" id=\"rf-data\">";
  const size_t b = html.find(open);
  ASSERT_NE(b, std::string::npos);
  const size_t e = html.find("</script>", b);
  EXPECT_EQ(nlohmann::json::parse(html.substr(b + open.size(), e - b - open.size()))["ops"], s["ops"]);

  // Phases: the autograd thread's own op ranges say backward.
  CsvTable k = CsvTable::read(dir.path / "r" / "kernels.csv");
  EXPECT_EQ(k.cell(k.find("id", "4"), "phase"), "backward");
  EXPECT_EQ(k.cell(k.find("id", "1"), "phase"), "forward");
}

// nn.Linear under emit_nvtx: aten::linear (seq 5) runs aten::t (seq 5, no kernel) and aten::addmm,
// numbered 6, which AddmmBackward0 carries. The backward kernel is aten::linear's, in layer fc; it
// was a row of its own (AddmmBackward0) and layer "", the linear's backward time 0.
TEST(OpBreakdown, ABackwardOfAnOpNestedInTheOutermostOpIsTheOutermostOps) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(77, trace::CollectionMode::kTiming);
    t.push(1, 1, 100, "fc");
    t.push(2, 1, 110, "aten::linear, seq = 5, op_id = 1");
    t.push(3, 1, 120, "aten::t, seq = 5, op_id = 2");
    t.pop(3, 1, 130);
    t.push(4, 1, 140, "aten::addmm, seq = 6, op_id = 3");
    t.launch(1, 0, 1, 150);
    t.kernel(1, 200, 1200);
    t.pop(4, 1, 300);
    t.pop(2, 1, 310);
    t.pop(1, 1, 320);
    t.push(5, 2, 400, "AddmmBackward0, seq = 6, op_id = 9");
    t.launch(2, 0, 2, 410);
    t.kernel(2, 1300, 3300);
    t.pop(5, 2, 500);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  CsvTable ops = CsvTable::read(dir.path / "r" / "ops.csv");
  ASSERT_EQ(ops.rows.size(), 1u);
  EXPECT_EQ(ops.cell(0, "op"), "aten::linear");
  EXPECT_EQ(ops.cell(0, "forward_launches"), "1");
  EXPECT_EQ(ops.cell(0, "backward_launches"), "1");
  EXPECT_EQ(ops.cell(0, "time_ratio_backward_to_forward"), "2");
  CsvTable layers = CsvTable::read(dir.path / "r" / "layers.csv");
  ASSERT_EQ(layers.rows.size(), 1u);
  EXPECT_EQ(layers.cell(0, "layer"), "fc");
  EXPECT_EQ(layers.cell(0, "backward_duration_ns"), "2000");
}

// Ratios need both sides and a forward above zero: absent, never 0 or infinity. A sequence number
// seen on two forward ops stays with the first.
TEST(OpBreakdown, RatiosWithoutASideOrWithAZeroForward) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(77, trace::CollectionMode::kCounters);
    t.config(1, testing::roofline_metrics());
    uint32_t corr = 0;
    auto op = [&](uint64_t id, uint64_t thread, uint64_t at, const std::string& name, uint64_t dur, double ffma) {
      t.push(id, thread, at, name);
      ++corr;
      t.launch(corr, 0, thread, at + 1);
      t.kernel(corr, at + 5, at + 5 + dur);
      testing::Counts c;
      c.ffma = ffma;
      c.read = 60;
      c.write = 40;
      t.counters(1, corr, c.values());
      t.pop(id, thread, at + 90);
    };
    op(1, 1, 100, "aten::copy_, seq = 7", 40, 0);   // 0 FLOP forward
    op(2, 1, 200, "aten::view, seq = 8", 30, 3);    // no backward
    op(3, 1, 300, "aten::first, seq = 9", 10, 1);
    op(4, 1, 400, "aten::second, seq = 9", 10, 1);  // seq 9 again
    op(5, 2, 500, "CopyBackwards, seq = 7", 20, 1);
    op(6, 2, 600, "SecondBackward0, seq = 9", 10, 1);
    t.window(0, false, 2000);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  const CsvTable ops = CsvTable::read(dir.path / "r" / "ops.csv");
  ASSERT_EQ(ops.rows.size(), 4u);
  const size_t copy = ops.find("op", "aten::copy_"), view = ops.find("op", "aten::view");
  const size_t first = ops.find("op", "aten::first"), second = ops.find("op", "aten::second");
  ASSERT_LT(std::max({copy, view, first, second}), 4u);
  EXPECT_EQ(ops.cell(copy, "forward_flop"), "0");
  EXPECT_EQ(ops.cell(copy, "forward_dram_bytes"), "100");
  EXPECT_EQ(ops.cell(copy, "backward_flop"), "2");
  EXPECT_EQ(ops.cell(copy, "backward_dram_bytes"), "100");
  EXPECT_EQ(ops.cell(copy, "flop_ratio_backward_to_forward"), "");  // 2 / 0
  EXPECT_EQ(ops.cell(copy, "time_ratio_backward_to_forward"), "0.5");
  EXPECT_EQ(ops.cell(view, "backward_launches"), "0");
  EXPECT_EQ(ops.cell(view, "flop_ratio_backward_to_forward"), "");  // no backward FLOP
  EXPECT_EQ(ops.cell(view, "time_ratio_backward_to_forward"), "0");
  EXPECT_EQ(ops.cell(first, "backward_launches"), "1");
  EXPECT_EQ(ops.cell(second, "backward_launches"), "0");

  OpSums no_forward;
  no_forward.backward.duration_ns = 10;
  EXPECT_EQ(no_forward.time_ratio(), std::nullopt);
  OpSums zero_forward;  // counted forward launches with 0 FLOP: no ratio, not infinity
  zero_forward.forward.total_flop.add(0.0);
  zero_forward.backward.total_flop.add(2.0);
  EXPECT_EQ(zero_forward.flop_ratio(), std::nullopt);
  zero_forward.forward.total_flop.add(4.0);
  EXPECT_EQ(zero_forward.flop_ratio(), 0.5);
}

// PyTorch numbers each process's operators from 0: a backward op is matched with its own trace's
// forward op of that number, never with another trace's (until 2026-11-29 trace b's
// AddmmBackward0 went to trace a's aten::conv2d and layer conv1).
TEST(OpBreakdown, BackwardOpsMatchForwardOpsOfTheirOwnTrace) {
  KernelRow r;
  r.duration_ns = 100;
  OpBreakdown b;
  b.begin_trace();
  b.add(r, {"conv1", "aten::conv2d, seq = 5"});
  b.add(r, {"ConvolutionBackward0, seq = 5"});
  b.begin_trace();
  b.add(r, {"fc", "aten::linear, seq = 5"});
  b.add(r, {"AddmmBackward0, seq = 5"});
  b.add(r, {"MulBackward0, seq = 9"});  // trace a had no op 9 either
  // A backward call whose forward op came first is matched at once: nothing kept per call (600
  // bytes each until the trace's end, for every backward Function of the run).
  EXPECT_EQ(b.unmatched_backward_calls(), 1u);  // MulBackward0 alone
  b.end_trace();
  const auto& ops = b.by_op();
  ASSERT_TRUE(ops.count("aten::conv2d") && ops.count("aten::linear"));
  EXPECT_EQ(ops.at("aten::conv2d").backward.launches, 1u);
  EXPECT_EQ(ops.at("aten::linear").forward.launches, 1u);
  EXPECT_EQ(ops.at("aten::linear").backward.launches, 1u);
  EXPECT_EQ(ops.at("MulBackward0").backward.launches, 1u);
  EXPECT_EQ(b.by_layer().at("conv1").backward.launches, 1u);
  EXPECT_EQ(b.by_layer().at("fc").backward.launches, 1u);
  EXPECT_EQ(b.overall().backward.launches, 3u);  // the sums go on across traces
}

// Rows come in join order, and with several threads launching that is not launch order: the
// autograd thread's backward launch may come before the forward one it belongs to (it was a row
// AddmmBackward0 of its own, and aten::linear had no backward).
TEST(OpBreakdown, ABackwardLaunchBeforeItsForwardOpIsStillItsOps) {
  KernelRow r;
  r.duration_ns = 100;
  OpBreakdown b;
  b.begin_trace();
  b.add(r, {"AddmmBackward0, seq = 6"});
  b.add(r, {"fc", "aten::linear, seq = 6"});
  EXPECT_EQ(b.unmatched_backward_calls(), 1u);  // kept until the trace's end
  b.end_trace();
  EXPECT_EQ(b.unmatched_backward_calls(), 0u);
  ASSERT_EQ(b.by_op().size(), 1u);
  EXPECT_EQ(b.by_op().at("aten::linear").forward.launches, 1u);
  EXPECT_EQ(b.by_op().at("aten::linear").backward.launches, 1u);
  EXPECT_EQ(b.by_layer().at("fc").backward.launches, 1u);
  EXPECT_EQ(b.by_layer().count(""), 0u);
}

TEST(OpBreakdown, NoOpRangesNoOpsSection) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, trace::CollectionMode::kTiming);
    t.push(1, 1, 10, "forward");
    t.launch(1, 0, 1, 20);
    t.kernel(1, 30, 40);
    t.pop(1, 1, 50);
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  nlohmann::json s = nlohmann::json::parse(std::ifstream(dir.path / "r" / "summary.json"));
  EXPECT_FALSE(s.contains("ops"));
  EXPECT_TRUE(CsvTable::read(dir.path / "r" / "ops.csv").rows.empty());
}

}  // namespace
}  // namespace rf::analyzer

namespace rf::analyzer {
namespace {

TEST(GraphAttribution, KernelsOfAGraphLaunchTakeTheRangeOfTheLaunchingThread) {
  // cudaGraphLaunch inside "forward" and inside "backward": every kernel of a graph launch shares
  // the launch's correlation id and is attributed where the launch API was called.
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(5, trace::CollectionMode::kTiming);
    t.push(1, 1, 100, "forward");
    t.launch(10, 9, 1, 150, 0, /*graph=*/true);
    t.pop(1, 1, 200);
    t.push(2, 1, 300, "backward");
    t.launch(20, 19, 1, 350, 0, /*graph=*/true);
    t.pop(2, 1, 400);
    // The kernels run later, after the ranges closed; three for the first graph, two for the second.
    t.kernel(9, 1000, 1100, "graph_fwd_a");
    t.kernel(9, 1100, 1200, "graph_fwd_b");
    t.kernel(9, 1200, 1300, "graph_fwd_c");
    t.kernel(19, 2000, 2100, "graph_bwd_a");
    t.kernel(19, 2100, 2200, "graph_bwd_b");
    t.finish();
  }
  const testing::AnalysisRun run = testing::analyze({dir.path / "t.rftrace"}, dir.path / "r");
  ASSERT_EQ(run.status, kExitOk) << run.err;
  CsvTable k = CsvTable::read(dir.path / "r" / "kernels.csv");
  ASSERT_EQ(k.rows.size(), 5u);
  for (const char* name : {"graph_fwd_a", "graph_fwd_b", "graph_fwd_c"}) {
    const size_t r = k.find("kernel", name);
    ASSERT_LT(r, k.rows.size()) << name;
    EXPECT_EQ(k.cell(r, "nvtx"), "forward") << name;
    EXPECT_EQ(k.cell(r, "phase"), "forward") << name;
  }
  for (const char* name : {"graph_bwd_a", "graph_bwd_b"}) {
    const size_t r = k.find("kernel", name);
    ASSERT_LT(r, k.rows.size()) << name;
    EXPECT_EQ(k.cell(r, "nvtx"), "backward") << name;
  }
}

}  // namespace
}  // namespace rf::analyzer
