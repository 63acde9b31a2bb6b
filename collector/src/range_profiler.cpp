// ContextProfiler: the CUPTI Range Profiler of one context (auto range, kernel replay).
// Call sequence follows cupti_range_profiler.h and NVIDIA's range_profiling sample; see
// range_profiler.h for when each step runs.
#include "range_profiler.h"
#include "host_library.h"

#include "rfprof/collector/overhead.h"

#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <chrono>
#include <utility>

namespace rf::collector {
namespace {

/// Why cuptiProfilerDeviceSupported refused a device, e.g. "MIG/vGPU profiling disabled".
std::string unsupported_reasons(const CUpti_Profiler_DeviceSupported_Params& p) {
  std::string r;
  auto add = [&](CUpti_Profiler_Support_Level level, const char* what) {
    if (level == CUPTI_PROFILER_CONFIGURATION_SUPPORTED) return;
    if (!r.empty()) r += ", ";
    r += what;
    if (level == CUPTI_PROFILER_CONFIGURATION_DISABLED) r += " (disabled)";
  };
  add(p.architecture, "architecture older than Volta");
  add(p.sli, "SLI");
  add(p.vGpu, "vGPU");
  add(p.confidentialCompute, "confidential computing");
  add(p.cmp, "crypto mining processor");
  add(p.wsl, "WSL");
  return r.empty() ? std::string("reason not reported") : r;
}

}  // namespace

void initialize_profiler_once() {
  static const CUptiResult result = [] {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kProfilerInitialize);
    CUpti_Profiler_Initialize_Params p{};
    p.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
    return cuptiProfilerInitialize(&p);
  }();
  if (result != CUPTI_SUCCESS) throw CuptiError(result, "cuptiProfilerInitialize", __FILE__, __LINE__);
}

std::string device_chip_name(uint32_t device_id) {
  CUpti_Device_GetChipName_Params p{};
  p.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  p.deviceIndex = device_id;
  RF_CUPTI_CALL(cuptiDeviceGetChipName(&p));
  return p.pChipName ? std::string(p.pChipName) : std::string();
}

ContextProfiler::ContextProfiler(CUcontext ctx, uint32_t device_id, std::string chip,
                                 std::vector<std::string> metrics, size_t max_ranges, ReplayMode replay)
    : ctx_(ctx),
      device_id_(device_id),
      chip_(std::move(chip)),
      metrics_(std::move(metrics)),
      max_ranges_(max_ranges == 0 ? 1 : max_ranges),
      replay_(replay) {
  for (const auto& m : metrics_) metric_ptrs_.push_back(m.c_str());
  load_host_library();
  initialize_profiler_once();

  CUpti_Profiler_DeviceSupported_Params supported{};
  supported.structSize = CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE;
  supported.cuDevice = static_cast<CUdevice>(device_id_);
  supported.api = CUPTI_PROFILER_RANGE_PROFILING;
  RF_CUPTI_CALL(cuptiProfilerDeviceSupported(&supported));
  if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED) {
    std::string what = "cuptiProfilerDeviceSupported: device " + std::to_string(device_id_) +
                       " not supported: " + unsupported_reasons(supported);
    throw CuptiError(CUPTI_ERROR_NOT_SUPPORTED, what.c_str(), __FILE__, __LINE__);
  }

  // Counter availability must be read before the range profiler is enabled on the context.
  std::vector<uint8_t> availability;
  {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kCounterAvailability);
    CUpti_Profiler_GetCounterAvailability_Params avail{};
    avail.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
    avail.ctx = ctx_;
    RF_CUPTI_CALL(cuptiProfilerGetCounterAvailability(&avail));
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    RF_CUPTI_CALL(cuptiProfilerGetCounterAvailability(&avail));
    availability.resize(avail.counterAvailabilityImageSize);
  }

  ScopedOverhead timed(process_overhead(), OverheadPhase::kConfigImage);
  host_ = std::make_unique<MetricHost>(chip_, std::move(availability));
  host_->validate(metrics_);
  config_image_ = host_->config_image(metrics_);
  num_passes_ = host_->num_passes(metrics_);
}

ContextProfiler::~ContextProfiler() { disable(); }

void ContextProfiler::start(uint32_t window_id) {
  if (started_ || stopped_for_good_ || abandoned()) return;
  if (!profiler_.get()) {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kEnable);
    profiler_ = RangeProfilerGuard(ctx_);
    counter_data_.clear();
  }
  if (counter_data_.empty()) {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kImageSetup);
    CUpti_RangeProfiler_GetCounterDataSize_Params size{};
    size.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
    size.pRangeProfilerObject = profiler_.get();
    size.pMetricNames = metric_ptrs_.data();
    size.numMetrics = metric_ptrs_.size();
    size.maxNumOfRanges = max_ranges_;
    size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_ranges_);
    RF_CUPTI_CALL(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data_.assign(size.counterDataSize, 0);
    initialize_image();
    set_config();
  }
  {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kStart);
    CUpti_RangeProfiler_Start_Params p{};
    p.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
    p.pRangeProfilerObject = profiler_.get();
    RF_CUPTI_CALL(cuptiRangeProfilerStart(&p));
  }
  started_ = true;
  stop_failed_ = false;  // Start succeeded: whatever the failed Stop left is over
  window_id_ = window_id;
  started_at_ns_ = static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count());
}

void ContextProfiler::initialize_image() {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params p{};
  p.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  p.pRangeProfilerObject = profiler_.get();
  p.counterDataSize = counter_data_.size();
  p.pCounterData = counter_data_.data();
  RF_CUPTI_CALL(cuptiRangeProfilerCounterDataImageInitialize(&p));
}

void ContextProfiler::set_config() {
  CUpti_RangeProfiler_SetConfig_Params p{};
  p.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  p.pRangeProfilerObject = profiler_.get();
  p.configSize = config_image_.size();
  p.pConfig = config_image_.data();
  p.counterDataImageSize = counter_data_.size();
  p.pCounterDataImage = counter_data_.data();
  p.range = CUPTI_AutoRange;  // one range per kernel
  // Kernel replay: CUPTI replays each kernel inside its launch, once per pass. User replay: each
  // Start/Stop runs the next pass; rfprof's windows (training steps) are the replays.
  p.replayMode = replay_ == ReplayMode::kStep ? CUPTI_UserReplay : CUPTI_KernelReplay;
  p.maxRangesPerPass = max_ranges_;
  p.numNestingLevels = 1;            // auto range: must be 1 (cupti_range_profiler.h)
  p.minNestingLevel = 1;
  p.passIndex = 0;
  p.targetNestingLevel = 1;
  RF_CUPTI_CALL(cuptiRangeProfilerSetConfig(&p));
}

DecodedImage ContextProfiler::stop_and_decode(bool prepare_next) {
  if (!started_) return DecodedImage{};
  const bool all_passes_submitted = stop_pass();
  // Decodes, then a fresh image for the next start(): the old ranges must not be decoded twice.
  DecodedImage out = decode_passes(prepare_next);
  out.all_passes_submitted = all_passes_submitted;
  return out;
}

bool ContextProfiler::stop_pass() {
  if (!started_) return false;
  started_ = false;
  ScopedOverhead timed(process_overhead(), OverheadPhase::kStop);
  CUpti_RangeProfiler_Stop_Params stop{};
  stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  stop.pRangeProfilerObject = profiler_.get();
  stop_failed_ = true;  // until Stop returns: disable() then stops before it disables
  RF_CUPTI_CALL(cuptiRangeProfilerStop(&stop));
  stop_failed_ = false;
  last_stop_pass_index_ = stop.passIndex;
  return stop.isAllPassSubmitted != 0;
}

DecodedImage ContextProfiler::decode_passes(bool prepare_next) {
  DecodedImage out;
  if (!profiler_.get() || counter_data_.empty()) return out;
  {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kDecode);
    CUpti_RangeProfiler_DecodeData_Params decode{};
    decode.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
    decode.pRangeProfilerObject = profiler_.get();
    RF_CUPTI_CALL(cuptiRangeProfilerDecodeData(&decode));
    out.dropped_ranges = decode.numOfRangeDropped;
  }
  {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kEvaluate);
    out.ranges = host_->evaluate(counter_data_, metrics_);
  }
  if (!prepare_next || abandoned()) return out;
  ScopedOverhead timed(process_overhead(), OverheadPhase::kImageSetup);
  try {
    initialize_image();
    set_config();
  } catch (const std::exception& e) {
    // The ranges above are decoded and good: they are returned, not lost with the next image. The
    // Range Profiler is disabled so that the next start() prepares everything again (Enable,
    // image, SetConfig); the launches of this image stay for the caller to map.
    out.prepare_error = e.what();
    profiler_.reset();
    counter_data_.clear();
  }
  return out;
}

void ContextProfiler::disable() noexcept {
  if (abandoned()) {  // the context is gone: no CUPTI call on it
    started_ = false;
    stop_failed_ = false;
    profiler_.forget();
    counter_data_.clear();
    launches_.reset();
    return;
  }
  if ((started_ || stop_failed_) && profiler_.get()) {  // a failed Stop is tried again: never Disable a started pass
    CUpti_RangeProfiler_Stop_Params stop{};
    stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
    stop.pRangeProfilerObject = profiler_.get();
    if (started_)
      RF_CUPTI_TRY(cuptiRangeProfilerStop(&stop));
    else
      (void)cuptiRangeProfilerStop(&stop);  // the failed Stop again: its failure was said already
  }
  started_ = false;
  stop_failed_ = false;
  if (profiler_.get()) {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kDisable);
    profiler_.reset();
  }
  counter_data_.clear();
  launches_.reset();
}

}  // namespace rf::collector
