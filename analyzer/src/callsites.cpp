// GPU time and FLOP by call stack and call site (rfprof/analyzer/callsites.h).
#include "rfprof/analyzer/callsites.h"

#include <cmath>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {
namespace {

constexpr const char* kNoStack = "[no call stack]";
constexpr const char* kUnsymbolized = "[unsymbolized]";

std::string_view basename_of(std::string_view path) {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// A frame as one element of a folded line: ';' separates frames and '\n' lines, so both go.
std::string folded_frame(std::string_view name) {
  std::string out(name);
  for (char& c : out)
    if (c == ';') c = ':';
    else if (c == '\n' || c == '\r') c = ' ';
  return out;
}

}  // namespace

bool is_cuda_library(std::string_view module) noexcept {
  const std::string_view base = basename_of(module);
  for (std::string_view prefix :
       {"libcudart", "libcublas", "libcudnn", "libcufft", "libcurand", "libcusparse", "libcusolver",
        "libnccl", "libnvrtc", "libnvJitLink", "libcuda.so", "libcuda-", "libcupti"})
    if (base.substr(0, prefix.size()) == prefix) return true;
  return false;
}

std::string call_site_of(const CallStackFrames& stack) {
  if (stack.functions.empty()) return "[empty stack]";
  for (size_t i = 0; i < stack.functions.size(); ++i) {
    const std::string_view module = i < stack.modules.size() ? stack.modules[i] : std::string_view();
    if (!is_cuda_library(module)) return stack.functions[i];
  }
  return stack.functions.back();
}

void CallSites::add(const KernelRow& row) {
  if (!active_) {
    if (row.stack_id == 0) return;
    active_ = true;  // stack ids without CallStack records: a killed process's
  }
  auto& kernels = current_[row.stack_id];
  auto it = kernels.find(std::string_view(row.kernel));
  if (it == kernels.end()) it = kernels.emplace(row.kernel, Sum{}).first;
  Sum& s = it->second;
  if (row.duration_ns) s.duration_ns += *row.duration_ns;
  if (auto flop = row.metrics.total_flop()) {
    s.flop += *flop;
    ++s.flop_launches;
  }
  current_sites_[row.stack_id].add(row);
}

void CallSites::end_trace(const CallStackMap& stacks) {
  if (active_) {
    std::unordered_map<uint32_t, std::string> prefix;  // stack id -> "outer;...;inner"
    auto prefix_of = [&](uint32_t id) -> const std::string& {
      auto it = prefix.find(id);
      if (it != prefix.end()) return it->second;
      std::string p;
      if (id == 0) {
        p = kNoStack;
      } else if (auto s = stacks.find(id); s == stacks.end()) {
        p = kUnsymbolized;
      } else {
        for (size_t i = s->second.functions.size(); i-- > 0;) {
          if (!p.empty()) p += ';';
          p += folded_frame(s->second.functions[i]);
        }
        if (p.empty()) p = "[empty stack]";
      }
      return prefix.emplace(id, std::move(p)).first->second;
    };
    for (const auto& [id, kernels] : current_)
      for (const auto& [kernel, sum] : kernels) {
        Sum& f = folded_[prefix_of(id) + ";" + folded_frame(kernel)];
        f.duration_ns += sum.duration_ns;
        f.flop += sum.flop;
        f.flop_launches += sum.flop_launches;
      }
    for (const auto& [id, agg] : current_sites_) {
      std::string site = id == 0 ? kNoStack : kUnsymbolized;
      if (auto s = stacks.find(id); id != 0 && s != stacks.end()) site = call_site_of(s->second);
      sites_[site].merge(agg);
    }
  }
  current_.clear();
  current_sites_.clear();
  active_ = false;
}

void CallSites::write_folded_time(std::ostream& out) const {
  for (const auto& [line, sum] : folded_) out << line << ' ' << sum.duration_ns << '\n';
}

void CallSites::write_folded_flop(std::ostream& out) const {
  for (const auto& [line, sum] : folded_)
    if (sum.flop_launches > 0) out << line << ' ' << std::llround(sum.flop) << '\n';
}

void CallSites::write_csv(std::ostream& out) const {
  write_csv_row(out, aggregate_csv_header("call_site"));
  for (const auto& [site, agg] : sites_) write_csv_row(out, agg.csv_fields(site));
}

}  // namespace rf::analyzer
