// The part of a name a regular expression is searched in. libstdc++'s std::regex recurses once per
// character for patterns with repetition (".*", "[^,]+?"): a 60,000-character name overflowed an
// 8 MiB stack (2026-11-23), and a launching thread of the application may have far less. Names
// from an application or a trace are therefore searched in their first kMaxRegexSubject bytes:
// kernel names (-k regex:), NVTX range and domain names (--nvtx-include regex:, --replay-range
// regex:), and in rfanalyze the phase rules and the ceilings' device patterns.
#pragma once

#include <cstddef>
#include <string_view>

namespace rf::collector {

/// Most bytes of a name a regular expression is searched in (NVIDIA kernel and NVTX names are far
/// shorter; a CUTLASS kernel name is some 2,000).
inline constexpr size_t kMaxRegexSubject = 4096;

/// The first kMaxRegexSubject bytes of `name`.
inline std::string_view regex_subject(std::string_view name) noexcept { return name.substr(0, kMaxRegexSubject); }

}  // namespace rf::collector
