// Text from a trace, an environment variable or a file in outputs that must be UTF-8 (SVG, JSON) or
// printable (a terminal line): names are the application's bytes (an NVTX range named in Latin-1, a
// flipped byte) and need not be valid UTF-8.
#pragma once

#include <string>
#include <string_view>

namespace rf::trace {

/// True when `text` is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates, at most
/// U+10FFFF).
bool is_valid_utf8(std::string_view text);

/// `text` with every byte that does not belong to a well-formed UTF-8 sequence replaced by U+FFFD
/// (as nlohmann::json's error_handler_t::replace does); valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

/// `text` safe for a terminal: valid_utf8, and each control character (C0 U+0000..U+001F, DEL
/// U+007F and C1 U+0080..U+009F: escape sequences, a CSI or a newline from a hostile trace or an
/// environment variable) as one '?'.
std::string printable(std::string_view text);

/// The longest prefix of `text` of at most `max_bytes` that does not end inside a UTF-8 sequence:
/// a cut moved back over continuation bytes (10xxxxxx) and their lead byte, when the cut falls
/// inside a sequence. Text that is not UTF-8 is cut at `max_bytes` or up to 3 bytes before.
std::string_view utf8_prefix(std::string_view text, size_t max_bytes);

}  // namespace rf::trace
