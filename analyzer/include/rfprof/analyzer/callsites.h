// GPU time and FLOP by native call site, from launch call stacks (RFPROF_CALLSTACKS=1):
// callsites_time.folded and callsites_flop.folded (collapsed stacks, the input of flame-graph
// tools such as flamegraph.pl and speedscope) and callsites.csv (one row per call site).
// Definitions: docs/analyzer-outputs.md ("callsites_time.folded, callsites_flop.folded, callsites.csv").
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {

/// One symbolized call stack of a trace (a CallStack record): innermost frame first.
struct CallStackFrames {
  std::vector<std::string> functions;
  std::vector<std::string> modules;  ///< same length as `functions`
};

/// The call stacks of one trace by CallStack::stack_id.
using CallStackMap = std::unordered_map<uint32_t, CallStackFrames>;

/// True for the modules of NVIDIA's CUDA libraries (libcudart, libcublas, libcublasLt, libcudnn*,
/// libcufft, libcurand, libcusparse, libcusolver, libnccl, libnvrtc, libnvJitLink, libcuda,
/// libcupti), matched on the basename's prefix.
bool is_cuda_library(std::string_view module) noexcept;

/// The call site of a stack: its innermost frame outside the CUDA libraries (the framework or
/// application function that asked for the kernel, e.g. at::native::cudnn_convolution); the
/// outermost frame when every frame is in a CUDA library; "[empty stack]" for no frame.
std::string call_site_of(const CallStackFrames& stack);

/// Accumulates launches by call stack over one or more traces. Memory: O(distinct stacks x kernel
/// names), not O(launches).
class CallSites {
 public:
  /// Starts a trace; `has_call_stacks`: it holds CallStack records (pass 1 saw them). Launches of
  /// a trace without them are looked at from its first launch with a stack id (a process killed
  /// before it wrote its CallStack records: its stack ids count under "[unsymbolized]"); until
  /// then add() returns at once, so a trace recorded without call stacks costs nothing.
  void begin_trace(bool has_call_stacks) noexcept { active_ = has_call_stacks; }
  /// One launch of the current trace (row.stack_id; 0: no stack recorded). No allocation for a
  /// (stack, kernel) pair already seen.
  void add(const KernelRow& row);
  /// Ends the current trace: resolves its stack ids through `stacks` (empty and no launch with a
  /// stack id: the trace recorded no call stacks, and its launches are left out). Launches without a stack count under
  /// "[no call stack]", stack ids without a CallStack record (a killed process) under
  /// "[unsymbolized]".
  void end_trace(const CallStackMap& stacks);

  /// callsites_time.folded: "outermost;...;innermost;kernel <GPU ns>" per distinct line.
  void write_folded_time(std::ostream& out) const;
  /// callsites_flop.folded: the same lines with total FLOP (rounded; launches without FLOP omitted).
  void write_folded_flop(std::ostream& out) const;
  /// callsites.csv: aggregate_csv_header("call_site") columns, one row per call site.
  void write_csv(std::ostream& out) const;
  /// Sums per call site (call_site_of), over every trace ended so far.
  const std::map<std::string, Aggregate>& sites() const noexcept { return sites_; }

 private:
  struct Sum {
    uint64_t duration_ns = 0;
    double flop = 0.0;
    uint64_t flop_launches = 0;
  };
  bool active_ = false;
  // Current trace: stack id -> kernel -> sums (transparent lookup by the row's kernel name).
  std::unordered_map<uint32_t, std::map<std::string, Sum, std::less<>>> current_;
  std::map<uint32_t, Aggregate> current_sites_;               // stack id, current trace
  std::map<std::string, Sum> folded_;                         // folded line without value
  std::map<std::string, Aggregate> sites_;
};

}  // namespace rf::analyzer
