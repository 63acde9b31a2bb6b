// The one-line rfprof: messages and the classification of Range Profiler failures.
#include <cupti_result.h>
#include <gtest/gtest.h>

#include <stdexcept>

#include "rfprof/collector/messages.h"

namespace rf::collector {
namespace {

bool one_line(const std::string& s) { return s.find('\n') == std::string::npos; }

TEST(Messages, ClassifiesCuptiResults) {
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES), CountersFailure::kPrivileges);
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES),
            CountersFailure::kPrivileges);
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_HARDWARE_BUSY), CountersFailure::kBusy);
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_NOT_SUPPORTED), CountersFailure::kUnsupported);
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED), CountersFailure::kMig);
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED), CountersFailure::kUnsupported);
  // Every result that says the device or its configuration has no counters for rfprof.
  for (CUptiResult r : {CUPTI_ERROR_NOT_COMPATIBLE, CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED,
                        CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED, CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED,
                        CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED, CUPTI_ERROR_INVALID_CHIP_NAME,
                        CUPTI_ERROR_INVALID_DEVICE})
    EXPECT_EQ(classify_counters_failure(r), CountersFailure::kUnsupported) << r;
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_INVALID_METRIC_NAME), CountersFailure::kMetrics);
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_UNKNOWN), CountersFailure::kOther);
  EXPECT_EQ(classify_counters_failure(CUPTI_ERROR_OUT_OF_MEMORY), CountersFailure::kOther);
}

TEST(Messages, PrivilegesNameErrNvgpuctrpermAndGoOnWithTiming) {
  std::string m = counters_unavailable_message(CountersFailure::kPrivileges, "device 0 (GH100)");
  EXPECT_EQ(m.rfind("rfprof: ", 0), 0u);
  EXPECT_NE(m.find("ERR_NVGPUCTRPERM"), std::string::npos);
  EXPECT_NE(m.find("device 0 (GH100)"), std::string::npos);
  EXPECT_NE(m.find("timing only"), std::string::npos);
  EXPECT_TRUE(one_line(m));
}

TEST(Messages, BusyNamesDcgmiPause) {
  std::string m = counters_unavailable_message(CountersFailure::kBusy, "x");
  EXPECT_NE(m.find("dcgmi profile --pause"), std::string::npos);
  // Seen on an H100: two processes of one `--target-processes all` run on one GPU.
  EXPECT_NE(m.find("another process of this run with --target-processes all"), std::string::npos);
  EXPECT_NE(m.find("timing only"), std::string::npos);
  EXPECT_TRUE(one_line(m));
}

TEST(Messages, EveryFailureKindIsOneRfprofLineWithTheDetail) {
  for (auto f : {CountersFailure::kPrivileges, CountersFailure::kBusy, CountersFailure::kUnsupported,
                 CountersFailure::kMig, CountersFailure::kMetrics, CountersFailure::kOther})
    for (bool mps : {false, true}) {
      std::string m = counters_unavailable_message(f, "DETAIL-123", mps);
      EXPECT_EQ(m.rfind("rfprof: ", 0), 0u) << m;
      EXPECT_NE(m.find("DETAIL-123"), std::string::npos) << m;
      EXPECT_TRUE(one_line(m)) << m;
      // Every kind says what happens next, at its end.
      const std::string tail = "; continuing with kernel timing only (no counters)";
      ASSERT_GE(m.size(), tail.size()) << m;
      EXPECT_EQ(m.substr(m.size() - tail.size()), tail) << m;
    }
  EXPECT_NE(counters_unavailable_message(CountersFailure::kMetrics, "d").find("RFPROF_METRICS"),
            std::string::npos);
}

// Each configuration CUPTI refuses is named with what to change (cupti_profiler_target.h's flags,
// the CUPTI guide's MIG section); MPS, which CUPTI does not report, only when the driver says so.
TEST(Messages, UnsupportedConfigurationsNameTheirRemedy) {
  const std::string u = counters_unavailable_message(CountersFailure::kUnsupported, "device 1 not supported: vGPU");
  EXPECT_NE(u.find("device 1 not supported: vGPU"), std::string::npos) << u;
  EXPECT_NE(u.find("Volta or newer"), std::string::npos) << u;
  EXPECT_NE(u.find("profiling enabled for the VM"), std::string::npos) << u;
  EXPECT_EQ(u.find("MPS"), std::string::npos) << u;
  const std::string mps = counters_unavailable_message(CountersFailure::kUnsupported, "d", true);
  EXPECT_NE(mps.find("this device is shared through MPS"), std::string::npos) << mps;
  EXPECT_NE(mps.find("echo quit | nvidia-cuda-mps-control"), std::string::npos) << mps;
  const std::string mig = counters_unavailable_message(CountersFailure::kMig, "d");
  EXPECT_NE(mig.find("MIG compute instance"), std::string::npos) << mig;
  EXPECT_NE(mig.find("nvidia-smi mig -cgi <profile> -C"), std::string::npos) << mig;
  // The MPS note belongs to a refused device only: other failures have their own cause.
  EXPECT_EQ(counters_unavailable_message(CountersFailure::kBusy, "d", true).find("MPS"), std::string::npos);
}

TEST(Messages, AnEmbeddedMessageLosesItsOwnPrefixOnly) {
  EXPECT_EQ(without_rfprof_prefix("rfprof: unknown metric \"x\" for GH100"), "unknown metric \"x\" for GH100");
  EXPECT_EQ(without_rfprof_prefix("cuptiRangeProfilerStart failed"), "cuptiRangeProfilerStart failed");
  EXPECT_EQ(without_rfprof_prefix("rfprof:x"), "rfprof:x");
  EXPECT_EQ(without_rfprof_prefix("a rfprof: b"), "a rfprof: b");
  EXPECT_EQ(without_rfprof_prefix(""), "");
  EXPECT_EQ(without_rfprof_prefix("rfprof: "), "");
  EXPECT_EQ(detail_of(std::runtime_error("rfprof: unknown chip \"GX1\"")), "unknown chip \"GX1\"");
  EXPECT_EQ(detail_of(std::runtime_error("cuptiFoo failed")), "cuptiFoo failed");
}

TEST(Messages, AnotherClientAndCannotAttachDisableRfprof) {
  std::string a = another_client_message("");
  EXPECT_EQ(a, "rfprof: another CUPTI client is attached (PyTorch profiler, nsys, ncu?); rfprof is disabled");
  std::string b = another_client_message("CUPTI for Nsight Systems");
  EXPECT_NE(b.find("\"CUPTI for Nsight Systems\""), std::string::npos);
  EXPECT_NE(b.find("rfprof is disabled"), std::string::npos);
  std::string c = cannot_attach_message("cuptiSubscribe_v2: CUPTI_ERROR_UNKNOWN");
  EXPECT_EQ(c, "rfprof: cannot attach to CUDA (cuptiSubscribe_v2: CUPTI_ERROR_UNKNOWN); rfprof is disabled");
}

}  // namespace
}  // namespace rf::collector
