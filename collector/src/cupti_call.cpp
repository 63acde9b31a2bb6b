// The CUPTI seam's error type and failure report (cupti_call.h).
#include "cupti_call.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>

namespace rf::collector {
namespace {

/// "collector/src/x.cpp" -> "x.cpp": enough to find the call site, short enough for one line.
const char* base_name(const char* file) noexcept {
  if (!file) return "?";
  const char* slash = std::strrchr(file, '/');
  return slash ? slash + 1 : file;
}

/// The function name of a stringified call: "cuptiFoo(&p)" -> "cuptiFoo". Text that does not
/// start with an identifier directly followed by '(' (a sentence, say) is kept whole.
std::string call_name(const char* call) {
  if (!call) return "CUPTI call";
  std::string text(call);
  size_t i = 0;
  while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
  if (i > 0 && i < text.size() && text[i] == '(') text.resize(i);
  return text;
}

std::string error_text(CUptiResult result, const char* call, const char* file, int line) {
  return call_name(call) + " failed: " + cupti_result_string(result) + " (" + base_name(file) + ":" +
         std::to_string(line) + ")";
}

}  // namespace

CuptiError::CuptiError(CUptiResult result, const char* call, const char* file, int line)
    : std::runtime_error(error_text(result, call, file, line)), result_(result) {}

std::string cupti_result_string(CUptiResult result) noexcept {
  try {
    const char* text = nullptr;
    if (cuptiGetResultString(result, &text) == CUPTI_SUCCESS && text && *text && text[0] != '<')
      return text;
    return "unknown CUptiResult " + std::to_string(static_cast<int>(result));
  } catch (...) {
    return {};  // out of memory while formatting: an empty string allocates nothing
  }
}

void report_cupti_failure(CUptiResult result, const char* call, const char* file, int line,
                          std::atomic<bool>& once) noexcept {
  if (once.exchange(true)) return;
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || !text) text = "unknown CUptiResult";
  // One fprintf: stderr is unbuffered, so the line is written in one piece.
  std::fprintf(stderr, "rfprof: %s failed at %s:%d: %s (%d)\n", call ? call : "CUPTI call",
               base_name(file), line, text, static_cast<int>(result));
}

}  // namespace rf::collector
