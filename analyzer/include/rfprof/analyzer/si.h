// Numbers with SI prefixes for text outputs (roofline.svg labels, rfanalyze's stdout summary).
#pragma once

#include <string>

namespace rf::analyzer {

/// `value` scaled by powers of 1000 up to E, with `digits` significant digits (printf %g) and the
/// prefix glued to `unit`: format_si(6.7e13, "FLOP/s", 3) == "67 TFLOP/s",
/// format_si(3.352e12, "B/s", 4) == "3.352 TB/s". The prefix is chosen after rounding
/// (format_si(999.96, "FLOP/s", 4) == "1 kFLOP/s"); a negative value keeps its sign
/// ("-5 TFLOP/s"). Values below 1000 keep no prefix (format_si(0.5, "s", 3) == "0.5 s"); 1000 E
/// and more have none either, in exponent form (format_si(1e22, "FLOP/s", 4) == "1e+22 FLOP/s");
/// infinity and NaN are "-". Never throws but bad_alloc.
std::string format_si(double value, const char* unit, int digits);

}  // namespace rf::analyzer
