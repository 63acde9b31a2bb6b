// An environment for read_config in tests: a fixed map of variables instead of the process's; and
// the check of a bad value's message.
#pragma once

#include <gtest/gtest.h>

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

/// `message` is one rfprof line naming `var`="`value`" and saying "expected `expected`".
inline void expect_names(const std::string& message, const std::string& var, const std::string& value,
                         const std::string& expected) {
  EXPECT_EQ(message.rfind("rfprof: ", 0), 0u) << message;
  EXPECT_NE(message.find(var + "=\"" + value + "\""), std::string::npos) << message;
  EXPECT_NE(message.find("expected " + expected), std::string::npos) << message;
}

}  // namespace rf::inject
