// Metric planning and evaluation through CUPTI's profiler host API. Works with no GPU and no
// driver: validation, pass counting and configuration images need only a chip name (e.g. "GH100").
// This header includes no CUPTI header, so code above the seam (analyzer, launcher, tests) can use it.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rf::collector {

/// The default roofline metric set (docs/metrics.md): FP64/FP32/FP16 sass thread-instruction counts
/// (smsp__sass_thread_inst_executed_op_{fadd,fmul,ffma,hadd,hmul,hfma,dadd,dmul,dfma}_pred_on.sum,
/// instructions), dram__bytes_read.sum and dram__bytes_write.sum (bytes), gpu__time_duration.sum
/// (ns), lts__t_bytes.sum and l1tex__t_bytes.sum (bytes), and sm__inst_executed_pipe_tensor.sum
/// (warp instructions on the tensor pipe: no FLOP, but it tells rfanalyze that a launch did
/// tensor-core work this list does not count). 15 metrics, 2 passes on GV100, TU104, GA100, GH100,
/// AD102 and GB100 (measured with MetricHost::num_passes: sass metrics are collected by kernel
/// instrumentation and never share a pass with hardware counters). Never throws.
const std::vector<std::string>& default_metrics();

/// "sm__inst_executed_pipe_tensor.sum", the last of default_metrics(): warp-level instructions
/// executed on the tensor pipe (unit instruction). Left out of the roofline-tensor and
/// hierarchical sets, which count tensor math itself (metric_sets.h).
inline constexpr std::string_view kTensorPipeInstMetric = "sm__inst_executed_pipe_tensor.sum";

/// The packed FP32 thread instruction counts (FADD2, FMUL2, FFMA2: two FP32 values per
/// instruction), counted apart from FADD/FMUL/FFMA on the chips that have them; collected with the
/// roofline metrics there (analyzer: rf::analyzer::kPackedFp32Weights).
const std::vector<std::string>& packed_fp32_metrics();

/// Whether `chip` (e.g. "GB100", any case) has packed_fp32_metrics(): GB100, GB102 and GB110 under
/// CUPTI 13's host API (a test checks this list against it for every chip it knows). Never throws.
bool chip_has_packed_fp32(std::string_view chip) noexcept;

/// Splits a full metric name into base name and suffix at the first '.' after "__":
/// "dram__bytes_read.sum.per_second" -> {"dram__bytes_read", ".sum.per_second"}; a name without
/// a suffix -> {name, ""}. Base names may carry a dotted group prefix before "__"
/// ("LTS.TriageCompute.lts__average_t_sector_aperture_device"), never a '.' after it (checked for
/// every base metric of GH100). Never throws except std::bad_alloc.
std::pair<std::string, std::string> split_metric_name(const std::string& metric);

/// A metric list that the host API rejects. what() names every unknown metric and its close names.
class MetricError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failing host API call (bad chip name, CUPTI error, malformed counter-data image). what() names
/// the call or the input and CUPTI's message.
class HostApiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Kind of a base metric (CUpti_MetricType), which decides its suffixes: a counter has rollups
/// (.sum, .avg, .min, .max) and rates (.per_second, .pct_of_peak_sustained_elapsed, ...), a ratio
/// .ratio, .pct and .max_rate, a throughput .avg.pct_of_peak_sustained_elapsed and the like.
enum class MetricKind { kCounter, kRatio, kThroughput };

/// What CUPTI says about one metric (cuptiProfilerHostGetMetricProperties).
struct MetricProperties {
  std::string description;  ///< e.g. "# of bytes read from DRAM"
  std::string hw_unit;      ///< hardware unit counted, e.g. "dram", "smsp", "gpu"
  std::string dim_unit;     ///< unit of the value, e.g. "byte", "nanosecond", "instruction"
  MetricKind kind = MetricKind::kCounter;  ///< the base metric's kind
};

/// Evaluated values of one range of a counter-data image.
struct RangeValues {
  std::string range_name;      ///< name CUPTI gives the range (auto range: its index)
  std::vector<double> values;  ///< one per requested metric, in request order
};

/// The profiler host API for one chip. Not thread-safe; create one per thread that needs it.
class MetricHost {
 public:
  /// Initializes the host API for `chip` (e.g. "GH100", "GA100"). If `counter_availability_image`
  /// is non-empty (from a real device), configurations are restricted to available counters.
  /// Throws HostApiError for an unknown chip or a CUPTI failure.
  explicit MetricHost(std::string chip, std::vector<uint8_t> counter_availability_image = {});
  ~MetricHost();
  MetricHost(const MetricHost&) = delete;
  MetricHost& operator=(const MetricHost&) = delete;

  /// The chip name given to the constructor.
  const std::string& chip() const noexcept;
  /// Chips the host API supports (cuptiProfilerHostGetSupportedChips), e.g. "GV100" ... "GB20B".
  /// Throws HostApiError.
  static std::vector<std::string> supported_chips();

  /// Base metric names of this chip (e.g. "dram__bytes_read"), without rollup suffixes: counters,
  /// then ratios, then throughputs (cuptiProfilerHostGetBaseMetrics), fetched once. Some carry a
  /// group prefix as CUPTI lists them ("LTS.TriageCompute.lts__..."). Throws HostApiError.
  const std::vector<std::string>& base_metrics() const;
  /// Rollup/submetric suffixes CUPTI accepts after base metric `base` (cuptiProfilerHostGetSubMetrics),
  /// e.g. ".sum", ".avg.pct_of_peak_sustained_elapsed" for a counter, ".ratio" for a ratio; empty
  /// for a name that is not a base metric of this chip. Throws HostApiError only if CUPTI fails.
  std::vector<std::string> suffixes(const std::string& base) const;
  /// True if `metric` is a base metric of this chip followed by one of its rollup/submetric
  /// suffixes (cuptiProfilerHostGetSubMetrics), e.g. "dram__bytes_read.sum" or
  /// "sm__throughput.avg.pct_of_peak_sustained_elapsed". A bare base name is not a valid metric.
  /// Throws HostApiError only if CUPTI fails.
  bool is_valid(const std::string& metric) const;
  /// Up to `max` valid full metric names closest to `metric`, best first: Levenshtein distance of
  /// the base names plus that of the suffixes (the suffix starts at the first '.' after "__").
  /// Throws HostApiError only if CUPTI fails.
  std::vector<std::string> close_names(const std::string& metric, size_t max = 5) const;
  /// Returns if every metric is valid; otherwise throws MetricError with one line per unknown
  /// metric: `rfprof: unknown metric "<name>" for <chip>; did you mean: <up to 5 close names>`.
  void validate(const std::vector<std::string>& metrics) const;
  /// Description and units of a valid metric. Throws MetricError for an unknown metric.
  MetricProperties properties(const std::string& metric) const;
  /// Description, units and kind of base metric `base` (one of base_metrics(), e.g.
  /// "dram__bytes_read"): what ncu's --query-metrics prints. Throws MetricError when `base` is not
  /// a base metric of this chip, HostApiError if CUPTI fails.
  MetricProperties base_properties(const std::string& base) const;
  /// Number of replay passes needed to collect `metrics` together (GetNumOfPasses on the
  /// configuration image). Throws MetricError (unknown metric, empty list) or HostApiError.
  size_t num_passes(const std::vector<std::string>& metrics) const;
  /// Configuration image for cuptiRangeProfilerSetConfig (bytes; ConfigAddMetrics on a fresh host
  /// object, then GetConfigImage). Throws MetricError (unknown metric, empty list) or HostApiError.
  std::vector<uint8_t> config_image(const std::vector<std::string>& metrics) const;
  /// Evaluates every range of a decoded counter-data image: cuptiRangeProfilerGetCounterDataInfo,
  /// cuptiRangeProfilerCounterDataGetRangeInfo and cuptiProfilerHostEvaluateToGpuValues. Returns one
  /// RangeValues per range, in range order; values in each metric's own unit (properties()).
  /// Throws MetricError for unknown metrics or an empty list, HostApiError if the image is empty,
  /// lacks the counter-data signature, declares impossible sizes, or does not match the chip.
  /// CUPTI trusts the image's header: pass images written by CUPTI (cuptiRangeProfilerDecodeData),
  /// not bytes from an untrusted file.
  std::vector<RangeValues> evaluate(const std::vector<uint8_t>& counter_data_image,
                                    const std::vector<std::string>& metrics) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rf::collector
