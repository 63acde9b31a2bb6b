// The fake CUPTI's model (fake_cupti.h) checked against what CUPTI really did on an H100: the
// traces recorded there (tests/data/h100-2026-11-23) and a trace of the session on the fake must
// show the same facts, which the CUPTI headers leave open:
//   - a driver launch made by a runtime call carries the runtime call's correlation id;
//   - a kernel record carries its launch's correlation id;
//   - auto range names each range by its index in the counter image ("0", "1", ...);
//   - cudaProfilerStart encloses the cuProfilerStart it makes, and cudaProfilerStop its
//     cuProfilerStop: a window opens at cuProfilerStart's exit (the first of the two exits) and
//     closes at cudaProfilerStop's entry (the first of the two entries).
// Writing this check found the first two wrong in the fake (it gave the driver call an id of its
// own, and the kernel record the runtime call's) and the range names (it gave kernel names).
#include <cupti_range_profiler.h>

#include <set>
#include <vector>

#include "fake_session.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// What in `t` differs from the model, one line each ("" if nothing does); `runtime_launches`
/// gets the number of launches made through the runtime, so a test can require some.
std::string model_violations(const Trace& t, size_t* runtime_launches) {
  std::string out;
  std::set<uint32_t> launch_ids;
  *runtime_launches = 0;
  for (const auto& l : t.all<trace::LaunchApi>()) {
    launch_ids.insert(l.correlation_id);
    if (l.runtime_correlation_id == 0) continue;
    ++*runtime_launches;
    if (l.runtime_correlation_id != l.correlation_id)
      out += "launch " + std::to_string(l.correlation_id) + " has runtime id " +
             std::to_string(l.runtime_correlation_id) + "\n";
  }
  for (const auto& k : t.all<trace::KernelActivity>())
    if (!launch_ids.count(k.correlation_id))
      out += "kernel record " + std::to_string(k.correlation_id) + " matches no launch's id\n";
  for (const auto& w : t.all<trace::ProfilingWindow>()) {
    const uint32_t expected = w.begin ? static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuProfilerStart)
                                      : static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000);
    if (w.cbid != 0 && w.cbid != expected)
      out += "window " + std::to_string(w.window_id) + (w.begin ? " opened" : " closed") + " by callback " +
             std::to_string(w.cbid) + "\n";
  }
  for (const auto& rc : t.all<trace::RangeCounters>())
    if (t.str(rc.range_name) != std::to_string(rc.range_index))
      out += "range " + std::to_string(rc.range_index) + " is named \"" + t.str(rc.range_name) + "\"\n";
  return out;
}

class FakeModel : public FakeSessionTest {};

TEST_F(FakeModel, TheH100TracesShowIt) {
  const std::filesystem::path data = std::filesystem::path(RFPROF_SOURCE_DIR) / "tests/data/h100-2026-11-23";
  for (const char* name : {"resnet18/resnet18.rftrace", "examples/ffma.rftrace", "examples/sgemm_naive.rftrace",
                           "resnet18/resnet18.timing.rftrace"}) {
    const Trace t = read_trace(data / name);
    size_t runtime_launches = 0;
    EXPECT_EQ(model_violations(t, &runtime_launches), "") << name;
    EXPECT_GT(runtime_launches, 0u) << name;
    EXPECT_FALSE(t.all<trace::KernelActivity>().empty()) << name;
  }
  // ResNet-18's step was profiled inside cudaProfilerStart/Stop (profile-from-start off).
  const Trace step = read_trace(data / "resnet18/resnet18.rftrace");
  ASSERT_EQ(step.all<trace::ProfilingWindow>().size(), 2u);
  EXPECT_NE(step.all<trace::ProfilingWindow>()[0].cbid, 0u);
}

TEST_F(FakeModel, TheFakeShowsIt) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kCounters);
    o.max_ranges_per_image = 3;  // names restart with each image
    o.profile_from_start = false;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    profiler_start(ctx);
    for (int i = 0; i < 7; ++i) {
      Launch l{ctx, "_Z1kv"};
      l.through_runtime = i % 3 != 2;  // some bare cuLaunchKernel calls among them
      launch(l);
    }
    profiler_stop(ctx);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  size_t runtime_launches = 0;
  EXPECT_EQ(model_violations(t, &runtime_launches), "");
  EXPECT_EQ(runtime_launches, 5u);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 7u);
  EXPECT_EQ(t.all<trace::RangeCounters>().size(), 7u);
  EXPECT_EQ(t.all<trace::ProfilingWindow>().size(), 2u);
}

// The fake refuses the Range Profiler calls the real one refuses, and says so as a misuse, so a
// session that calls CUPTI out of order fails its test (run_child) instead of passing on a lax fake.
TEST_F(FakeModel, TheFakeRefusesCallsOutOfOrder) {
  reset();
  CUcontext ctx = create_context(1);
  const uint64_t before = misuses();
  CUpti_RangeProfiler_Enable_Params enable{};
  enable.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  enable.ctx = ctx;
  ASSERT_EQ(cuptiRangeProfilerEnable(&enable), CUPTI_SUCCESS);
  CUpti_RangeProfiler_Object* object = enable.pRangeProfilerObject;
  EXPECT_EQ(cuptiRangeProfilerEnable(&enable), CUPTI_ERROR_INVALID_OPERATION);  // enabled twice
  CUpti_RangeProfiler_Start_Params start{};
  start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
  start.pRangeProfilerObject = object;
  EXPECT_EQ(cuptiRangeProfilerStart(&start), CUPTI_ERROR_INVALID_OPERATION);  // before SetConfig
  std::vector<uint8_t> image(4096);
  CUpti_RangeProfiler_SetConfig_Params config{};
  config.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  config.pRangeProfilerObject = object;
  config.pCounterDataImage = image.data();
  config.counterDataImageSize = image.size();
  config.replayMode = CUPTI_UserReplay;
  config.maxRangesPerPass = 4;
  ASSERT_EQ(cuptiRangeProfilerSetConfig(&config), CUPTI_SUCCESS);
  CUpti_RangeProfiler_Stop_Params stop{};
  stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  stop.pRangeProfilerObject = object;
  EXPECT_EQ(cuptiRangeProfilerStop(&stop), CUPTI_ERROR_INVALID_OPERATION);  // without Start
  ASSERT_EQ(cuptiRangeProfilerStart(&start), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiRangeProfilerStop(&stop), CUPTI_SUCCESS);
  EXPECT_EQ(stop.isAllPassSubmitted, 0u);  // 2 passes: one submitted
  CUpti_RangeProfiler_DecodeData_Params decode{};
  decode.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  decode.pRangeProfilerObject = object;
  EXPECT_EQ(cuptiRangeProfilerDecodeData(&decode), CUPTI_ERROR_INVALID_OPERATION);  // a pass to go
  ASSERT_EQ(cuptiRangeProfilerStart(&start), CUPTI_SUCCESS);
  ASSERT_EQ(cuptiRangeProfilerStop(&stop), CUPTI_SUCCESS);
  EXPECT_EQ(stop.isAllPassSubmitted, 1u);
  EXPECT_EQ(cuptiRangeProfilerDecodeData(&decode), CUPTI_SUCCESS);
  CUpti_RangeProfiler_Disable_Params disable{};
  disable.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
  disable.pRangeProfilerObject = object;
  ASSERT_EQ(cuptiRangeProfilerDisable(&disable), CUPTI_SUCCESS);
  EXPECT_EQ(cuptiRangeProfilerStart(&start), CUPTI_ERROR_INVALID_PARAMETER);  // disabled object
  EXPECT_EQ(cuptiRangeProfilerDisable(&disable), CUPTI_ERROR_INVALID_PARAMETER);
  EXPECT_EQ(misuses() - before, 6u);
}

}  // namespace
}  // namespace rf::fake_cupti
