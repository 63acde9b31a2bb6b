// Helpers shared by the launcher tests: substring checks, the lines of a text, and what
// parse_args refuses.
#pragma once

#include <sstream>
#include <string>
#include <vector>

#include "rfprof/launcher/ncu_args.h"

namespace rf::launcher::test_util {

/// True when `part` occurs in `text`.
inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// The lines of `text`, without their '\n'.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// The message parse_args throws for `args` (ArgsError::what()); "" when it accepts them.
inline std::string error_of(const std::vector<std::string>& args) {
  try {
    (void)parse_args(args);
  } catch (const ArgsError& e) {
    return e.what();
  }
  return "";
}

}  // namespace rf::launcher::test_util
