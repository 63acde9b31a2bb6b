// Metric set planning per chip (rfprof/collector/metric_sets.h).
#include "rfprof/collector/metric_sets.h"

#include <algorithm>
#include <map>
#include <set>

namespace rf::collector {
namespace {

constexpr TensorPrecision kPrecisions[] = {TensorPrecision::kFp64, TensorPrecision::kTf32,
                                           TensorPrecision::kFp16, TensorPrecision::kBf16,
                                           TensorPrecision::kFp8,  TensorPrecision::kInt8};

/// The tensor metrics of a chip with one precision, grouped by op ("" = the all-op names).
using OpGroups = std::map<std::string, std::vector<TensorMetric>>;

/// FP8 from the combined "fp4_fp6_fp8" source only where the chip has no plain "fp8" one, with a
/// note (`notes`) when it is used.
OpGroups tensor_metrics_of(const MetricHost& host, TensorPrecision p, std::vector<std::string>& notes) {
  OpGroups groups, combined;
  for (const auto& base : host.base_metrics()) {
    auto t = parse_tensor_metric(base);
    if (t && t->precision == p) (t->with_fp4_fp6 ? combined : groups)[t->op].push_back(*t);
  }
  if (groups.empty() && !combined.empty()) {
    notes.push_back("fp8 tensor math on " + host.chip() +
                    " is counted by CUPTI's fp4_fp6_fp8 source, FP4 and FP6 operands of the same "
                    "instructions included, and reported as FP8 (against the FP8 peak)");
    return combined;
  }
  return groups;
}

/// The names of one op group that count `sparsity` (kDense or kSparse) math: the split names when
/// the group has them, else (dense only, and only when the chip has no sparse math for this
/// precision at all) the unsplit names. Per sparsity, names without a destination type are
/// preferred to the per-destination ones, which are summed. Empty when the group cannot count it.
std::vector<std::string> pick(const std::vector<TensorMetric>& group, TensorSparsity sparsity,
                              bool chip_has_sparse) {
  auto select = [&](TensorSparsity s) {
    std::vector<std::string> no_dst, with_dst;
    for (const auto& t : group)
      if (t.sparsity == s) (t.dst.empty() ? no_dst : with_dst).push_back(t.base + ".sum");
    return no_dst.empty() ? with_dst : no_dst;
  };
  std::vector<std::string> names = select(sparsity);
  if (names.empty() && sparsity == TensorSparsity::kDense && !chip_has_sparse)
    names = select(TensorSparsity::kBoth);
  std::sort(names.begin(), names.end());
  return names;
}

/// Alternatives for one tensor term: the all-op family, then the per-op family (every op group
/// must be able to count the term, else the family is not an alternative).
std::vector<TensorTerm> alternatives(const OpGroups& groups, TensorPrecision p, TensorSparsity s) {
  bool chip_has_sparse = false;
  for (const auto& [op, g] : groups)
    for (const auto& t : g) chip_has_sparse |= t.sparsity == TensorSparsity::kSparse;
  std::vector<TensorTerm> out;
  if (auto it = groups.find(""); it != groups.end()) {
    auto names = pick(it->second, s, chip_has_sparse);
    if (!names.empty()) out.push_back({p, s, "all-op", names});
  }
  TensorTerm per_op{p, s, "per-op", {}};
  bool complete = false;
  for (const auto& [op, g] : groups) {
    if (op.empty()) continue;
    auto names = pick(g, s, chip_has_sparse);
    if (names.empty()) {
      complete = false;
      break;
    }
    complete = true;
    per_op.metrics.insert(per_op.metrics.end(), names.begin(), names.end());
  }
  if (complete) out.push_back(std::move(per_op));
  return out;
}

std::vector<std::string> roofline_metrics(const MetricHost& host, std::vector<std::string>& notes) {
  std::vector<std::string> out;
  for (const auto& m : default_metrics()) {
    if (host.is_valid(m)) {
      out.push_back(m);
      continue;
    }
    // GB202 and later consumer chips name the DRAM byte counters dram__bytes_op_{read,write}.
    std::string alt = m;
    if (auto pos = alt.find("dram__bytes_"); pos == 0) alt.insert(12, "op_");
    if (alt != m && host.is_valid(alt)) {
      out.push_back(alt);
      notes.push_back(m + " is named " + alt + " on " + host.chip());
    } else {
      notes.push_back(m + " does not exist on " + host.chip() + " (left out)");
    }
  }
  // Packed FP32 (FADD2/FMUL2/FFMA2) where the chip counts it apart: FP32 FLOP are short without it.
  for (const auto& m : packed_fp32_metrics())
    if (host.is_valid(m)) out.push_back(m);
  return out;
}

std::vector<std::string> concat(const std::vector<std::string>& base, const std::vector<TensorTerm>& terms) {
  std::vector<std::string> out = base;
  for (const auto& t : terms) out.insert(out.end(), t.metrics.begin(), t.metrics.end());
  return out;
}

/// Chooses one alternative per term, minimizing the passes of base + all terms: starts from the
/// first alternative of each and switches a term whenever another alternative lowers the count,
/// until no switch helps (each num_passes call builds a configuration image: milliseconds).
std::vector<TensorTerm> choose(const MetricHost& host, const std::vector<std::string>& base,
                               const std::vector<std::vector<TensorTerm>>& alts, size_t& passes) {
  std::vector<size_t> pick_index(alts.size(), 0);
  auto build = [&]() {
    std::vector<TensorTerm> terms;
    for (size_t i = 0; i < alts.size(); ++i) terms.push_back(alts[i][pick_index[i]]);
    return terms;
  };
  passes = host.num_passes(concat(base, build()));
  for (bool improved = true; improved;) {
    improved = false;
    for (size_t i = 0; i < alts.size(); ++i) {
      for (size_t a = 0; a < alts[i].size(); ++a) {
        if (a == pick_index[i]) continue;
        const size_t old = pick_index[i];
        pick_index[i] = a;
        const size_t p = host.num_passes(concat(base, build()));
        if (p < passes) {
          passes = p;
          improved = true;
        } else {
          pick_index[i] = old;
        }
      }
    }
  }
  return build();
}

}  // namespace

MetricSetPlan plan_metric_set(const MetricHost& host, const std::string& set) {
  const auto& names = metric_set_names();
  if (std::find(names.begin(), names.end(), set) == names.end()) {
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw MetricError("rfprof: unknown metric set \"" + set + "\"; known sets: " + known);
  }
  MetricSetPlan plan;
  plan.set = set;
  plan.chip = host.chip();
  if (set == "timing") return plan;

  std::vector<std::string> base = roofline_metrics(host, plan.notes);
  // The tensor-pipe instruction count only says that tensor-core work went uncounted; the tensor
  // sets count it, so they leave it out (roofline-tensor stays the 35 metrics an H100 reported).
  if (set != "roofline") std::erase(base, std::string(kTensorPipeInstMetric));
  if (set == "hierarchical")
    for (const char* m : {"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum",
                          "lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum"}) {
      if (host.is_valid(m)) base.push_back(m);
      else plan.notes.push_back(std::string(m) + " does not exist on " + host.chip() + " (left out)");
    }
  if (set == "roofline") {
    plan.metrics = base;
    plan.passes = host.num_passes(base);
    return plan;
  }

  std::vector<std::vector<TensorTerm>> alts;
  for (TensorPrecision p : kPrecisions) {
    const OpGroups groups = tensor_metrics_of(host, p, plan.notes);
    if (groups.empty()) {
      plan.notes.push_back(std::string("no ") + precision_name(p) + " tensor math on " + host.chip());
      continue;
    }
    for (TensorSparsity s : {TensorSparsity::kDense, TensorSparsity::kSparse}) {
      auto a = alternatives(groups, p, s);
      if (!a.empty()) alts.push_back(std::move(a));
      else if (s == TensorSparsity::kDense)
        plan.notes.push_back(std::string("no way to count dense ") + precision_name(p) + " tensor math on " + host.chip());
    }
  }
  plan.tensor = choose(host, base, alts, plan.passes);
  plan.metrics = concat(base, plan.tensor);
  return plan;
}

}  // namespace rf::collector
