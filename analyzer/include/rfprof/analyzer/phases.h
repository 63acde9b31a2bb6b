// Training phase of a launch (forward, backward, optimizer, other) from its NVTX range path.
#pragma once

#include <filesystem>
#include <regex>
#include <stdexcept>
#include <optional>
#include <string>
#include <vector>

namespace rf::analyzer {

/// A phase map file or rule that cannot be used. what() names the file, the entry and the problem.
class PhaseMapError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One rule: ranges whose name matches `pattern` (std::regex ECMAScript, searched anywhere in
/// the name) belong to `phase`.
struct PhaseRule {
  std::string pattern;
  std::string phase;
  bool ignore_case = true;
};

/// Ordered regex rules. The phase of a range path is found by walking its ranges from the
/// innermost outward; the first range that any rule matches decides, and among the rules the
/// first in order wins. A path no rule matches (the empty path included) is kOtherPhase.
class PhaseMap {
 public:
  /// Phase of paths that no rule matches.
  static constexpr const char* kOtherPhase = "other";

  /// Compiles `rules`. Throws PhaseMapError naming the rule whose pattern is not a valid regex.
  explicit PhaseMap(std::vector<PhaseRule> rules);

  /// The default rules, in this order: /optimi[sz]er|\boptim\b|zero_grad/i -> optimizer
  /// (PyTorch's "Optimizer.zero_grad#SGD.zero_grad" must not read as backward), /forward|fwd/i ->
  /// forward, /backward|bwd|grad/i -> backward. A range named just "step" is a training step
  /// (processes.csv, scaling.csv), so no phase.
  static PhaseMap defaults();
  /// Reads a JSON list of {"regex": "...", "phase": "..."} (optional "ignore_case": bool, default
  /// true) that replaces the default rules. Throws PhaseMapError naming `path` for an unreadable
  /// file, invalid JSON, a wrong shape or an invalid regex.
  static PhaseMap from_file(const std::filesystem::path& path);

  /// Phase of a range path given as names, outermost first: the first rule found in the innermost
  /// name, else in the next one out. Each name is searched in its first 4096 bytes
  /// (collector/regex_subject.h).
  std::string phase_of(const std::vector<std::string>& path) const;
  /// phase_of()'s phase, or nullopt when no rule matched (a rule whose phase is "other" matches).
  std::optional<std::string> matched_phase(const std::vector<std::string>& path) const;
  const std::vector<PhaseRule>& rules() const noexcept { return rules_; }

 private:
  std::vector<PhaseRule> rules_;
  std::vector<std::regex> compiled_;
};

}  // namespace rf::analyzer
