// MetricHost: CUPTI's profiler host API (cupti_profiler_host.h) for one chip. Needs no GPU and no
// driver. Facts this file relies on, measured with CUPTI 13.0 (docs/metrics.md):
//   - cuptiProfilerHostConfigAddMetrics accumulates metrics in the host object, and one rejected
//     call leaves the object failing every later call (CUPTI_ERROR_UNKNOWN). Configuration images
//     are therefore built on a fresh host object, after validation.
//   - cuptiRangeProfilerGetCounterDataInfo and cuptiProfilerHostEvaluateToGpuValues trust the
//     image's header: random bytes crash them (SIGSEGV), and a range index past the last range
//     "succeeds" with NaN. evaluate() checks what it can before calling them.
#include "rfprof/collector/host_metrics.h"

#include "rfprof/collector/edit_distance.h"

#include <cctype>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "cupti_call.h"
#include "host_library.h"

namespace rf::collector {
namespace {

/// Throws HostApiError "rfprof: <call> failed for chip <chip>: <CUPTI message>" unless success.
void host_call(CUptiResult result, const char* call, const std::string& chip) {
  if (result == CUPTI_SUCCESS) return;
  throw HostApiError("rfprof: " + std::string(call) + " failed for chip " + chip + ": " +
                     cupti_result_string(result));
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}


/// Owns one CUpti_Profiler_Host_Object (cuptiProfilerHostInitialize / Deinitialize).
class HostObject {
 public:
  HostObject(const std::string& chip, const std::vector<uint8_t>& availability) {
    load_host_library();
    CUpti_Profiler_Host_Initialize_Params p{};
    p.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
    p.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    p.pChipName = chip.c_str();
    p.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
    host_call(cuptiProfilerHostInitialize(&p), "cuptiProfilerHostInitialize", chip);
    object_ = p.pHostObject;
  }
  ~HostObject() {
    CUpti_Profiler_Host_Deinitialize_Params p{};
    p.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE;
    p.pHostObject = object_;
    (void)cuptiProfilerHostDeinitialize(&p);  // nothing useful to do if it fails
  }
  HostObject(const HostObject&) = delete;
  HostObject& operator=(const HostObject&) = delete;
  CUpti_Profiler_Host_Object* get() const noexcept { return object_; }

 private:
  CUpti_Profiler_Host_Object* object_ = nullptr;
};

std::vector<const char*> c_strings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  out.reserve(names.size());
  for (const auto& n : names) out.push_back(n.c_str());
  return out;
}

/// cuptiProfilerHostConfigAddMetrics of `metrics` on `host`; returns CUPTI's result.
CUptiResult add_metrics(const HostObject& host, const std::vector<std::string>& metrics) {
  auto names = c_strings(metrics);
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
  add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  add.pHostObject = host.get();
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  return cuptiProfilerHostConfigAddMetrics(&add);
}

/// Smallest image accepted by evaluate(). In counter-data images initialized by CUPTI 13.0's
/// libnvperf_host (the format cuptiRangeProfilerGetCounterDataInfo reads) the header tables alone
/// span about 340 bytes and the smallest whole image we made (no metric, one range) over 2 KB.
constexpr size_t kMinCounterDataBytes = 512;
/// Every counter-data image starts with this signature (NVIDIA's counter-data format, CUPTI 13.0).
constexpr char kCounterDataSignature[8] = {'L', 'O', 'P', 'D', 'A', 'T', 'A', '\0'};

}  // namespace

std::pair<std::string, std::string> split_metric_name(const std::string& metric) {
  const size_t underscores = metric.find("__");
  const size_t dot = metric.find('.', underscores == std::string::npos ? 0 : underscores + 2);
  if (dot == std::string::npos) return {metric, std::string()};
  return {metric.substr(0, dot), metric.substr(dot)};
}

struct MetricHost::Impl {
  std::string chip;
  std::vector<uint8_t> availability;
  std::optional<HostObject> host;  // for queries; never given metrics
  std::vector<std::string> bases;  // empty until base_metrics() runs
  std::unordered_map<std::string, CUpti_MetricType> base_type;
  std::unordered_map<std::string, std::vector<std::string>> suffixes;  // per base, as CUPTI lists

  void load_bases();
  const std::vector<std::string>& suffixes_of(const std::string& base, CUpti_MetricType type);
  std::vector<uint8_t> config_image(const std::vector<std::string>& metrics) const;
  /// cuptiProfilerHostGetMetricProperties for a base or full metric name CUPTI knows.
  MetricProperties properties_of(const std::string& metric) const;
};

void MetricHost::Impl::load_bases() {
  if (!bases.empty()) return;
  std::vector<std::string> names;  // filled completely before it becomes the cache
  std::unordered_map<std::string, CUpti_MetricType> types;
  for (auto type : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    CUpti_Profiler_Host_GetBaseMetrics_Params p{};
    p.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
    p.pHostObject = host->get();
    p.metricType = type;
    host_call(cuptiProfilerHostGetBaseMetrics(&p), "cuptiProfilerHostGetBaseMetrics", chip);
    for (size_t i = 0; i < p.numMetrics; ++i) {
      if (!p.ppMetricNames || !p.ppMetricNames[i]) continue;
      std::string name(p.ppMetricNames[i]);
      if (types.emplace(name, type).second) names.push_back(std::move(name));
    }
  }
  base_type = std::move(types);
  bases = std::move(names);
}

const std::vector<std::string>& MetricHost::Impl::suffixes_of(const std::string& base,
                                                               CUpti_MetricType type) {
  auto found = suffixes.find(base);
  if (found != suffixes.end()) return found->second;
  CUpti_Profiler_Host_GetSubMetrics_Params p{};
  p.structSize = CUpti_Profiler_Host_GetSubMetrics_Params_STRUCT_SIZE;
  p.pHostObject = host->get();
  p.metricType = type;
  p.pMetricName = base.c_str();
  host_call(cuptiProfilerHostGetSubMetrics(&p), "cuptiProfilerHostGetSubMetrics", chip);
  std::vector<std::string> list;
  for (size_t i = 0; p.ppSubMetrics && i < p.numOfSubmetrics; ++i)
    if (p.ppSubMetrics[i]) list.emplace_back(p.ppSubMetrics[i]);
  return suffixes.emplace(base, std::move(list)).first->second;
}

std::vector<uint8_t> MetricHost::Impl::config_image(const std::vector<std::string>& metrics) const {
  HostObject fresh(chip, availability);
  const CUptiResult added = add_metrics(fresh, metrics);
  if (added != CUPTI_SUCCESS) {
    // Valid names CUPTI still refuses (e.g. ctc__*.sum.pct_of_peak_sustained_elapsed on GH100:
    // CUPTI_ERROR_NOT_SUPPORTED): find them, one fresh host object per metric.
    std::vector<std::string> lines;
    for (const auto& m : metrics) {
      HostObject alone(chip, availability);
      const CUptiResult r = add_metrics(alone, {m});
      if (r != CUPTI_SUCCESS)
        lines.push_back("rfprof: metric \"" + m + "\" cannot be collected by the range profiler on " +
                        chip + " (cuptiProfilerHostConfigAddMetrics: " + cupti_result_string(r) + ")");
    }
    if (!lines.empty()) throw MetricError(join(lines, "\n"));
    host_call(added, "cuptiProfilerHostConfigAddMetrics", chip);
  }

  CUpti_Profiler_Host_GetConfigImageSize_Params size{};
  size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  size.pHostObject = fresh.get();
  host_call(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize", chip);

  std::vector<uint8_t> image(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params get{};
  get.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
  get.pHostObject = fresh.get();
  get.configImageSize = image.size();
  get.pConfigImage = image.data();
  host_call(cuptiProfilerHostGetConfigImage(&get), "cuptiProfilerHostGetConfigImage", chip);
  return image;
}

const std::vector<std::string>& default_metrics() {
  static const std::vector<std::string> metrics = {
      "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_hmul_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
      "dram__bytes_read.sum",
      "dram__bytes_write.sum",
      "gpu__time_duration.sum",
      "lts__t_bytes.sum",
      "l1tex__t_bytes.sum",
      // Tensor-pipe instructions: no FLOP, but they show tensor-core work the list above misses
      // (rfanalyze's uncounted_tensor_work); a hardware counter, still 2 passes (docs/metrics.md).
      "sm__inst_executed_pipe_tensor.sum",  // kTensorPipeInstMetric
  };
  return metrics;
}

const std::vector<std::string>& packed_fp32_metrics() {
  static const std::vector<std::string> metrics = {
      "smsp__sass_thread_inst_executed_op_fadd2_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_fmul2_pred_on.sum",
      "smsp__sass_thread_inst_executed_op_ffma2_pred_on.sum",
  };
  return metrics;
}

bool chip_has_packed_fp32(std::string_view chip) noexcept {
  const auto is = [&](std::string_view name) {
    if (chip.size() != name.size()) return false;
    for (size_t i = 0; i < name.size(); ++i)
      if (std::toupper(static_cast<unsigned char>(chip[i])) != name[i]) return false;
    return true;
  };
  return is("GB100") || is("GB102") || is("GB110");
}

MetricHost::MetricHost(std::string chip, std::vector<uint8_t> counter_availability_image)
    : impl_(std::make_unique<Impl>()) {
  impl_->chip = std::move(chip);
  impl_->availability = std::move(counter_availability_image);
  // With an availability image CUPTI may know chips newer than its list; without one, an unknown
  // name gets a message listing the supported chips rather than CUPTI_ERROR_INVALID_CHIP_NAME.
  if (impl_->availability.empty()) {
    const auto chips = supported_chips();
    if (std::find(chips.begin(), chips.end(), impl_->chip) == chips.end())
      throw HostApiError("rfprof: unknown chip \"" + impl_->chip +
                         "\" for the CUPTI profiler host API; supported chips: " + join(chips, ", "));
  }
  impl_->host.emplace(impl_->chip, impl_->availability);
}

MetricHost::~MetricHost() = default;

const std::string& MetricHost::chip() const noexcept { return impl_->chip; }

std::vector<std::string> MetricHost::supported_chips() {
  load_host_library();
  CUpti_Profiler_Host_GetSupportedChips_Params p{};
  p.structSize = CUpti_Profiler_Host_GetSupportedChips_Params_STRUCT_SIZE;
  host_call(cuptiProfilerHostGetSupportedChips(&p), "cuptiProfilerHostGetSupportedChips", "(any)");
  std::vector<std::string> chips;
  for (size_t i = 0; i < p.numChips; ++i)
    if (p.ppChipNames && p.ppChipNames[i]) chips.emplace_back(p.ppChipNames[i]);
  return chips;
}

const std::vector<std::string>& MetricHost::base_metrics() const {
  impl_->load_bases();
  return impl_->bases;
}

std::vector<std::string> MetricHost::suffixes(const std::string& base) const {
  impl_->load_bases();
  const auto type = impl_->base_type.find(base);
  if (type == impl_->base_type.end()) return {};
  return impl_->suffixes_of(base, type->second);
}

bool MetricHost::is_valid(const std::string& metric) const {
  impl_->load_bases();
  const auto [base, suffix] = split_metric_name(metric);
  const auto type = impl_->base_type.find(base);
  if (suffix.empty() || type == impl_->base_type.end()) return false;
  const auto& valid = impl_->suffixes_of(base, type->second);
  return std::find(valid.begin(), valid.end(), suffix) != valid.end();
}

std::vector<std::string> MetricHost::close_names(const std::string& metric, size_t max) const {
  if (max == 0) return {};
  impl_->load_bases();
  const auto [base, suffix] = split_metric_name(metric);
  // Rank base names first; only the best few need their suffix lists from CUPTI.
  std::vector<std::pair<size_t, const std::string*>> ranked;
  ranked.reserve(impl_->bases.size());
  for (const auto& b : impl_->bases) ranked.emplace_back(edit_distance(base, b), &b);
  const size_t keep = max >= ranked.size() ? ranked.size() : std::min(ranked.size(), 4 * max + 8);
  std::partial_sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(keep), ranked.end(),
                    [](const auto& x, const auto& y) {
                      return std::tie(x.first, *x.second) < std::tie(y.first, *y.second);
                    });

  // Each kept base contributes its suffixes nearest to the query's suffix.
  std::vector<std::pair<size_t, std::string>> candidates;
  for (size_t i = 0; i < keep; ++i) {
    const std::string& b = *ranked[i].second;
    const auto& list = impl_->suffixes_of(b, impl_->base_type.at(b));
    size_t best = std::string::npos;
    for (const auto& s : list) best = std::min(best, edit_distance(suffix, s));
    for (const auto& s : list)
      if (edit_distance(suffix, s) == best) candidates.emplace_back(ranked[i].first + best, b + s);
  }
  // Best first; among equals, ".sum" (the rollup every rfprof formula uses), then by name.
  auto rank = [](const std::pair<size_t, std::string>& c) {
    const bool sum = c.second.size() >= 4 && c.second.compare(c.second.size() - 4, 4, ".sum") == 0;
    return std::make_tuple(c.first, !sum, std::cref(c.second));
  };
  std::sort(candidates.begin(), candidates.end(),
            [&](const auto& x, const auto& y) { return rank(x) < rank(y); });
  std::vector<std::string> out;
  for (auto& c : candidates) {
    if (out.size() == max) break;
    out.push_back(std::move(c.second));
  }
  return out;
}

void MetricHost::validate(const std::vector<std::string>& metrics) const {
  std::vector<std::string> lines;
  for (const auto& m : metrics) {
    if (is_valid(m)) continue;
    std::string line = "rfprof: unknown metric \"" + m + "\" for " + impl_->chip;
    const auto close = close_names(m, 5);
    if (!close.empty()) line += "; did you mean: " + join(close, ", ");
    lines.push_back(std::move(line));
  }
  if (!lines.empty()) throw MetricError(join(lines, "\n"));
}

MetricProperties MetricHost::Impl::properties_of(const std::string& metric) const {
  CUpti_Profiler_Host_GetMetricProperties_Params p{};
  p.structSize = CUpti_Profiler_Host_GetMetricProperties_Params_STRUCT_SIZE;
  p.pHostObject = host->get();
  p.pMetricName = metric.c_str();
  host_call(cuptiProfilerHostGetMetricProperties(&p), "cuptiProfilerHostGetMetricProperties", chip);
  auto text = [](const char* s) { return s ? std::string(s) : std::string(); };
  MetricKind kind = MetricKind::kCounter;
  if (p.metricType == CUPTI_METRIC_TYPE_RATIO) kind = MetricKind::kRatio;
  if (p.metricType == CUPTI_METRIC_TYPE_THROUGHPUT) kind = MetricKind::kThroughput;
  return {text(p.pDescription), text(p.pHwUnit), text(p.pDimUnit), kind};
}

MetricProperties MetricHost::properties(const std::string& metric) const {
  validate({metric});
  return impl_->properties_of(metric);
}

MetricProperties MetricHost::base_properties(const std::string& base) const {
  impl_->load_bases();
  if (impl_->base_type.find(base) == impl_->base_type.end())
    throw MetricError("rfprof: \"" + base + "\" is not a base metric of " + impl_->chip);
  return impl_->properties_of(base);
}

std::vector<uint8_t> MetricHost::config_image(const std::vector<std::string>& metrics) const {
  if (metrics.empty())
    throw MetricError("rfprof: empty metric list for " + impl_->chip + "; expected at least one metric");
  validate(metrics);
  return impl_->config_image(metrics);
}

size_t MetricHost::num_passes(const std::vector<std::string>& metrics) const {
  auto image = config_image(metrics);
  CUpti_Profiler_Host_GetNumOfPasses_Params p{};
  p.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
  p.configImageSize = image.size();
  p.pConfigImage = image.data();
  host_call(cuptiProfilerHostGetNumOfPasses(&p), "cuptiProfilerHostGetNumOfPasses", impl_->chip);
  return p.numOfPasses;
}

std::vector<RangeValues> MetricHost::evaluate(const std::vector<uint8_t>& counter_data_image,
                                              const std::vector<std::string>& metrics) const {
  if (metrics.empty())
    throw MetricError("rfprof: empty metric list for " + impl_->chip + "; expected at least one metric");
  validate(metrics);
  const std::string what = "counter-data image (" + std::to_string(counter_data_image.size()) +
                           " bytes) for chip " + impl_->chip;
  if (counter_data_image.empty())
    throw HostApiError("rfprof: " + what + " is empty; expected an image from cuptiRangeProfilerDecodeData");
  if (counter_data_image.size() < kMinCounterDataBytes)
    throw HostApiError("rfprof: " + what + " is too small; expected at least " +
                       std::to_string(kMinCounterDataBytes) + " bytes from cuptiRangeProfilerDecodeData");
  if (std::memcmp(counter_data_image.data(), kCounterDataSignature, sizeof kCounterDataSignature) != 0)
    throw HostApiError("rfprof: " + what + " lacks the counter-data signature \"LOPDATA\"; "
                       "expected an image written by cuptiRangeProfilerDecodeData");

  CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
  info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  info.pCounterDataImage = counter_data_image.data();
  info.counterDataImageSize = counter_data_image.size();
  host_call(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo",
            impl_->chip);
  // Each range stores at least one byte per metric: more ranges than bytes is a corrupt header.
  if (info.numTotalRanges > counter_data_image.size())
    throw HostApiError("rfprof: " + what + " declares " + std::to_string(info.numTotalRanges) +
                       " ranges; the image is corrupt");

  auto names = c_strings(metrics);
  std::vector<RangeValues> out(info.numTotalRanges);
  for (size_t r = 0; r < out.size(); ++r) {
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range{};
    range.structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE;
    range.pCounterDataImage = counter_data_image.data();
    range.counterDataImageSize = counter_data_image.size();
    range.rangeIndex = r;
    range.rangeDelimiter = "/";
    host_call(cuptiRangeProfilerCounterDataGetRangeInfo(&range),
              "cuptiRangeProfilerCounterDataGetRangeInfo", impl_->chip);
    if (range.rangeName) out[r].range_name = range.rangeName;

    out[r].values.assign(metrics.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{};
    eval.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
    eval.pHostObject = impl_->host->get();
    eval.pCounterDataImage = counter_data_image.data();
    eval.counterDataImageSize = counter_data_image.size();
    eval.rangeIndex = r;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = out[r].values.data();
    const CUptiResult result = cuptiProfilerHostEvaluateToGpuValues(&eval);
    if (result != CUPTI_SUCCESS)
      throw HostApiError("rfprof: cuptiProfilerHostEvaluateToGpuValues failed on range " +
                         std::to_string(r) + " of the " + what + ": " + cupti_result_string(result) +
                         " (image malformed, recorded on another chip, or without these metrics?)");
  }
  return out;
}

}  // namespace rf::collector
