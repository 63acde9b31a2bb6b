// The RFPROF_* variables librfinject reads, and the warning for a misspelled one.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rf::inject {

/// Every RFPROF_* environment variable librfinject reads (read_config, docs/inject-env.md's
/// table), in the table's order.
const std::vector<std::string_view>& config_variables();

/// One warning for each name in `names` (environment variable names, as in `environ` before the
/// '=') that librfinject does not read but that is a likely misspelling of one it does, e.g.
/// `rfprof: RFPROF_FLUSHMS is set, but librfinject reads no such variable; did you mean
/// RFPROF_FLUSH_MS? (docs/inject-env.md)`. Likely: the same name but for case, '_' and '-'
/// ("rfprof_flush_ms", "RFPROF_FLUSHMS"), or, with the "RFPROF" prefix present in any case, a
/// Damerau-Levenshtein distance of at most 1 (names of up to 8 characters after the prefix) or 2
/// (longer) between the parts after it. Other RFPROF_* names (those of rfprof's scripts and
/// tests, RFPROF_BIN, RFPROF_VALIDATE_BUDGET_S) are left alone. Never throws but std::bad_alloc.
std::vector<std::string> misspelled_variables(const std::vector<std::string>& names);

/// The names of the process environment (`environ`), each up to its first '='.
std::vector<std::string> environment_names();

}  // namespace rf::inject
