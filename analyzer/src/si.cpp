// SI-prefixed numbers (rfprof/analyzer/si.h).
#include "rfprof/analyzer/si.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace rf::analyzer {

std::string format_si(double value, const char* unit, int digits) {
  if (!std::isfinite(value)) return "-";
  static const char* const prefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  const char* sign = value < 0 ? "-" : "";
  double scaled = std::fabs(value);
  int i = 0;
  while (scaled >= 1000 && i < 6) {
    scaled /= 1000;
    ++i;
  }
  char number[48];
  for (;;) {
    std::snprintf(number, sizeof number, "%.*g", digits, scaled);
    // Rounded to `digits`, 999.96 reads "1000" (or "1e+03"): the next prefix, "1 k".
    if (std::strtod(number, nullptr) < 1000) break;
    if (i == 6) {  // past E: no prefix, the exponent says it ("1.23e+22 FLOP/s")
      std::snprintf(number, sizeof number, "%.*g", digits, std::fabs(value));
      i = 0;
      break;
    }
    scaled /= 1000;
    ++i;
  }
  char buf[96];
  std::snprintf(buf, sizeof buf, "%s%s %s%s", sign, number, prefixes[i], unit);
  return buf;
}

}  // namespace rf::analyzer
