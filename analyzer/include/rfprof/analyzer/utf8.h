// UTF-8 helpers for the analyzer's outputs: those of the trace library (rfprof/trace/utf8.h).
#pragma once

#include "rfprof/trace/utf8.h"

namespace rf::analyzer {

using trace::is_valid_utf8;
using trace::printable;
using trace::valid_utf8;

}  // namespace rf::analyzer
