// UTF-8 checks for outputs (rfprof/trace/utf8.h).
#include "rfprof/trace/utf8.h"

#include <cstddef>
#include <cstdint>

namespace rf::trace {
namespace {

/// Length of the well-formed UTF-8 sequence at text[i], or 0 when the byte there starts none
/// (RFC 3629, table 3-7 of the Unicode standard).
size_t sequence_length(std::string_view text, size_t i) {
  const auto b = [&](size_t k) { return static_cast<uint8_t>(text[k]); };
  const uint8_t c = b(i);
  if (c < 0x80) return 1;
  size_t n = 0;
  uint8_t lo = 0x80, hi = 0xBF;  // the allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;  // no overlong forms
    if (c == 0xED) hi = 0x9F;  // no surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;  // at most U+10FFFF
  } else {
    return 0;
  }
  if (i + n > text.size() || b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const size_t n = sequence_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string valid_utf8(std::string_view text) {
  if (is_valid_utf8(text)) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    const size_t n = sequence_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string printable(std::string_view text) {
  const std::string s = valid_utf8(text);
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7f) {
      out += '?';  // C0 controls and DEL
    } else if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) {
      out += '?';  // C1 controls U+0080..U+009F (C2 80..C2 9F; valid_utf8 left only well-formed ones)
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string_view utf8_prefix(std::string_view text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  // text[cut] is the first byte left out: while it continues a sequence, the sequence is left out whole.
  const auto continuation = [&](size_t k) { return (static_cast<uint8_t>(text[k]) & 0xC0) == 0x80; };
  for (int back = 0; back < 3 && cut > 0 && continuation(cut); ++back) --cut;
  if (cut < max_bytes && continuation(cut)) cut = max_bytes;  // not UTF-8: 4+ continuation bytes
  return text.substr(0, cut);
}

}  // namespace rf::trace
