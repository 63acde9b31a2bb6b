// The CUPTI functions of the fake CUPTI (fake_cupti.h): the callback, activity, device and Range
// Profiler calls the session makes, and the three host-API calls that read a counter-data image.
// Their definitions come before libcupti's in a test executable (fake_cupti.h says why).
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <unistd.h>

#include <algorithm>

#include "fake_cupti.h"
#include "fake_cupti_state.h"

// ---- the CUPTI functions (cupti_callbacks.h, cupti_activity.h, cupti_range_profiler.h, ...) ----

using namespace rf::fake_cupti::detail;
using rf::fake_cupti::value;

extern "C" {

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle* subscriber, CUpti_CallbackFunc callback,
                                       void* userdata, CUpti_SubscriberParams* params) {
  if (CUptiResult r = enter("cuptiSubscribe_v2")) return r;
  std::lock_guard lock(g.m);
  const std::string& old = !g.subscriber.empty() ? g.subscriber : g.other_subscriber;
  if (!old.empty()) {
    if (params && params->oldSubscriberName && params->oldSubscriberSize > 0) {
      std::strncpy(params->oldSubscriberName, old.c_str(), params->oldSubscriberSize - 1);
      params->oldSubscriberName[params->oldSubscriberSize - 1] = '\0';
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
  }
  g.subscriber = params && params->subscriberName ? params->subscriberName : "(unnamed)";
  g.callback = callback;
  g.userdata = userdata;
  *subscriber = reinterpret_cast<CUpti_SubscriberHandle>(&g);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle) {
  if (CUptiResult r = enter("cuptiUnsubscribe")) return r;
  std::lock_guard lock(g.m);
  g.subscriber.clear();
  g.callback = nullptr;
  g.enabled.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle, CUpti_CallbackDomain domain,
                                         CUpti_CallbackId cbid) {
  if (CUptiResult r = enter("cuptiEnableCallback")) return r;
  std::lock_guard lock(g.m);
  if (enable)
    g.enabled.insert({static_cast<int>(domain), cbid});
  else
    g.enabled.erase({static_cast<int>(domain), cbid});
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSetThreadIdType(CUpti_ActivityThreadIdType type) {
  if (CUptiResult r = enter("cuptiSetThreadIdType")) return r;
  std::lock_guard lock(g.m);
  g.system_thread_ids = type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc requested,
                                                    CUpti_BuffersCallbackCompleteFunc completed) {
  if (CUptiResult r = enter("cuptiActivityRegisterCallbacks")) return r;
  std::lock_guard lock(g.m);
  g.requested = requested;
  g.completed = completed;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind) {
  if (CUptiResult r = enter("cuptiActivityEnable")) return r;
  std::lock_guard lock(g.m);
  g.kinds.insert(static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind) {
  if (CUptiResult r = enter("cuptiActivityDisable")) return r;
  std::lock_guard lock(g.m);
  g.kinds.erase(static_cast<int>(kind));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t) {
  if (CUptiResult r = enter("cuptiActivityFlushAll")) return r;
  static std::mutex flushing;  // one flush at a time hands buffers over, as CUPTI's own lock
  std::lock_guard one(flushing);
  for (;;) {
    std::vector<std::array<uint8_t, kSlot>> records;
    CUpti_BuffersCallbackRequestFunc requested;
    CUpti_BuffersCallbackCompleteFunc completed;
    {
      std::lock_guard lock(g.m);
      if (g.pending.empty() || !g.requested || !g.completed) return CUPTI_SUCCESS;
      records.swap(g.pending);
      requested = g.requested;
      completed = g.completed;
    }
    size_t i = 0;
    while (i < records.size()) {
      uint8_t* buffer = nullptr;
      size_t size = 0, max_records = 0;
      requested(&buffer, &size, &max_records);
      if (!buffer || size < kSlot) return CUPTI_SUCCESS;  // records dropped
      size_t used = 0;
      for (; i < records.size() && used + kSlot <= size; ++i, used += kSlot)
        std::memcpy(buffer + used, records[i].data(), kSlot);
      completed(nullptr, 0, buffer, size, used);
    }
  }
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t* buffer, size_t valid, CUpti_Activity** record) {
  uint8_t* next = *record ? reinterpret_cast<uint8_t*>(*record) + kSlot : buffer;
  if (static_cast<size_t>(next - buffer) + kSlot > valid) return CUPTI_ERROR_MAX_LIMIT_REACHED;
  *record = reinterpret_cast<CUpti_Activity*>(next);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext, uint32_t, size_t* dropped) {
  if (CUptiResult r = enter("cuptiActivityGetNumDroppedRecords")) return r;
  std::lock_guard lock(g.m);
  *dropped = static_cast<size_t>(std::exchange(g.dropped, 0));
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t* timestamp) {
  *timestamp = now_ns();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t* version) {
  *version = CUPTI_API_VERSION;
  return enter("cuptiGetVersion");
}

CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext context, uint32_t* device) {
  if (CUptiResult r = enter("cuptiGetDeviceId")) return r;
  std::lock_guard lock(g.m);
  auto it = g.contexts.find(context);
  if (it == g.contexts.end()) return CUPTI_ERROR_INVALID_CONTEXT;
  *device = it->second.device;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetStreamIdEx(CUcontext, CUstream stream, uint8_t per_thread, uint32_t* id) {
  *id = stream_id(stream, per_thread != 0);
  return enter("cuptiGetStreamIdEx");
}

/// NVTX's hand-over to CUPTI (librfinject's InitializeInjectionNvtx2 forwards it): the call is
/// counted, and its result is the injected failure, if any (the export table is not read).
CUptiResult CUPTIAPI cuptiNvtxInitialize2(void*) { return enter("cuptiNvtxInitialize2"); }

CUptiResult CUPTIAPI cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params* p) {
  if (CUptiResult r = enter("cuptiDeviceGetChipName")) return r;
  std::lock_guard lock(g.m);
  auto it = g.device_chips.find(static_cast<uint32_t>(p->deviceIndex));
  p->pChipName = keep(it == g.device_chips.end() ? g.chip : it->second);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params*) {
  return enter("cuptiProfilerInitialize");
}

CUptiResult CUPTIAPI cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params*) {
  return enter("cuptiProfilerDeInitialize");
}

CUptiResult CUPTIAPI cuptiProfilerDeviceSupported(CUpti_Profiler_DeviceSupported_Params* p) {
  if (CUptiResult r = enter("cuptiProfilerDeviceSupported")) return r;
  p->isSupported = CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  p->architecture = p->sli = p->vGpu = p->confidentialCompute = p->cmp = p->wsl =
      CUPTI_PROFILER_CONFIGURATION_SUPPORTED;
  std::lock_guard lock(g.m);
  auto it = g.support.find(static_cast<uint32_t>(p->cuDevice));
  if (it == g.support.end()) return CUPTI_SUCCESS;
  const std::map<std::string, CUpti_Profiler_Support_Level*> fields = {
      {"architecture", &p->architecture}, {"sli", &p->sli}, {"vGpu", &p->vGpu},
      {"confidentialCompute", &p->confidentialCompute}, {"cmp", &p->cmp}, {"wsl", &p->wsl}};
  for (const auto& [field, level] : it->second) {
    *fields.at(field) = level;
    if (level != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) p->isSupported = CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params* p) {
  p->counterAvailabilityImageSize = 0;  // no image: the host API then works from the chip alone
  return enter("cuptiProfilerGetCounterAvailability");
}

CUptiResult CUPTIAPI cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerEnable")) return r;
  std::lock_guard lock(g.m);
  if (g.profilers.count(p->ctx))
    return misuse("cuptiRangeProfilerEnable on a context whose Range Profiler is enabled",
                  CUPTI_ERROR_INVALID_OPERATION);
  auto* prof = new Profiler;  // leaked when the session forgets it (abandon)
  prof->ctx = p->ctx;
  g.profilers[p->ctx] = prof;
  p->pRangeProfilerObject = reinterpret_cast<CUpti_RangeProfiler_Object*>(prof);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerDisable")) return r;
  std::lock_guard lock(g.m);
  Profiler* prof = enabled(p->pRangeProfilerObject);
  if (!prof) return misuse("cuptiRangeProfilerDisable of an object not enabled", CUPTI_ERROR_INVALID_PARAMETER);
  check_current(prof->ctx);
  g.profilers.erase(prof->ctx);
  delete prof;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerGetCounterDataSize")) return r;
  std::lock_guard lock(g.m);
  if (!enabled(p->pRangeProfilerObject))
    return misuse("cuptiRangeProfilerGetCounterDataSize on an object not enabled", CUPTI_ERROR_INVALID_PARAMETER);
  p->counterDataSize = std::max<size_t>(512, kHeader + kRangeBytes * p->maxNumOfRanges);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataImageInitialize(
    CUpti_RangeProfiler_CounterDataImage_Initialize_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerCounterDataImageInitialize")) return r;
  std::lock_guard lock(g.m);
  if (!enabled(p->pRangeProfilerObject))
    return misuse("cuptiRangeProfilerCounterDataImageInitialize on an object not enabled",
                  CUPTI_ERROR_INVALID_PARAMETER);
  std::memset(p->pCounterData, 0, p->counterDataSize);
  std::memcpy(p->pCounterData, kSignature, sizeof kSignature);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerSetConfig")) return r;
  std::lock_guard lock(g.m);
  Profiler* prof = enabled(p->pRangeProfilerObject);
  if (!prof) return misuse("cuptiRangeProfilerSetConfig on an object not enabled", CUPTI_ERROR_INVALID_PARAMETER);
  if (prof->started) return misuse("cuptiRangeProfilerSetConfig between Start and Stop", CUPTI_ERROR_INVALID_OPERATION);
  prof->configured = true;
  prof->user_replay = p->replayMode == CUPTI_UserReplay;
  prof->image = p->pCounterDataImage;
  prof->image_size = p->counterDataImageSize;
  prof->max_ranges = p->maxRangesPerPass;
  prof->pass_index = 0;
  prof->ranges.clear();
  prof->decodable.clear();
  prof->dropped = 0;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerStart")) return r;
  std::lock_guard lock(g.m);
  Profiler* prof = enabled(p->pRangeProfilerObject);
  if (!prof) return misuse("cuptiRangeProfilerStart on an object not enabled", CUPTI_ERROR_INVALID_PARAMETER);
  if (!prof->configured) return misuse("cuptiRangeProfilerStart before SetConfig", CUPTI_ERROR_INVALID_OPERATION);
  if (prof->started) return misuse("cuptiRangeProfilerStart while started", CUPTI_ERROR_INVALID_OPERATION);
  if (prof->user_replay && prof->pass_index >= g.passes)
    return misuse("cuptiRangeProfilerStart after the last pass was submitted", CUPTI_ERROR_INVALID_OPERATION);
  check_current(prof->ctx);
  prof->started = true;
  prof->ranges.clear();
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerStop")) return r;
  std::lock_guard lock(g.m);
  Profiler* prof = enabled(p->pRangeProfilerObject);
  if (!prof) return misuse("cuptiRangeProfilerStop on an object not enabled", CUPTI_ERROR_INVALID_PARAMETER);
  if (!prof->started) return misuse("cuptiRangeProfilerStop without Start", CUPTI_ERROR_INVALID_OPERATION);
  check_current(prof->ctx);
  prof->started = false;
  prof->decodable = prof->ranges;
  if (prof->user_replay) {
    p->passIndex = prof->pass_index++;
    p->isAllPassSubmitted = prof->pass_index >= g.passes ? 1 : 0;
  } else {  // kernel replay: every pass ran inside each launch
    p->passIndex = g.passes - 1;
    p->isAllPassSubmitted = 1;
  }
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerDecodeData")) return r;
  std::lock_guard lock(g.m);
  Profiler* prof = enabled(p->pRangeProfilerObject);
  if (!prof) return misuse("cuptiRangeProfilerDecodeData on an object not enabled", CUPTI_ERROR_INVALID_PARAMETER);
  if (prof->started) return misuse("cuptiRangeProfilerDecodeData between Start and Stop", CUPTI_ERROR_INVALID_OPERATION);
  if (!prof->image) return misuse("cuptiRangeProfilerDecodeData before SetConfig", CUPTI_ERROR_INVALID_OPERATION);
  if (prof->user_replay && prof->pass_index < g.passes)
    return misuse("cuptiRangeProfilerDecodeData before every pass was submitted", CUPTI_ERROR_INVALID_OPERATION);
  check_current(prof->ctx);
  const auto n = static_cast<uint32_t>(prof->decodable.size());
  if (kHeader + size_t{n} * kRangeBytes > prof->image_size)
    return CUPTI_ERROR_INVALID_PARAMETER;
  std::memcpy(prof->image + 8, &n, 4);
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* at = prof->image + kHeader + size_t{i} * kRangeBytes;
    std::memcpy(at, &prof->decodable[i].correlation_id, 4);
    // Auto range names a range by its index in the image ("0", "1", ...), as recorded on an H100.
    std::strncpy(reinterpret_cast<char*>(at + 4), std::to_string(i).c_str(), 63);
  }
  p->numOfRangeDropped = prof->dropped;
  return CUPTI_SUCCESS;
}

// The host API's readers of a counter-data image, for the fake image above.
CUptiResult CUPTIAPI cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerGetCounterDataInfo")) return r;
  uint32_t n = 0;
  std::memcpy(&n, p->pCounterDataImage + 8, 4);
  p->numTotalRanges = n;
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiRangeProfilerCounterDataGetRangeInfo(
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params* p) {
  if (CUptiResult r = enter("cuptiRangeProfilerCounterDataGetRangeInfo")) return r;
  p->rangeName = reinterpret_cast<const char*>(p->pCounterDataImage + kHeader +
                                               p->rangeIndex * kRangeBytes + 4);
  return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params* p) {
  if (CUptiResult r = enter("cuptiProfilerHostEvaluateToGpuValues")) return r;
  uint32_t cid = 0;
  std::memcpy(&cid, p->pCounterDataImage + kHeader + p->rangeIndex * kRangeBytes, 4);
  for (size_t m = 0; m < p->numMetrics; ++m) p->pMetricValues[m] = value(cid, m);
  return CUPTI_SUCCESS;
}

}  // extern "C"
