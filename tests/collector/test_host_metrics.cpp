// MetricHost (CUPTI profiler host API) and the CUPTI seam's error reporting. No GPU needed: the
// host API works from a chip name alone. Pass counts asserted here were measured with this API
// (docs/metrics.md); a CUPTI upgrade that changes them should fail these tests.
#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/metric_sets.h"

#include <cupti_profiler_host.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <iostream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "cupti_call.h"
#include "host_library.h"

namespace rf::collector {
namespace {

using Names = std::vector<std::string>;

const Names kFpInstructions = {
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
};
const Names kMemoryAndTime = {"dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum",
                              "lts__t_bytes.sum", "l1tex__t_bytes.sum"};

/// Tensor-pipe warp instructions: in the default set since 2026-11-30 (rfanalyze's uncounted_tensor_work).
const std::string kTensorPipe = "sm__inst_executed_pipe_tensor.sum";

bool contains(const Names& list, const std::string& name) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

std::vector<uint8_t> random_bytes(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<uint8_t> out(n);
  for (auto& b : out) b = static_cast<uint8_t>(byte(gen));
  return out;
}

/// The message of the MetricError that `f` throws ("" if it throws none).
template <typename F>
std::string metric_error_of(F&& f) {
  try {
    f();
  } catch (const MetricError& e) {
    return e.what();
  }
  return {};
}

// ---- Chip-independent -------------------------------------------------------------------------

TEST(MetricNames, SplitAtTheFirstDotAfterTheUnit) {
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(split_metric_name("dram__bytes_read.sum.per_second"), P("dram__bytes_read", ".sum.per_second"));
  EXPECT_EQ(split_metric_name("LTS.TriageCompute.lts__t_bytes.sum"), P("LTS.TriageCompute.lts__t_bytes", ".sum"));
  EXPECT_EQ(split_metric_name("gpu__time_duration"), P("gpu__time_duration", ""));
  EXPECT_EQ(split_metric_name("no_unit.sum"), P("no_unit", ".sum"));
}

// libnvperf_host is loaded by rfprof itself, not linked (host_library.h): a library that cannot be
// loaded is a HostApiError naming it, what it is for, and where to point the loader.
TEST(HostLibrary, ALibraryThatCannotBeLoadedIsNamedWithTheFix) {
  try {
    (void)detail::open_host_library("libnvperf_host_absent.so");
    FAIL() << "loaded a library that does not exist";
  } catch (const HostApiError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("rfprof: cannot load libnvperf_host_absent.so (CUPTI's profiler host API", 0), 0u) << what;
    EXPECT_NE(what.find("cannot open shared object file"), std::string::npos) << what;  // dlerror()'s reason
    EXPECT_NE(what.find("LD_LIBRARY_PATH"), std::string::npos) << what;
  }
  EXPECT_NE(detail::open_host_library("libnvperf_host.so"), nullptr);
  EXPECT_NO_THROW(load_host_library());
}

TEST(MetricHostChips, SupportedChipsIncludeTheDataCenterChips) {
  const auto chips = MetricHost::supported_chips();
  for (const char* chip : {"GV100", "GA100", "GH100"}) EXPECT_TRUE(contains(chips, chip)) << chip;
}

TEST(MetricHostChips, UnknownChipIsRejectedWithTheSupportedList) {
  for (const char* bad : {"GH999", "", "gh100 "}) {
    try {
      MetricHost host(bad);
      ADD_FAILURE() << "accepted chip \"" << bad << "\"";
    } catch (const HostApiError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("unknown chip \"" + std::string(bad) + "\""), std::string::npos) << what;
      EXPECT_NE(what.find("GH100"), std::string::npos) << what;
      EXPECT_NE(what.find("GA100"), std::string::npos) << what;
    }
  }
}

TEST(MetricHostChips, DefaultMetricsAreTheRooflineSet) {
  const auto& metrics = default_metrics();
  EXPECT_EQ(metrics.size(), kFpInstructions.size() + kMemoryAndTime.size() + 1);
  for (const auto& m : kFpInstructions) EXPECT_TRUE(contains(metrics, m)) << m;
  for (const auto& m : kMemoryAndTime) EXPECT_TRUE(contains(metrics, m)) << m;
  EXPECT_EQ(metrics.back(), kTensorPipe);
}

// The tensor-pipe counter is a hardware counter that rides in the memory and time pass: the
// default set stays at 2 passes with it on every chip docs/metrics.md lists.
class DefaultSetHostApi : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(Chips, DefaultSetHostApi,
                         ::testing::Values("GV100", "TU104", "GA100", "AD102", "GH100", "GB100"));

TEST_P(DefaultSetHostApi, TensorPipeInstructionsAddNoPass) {
  if (!contains(MetricHost::supported_chips(), GetParam())) GTEST_SKIP() << GetParam() << " not supported";
  ASSERT_TRUE(contains(default_metrics(), kTensorPipe));
  MetricHost host(GetParam());
  ASSERT_TRUE(host.is_valid(kTensorPipe)) << GetParam();
  EXPECT_EQ(host.properties(kTensorPipe).dim_unit, "instruction");
  EXPECT_EQ(host.num_passes(default_metrics()), 2u);
  Names memory_and_pipe = kMemoryAndTime;
  memory_and_pipe.push_back(kTensorPipe);
  EXPECT_EQ(host.num_passes(memory_and_pipe), 1u);
  std::cout << GetParam() << ": " << kTensorPipe << ": \"" << host.properties(kTensorPipe).description
            << "\"; default set (" << default_metrics().size() << " metrics) " << host.num_passes(default_metrics())
            << " passes\n";
}

/// Calls `fn(chip, host)` for every chip MetricHost::supported_chips() lists that the host API
/// can initialize without a device (GV11B is listed but cannot be).
template <typename Fn>
void for_each_initializable_chip(Fn fn) {
  for (const std::string& chip : MetricHost::supported_chips()) {
    std::optional<MetricHost> made;
    try {
      made.emplace(chip);
    } catch (const HostApiError&) {
      continue;
    }
    fn(chip, *made);
  }
}

// A list with one name a chip does not know is refused whole (counters off on that chip), so the
// tensor-pipe count must exist wherever the rest of the default list does; it exists on every chip.
TEST(DefaultListHostApi, TensorPipeExistsWhereverTheRestOfTheDefaultListDoes) {
  ASSERT_EQ(default_metrics().back(), kTensorPipe);
  size_t checked = 0, with_the_rest = 0;
  for_each_initializable_chip([&](const std::string& chip, MetricHost& host) {
    const auto& metrics = default_metrics();
    if (std::all_of(metrics.begin(), metrics.end() - 1, [&](const std::string& m) { return host.is_valid(m); }))
      ++with_the_rest;  // not GB202, whose DRAM byte counters have other names (metric_sets.h plans them)
    EXPECT_TRUE(host.is_valid(kTensorPipe)) << chip;
    ++checked;
  });
  EXPECT_GE(checked, 8u);
  EXPECT_GE(with_the_rest, 6u);
}

// ---- Per chip: GH100 and GA100 -----------------------------------------------------------------

class MetricHostTest : public ::testing::TestWithParam<const char*> {
 protected:
  MetricHost host_{GetParam()};
};

INSTANTIATE_TEST_SUITE_P(Chips, MetricHostTest, ::testing::Values("GH100", "GA100"));

TEST_P(MetricHostTest, BaseMetricsAreBaseNames) {
  const auto& bases = host_.base_metrics();
  EXPECT_GT(bases.size(), 1000u);
  EXPECT_TRUE(contains(bases, "dram__bytes_read"));
  EXPECT_TRUE(contains(bases, "smsp__sass_thread_inst_executed_op_ffma_pred_on"));
  EXPECT_FALSE(contains(bases, "dram__bytes_read.sum"));
  EXPECT_EQ(&bases, &host_.base_metrics()) << "not cached";
}

TEST_P(MetricHostTest, SuffixesDependOnTheMetricType) {
  const auto counter = host_.suffixes("dram__bytes_read");
  EXPECT_TRUE(contains(counter, ".sum"));
  EXPECT_TRUE(contains(counter, ".sum.per_second"));
  EXPECT_FALSE(contains(counter, ".ratio"));
  EXPECT_TRUE(contains(host_.suffixes("sm__throughput"), ".avg.pct_of_peak_sustained_elapsed"));
  EXPECT_FALSE(contains(host_.suffixes("sm__throughput"), ".sum"));
  EXPECT_TRUE(host_.suffixes("dram__bytes_reed").empty());
  EXPECT_TRUE(host_.suffixes("dram__bytes_read.sum").empty());
}

TEST_P(MetricHostTest, RooflineNamesAreValid) {
  for (const auto& m : default_metrics()) EXPECT_TRUE(host_.is_valid(m)) << m;
  EXPECT_NO_THROW(host_.validate(default_metrics()));
  EXPECT_TRUE(host_.is_valid("dram__bytes_read.sum.per_second"));
  EXPECT_TRUE(host_.is_valid("sm__throughput.avg.pct_of_peak_sustained_elapsed"));
  // Tensor math ops by source precision: Hopper has them, Ampere's counters are per instruction.
  EXPECT_EQ(host_.is_valid("sm__ops_path_tensor_src_fp16.sum"), std::string(GetParam()) == "GH100");
}

TEST_P(MetricHostTest, MisspelledNamesAreInvalid) {
  for (const char* bad : {"dram__bytes_reed.sum", "dram__bytes_read.summ", "foo", "", "dram__bytes_read",
                          "dram__bytes_read.sum.", "dram__bytes_read.pct", "sm__throughput.sum",
                          "DRAM__BYTES_READ.SUM", " dram__bytes_read.sum"})
    EXPECT_FALSE(host_.is_valid(bad)) << bad;
}

TEST_P(MetricHostTest, NamesIsValidAcceptsAreNamesCuptiConfigures) {
  // A spread of base metrics of every type, each with its first, middle and last suffix. CUPTI
  // refuses a few valid names (chip-to-chip ctc__ peak percentages on GH100); config_image must
  // then name them in a MetricError, and they must stay rare.
  const auto& bases = host_.base_metrics();
  size_t configured = 0, refused = 0;
  for (size_t i = 0; i < bases.size(); i += 97) {
    const auto suffixes = host_.suffixes(bases[i]);
    ASSERT_FALSE(suffixes.empty()) << bases[i];
    for (const auto& s : {suffixes.front(), suffixes[suffixes.size() / 2], suffixes.back()}) {
      const std::string m = bases[i] + s;
      ASSERT_TRUE(host_.is_valid(m)) << m;
      try {
        EXPECT_FALSE(host_.config_image({m}).empty()) << m;
        ++configured;
      } catch (const MetricError& e) {
        EXPECT_NE(std::string(e.what()).find("\"" + m + "\" cannot be collected"), std::string::npos)
            << e.what();
        ++refused;
      }
    }
  }
  EXPECT_GT(configured, 90u);
  EXPECT_LE(refused, configured / 20);
}

TEST_P(MetricHostTest, ValidNameCuptiRefusesIsNamedAmongOthers) {
  const std::string refused = "ctc__rx_bytes.sum.pct_of_peak_sustained_elapsed";
  if (!host_.is_valid(refused)) GTEST_SKIP() << "no chip-to-chip metrics on " << GetParam();
  Names metrics = default_metrics();
  metrics.push_back(refused);
  const std::string what = metric_error_of([&] { host_.config_image(metrics); });
  EXPECT_EQ(what, "rfprof: metric \"" + refused + "\" cannot be collected by the range profiler on " +
                      GetParam() + " (cuptiProfilerHostConfigAddMetrics: CUPTI_ERROR_NOT_SUPPORTED)");
  EXPECT_EQ(host_.num_passes(default_metrics()), 2u);
}

TEST_P(MetricHostTest, DefaultSetNeedsTwoPasses) { EXPECT_EQ(host_.num_passes(default_metrics()), 2u); }

TEST_P(MetricHostTest, FpInstructionCountsFitOnePass) { EXPECT_EQ(host_.num_passes(kFpInstructions), 1u); }

TEST_P(MetricHostTest, MemoryAndTimeFitOnePass) { EXPECT_EQ(host_.num_passes(kMemoryAndTime), 1u); }

TEST_P(MetricHostTest, ConfigImagesDoNotAccumulateAcrossCalls) {
  const auto first = host_.config_image(kMemoryAndTime);
  EXPECT_FALSE(first.empty());
  EXPECT_NE(host_.config_image(default_metrics()), first);
  EXPECT_EQ(host_.config_image(kMemoryAndTime), first);
  EXPECT_EQ(host_.num_passes(kFpInstructions), 1u);
}

TEST_P(MetricHostTest, RejectedListLeavesTheHostUsable) {
  Names with_typo = default_metrics();
  with_typo.push_back("dram__bytes_reed.sum");
  EXPECT_THROW(host_.num_passes(with_typo), MetricError);
  EXPECT_THROW(host_.config_image(with_typo), MetricError);
  EXPECT_EQ(host_.num_passes(default_metrics()), 2u);
}

TEST_P(MetricHostTest, EmptyListIsAnError) {
  EXPECT_THROW(host_.num_passes({}), MetricError);
  EXPECT_THROW(host_.config_image({}), MetricError);
  EXPECT_NO_THROW(host_.validate({}));
}

TEST_P(MetricHostTest, CloseNamesPutTheIntendedMetricFirst) {
  EXPECT_EQ(host_.close_names("dram__bytes_reed.sum").at(0), "dram__bytes_read.sum");
  EXPECT_EQ(host_.close_names("dram__bytes_read.summ").at(0), "dram__bytes_read.sum");
  EXPECT_EQ(host_.close_names("dram_bytes_read.sum").at(0), "dram__bytes_read.sum");
  EXPECT_EQ(host_.close_names("smsp__sass_thread_inst_executed_op_ffma_pred_onn.sum").at(0),
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum");
  EXPECT_EQ(host_.close_names("gpu__time_duration.avgg").at(0), "gpu__time_duration.avg");
  EXPECT_EQ(host_.close_names("dram__bytes_read").at(0), "dram__bytes_read.sum");  // ties: .sum first
}

TEST_P(MetricHostTest, CloseNamesAreValidDistinctAndBounded) {
  for (const char* query : {"foo", "dram__bytes_reed.sum", "lts__t_byte", "sm__throughput"}) {
    const auto close = host_.close_names(query, 7);
    EXPECT_EQ(close.size(), 7u) << query;
    for (const auto& c : close) EXPECT_TRUE(host_.is_valid(c)) << query << " -> " << c;
    Names sorted = close;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(std::unique(sorted.begin(), sorted.end()), sorted.end()) << query;
  }
  EXPECT_TRUE(host_.close_names("foo", 0).empty());
}

TEST_P(MetricHostTest, ValidateNamesEachUnknownMetricAndItsCloseNames) {
  const std::string chip = GetParam();
  const std::string what = metric_error_of([&] {
    host_.validate({"dram__bytes_reed.sum", "gpu__time_duration.sum", "dram__bytes_read.summ"});
  });
  ASSERT_FALSE(what.empty()) << "no MetricError";
  EXPECT_NE(what.find("rfprof: unknown metric \"dram__bytes_reed.sum\" for " + chip +
                      "; did you mean: dram__bytes_read.sum"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("rfprof: unknown metric \"dram__bytes_read.summ\" for " + chip +
                      "; did you mean: dram__bytes_read.sum"),
            std::string::npos)
      << what;
  EXPECT_EQ(what.find("\"gpu__time_duration.sum\""), std::string::npos) << what;
  EXPECT_EQ(std::count(what.begin(), what.end(), '\n'), 1) << "one line per unknown metric: " << what;
}

TEST_P(MetricHostTest, PropertiesGiveUnits) {
  EXPECT_EQ(host_.properties("dram__bytes_read.sum").dim_unit, "byte");
  EXPECT_EQ(host_.properties("dram__bytes_read.sum").hw_unit, "dram");
  EXPECT_EQ(host_.properties("gpu__time_duration.sum").dim_unit, "nanosecond");
  EXPECT_EQ(host_.properties("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum").dim_unit, "instruction");
  EXPECT_FALSE(host_.properties("lts__t_bytes.sum").description.empty());
  EXPECT_THROW(host_.properties("dram__bytes_reed.sum"), MetricError);
  // The kind ncu's --query-metrics prints in its type column.
  EXPECT_EQ(host_.base_properties("dram__bytes_read").kind, MetricKind::kCounter);
  EXPECT_EQ(host_.base_properties("sm__throughput").kind, MetricKind::kThroughput);
  EXPECT_EQ(host_.base_properties("lts__t_sector_hit_rate").kind, MetricKind::kRatio);
}

TEST_P(MetricHostTest, EvaluateRejectsGarbageImages) {
  const std::vector<std::vector<uint8_t>> garbage = {
      {},
      random_bytes(1, 1),
      random_bytes(100, 2),
      random_bytes(4096, 3),
      random_bytes(1 << 16, 4),
      std::vector<uint8_t>(4096, 0),
      std::vector<uint8_t>(4096, 0xff),
  };
  for (const auto& image : garbage) {
    try {
      host_.evaluate(image, default_metrics());
      ADD_FAILURE() << "accepted " << image.size() << " garbage bytes";
    } catch (const HostApiError& e) {
      EXPECT_NE(std::string(e.what()).find("counter-data image (" + std::to_string(image.size()) + " bytes)"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST_P(MetricHostTest, EvaluateChecksMetricsFirst) {
  EXPECT_THROW(host_.evaluate(random_bytes(4096, 5), {"dram__bytes_reed.sum"}), MetricError);
  EXPECT_THROW(host_.evaluate(random_bytes(4096, 5), {}), MetricError);
}

// ---- Other chips: the roofline set's pass counts (docs/metrics.md) -----------------------------

class OtherChipsTest : public ::testing::TestWithParam<const char*> {};

INSTANTIATE_TEST_SUITE_P(Chips, OtherChipsTest, ::testing::Values("GV100", "TU104", "AD102", "GB100"));

TEST_P(OtherChipsTest, RooflineSetPasses) {
  if (!contains(MetricHost::supported_chips(), GetParam())) GTEST_SKIP() << GetParam() << " not supported";
  MetricHost host(GetParam());
  const size_t all = host.num_passes(default_metrics());
  const size_t fp = host.num_passes(kFpInstructions);
  const size_t memory = host.num_passes(kMemoryAndTime);
  RecordProperty("passes_default", static_cast<int>(all));
  std::cout << GetParam() << ": default set " << all << " passes, FP instructions " << fp
            << ", memory+time " << memory << "\n";
  EXPECT_EQ(all, 2u);
  EXPECT_EQ(fp, 1u);
  EXPECT_EQ(memory, 1u);
}

// chip_has_packed_fp32 (a list, so that a default session needs no host API query per context)
// agrees with the host API on every chip it knows, and the roofline set takes the packed FP32
// metrics exactly there, without another pass.
TEST(PackedFp32, TheChipListIsTheHostApis) {
  size_t checked = 0;
  for_each_initializable_chip([&](const std::string& chip, MetricHost& host) {
    ++checked;
    size_t valid = 0;
    for (const auto& m : packed_fp32_metrics()) valid += host.is_valid(m) ? 1 : 0;
    EXPECT_EQ(valid, chip_has_packed_fp32(chip) ? packed_fp32_metrics().size() : 0u) << chip;
    const MetricSetPlan plan = plan_metric_set(host, "roofline");
    const bool planned = std::find(plan.metrics.begin(), plan.metrics.end(), packed_fp32_metrics()[2]) != plan.metrics.end();
    EXPECT_EQ(planned, chip_has_packed_fp32(chip)) << chip;
    if (planned) {
      EXPECT_EQ(plan.passes, 2u) << chip;
    }
  });
  EXPECT_GE(checked, 8u);
  EXPECT_TRUE(chip_has_packed_fp32("gb100"));
  EXPECT_FALSE(chip_has_packed_fp32("GH100"));
  EXPECT_FALSE(chip_has_packed_fp32("GB1000"));
}

// ---- The CUPTI seam (cupti_call.h) -------------------------------------------------------------

TEST(CuptiCall, ResultStringIsCuptisName) {
  EXPECT_EQ(cupti_result_string(CUPTI_ERROR_INVALID_METRIC_NAME), "CUPTI_ERROR_INVALID_METRIC_NAME");
  EXPECT_EQ(cupti_result_string(static_cast<CUptiResult>(12345)), "unknown CUptiResult 12345");
}

TEST(CuptiCall, CallMacroThrowsNamingTheCall) {
  try {
    RF_CUPTI_CALL(cuptiProfilerHostGetSupportedChips(nullptr));
    FAIL() << "no CuptiError";
  } catch (const CuptiError& e) {
    EXPECT_EQ(e.result(), CUPTI_ERROR_INVALID_PARAMETER);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("cuptiProfilerHostGetSupportedChips failed: CUPTI_ERROR_INVALID_PARAMETER (", 0), 0u)
        << what;
    EXPECT_NE(what.find("test_host_metrics.cpp:"), std::string::npos) << what;
  }
}

TEST(CuptiCall, TryMacroReportsOncePerCallSite) {
  ::testing::internal::CaptureStderr();
  int failures = 0;
  for (int i = 0; i < 3; ++i)
    if (!RF_CUPTI_TRY(cuptiProfilerHostGetSupportedChips(nullptr))) ++failures;
  const char* text = nullptr;
  const bool ok = RF_CUPTI_TRY(cuptiGetResultString(CUPTI_SUCCESS, &text));
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(failures, 3);
  EXPECT_TRUE(ok);
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;
  const std::string start =
      "rfprof: cuptiProfilerHostGetSupportedChips(nullptr) failed at test_host_metrics.cpp:";
  EXPECT_EQ(err.rfind(start, 0), 0u) << err;
  EXPECT_NE(err.find("CUPTI_ERROR_INVALID_PARAMETER"), std::string::npos) << err;
}

}  // namespace
}  // namespace rf::collector
