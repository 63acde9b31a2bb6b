// An environment for read_config in tests: a fixed map of variables instead of the process's.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "config.h"

namespace rf::inject {

/// A lookup that finds exactly `vars` (unset: nullopt).
inline EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

}  // namespace rf::inject
