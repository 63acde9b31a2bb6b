// Ordered regex mapping of NVTX range paths to training phases (rfprof/analyzer/phases.h).
#include "rfprof/analyzer/phases.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "rfprof/collector/regex_subject.h"

namespace rf::analyzer {

PhaseMap::PhaseMap(std::vector<PhaseRule> rules) : rules_(std::move(rules)) {
  compiled_.reserve(rules_.size());
  for (size_t i = 0; i < rules_.size(); ++i) {
    auto flags = std::regex::ECMAScript;
    if (rules_[i].ignore_case) flags |= std::regex::icase;
    try {
      compiled_.emplace_back(rules_[i].pattern, flags);
    } catch (const std::regex_error& e) {
      throw PhaseMapError("phase rule " + std::to_string(i) + " (phase \"" + rules_[i].phase +
                          "\"): regex \"" + rules_[i].pattern + "\" is invalid: " + e.what());
    }
  }
}

PhaseMap PhaseMap::defaults() {
  // Optimizer first: PyTorch names its ranges "Optimizer.step#SGD.step" and
  // "Optimizer.zero_grad#SGD.zero_grad" (the latter must not read as backward). A range named
  // just "step" is a training step, as processes.csv and scaling.csv count it
  // (is_step_range_name), not the optimizer: `with nvtx.range("step")` around a whole iteration
  // put its loss and copy kernels in phase optimizer.
  // A user's own "zero_grad" range is the optimizer's too (it read backward: "grad").
  return PhaseMap({{R"(optimi[sz]er|\boptim\b|zero_grad)", "optimizer", true},
                   {"forward|fwd", "forward", true},
                   {"backward|bwd|grad", "backward", true}});
}

PhaseMap PhaseMap::from_file(const std::filesystem::path& path) {
  const std::string where = "phase map " + path.string();
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw PhaseMapError(where + ": is a directory (expected a JSON file)");
  std::ifstream in(path);
  if (!in) throw PhaseMapError(where + ": cannot be opened");
  nlohmann::json doc;
  try {
    doc = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw PhaseMapError(where + ": not valid JSON: " + e.what());
  } catch (const std::ios_base::failure& e) {  // a read error inside the parser's streambuf
    throw PhaseMapError(where + ": cannot be read: " + e.what());
  }
  if (!doc.is_array())
    throw PhaseMapError(where + ": expected a JSON list of {\"regex\": ..., \"phase\": ...}");
  std::vector<PhaseRule> rules;
  for (size_t i = 0; i < doc.size(); ++i) {
    const auto& e = doc[i];
    const std::string entry = where + ": entry " + std::to_string(i);
    if (!e.is_object() || !e.contains("regex") || !e.contains("phase") || !e["regex"].is_string() ||
        !e["phase"].is_string())
      throw PhaseMapError(entry + ": expected {\"regex\": string, \"phase\": string}");
    PhaseRule r{e["regex"].get<std::string>(), e["phase"].get<std::string>(), true};
    if (e.contains("ignore_case")) {
      if (!e["ignore_case"].is_boolean()) throw PhaseMapError(entry + ": \"ignore_case\" must be true or false");
      r.ignore_case = e["ignore_case"].get<bool>();
    }
    if (r.phase.empty()) throw PhaseMapError(entry + ": \"phase\" is empty");
    rules.push_back(std::move(r));
  }
  try {
    return PhaseMap(std::move(rules));
  } catch (const PhaseMapError& e) {
    throw PhaseMapError(where + ": " + e.what());
  }
}

std::optional<std::string> PhaseMap::matched_phase(const std::vector<std::string>& path) const {
  for (auto it = path.rbegin(); it != path.rend(); ++it)
    for (size_t i = 0; i < compiled_.size(); ++i)
      if (const std::string_view subject = collector::regex_subject(*it);  // a bound on the stack
          std::regex_search(subject.begin(), subject.end(), compiled_[i]))
        return rules_[i].phase;
  return std::nullopt;
}

std::string PhaseMap::phase_of(const std::vector<std::string>& path) const {
  return matched_phase(path).value_or(kOtherPhase);
}

}  // namespace rf::analyzer
