// RFC 4180 field quoting and full-precision number formatting for the CSV outputs.
#include "rfprof/analyzer/csv.h"

#include <charconv>
#include <cmath>
#include <system_error>

namespace rf::analyzer {
namespace {

/// Whether RFC 4180 needs `field` quoted: it holds a comma, a double quote, CR or LF. One pass over
/// the bytes (string_view::find_first_of calls memchr over the set once per character).
bool needs_quotes(std::string_view field) noexcept {
  for (const char c : field)
    if (c == ',' || c == '"' || c == '\r' || c == '\n') return true;
  return false;
}

}  // namespace

std::string csv_escape(std::string_view field) {
  if (!needs_quotes(field)) return std::string(field);
  std::string out;
  out.reserve(field.size() + 2);
  out.push_back('"');
  for (char c : field) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string format_number(double value) {
  if (!std::isfinite(value)) return "";
  char buf[64];
  constexpr double kTwo63 = 9223372036854775808.0;
  if (value == std::trunc(value) && std::fabs(value) < kTwo63) {
    auto r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(value));
    return std::string(buf, r.ptr);
  }
  auto r = std::to_chars(buf, buf + sizeof buf, value);
  if (r.ec != std::errc()) return "";
  return std::string(buf, r.ptr);
}

std::string format_optional(const std::optional<double>& value) {
  return value ? format_number(*value) : std::string();
}

void write_csv_field(std::ostream& out, std::string_view field) {
  if (!needs_quotes(field)) {
    out.write(field.data(), static_cast<std::streamsize>(field.size()));
    return;
  }
  out.put('"');
  for (size_t start = 0;;) {
    const size_t quote = field.find('"', start);
    const size_t end = quote == std::string_view::npos ? field.size() : quote + 1;
    out.write(field.data() + start, static_cast<std::streamsize>(end - start));
    if (quote == std::string_view::npos) break;
    out.put('"');  // the doubled quote
    start = end;
  }
  out.put('"');
}

void write_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  bool first = true;
  for (const auto& f : fields) {
    if (!first) out.put(',');
    first = false;
    write_csv_field(out, f);
  }
  out.put('\n');
}

void write_ncu_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  bool first = true;
  for (const auto& f : fields) {
    if (!first) out.put(',');
    first = false;
    out.put('"');
    for (char c : f) {
      if (c == '"') out.put('"');
      out.put(c);
    }
    out.put('"');
  }
  out.put('\n');
}

}  // namespace rf::analyzer
