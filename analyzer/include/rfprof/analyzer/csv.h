// Output formatting for rfanalyze's CSV files and rfprof's ncu-style CSV (RFC 4180). Formatting
// only (ncu_import.h reads ncu's CSV).
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace rf::analyzer {

/// One CSV field per RFC 4180: returned unchanged unless it holds a comma, a double quote, CR or
/// LF; then it is wrapped in double quotes and every double quote inside is doubled.
std::string csv_escape(std::string_view field);

/// A number as text at full precision: an integral value with |v| < 2^63 is written as an integer
/// ("2000"), anything else as the shortest decimal that reads back to the same double
/// (std::to_chars), e.g. "0.30000000000000004", "1e+300". NaN and infinities give "".
std::string format_number(double value);
/// Appends format_number(value) to `out` (nothing for NaN and infinities), without a temporary.
void append_number(std::string& out, double value);

/// format_number of the value, or "" when absent.
std::string format_optional(const std::optional<double>& value);

/// Appends one field to `out` as csv_escape would return it.
void append_csv_field(std::string& out, std::string_view field);
/// Appends `fields` escaped with csv_escape, separated by commas, then "\n".
void append_csv_row(std::string& out, const std::vector<std::string>& fields);
/// Writes the row append_csv_row builds with one stream write (a write per field cost more than
/// the formatting: ostream::write's sentry and virtual xsputn, about 40 fields per launch).
void write_csv_row(std::ostream& out, const std::vector<std::string>& fields);
/// Appends `fields` as Nsight Compute's --csv writes them: every field in double quotes (a double
/// quote inside doubled), separated by commas, then "\n".
void append_ncu_csv_row(std::string& out, const std::vector<std::string>& fields);
/// Writes the row append_ncu_csv_row builds with one stream write (rfprof prints to std::cout,
/// which, synchronized with stdio, cost a putc per character before).
void write_ncu_csv_row(std::ostream& out, const std::vector<std::string>& fields);

}  // namespace rf::analyzer
