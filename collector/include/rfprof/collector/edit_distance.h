// Levenshtein distance, for the messages that name the closest valid spelling of a mistyped name
// (a metric for --metrics, a key of a ceilings file). Header-only: the analyzer uses it too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

namespace rf::collector {

/// Levenshtein distance of `a` and `b` (insertions, deletions, substitutions each cost 1).
/// Time O(|a| x |b|), memory O(|b|): callers bound hostile lengths.
inline size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

}  // namespace rf::collector
