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

/// `field` in double quotes, each double quote inside doubled (RFC 4180).
void append_quoted(std::string& out, std::string_view field) {
  out.push_back('"');
  for (size_t start = 0;;) {
    const size_t quote = field.find('"', start);
    const size_t end = quote == std::string_view::npos ? field.size() : quote + 1;
    out.append(field.substr(start, end - start));
    if (quote == std::string_view::npos) break;
    out.push_back('"');  // the doubled quote
    start = end;
  }
  out.push_back('"');
}

/// `fields`, each appended by `field`, separated by commas, then "\n".
void append_row(std::string& out, const std::vector<std::string>& fields, void (*field)(std::string&, std::string_view)) {
  bool first = true;
  for (const auto& f : fields) {
    if (!first) out.push_back(',');
    first = false;
    field(out, f);
  }
  out.push_back('\n');
}

/// The row `append` builds, written with one stream write; its memory is reused row after row.
void write_row(std::ostream& out, const std::vector<std::string>& fields,
               void (*append)(std::string&, const std::vector<std::string>&)) {
  thread_local std::string line;
  line.clear();
  append(line, fields);
  out.write(line.data(), static_cast<std::streamsize>(line.size()));
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

void append_number(std::string& out, double value) {
  if (!std::isfinite(value)) return;
  char buf[64];
  constexpr double kTwo63 = 9223372036854775808.0;
  std::to_chars_result r;
  if (value == std::trunc(value) && std::fabs(value) < kTwo63)
    r = std::to_chars(buf, buf + sizeof buf, static_cast<int64_t>(value));
  else
    r = std::to_chars(buf, buf + sizeof buf, value);
  if (r.ec == std::errc()) out.append(buf, r.ptr);
}

std::string format_number(double value) {
  std::string out;
  append_number(out, value);
  return out;
}

std::string format_optional(const std::optional<double>& value) {
  return value ? format_number(*value) : std::string();
}

void append_csv_field(std::string& out, std::string_view field) {
  if (needs_quotes(field))
    append_quoted(out, field);
  else
    out.append(field);
}

void append_csv_row(std::string& out, const std::vector<std::string>& fields) {
  append_row(out, fields, append_csv_field);
}

void write_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  write_row(out, fields, append_csv_row);
}

void append_ncu_csv_row(std::string& out, const std::vector<std::string>& fields) {
  append_row(out, fields, append_quoted);
}

void write_ncu_csv_row(std::ostream& out, const std::vector<std::string>& fields) {
  write_row(out, fields, append_ncu_csv_row);
}

}  // namespace rf::analyzer
