// Per-op / per-layer breakdown from emit_nvtx ranges (rfprof/analyzer/ops.h).
#include "rfprof/analyzer/ops.h"

#include <charconv>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {

std::optional<OpRange> parse_op_range(std::string_view name) {
  // "[autograd::engine::evaluate_function: ]OP, [stashed ]seq[ ]=[ ]DIGITS[,...]", OP without a
  // comma. Parsed by hand: libstdc++'s std::regex recursed once per character here, and a range
  // name of some 60,000 characters overflowed the stack (found 2026-11-23 reviewing fuzz_analysis).
  static constexpr std::string_view kEvaluate = "autograd::engine::evaluate_function: ";
  OpRange r;
  std::string_view s = name;
  const bool evaluate = s.starts_with(kEvaluate);
  if (evaluate) s.remove_prefix(kEvaluate.size());
  const size_t comma = s.find(',');
  if (comma == 0 || comma == std::string_view::npos) return std::nullopt;
  std::string_view op = s.substr(0, comma);
  s.remove_prefix(comma);
  if (!s.starts_with(", ")) return std::nullopt;
  s.remove_prefix(2);
  const bool stashed = s.starts_with("stashed ");
  if (stashed) s.remove_prefix(8);
  if (!s.starts_with("seq")) return std::nullopt;
  s.remove_prefix(3);
  if (s.starts_with(' ')) s.remove_prefix(1);
  if (!s.starts_with('=')) return std::nullopt;
  s.remove_prefix(1);
  if (s.starts_with(' ')) s.remove_prefix(1);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), r.seq);
  // No digits, a number past uint64 (not a sequence number PyTorch gives), or text after it.
  if (ec != std::errc() || end == s.data() || (end != s.data() + s.size() && *end != ',')) return std::nullopt;
  r.op = std::string(op);
  r.backward = evaluate || stashed || r.op.find("Backward") != std::string::npos;
  return r;
}

std::optional<double> OpSums::flop_ratio() const {
  auto f = forward.total_flop.value(), b = backward.total_flop.value();
  if (!f || !b || *f == 0) return std::nullopt;
  return *b / *f;
}

std::optional<double> OpSums::time_ratio() const {
  if (forward.duration_ns == 0) return std::nullopt;
  return static_cast<double>(backward.duration_ns) / static_cast<double>(forward.duration_ns);
}

void OpBreakdown::add(const KernelRow& row, const std::vector<std::string>& path) {
  for (size_t i = 0; i < path.size(); ++i) {
    auto op = parse_op_range(path[i]);
    if (!op) continue;  // the outermost op range decides
    // path[0, i) holds no op range (path[i] is the outermost): the innermost of them is the layer.
    std::string layer = i > 0 ? path[i - 1] : std::string();
    if (op->backward) {
      overall_.backward.add(row);
      any_ = true;
      if (auto it = forward_by_seq_.find(op->seq); it != forward_by_seq_.end()) {
        by_op_[it->second.op].backward.add(row);
        by_layer_[it->second.layer].backward.add(row);
        return;
      }
      // Its forward op not seen yet: matched at the trace's end (the autograd thread's launches
      // may come before the main thread's forward ones: rows come in join order). A forward op
      // seen later cannot take a seq already matched: the first forward op with it keeps it.
      pending_[PendingKey{op->seq, op->op, std::move(layer)}].add(row);
      return;
    }
    // Every forward op range on the path is the outermost op's: PyTorch numbers each op that
    // records autograd (aten::linear's aten::t has its seq, the aten::addmm inside it the next
    // one, which AddmmBackward0 carries), so each seq inside names this op and layer.
    forward_by_seq_.try_emplace(op->seq, Forward{op->op, layer});
    for (size_t j = i + 1; j < path.size(); ++j)
      if (auto inner = parse_op_range(path[j]); inner && !inner->backward)
        forward_by_seq_.try_emplace(inner->seq, Forward{op->op, layer});
    by_op_[op->op].forward.add(row);
    by_layer_[layer].forward.add(row);
    overall_.forward.add(row);
    any_ = true;
    return;
  }
}

void OpBreakdown::end_trace() {
  for (auto& [k, sums] : pending_) {
    const std::string* key = &k.op;
    const std::string* layer = &k.layer;
    if (auto it = forward_by_seq_.find(k.seq); it != forward_by_seq_.end()) {
      key = &it->second.op;
      layer = &it->second.layer;
    }
    by_op_[*key].backward.merge(sums);
    by_layer_[*layer].backward.merge(sums);
  }
  pending_.clear();
}

void OpBreakdown::write_csv(std::ostream& out, const std::string& key_column, const std::map<std::string, OpSums>& sums) {
  write_csv_row(out, {key_column, "forward_launches", "forward_duration_ns", "forward_flop", "forward_dram_bytes",
                      "backward_launches", "backward_duration_ns", "backward_flop", "backward_dram_bytes",
                      "flop_ratio_backward_to_forward", "time_ratio_backward_to_forward"});
  for (const auto& [key, s] : sums)
    write_csv_row(out, {key, std::to_string(s.forward.launches), std::to_string(s.forward.duration_ns),
                        format_optional(s.forward.total_flop.value()), format_optional(s.forward.dram_bytes.value()),
                        std::to_string(s.backward.launches), std::to_string(s.backward.duration_ns),
                        format_optional(s.backward.total_flop.value()), format_optional(s.backward.dram_bytes.value()),
                        format_optional(s.flop_ratio()), format_optional(s.time_ratio())});
}

nlohmann::ordered_json OpBreakdown::summary(
    const std::function<nlohmann::ordered_json(const Aggregate&)>& aggregate) const {
  using json = nlohmann::ordered_json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  auto sums = [&](const OpSums& s) {
    return json{{"forward", aggregate(s.forward)},
                {"backward", aggregate(s.backward)},
                {"flop_ratio_backward_to_forward", opt(s.flop_ratio())},
                {"time_ratio_backward_to_forward", opt(s.time_ratio())}};
  };
  json by_op = json::array(), by_layer = json::array();
  for (const auto& [k, s] : by_op_) {
    json e = {{"op", k}};
    e.update(sums(s));
    by_op.push_back(e);
  }
  for (const auto& [k, s] : by_layer_) {
    json e = {{"layer", k}};
    e.update(sums(s));
    by_layer.push_back(e);
  }
  return {{"overall", sums(overall_)}, {"by_op", by_op}, {"by_layer", by_layer}};
}

}  // namespace rf::analyzer
