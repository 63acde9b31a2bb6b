// Per-op and per-layer breakdown from torch.autograd.profiler.emit_nvtx() ranges, with
// backward-to-forward FLOP and time ratios (ops.csv, layers.csv, summary.json "ops").
//
// emit_nvtx pushes one range per op on the thread that runs it, named "<op>, seq = <N>[, op_id =
// ...][, sizes = ...]" (PyTorch 2.x; older releases wrote "seq=<N>" and, on backward Functions,
// "stashed seq=<N>"). A backward Function's range ("ConvolutionBackward0, seq = 12", possibly
// wrapped as "autograd::engine::evaluate_function: ConvolutionBackward0") carries the sequence
// number of the forward op that created it.
// Rule (docs/analyzer-outputs.md, "ops.csv and layers.csv"): a launch whose NVTX path holds an op range belongs
// to the outermost one. A forward op is keyed by its name ("aten::conv2d"); a backward Function
// by the forward op with its sequence number (the outermost forward op range seen with it), or by
// its own name when that forward op launched nothing (matched at the trace's end, whatever the
// order of the launches in the trace). A launch's layer is the innermost range
// outside its op that is not an op range (a module name pushed by user code), for backward that
// of the forward op.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {

/// One emit_nvtx op range name, parsed.
struct OpRange {
  std::string op;      ///< "aten::conv2d", "ConvolutionBackward0" (evaluate_function prefix removed)
  uint64_t seq = 0;    ///< sequence number
  bool backward = false;  ///< a backward Function (name holds "Backward" or the evaluate_function prefix)
};

/// Parses a range name; nullopt when it carries no sequence number (not an emit_nvtx op range).
std::optional<OpRange> parse_op_range(std::string_view name);

/// Forward and backward sums of one op or layer.
struct OpSums {
  Aggregate forward, backward;
  /// backward / forward total FLOP; absent when either is absent or forward is 0.
  std::optional<double> flop_ratio() const;
  /// backward / forward GPU time; absent when forward time is 0.
  std::optional<double> time_ratio() const;
};

/// Accumulates the breakdown over the launches of a run (memory: distinct ops, layers and seqs).
class OpBreakdown {
 public:
  /// A trace (one process) begins: its backward ops are matched only with its own forward ops,
  /// since PyTorch numbers the operators of each process from 0 (two processes' "seq = 5" are
  /// different ops). The sums go on across traces.
  void begin_trace() {
    end_trace();
    forward_by_seq_.clear();
  }
  /// The trace's launches are all added: its backward launches are matched with its forward ops
  /// (whichever came first in the trace). by_op() and by_layer() are complete only after it.
  void end_trace();
  /// Adds one launch with its NVTX path (names outermost first). Launches outside op ranges are
  /// not counted.
  void add(const KernelRow& row, const std::vector<std::string>& path);
  /// Backward Function calls of this trace whose forward op was not seen yet (kept until
  /// end_trace()): distinct (seq, op, layer) keys.
  size_t unmatched_backward_calls() const noexcept { return pending_.size(); }
  /// True once a launch inside an op range was added.
  bool any() const noexcept { return any_; }
  const std::map<std::string, OpSums>& by_op() const noexcept { return by_op_; }
  const std::map<std::string, OpSums>& by_layer() const noexcept { return by_layer_; }
  const OpSums& overall() const noexcept { return overall_; }
  /// ops.csv (key column "op") or layers.csv (key column "layer"), header included.
  static void write_csv(std::ostream& out, const std::string& key_column, const std::map<std::string, OpSums>& sums);
  /// summary.json's "ops" object; `aggregate` renders one Aggregate as summary.json does.
  nlohmann::ordered_json summary(const std::function<nlohmann::ordered_json(const Aggregate&)>& aggregate) const;

 private:
  struct Forward {
    std::string op, layer;
  };
  std::map<uint64_t, Forward> forward_by_seq_;
  /// A backward Function's launches of this trace whose forward op was not seen yet, until
  /// end_trace() matches them (an entry per such call: most backward launches come after theirs).
  struct PendingKey {
    uint64_t seq;
    std::string op, layer;  ///< its own name and layer: used when no forward op has its seq
    auto operator<=>(const PendingKey&) const = default;
  };
  std::map<PendingKey, Aggregate> pending_;
  std::map<std::string, OpSums> by_op_, by_layer_;
  OpSums overall_;
  bool any_ = false;
};

}  // namespace rf::analyzer
