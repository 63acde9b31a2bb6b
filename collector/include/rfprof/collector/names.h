// Kernel names: demangling once per distinct name (pure logic, no CUPTI).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace rf::collector {

/// Demangles an Itanium C++ ABI symbol (abi::__cxa_demangle), e.g. "_Z5saxpyifPfS_" ->
/// "saxpy(int, float, float*, float*)". Returns `mangled` unchanged when it is not a mangled name
/// (C kernels, "") or demangling fails. Never throws except std::bad_alloc.
std::string demangle(std::string_view mangled);

/// True for a kernel that CUPTI itself launches while it replays a CUDA graph under the Range
/// Profiler ("tools_memcmp", seen on an H100 with CUPTI 13.0 in the activity stream with the
/// correlation id of the application's cudaGraphLaunch). It is no work of the application and is
/// not written to the trace.
bool is_replay_tool_kernel(std::string_view mangled) noexcept;

/// Caches, per distinct mangled kernel name, the string-table ids of the mangled and demangled
/// names, so abi::__cxa_demangle runs once per name and not once per kernel record.
/// Not thread-safe; the activity buffer callback owns one.
class KernelNameCache {
 public:
  /// `intern` maps a string to its trace string id (rf::trace::Writer::intern).
  explicit KernelNameCache(std::function<uint32_t(std::string_view)> intern)
      : intern_(std::move(intern)) {}

  /// {mangled id, demangled id} of `mangled`; {0, 0} for an empty name.
  std::pair<uint32_t, uint32_t> ids(std::string_view mangled);
  /// Distinct names seen (= demangle calls made).
  size_t size() const noexcept { return cache_.size(); }

 private:
  std::function<uint32_t(std::string_view)> intern_;
  std::unordered_map<std::string, std::pair<uint32_t, uint32_t>> cache_;
};

}  // namespace rf::collector
