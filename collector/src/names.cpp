// Kernel name demangling and caching.
#include "rfprof/collector/names.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace rf::collector {

std::string demangle(std::string_view mangled) {
  if (mangled.size() < 2 || mangled.substr(0, 2) != "_Z") return std::string(mangled);
  std::string name(mangled);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), std::free);
  if (status != 0 || !out) return name;
  return std::string(out.get());
}

std::pair<uint32_t, uint32_t> KernelNameCache::ids(std::string_view mangled) {
  if (mangled.empty()) return {0, 0};
  auto it = cache_.find(std::string(mangled));
  if (it != cache_.end()) return it->second;
  uint32_t mangled_id = intern_(mangled);
  std::string pretty = demangle(mangled);
  uint32_t pretty_id = pretty == mangled ? mangled_id : intern_(pretty);
  auto [pos, inserted] = cache_.emplace(std::string(mangled), std::make_pair(mangled_id, pretty_id));
  (void)inserted;
  return pos->second;
}

bool is_replay_tool_kernel(std::string_view mangled) noexcept {
  return mangled == "tools_memcmp";
}

}  // namespace rf::collector
