// One-off probe (not committed): do smsp__sass_* counts survive the Range Profiler's user replay?
// usage: step_sass MODE [warm]   MODE: kernel | user-auto | user-auto-each | user-range
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <cupti.h>
#include <cuda_profiler_api.h>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>
#include "rfprof/collector/host_metrics.h"
#include "host_library.h"

#define C(x) do { CUptiResult r_ = (x); if (r_ != CUPTI_SUCCESS) { const char* s_; cuptiGetResultString(r_, &s_); std::printf("FAIL %s: %s\n", #x, s_); return 1; } } while (0)

__global__ void scale(float* x, float a, float b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = a * x[i] + b;
}

static CUpti_RangeProfiler_Object* g_obj = nullptr;
static bool g_start_in_cb = false;
static int g_cb_starts = 0;
static void CUPTIAPI on_cb(void*, CUpti_CallbackDomain d, CUpti_CallbackId id, const void* data) {
  auto* cb = static_cast<const CUpti_CallbackData*>(data);
  if (d != CUPTI_CB_DOMAIN_DRIVER_API || cb->callbackSite != CUPTI_API_ENTER || !g_start_in_cb) return;
  if (id != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel && id != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz &&
      id != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx && id != CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) return;
  g_start_in_cb = false;
  CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE}; st.pRangeProfilerObject = g_obj;
  CUptiResult r = cuptiRangeProfilerStart(&st);
  ++g_cb_starts;
  if (r != CUPTI_SUCCESS) std::printf("  Start in callback failed %d\n", r);
}
static void CUPTIAPI buf_req(uint8_t** b, size_t* sz, size_t* max) { *sz = 1 << 20; *b = static_cast<uint8_t*>(std::aligned_alloc(8, *sz)); *max = 0; }
static int g_kernel_records = 0;
static void CUPTIAPI buf_done(CUcontext, uint32_t, uint8_t* b, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  while (cuptiActivityGetNextRecord(b, valid, &rec) == CUPTI_SUCCESS) ++g_kernel_records;
  std::free(b);
}

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "user-auto";
  std::string flags;
  for (int i = 2; i < argc; ++i) flags += std::string(" ") + argv[i];
  auto has = [&](const char* f) { return flags.find(std::string(" ") + f) != std::string::npos; };
  bool actoff = has("actoff"); bool warm = has("warm"), act = has("act"), in_cb = has("cb"), prof = has("prof"), flush = has("flush");
  if (act) {
    C(cuptiActivityRegisterCallbacks(buf_req, buf_done));
    C(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
  }
  CUpti_SubscriberHandle sub{};
  if (in_cb) { C(cuptiSubscribe(&sub, on_cb, nullptr)); C(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API)); }
  float* x; cudaMalloc(&x, 1024 * sizeof(float)); cudaMemset(x, 0, 4096);
  if (warm) { scale<<<1, 128>>>(x, 1.5f, 0.5f, 128); cudaDeviceSynchronize(); }
  CUcontext ctx; cuCtxGetCurrent(&ctx);
  rf::collector::load_host_library();
  CUpti_Profiler_Initialize_Params ip{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  C(cuptiProfilerInitialize(&ip));
  CUpti_Device_GetChipName_Params cn{CUpti_Device_GetChipName_Params_STRUCT_SIZE}; cn.deviceIndex = 0;
  C(cuptiDeviceGetChipName(&cn));
  CUpti_Profiler_GetCounterAvailability_Params av{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE}; av.ctx = ctx;
  C(cuptiProfilerGetCounterAvailability(&av));
  std::vector<uint8_t> avail(av.counterAvailabilityImageSize); av.pCounterAvailabilityImage = avail.data();
  C(cuptiProfilerGetCounterAvailability(&av));
  std::vector<std::string> metrics{"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "gpu__time_duration.sum",
                                   "smsp__inst_executed.sum"};
  std::vector<const char*> mp; for (auto& m : metrics) mp.push_back(m.c_str());
  rf::collector::MetricHost host(cn.pChipName, avail);
  auto config = host.config_image(metrics);
  std::printf("%s%s: chip %s passes %zu\n", mode.c_str(), flags.c_str(), cn.pChipName, host.num_passes(metrics));
  CUpti_RangeProfiler_Enable_Params en{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE}; en.ctx = ctx;
  C(cuptiRangeProfilerEnable(&en));
  auto* obj = en.pRangeProfilerObject;
  g_obj = obj;
  CUpti_RangeProfiler_GetCounterDataSize_Params sz{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  sz.pRangeProfilerObject = obj; sz.pMetricNames = mp.data(); sz.numMetrics = mp.size();
  sz.maxNumOfRanges = 16; sz.maxNumRangeTreeNodes = 16;
  C(cuptiRangeProfilerGetCounterDataSize(&sz));
  std::vector<uint8_t> image(sz.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci{CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ci.pRangeProfilerObject = obj; ci.counterDataSize = image.size(); ci.pCounterData = image.data();
  C(cuptiRangeProfilerCounterDataImageInitialize(&ci));
  CUpti_RangeProfiler_SetConfig_Params sc{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = obj; sc.configSize = config.size(); sc.pConfig = config.data();
  sc.counterDataImageSize = image.size(); sc.pCounterDataImage = image.data();
  sc.range = mode == "user-range" ? CUPTI_UserRange : CUPTI_AutoRange;
  sc.replayMode = mode == "kernel" ? CUPTI_KernelReplay : CUPTI_UserReplay;
  sc.maxRangesPerPass = 16; sc.numNestingLevels = 1; sc.minNestingLevel = 1; sc.passIndex = 0; sc.targetNestingLevel = 1;
  C(cuptiRangeProfilerSetConfig(&sc));
  if (actoff) { cuptiActivityFlushAll(1); C(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)); }
  for (int pass = 0; pass < 6; ++pass) {
    if (prof) cudaProfilerStart();
    if (in_cb) g_start_in_cb = true;
    else {
      CUpti_RangeProfiler_Start_Params st{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE}; st.pRangeProfilerObject = obj;
      C(cuptiRangeProfilerStart(&st));
    }
    if (mode == "user-range") {
      CUpti_RangeProfiler_PushRange_Params pu{CUpti_RangeProfiler_PushRange_Params_STRUCT_SIZE};
      pu.pRangeProfilerObject = obj; pu.pRangeName = "step"; C(cuptiRangeProfilerPushRange(&pu));
    }
    for (int g = 1; g <= 5; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
    cudaDeviceSynchronize();
    if (flush) cuptiActivityFlushAll(0);
    if (mode == "user-range") {
      CUpti_RangeProfiler_PopRange_Params po{CUpti_RangeProfiler_PopRange_Params_STRUCT_SIZE};
      po.pRangeProfilerObject = obj; C(cuptiRangeProfilerPopRange(&po));
    }
    CUpti_RangeProfiler_Stop_Params sp{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE}; sp.pRangeProfilerObject = obj;
    C(cuptiRangeProfilerStop(&sp));
    if (prof) cudaProfilerStop();
    std::printf("  pass %d: Stop passIndex %zu isAllPassSubmitted %d\n", pass, sp.passIndex, sp.isAllPassSubmitted);
    if (mode == "user-auto-each") {
      CUpti_RangeProfiler_DecodeData_Params de{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE}; de.pRangeProfilerObject = obj;
      C(cuptiRangeProfilerDecodeData(&de));
    }
    if (sp.isAllPassSubmitted) break;
  }
  if (actoff) {
    C(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
    for (int g = 1; g <= 2; ++g) scale<<<g, 128>>>(x, 1.5f, 0.5f, g * 128);
    cudaDeviceSynchronize();
  }
  if (mode != "user-auto-each") {
    CUpti_RangeProfiler_DecodeData_Params de{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE}; de.pRangeProfilerObject = obj;
    C(cuptiRangeProfilerDecodeData(&de));
    std::printf("  decode: dropped %zu\n", de.numOfRangeDropped);
  }
  for (auto& r : host.evaluate(image, metrics)) {
    std::printf("  range %s:", r.range_name.c_str());
    for (double v : r.values) std::printf(" %.0f", v);
    std::printf("\n");
  }
  CUpti_RangeProfiler_Disable_Params di{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE}; di.pRangeProfilerObject = obj;
  C(cuptiRangeProfilerDisable(&di));
  if (act) { cuptiActivityFlushAll(1); std::printf("  activity records %d\n", g_kernel_records); }
  if (in_cb) std::printf("  starts in a callback %d\n", g_cb_starts);
  return 0;
}
