// Text from a trace in outputs that must be UTF-8 (SVG, JSON): names are the application's bytes
// (an NVTX range named in Latin-1, a flipped byte) and need not be valid UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace rf::analyzer {

/// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
/// U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// `text` with every byte that does not belong to a well-formed UTF-8 sequence replaced by U+FFFD
/// (as nlohmann::json's error_handler_t::replace does); valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

/// `text` safe for a terminal: valid_utf8, and control characters (escape sequences from a hostile
/// trace) as '?'.
std::string printable(std::string_view text);

}  // namespace rf::analyzer
