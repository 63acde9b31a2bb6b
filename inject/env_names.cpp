// RFPROF_* variable names: the ones read, and likely misspellings (env_names.h).
#include "env_names.h"

#include <algorithm>
#include <cctype>
#include <unistd.h>

extern char** environ;  // POSIX (unistd.h declares it only with _GNU_SOURCE)

namespace rf::inject {
namespace {

/// Upper case without '_' and '-': "rfprof_flush-ms" -> "RFPROFFLUSHMS".
std::string normalized(std::string_view name) {
  std::string out;
  for (char c : name)
    if (c != '_' && c != '-') out.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  return out;
}

/// Optimal string alignment distance (Damerau-Levenshtein with adjacent transpositions).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

constexpr std::string_view kPrefix = "RFPROF";

}  // namespace

const std::vector<std::string_view>& config_variables() {
  static const std::vector<std::string_view> names = {
      "RFPROF_OUTPUT", "RFPROF_METRICS", "RFPROF_METRIC_SET", "RFPROF_DISABLE_PROFILER_START_STOP",
      "RFPROF_TARGET_PROCESSES", "RFPROF_ROOT_PID", "RFPROF_TRACE_LIST", "RFPROF_PROFILE_FROM_START",
      "RFPROF_MODE", "RFPROF_FORCE_OVERWRITE", "RFPROF_FLUSH_MS", "RFPROF_MAX_RANGES", "RFPROF_CALLSTACKS",
      "RFPROF_REPLAY", "RFPROF_REPLAY_GROUPS", "RFPROF_REPLAY_RANGE", "RFPROF_STEP_PASS_START",
      "RFPROF_KERNEL_NAME", "RFPROF_KERNEL_NAME_BASE", "RFPROF_LAUNCH_SKIP", "RFPROF_LAUNCH_COUNT",
      "RFPROF_NVTX_INCLUDE", "RFPROF_NVTX_EXCLUDE", "RFPROF_DEVICES", "RFPROF_KERNEL_ID", "RFPROF_FILTER_MODE",
      "RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "RFPROF_KERNEL_RECORDS", "RFPROF_MEMORY"};
  return names;
}

std::vector<std::string> misspelled_variables(const std::vector<std::string>& names) {
  std::vector<std::string> warnings;
  const auto& known = config_variables();
  for (const std::string& name : names) {
    const std::string n = normalized(name);
    if (!n.starts_with(kPrefix) || std::find(known.begin(), known.end(), name) != known.end()) continue;
    const std::string_view rest = std::string_view(n).substr(kPrefix.size());
    const size_t allowed = rest.size() <= 8 ? 1 : 2;
    std::string_view best;
    size_t best_distance = allowed + 1;
    for (std::string_view k : known) {
      const std::string kn = normalized(k);
      const std::string_view known_rest = std::string_view(kn).substr(kPrefix.size());
      // Lengths further apart than the distance allowed: no need to align them (a long name costs nothing).
      const size_t gap = rest.size() > known_rest.size() ? rest.size() - known_rest.size() : known_rest.size() - rest.size();
      if (gap > allowed) continue;
      const size_t dist = kn == n ? 0 : edit_distance(rest, known_rest);
      if (dist < best_distance) best = k, best_distance = dist;
    }
    if (best.empty()) continue;
    warnings.push_back("rfprof: " + name + " is set, but librfinject reads no such variable; did you mean " +
                       std::string(best) + "? (docs/inject-env.md)");
  }
  return warnings;
}

std::vector<std::string> environment_names() {
  std::vector<std::string> names;
  for (char** e = environ; e && *e; ++e) {
    const std::string_view entry(*e);
    names.emplace_back(entry.substr(0, entry.find('=')));
  }
  return names;
}

}  // namespace rf::inject
