// Named metric sets (timing, roofline, roofline-tensor, hierarchical) planned per chip with the
// profiler host API, so that `rfprof --list-sets --chip GH100` works without a GPU. The plan picks,
// per tensor precision and sparsity, the metric family (all-op or per-op names) that keeps the
// number of replay passes lowest for the whole set. Rules and measured pass counts: docs/metrics.md.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "rfprof/collector/host_metrics.h"
#include "rfprof/collector/metric_set_names.h"
#include "rfprof/collector/tensor_metrics.h"

namespace rf::collector {

/// The tensor metrics chosen for one precision and sparsity; their sum is that term's math ops.
struct TensorTerm {
  TensorPrecision precision = TensorPrecision::kFp16;
  TensorSparsity sparsity = TensorSparsity::kDense;  ///< kDense or kSparse
  std::string family;                ///< "all-op" (sm__ops_path_tensor_src_*) or "per-op" (..._op_<OP>_...)
  std::vector<std::string> metrics;  ///< full names with ".sum"
};

/// A metric set planned for one chip.
struct MetricSetPlan {
  std::string set;                   ///< set name, e.g. "roofline-tensor"
  std::string chip;                  ///< e.g. "GH100"
  std::vector<std::string> metrics;  ///< every metric to collect, in collection order
  size_t passes = 0;                 ///< replay passes (MetricHost::num_passes); 0 for "timing"
  std::vector<TensorTerm> tensor;    ///< tensor terms (roofline-tensor, hierarchical)
  std::vector<std::string> notes;    ///< substitutions and precisions the chip cannot count
};

/// Plans `set` for the host's chip:
///  - timing: no counters (kernel durations from activity records), 0 passes;
///  - roofline: default_metrics(), with dram__bytes_{read,write}.sum replaced by
///    dram__bytes_op_{read,write}.sum on chips that name them so (e.g. GB202);
///  - roofline-tensor: roofline less sm__inst_executed_pipe_tensor.sum (whose only use is to flag
///    tensor-core work a list without tensor metrics leaves uncounted) plus tensor math ops per
///    precision (FP64, TF32, FP16, BF16, FP8, INT8), dense and sparse apart where the chip
///    supports sparsity for that precision;
///  - hierarchical: roofline-tensor plus L1 global load/store bytes and L2 read/write sectors.
/// Throws MetricError for an unknown set name (listing the known ones), HostApiError if CUPTI fails.
MetricSetPlan plan_metric_set(const MetricHost& host, const std::string& set);

}  // namespace rf::collector
