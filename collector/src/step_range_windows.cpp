// NVTX-range windows for replay across steps (rfprof/collector/step_range_windows.h).
#include "rfprof/collector/step_range_windows.h"

#include <stdexcept>

#include "rfprof/collector/regex_subject.h"

namespace rf::collector {

StepRangeWindows::StepRangeWindows(const std::string& rule) {
  if (rule.empty()) throw std::invalid_argument("an empty NVTX range name");
  if (rule.rfind("regex:", 0) == 0) {
    try {
      regex_.emplace(rule.substr(6), std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw std::invalid_argument("\"" + rule.substr(6) + "\" is not a valid regular expression (" + e.what() + ")");
    }
  } else {
    exact_ = rule;
  }
}

bool StepRangeWindows::matches(std::string_view name) const {
  if (regex_) {
    const std::string_view subject = regex_subject(name);  // regex_subject.h: a bound on the stack
    return std::regex_search(subject.begin(), subject.end(), *regex_);
  }
  return name == exact_;
}

StepRangeEvent StepRangeWindows::push(uint64_t thread, std::string_view name, uint64_t domain) {
  const uint32_t depth = ++depth_[{thread, domain}];
  if (open_ || !matches(name)) return StepRangeEvent::kNone;
  open_ = true;
  by_id_ = false;
  owner_ = thread;
  owner_domain_ = domain;
  owner_depth_ = depth;
  return StepRangeEvent::kOpen;
}

StepRangeEvent StepRangeWindows::pop(uint64_t thread, uint64_t domain) {
  auto it = depth_.find({thread, domain});
  if (it == depth_.end()) return StepRangeEvent::kNone;
  const uint32_t depth = it->second--;
  if (it->second == 0) depth_.erase(it);  // threads come and go in a long run
  if (open_ && !by_id_ && owner_ == thread && owner_domain_ == domain && owner_depth_ == depth) {
    open_ = false;
    return StepRangeEvent::kClose;
  }
  return StepRangeEvent::kNone;
}

StepRangeEvent StepRangeWindows::start(uint64_t id, std::string_view name) {
  if (open_ || !matches(name)) return StepRangeEvent::kNone;
  open_ = true;
  by_id_ = true;
  owner_ = id;
  return StepRangeEvent::kOpen;
}

StepRangeEvent StepRangeWindows::end(uint64_t id) {
  if (!open_ || !by_id_ || owner_ != id) return StepRangeEvent::kNone;
  open_ = false;
  return StepRangeEvent::kClose;
}

}  // namespace rf::collector
