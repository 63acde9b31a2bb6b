// rfbench without a GPU: the amount of work each measurement divides by its time (a wrong count is
// a wrong ceiling, which the GPU's timing cannot reveal), the sizes, the tensor-core rules per
// compute capability, and the ceilings JSON as rfanalyze's parser reads it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "amounts.h"
#include "document.h"
#include "rfprof/analyzer/ceilings.h"

namespace {

using namespace rfbench;
constexpr size_t MiB = size_t(1) << 20;
constexpr size_t GiB = size_t(1) << 30;

TEST(FmaAmounts, TwoFlopPerFfmaAndDfmaFourPerHfma2PerThread) {
  EXPECT_EQ(flop_per_fma(FmaPrecision::fp64), 2.0);
  EXPECT_EQ(flop_per_fma(FmaPrecision::fp32), 2.0);
  EXPECT_EQ(flop_per_fma(FmaPrecision::fp16x2), 4.0);
  EXPECT_EQ(fma_precision("fp64"), FmaPrecision::fp64);
  EXPECT_EQ(fma_precision("fp32"), FmaPrecision::fp32);
  EXPECT_EQ(fma_precision("fp16"), FmaPrecision::fp16x2);
  EXPECT_THROW(fma_precision("bf16"), std::invalid_argument);
}

TEST(FmaAmounts, OneLaunchCountsEveryThreadsChainsAndTheFold) {
  // One thread: 8 chains x 10 iterations, then 7 FMAs folding the chains into one value.
  EXPECT_EQ(fma_kernel_fmas_per_thread(10, 8), 87.0);
  EXPECT_EQ(fma_kernel_fmas_per_thread(1, 1), 1.0);
  // One block of one thread: FLOP = FMAs x 2 (FFMA) or x 4 (HFMA2).
  EXPECT_EQ(fma_launch_flop(FmaPrecision::fp32, 1, 1, 10, 8), 174.0);
  EXPECT_EQ(fma_launch_flop(FmaPrecision::fp16x2, 1, 1, 10, 8), 348.0);
  // The H100 run: 132 SMs x 8 blocks of 256 threads, 8 chains x 65536.
  const double fmas = 1056.0 * 256 * (65536.0 * 8 + 7);
  EXPECT_EQ(fma_launch_flop(FmaPrecision::fp64, 1056, 256, 65536, 8), 2 * fmas);
  EXPECT_EQ(fma_launch_flop(FmaPrecision::fp16x2, 1056, 256, 65536, 8), 4 * fmas);
}

TEST(GemmAmounts, TwoMnkPerGemm) {
  EXPECT_EQ(gemm_flop(2, 3, 5), 60.0);
  EXPECT_EQ(gemm_flop(5, 3, 2), 60.0);
  EXPECT_EQ(gemm_flop(2048, 2048, 2048), 17179869184.0);  // validation/h100-2026-11-23/gemm-check.txt
  EXPECT_EQ(gemm_flop(1024, 1024, 1024), 2147483648.0);
  EXPECT_EQ(gemm_flop(16384, 16384, 16384), 2.0 * 16384.0 * 16384.0 * 16384.0);
}

TEST(BandwidthAmounts, BytesAreReadPlusWritten) {
  EXPECT_EQ(bandwidth_bytes(BandwidthKernel::read, GiB), double(GiB));
  EXPECT_EQ(bandwidth_bytes(BandwidthKernel::copy, GiB), 2.0 * GiB);   // read 1 + write 1
  EXPECT_EQ(bandwidth_bytes(BandwidthKernel::triad, GiB), 3.0 * GiB);  // read 2 + write 1
  EXPECT_EQ(bandwidth_bytes(BandwidthKernel::read, 25 * MiB, 200), 200.0 * 25 * MiB);  // L2: repeats
  EXPECT_STREQ(bandwidth_kernel_name(BandwidthKernel::read), "read");
  EXPECT_STREQ(bandwidth_kernel_name(BandwidthKernel::copy), "copy");
  EXPECT_STREQ(bandwidth_kernel_name(BandwidthKernel::triad), "triad");
}

TEST(Sizes, DramBuffersAreWellAboveL2AndFitInMemory) {
  const size_t h100_l2 = 50 * MiB;
  EXPECT_EQ(dram_buffer_bytes(h100_l2, 80 * GiB, false), GiB);
  EXPECT_EQ(dram_buffer_bytes(160 * MiB, 180 * GiB, false), 8 * 160 * MiB);  // 8 x L2 above 1 GiB
  EXPECT_EQ(dram_buffer_bytes(h100_l2, 80 * GiB, true), 200 * MiB);         // --quick: 4 x L2
  EXPECT_EQ(dram_buffer_bytes(4 * MiB, 16 * GiB, true), 64 * MiB);
  // Three buffers in half the free memory; a multiple of 1 MiB; 0: free memory unknown.
  EXPECT_EQ(dram_buffer_bytes(h100_l2, 3 * GiB, false), 512 * MiB);
  EXPECT_EQ(dram_buffer_bytes(h100_l2, 3 * GiB + 12345, false) % MiB, 0u);
  EXPECT_EQ(dram_buffer_bytes(h100_l2, 0, false), GiB);
  for (size_t l2 : {4 * MiB, 6 * MiB, 40 * MiB, 48 * MiB, 50 * MiB, 72 * MiB, 96 * MiB})
    EXPECT_GE(dram_buffer_bytes(l2, 80 * GiB, false), 8 * l2) << l2;
  EXPECT_EQ(l2_buffer_bytes(h100_l2), 25 * MiB);
  EXPECT_EQ(l2_buffer_bytes(0), MiB);
}

TEST(Sizes, QuickGemmIsTheOneSizeCheckFlopsExpects) {
  // scripts/check_flops.py gemm: every tensor kernel of a --quick run does 2*2048^3 (FP64 2*1024^3).
  for (const char* p : {"tf32", "fp16", "bf16", "int8"}) EXPECT_EQ(gemm_sizes(p, true, 80 * GiB), std::vector<int>{2048});
  EXPECT_EQ(gemm_sizes("fp64", true, 80 * GiB), std::vector<int>{1024});
}

TEST(Sizes, FullGemmSearchTriesSeveralSizesThatFit) {
  EXPECT_EQ(gemm_sizes("int8", false, 80 * GiB), (std::vector<int>{4096, 8192, 16384}));
  EXPECT_EQ(gemm_sizes("fp64", false, 80 * GiB), (std::vector<int>{4096, 8192}));
  EXPECT_EQ(gemm_sizes("tf32", false, 0), (std::vector<int>{4096, 8192, 16384}));
  // TF32 16384^2 x (4 + 4 + 4) bytes = 3 GiB needs 6 GiB free.
  EXPECT_EQ(gemm_buffer_bytes("tf32", 16384), 3 * GiB);
  EXPECT_EQ(gemm_buffer_bytes("int8", 16384), size_t(16384) * 16384 * 6);
  EXPECT_EQ(gemm_sizes("tf32", false, 5 * GiB), (std::vector<int>{4096, 8192}));
  EXPECT_EQ(gemm_sizes("tf32", false, MiB), std::vector<int>{4096});  // the smallest always
}

TEST(TensorSupport, OnlyPrecisionsTheGpuHasTensorCoresFor) {
  struct Row {
    int major, minor;
    const char* has;      // precisions with tensor cores
  };
  const std::vector<Row> rows = {
      {6, 0, ""},                                   // P100
      {7, 0, "fp16"},                               // V100
      {7, 2, "fp16 int8"},                          // Xavier
      {7, 5, "fp16 int8"},                          // T4
      {8, 0, "fp64 tf32 fp16 bf16 int8"},           // A100
      {8, 6, "tf32 fp16 bf16 int8"},                // A10, RTX 30
      {8, 7, "tf32 fp16 bf16 int8"},                // Orin
      {8, 9, "tf32 fp16 bf16 fp8 int8"},            // L4, L40S, RTX 4090
      {9, 0, "fp64 tf32 fp16 bf16 fp8 int8"},       // H100, H200
      {10, 0, "fp64 tf32 fp16 bf16 fp8 int8"},      // B200
      {10, 3, "tf32 fp16 bf16 fp8"},                // B300: no FP64 tensor cores, no INT8 tensor throughput
      {12, 0, "tf32 fp16 bf16 fp8 int8"},           // RTX 50
  };
  for (const Row& r : rows)
    for (const std::string p : {"fp64", "tf32", "fp16", "bf16", "fp8", "int8"}) {
      const bool expected = (" " + std::string(r.has) + " ").find(" " + p + " ") != std::string::npos;
      const std::string why = tensor_unsupported(p, r.major, r.minor);
      EXPECT_EQ(why.empty(), expected) << p << " on sm_" << r.major << r.minor << ": " << why;
      if (!expected) {
        EXPECT_NE(why.find("sm_" + std::to_string(r.major) + std::to_string(r.minor)), std::string::npos) << why;
      }
    }
  EXPECT_THROW(tensor_unsupported("fp4", 9, 0), std::invalid_argument);
}

TEST(TensorKeys, AreTheAnalyzersKeys) {
  const char* precisions[] = {"fp64", "tf32", "fp16", "bf16", "fp8", "int8"};
  for (size_t i = 0; i < rf::analyzer::kTensorPrecisions; ++i) {
    EXPECT_EQ(rf::analyzer::kTensorPrecisionNames[i], precisions[i]);
    EXPECT_EQ(tensor_ceiling_key(precisions[i]), rf::analyzer::kTensorCeilingKeys[i]);
  }
  EXPECT_EQ(tensor_ceiling_key("int8"), "tensor_int8_op_per_s");
}

Measurement measurement(const std::string& key, double value) {
  return Measurement{key, value, key.find("bytes") != std::string::npos ? "bytes/s" : "FLOP/s", "test", {value / 2, value}};
}

TEST(Document, RfanalyzeReadsItWithL2BytesAndWithoutSkippedCeilings) {
  DeviceIdentity dev;
  dev.name = "NVIDIA H100 80GB HBM3";
  dev.cc_major = 9;
  dev.l2_bytes = 50 * MiB;
  Options options;
  options.runs = 2;
  const std::vector<Measurement> ms = {measurement("dram_bytes_per_s", 3e12), measurement("l2_bytes_per_s", 7.5e12),
                                       measurement("fp32_flop_per_s", 6e13),
                                       measurement("tensor_int8_op_per_s", 1.8e15)};
  const std::vector<Skipped> skipped = {{"tensor_fp64_flop_per_s", "sm_86 has no FP64 tensor cores"}};
  const nlohmann::ordered_json doc = ceilings_document(dev, ms, skipped, options, "2026-12-01");
  const auto db = rf::analyzer::CeilingDb::parse(doc.dump(), "rfbench document");
  ASSERT_EQ(db.entries().size(), 1u);
  const rf::analyzer::CeilingEntry& e = db.entries()[0];
  EXPECT_EQ(e.name, "NVIDIA H100 80GB HBM3 (measured)");
  EXPECT_TRUE(e.measured);
  ASSERT_TRUE(e.l2_bytes.has_value());
  EXPECT_EQ(*e.l2_bytes, double(50 * MiB));
  EXPECT_EQ(e.dram_bytes_per_s, 3e12);
  EXPECT_EQ(e.l2_bytes_per_s, 7.5e12);
  EXPECT_EQ(e.fp32_flop_per_s, 6e13);
  EXPECT_EQ(e.tensor_flop_per_s[rf::analyzer::kTensorInt8], 1.8e15);
  EXPECT_FALSE(e.tensor_flop_per_s[0].has_value());  // FP64 tensor skipped: no value, not a CUDA-core rate
  EXPECT_FALSE(e.fp64_flop_per_s.has_value());
  EXPECT_EQ(db.match("NVIDIA H100 80GB HBM3", ""), &e);
  EXPECT_EQ(db.match("NVIDIA H100 80GB HBM3 MIG", ""), nullptr);  // exact name only
  EXPECT_EQ(doc["skipped"][0]["ceiling"], "tensor_fp64_flop_per_s");
  EXPECT_EQ(doc["measurements"].size(), 4u);
  EXPECT_EQ(doc["measurements"][3]["runs"].size(), 2u);
  EXPECT_NE(doc["devices"][0]["citation"].get<std::string>().find("2026-12-01"), std::string::npos);
}

TEST(Document, NameWithRegexCharactersMatchesOnlyItself) {
  EXPECT_EQ(exact_pattern("A100-SXM4-80GB (x)"), "^A100-SXM4-80GB \\(x\\)$");
  DeviceIdentity dev;
  dev.name = "GPU (1.0) [x]+";
  const auto db = rf::analyzer::CeilingDb::parse(
      ceilings_document(dev, {measurement("fp32_flop_per_s", 1e12)}, {}, Options{}, "2026-12-01").dump(), "doc");
  EXPECT_NE(db.match("GPU (1.0) [x]+", ""), nullptr);
  EXPECT_EQ(db.match("GPU (1a0) [x]+", ""), nullptr);
  EXPECT_FALSE(db.entries()[0].l2_bytes.has_value());  // unknown L2 size: not written
}

}  // namespace
