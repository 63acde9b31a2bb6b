// The end-to-end tests' sample traces (test_end_to_end.cpp, test_rfanalyze_exe.cpp): a counters-mode
// training step whose records come in adversarial order, and a timing-mode trace of N launches.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "analyzer_samples.h"

namespace rf::analyzer::testing {

inline constexpr uint64_t kMain = 100, kAutograd = 200;
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const std::string kReduce = "reduce_kernel<float, 2>(float const*, float*)";

/// A counters-mode trace of pid 4242 on an H100 whose records come in adversarial order:
/// counters first, then kernels, then launches, NVTX last.
inline void write_training_trace(const std::filesystem::path& path) {
  TraceBuilder t(path, 512);
  t.process(4242, trace::CollectionMode::kCounters);
  t.device(0, "NVIDIA H100 80GB HBM3", "GH100", 3352320000ull);
  t.config(1, testing::roofline_metrics());
  Counts c101;
  c101.ffma = 1000;
  c101.read = 600;
  c101.write = 400;
  Counts c102;
  c102.fadd = 100;
  c102.ffma = 500;
  c102.dfma = 10;
  c102.hfma = 5;
  c102.read = 1000;
  c102.write = 100;
  Counts c103;  // 2e9 FP32 FLOP in 10 ns: far above any roof
  c103.ffma = 1e9;
  c103.read = 1;
  c103.write = 1;
  std::vector<double> v104(12, kNaN);
  v104[9] = 64;  // only dram__bytes_read.sum is available
  t.counters(1, 101, c101.values());
  t.counters(1, 102, c102.values());
  t.counters(1, 103, c103.values());
  t.counters(1, 104, v104);
  t.kernel(1101, 20000, 21000);  // launched through the runtime: carries the runtime id
  t.kernel(102, 30000, 32000, kReduce);
  t.launch(101, 1101, kMain, 2000);
  t.launch(102, 0, kAutograd, 6000);  // autograd thread, no range of its own
  t.launch(103, 0, kMain, 10000);
  t.launch(104, 0, kMain, 200000);   // outside every range
  t.push(1, kMain, 1000, "iteration");
  t.push(2, kMain, 1000, "forward");
  t.pop(2, kMain, 5000);
  t.push(3, kMain, 5000, "backward");
  t.pop(3, kMain, 9000);
  t.push(4, kMain, 9000, "optimizer");
  t.pop(4, kMain, 12000);
  t.pop(1, kMain, 100000);
  t.kernel(103, 40000, 40010);
  t.kernel(104, 50000, 50500);
  t.kernel(999, 60000, 60300, "orphan()");  // its launch is not in the trace
  t.window(0, false, 300000);
  t.error(trace::ErrorCode::kRangeLaunchMismatch, "2 ranges for 3 launches");
  t.error(trace::ErrorCode::kRangeLaunchMismatch, "2 ranges for 3 launches");
  t.error(trace::ErrorCode::kDroppedRecords, "CUPTI dropped 5 records");
  t.finish();
}

/// A timing-mode trace of pid 777 with `launches` launches, each inside a "forward" range.
inline void write_timing_trace(const std::filesystem::path& path, int launches, uint32_t chunk_bytes = 1u << 20) {
  TraceBuilder t(path, chunk_bytes);
  t.process(777, trace::CollectionMode::kTiming);
  t.device(0, "NVIDIA A100-SXM4-80GB", "GA100");
  for (int i = 0; i < launches; ++i) {
    auto corr = static_cast<uint32_t>(10 + i);
    uint64_t at = 1000 + 100 * static_cast<uint64_t>(i);
    t.push(static_cast<uint64_t>(i + 1), 5, at, "forward");
    t.launch(corr, 0, 5, at + 10);
    t.pop(static_cast<uint64_t>(i + 1), 5, at + 50);
    t.kernel(corr, at + 20, at + 70);
  }
  t.finish();
}

}  // namespace rf::analyzer::testing
