// SI-prefixed numbers (rfprof/analyzer/si.h).
#include "rfprof/analyzer/si.h"

#include <cstdio>

namespace rf::analyzer {

std::string format_si(double value, const char* unit, int digits) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  int i = 0;
  while (value >= 1000 && i < 6) {
    value /= 1000;
    ++i;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g %s%s", digits, value, prefixes[i], unit);
  return buf;
}

}  // namespace rf::analyzer
