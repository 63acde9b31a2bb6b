// The launcher's one way to refuse an argument (private to launcher/src).
#pragma once

#include <string>

#include "rfprof/launcher/ncu_args.h"

namespace rf::launcher {

/// Throws ArgsError("rfprof: " + message): one line naming the flag and what was expected.
[[noreturn]] inline void fail(const std::string& message) { throw ArgsError("rfprof: " + message); }

}  // namespace rf::launcher
