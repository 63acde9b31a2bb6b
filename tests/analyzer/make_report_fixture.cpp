// Writes the constructed traces of the report.html tests into DIR and runs rfanalyze on them
// (DIR/report: one trace; DIR/scaling: batch sizes 8 and 32; DIR/measured: user ceilings;
// DIR/ops: a page with an "ops" section and an uncounted_tensor_work note; DIR/many: 6,000 ranges on a device without compute
// ceilings; DIR/allnamed: an NVTX range named "(all)"). Used by the browser test
// (report_browser_test.mjs), whose expected counts follow from the traces below.
//
// One trace, counters mode, one H100 (FP32 67 TFLOP/s, DRAM 3.35 TB/s from the datasheet):
//   forward:  "gemm<float>"                       2 launches   -> 1 point
//             "relu</script><b>&amp;"             1 launch     -> 1 point (hostile name)
//   backward: "gemm<float>"                       1 launch     -> 1 point
//             kReluBackward (262 characters)     1 launch     -> 1 point
//   optimizer: "adam_step"                        1 launch     -> 1 point
// 5 plotted points; 2 in phase forward; 1 in NVTX range "step/optimizer".
#include <cstdio>
#include <fstream>
#include <filesystem>
#include <iostream>
#include <string>

#include "analyzer_samples.h"
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/html_report.h"

namespace fs = std::filesystem;
using rf::analyzer::testing::Counts;
using rf::analyzer::testing::TraceBuilder;

namespace {

/// A long demangled name, folded in the report's tables to
/// "void at::native::elementwise_kernel<128, 4, at::native::threshold_kernel_impl<…>(…)::{lambda(…)#1}>(…)".
constexpr const char* kReluBackward =
    "void at::native::elementwise_kernel<128, 4, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1}>(int, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, float, float)::{lambda(float, float)#1})";

void write_trace(const fs::path& path, const std::string& command_line, double time_scale,
                 double count_scale, bool with_memory = false) {
  TraceBuilder t(path);
  rf::trace::ProcessInfo p;
  p.pid = 4242;
  p.hostname = t.writer().intern("node01");
  p.process_name = t.writer().intern("python3");
  p.command_line = t.writer().intern(command_line);
  p.mode = rf::trace::CollectionMode::kCounters;
  t.writer().append(p);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100", 3352320000ull);
  t.config(1, rf::analyzer::testing::roofline_metrics());
  struct K {
    const char* name;
    uint64_t t;
    double ffma, bytes;
  };
  const K kernels[] = {{"gemm<float>", 1100, 4e8, 2e6},
                       {"gemm<float>", 1200, 4e8, 2e6},
                       {"relu</script><b>&amp;", 1300, 1e5, 8e6},
                       {"gemm<float>", 2100, 4e8, 4e6},
                       {kReluBackward, 2200, 2e5, 1.6e7},
                       {"adam_step", 3100, 1e6, 3.2e7}};
  t.push(1, 100, 1000, "step");
  t.push(2, 100, 1050, "forward");
  t.push(3, 100, 2000, "backward");  // after pop of forward
  t.push(4, 100, 3000, "optimizer");
  t.pop(2, 100, 1900);
  t.pop(3, 100, 2900);
  t.pop(4, 100, 3900);
  t.pop(1, 100, 4000);
  if (with_memory) {  // 2 GiB before the step, 6 GiB more in forward, released in backward
    t.memory(true, 900, 0x1000, 2ull << 30);
    t.memory(true, 1500, 0x2000, 6ull << 30);
    t.memory(false, 2500, 0x2000, 0);
  }
  uint32_t corr = 10;
  for (const auto& k : kernels) {
    ++corr;
    t.launch(corr, 0, 100, k.t);
    const uint64_t start = k.t * 1000;
    t.kernel(corr, start, start + static_cast<uint64_t>(20000 * time_scale), k.name);
    Counts c;
    c.ffma = k.ffma * count_scale;
    c.read = k.bytes * count_scale * 0.75;
    c.write = k.bytes * count_scale * 0.25;
    t.counters(1, corr, c.values());
  }
  t.finish();
}

/// DIR/many.rftrace: 6,000 launches, each in an NVTX range of its own ("aten::mm, seq = N", as
/// emit_nvtx names them), on a device no ceilings entry names (CUPTI's 2 TB/s DRAM bandwidth
/// only). "gemm_many" has counters at every launch, "half_counted" at every other one: 2e6 FLOP
/// in 1,000 ns each, 2 TFLOP/s over the launches that have FLOP (1 TFLOP/s over all its time).
void write_many_ranges_trace(const fs::path& path) {
  TraceBuilder t(path);
  t.process(4343, rf::trace::CollectionMode::kCounters);
  t.device(0, "Fancy GPU 9000", "GH100", 2000000000ull);
  t.config(1, rf::analyzer::testing::roofline_metrics());
  for (uint32_t i = 1; i <= 6000; ++i) {
    const uint64_t at = 10'000ull * i;
    t.push(i, 100, at, "aten::mm, seq = " + std::to_string(i));
    t.launch(i, 0, 100, at + 10);
    t.kernel(i, at + 100, at + 1100, i % 2 ? "gemm_many" : "half_counted");
    if (i % 2 || i % 4 == 0) {
      Counts c;
      c.ffma = 1e6;
      c.read = 1e6;
      c.write = 0;
      t.counters(1, i, c.values());
    }
    t.pop(i, 100, at + 2000);
  }
  t.finish();
}

/// DIR/allnamed.rftrace: two launches of one kernel, one in an NVTX range named "(all)" (what
/// the page's filter calls every range) and one in "other": 2 points, one per range.
void write_all_named_trace(const fs::path& path) {
  TraceBuilder t(path);
  rf::trace::ProcessInfo p;
  p.pid = 4243;
  p.mode = rf::trace::CollectionMode::kCounters;
  t.writer().append(p);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100", 3352320000ull);
  t.config(1, rf::analyzer::testing::roofline_metrics());
  t.push(1, 100, 1000, "(all)");
  t.pop(1, 100, 1900);
  t.push(2, 100, 2000, "other");
  t.pop(2, 100, 2900);
  for (uint32_t corr : {11u, 12u}) {
    const uint64_t at = corr == 11 ? 1100 : 2100;
    t.launch(corr, 0, 100, at);
    t.kernel(corr, at * 1000, at * 1000 + 20000, "gemm<float>");
    Counts c;
    c.ffma = 4e8;
    c.read = 1.5e6;
    c.write = 0.5e6;
    t.counters(1, corr, c.values());
  }
  t.finish();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_report_fixture DIR\n";
    return 2;
  }
  const fs::path dir = argv[1];
  fs::create_directories(dir);
  write_trace(dir / "train.rftrace", "python3 train.py --epochs 1", 1.0, 1.0, /*with_memory=*/true);
  write_trace(dir / "b8.rftrace", "python3 train.py --batch-size 8 --steps 1", 1.0, 1.0);
  write_trace(dir / "b32.rftrace", "python3 train.py -b 32 --steps 1", 3.0, 4.0);
  rf::analyzer::AnalyzeOptions one;
  one.traces = {dir / "train.rftrace"};
  one.output_dir = dir / "report";
  rf::analyzer::AnalyzeOptions two;
  two.traces = {dir / "b8.rftrace", dir / "b32.rftrace"};
  two.output_dir = dir / "scaling";
  // DIR/measured: the one trace with a user ceilings file whose FP32 and FP16 peaks are equal
  // (drawn as one roof, "fp32 / fp16"); FP64 is null there, so the datasheet value is used.
  {
    std::ofstream c(dir / "measured.json");
    c << R"({"devices": [{"name": "H100 measured", "chip": "GH100", "patterns": ["H100"],
             "fp64_flop_per_s": null, "fp32_flop_per_s": 60e12, "fp16_flop_per_s": 60e12,
             "dram_bytes_per_s": 3e12, "citation": "test"}]})";
  }
  rf::analyzer::AnalyzeOptions measured = one;
  measured.output_dir = dir / "measured";
  measured.ceilings = dir / "measured.json";
  // DIR/many: more kernel groups than the page draws (ReportPage::kMaxPoints), more ranges than its
  // table lists; a device with a DRAM ceiling only.
  write_many_ranges_trace(dir / "many.rftrace");
  rf::analyzer::AnalyzeOptions many;
  many.traces = {dir / "many.rftrace"};
  many.output_dir = dir / "many";
  // DIR/allnamed: an NVTX range named "(all)" beside the filter's own "(all)".
  write_all_named_trace(dir / "allnamed.rftrace");
  rf::analyzer::AnalyzeOptions all_named;
  all_named.traces = {dir / "allnamed.rftrace"};
  all_named.output_dir = dir / "allnamed";
  int status = rf::analyzer::run_analysis(one, std::cerr);
  if (status == 0) status = rf::analyzer::run_analysis(all_named, std::cerr);
  if (status == 0) status = rf::analyzer::run_analysis(many, std::cerr);
  if (status == 0) status = rf::analyzer::run_analysis(two, std::cerr);
  if (status == 0) status = rf::analyzer::run_analysis(measured, std::cerr);
  if (status != 0) return status;
  // DIR/ops/report.html: the one-trace page with an "ops" section as summary.json gives it for
  // emit_nvtx() traces: 2 ops (conv2d, relu), 1 layer; the page must show its ratios.
  auto agg = [](double ns, double flop) {
    return nlohmann::ordered_json{{"launches", 1}, {"duration_ns", ns}, {"fp32_flop", flop},
                                  {"fp64_flop", nullptr}, {"fp16_flop", nullptr},
                                  {"dram_read_bytes", flop / 4}, {"dram_write_bytes", flop / 4}};
  };
  nlohmann::ordered_json ops = {
      {"overall", {{"forward", agg(3000, 3e9)}, {"backward", agg(6000, 6e9)},
                   {"flop_ratio_backward_to_forward", 2.0}, {"time_ratio_backward_to_forward", 2.0}}},
      {"by_op", {{{"op", "aten::conv2d"}, {"forward", agg(2000, 2e9)}, {"backward", agg(5000, 5e9)},
                  {"flop_ratio_backward_to_forward", 2.5}, {"time_ratio_backward_to_forward", 2.5}},
                 {{"op", "aten::relu<&>"}, {"forward", agg(1000, 1e9)}, {"backward", agg(1000, 1e9)},
                  {"flop_ratio_backward_to_forward", 1.0}, {"time_ratio_backward_to_forward", nullptr}}}},
      {"by_layer", {{{"layer", "model.conv1"}, {"forward", agg(3000, 3e9)}, {"backward", agg(6000, 6e9)},
                     {"flop_ratio_backward_to_forward", 2.0}, {"time_ratio_backward_to_forward", 2.0}}}}};
  nlohmann::ordered_json data = {{"tool", "rfanalyze"}, {"version", "test"}, {"traces", nlohmann::ordered_json::array()},
                                 {"devices", nlohmann::ordered_json::array()}, {"points", nlohmann::ordered_json::array()},
                                 {"ranges", nlohmann::ordered_json::array()}, {"phases", nlohmann::ordered_json::array()},
                                 {"totals", {{"launches", 0}, {"duration_ns", 0}}}, {"above_roof_count", 0},
                                 {"uncounted_tensor_work",
                                  {{"launches", 14}, {"gpu_time_ns", 213}, {"share_of_gpu_time", 0.213},
                                   {"kernels", {"sm90_xmma_wgrad_<b>", "hmma"}},
                                   {"hint", "collect the roofline-tensor set (rfprof --set roofline-tensor, "
                                             "RFPROF_METRIC_SET=roofline-tensor) to count tensor-core FLOP"}}},
                                 {"ops", ops}};
  fs::create_directories(dir / "ops");
  std::ofstream html(dir / "ops" / "report.html");
  rf::analyzer::write_report_html(html, data);
  return html ? 0 : 1;
}
