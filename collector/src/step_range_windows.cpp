// NVTX-range windows for replay across steps (rfprof/collector/step_range_windows.h).
#include "rfprof/collector/step_range_windows.h"

#include <functional>
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

bool StepRangeWindows::matches_cached(Depths& t, std::string_view name) const {
  if (!regex_) return name == exact_;  // as cheap as the cache
  if (!t.names) t.names = std::make_unique<std::array<CachedName, kNameCacheSlots>>();
  CachedName& slot = (*t.names)[std::hash<std::string_view>{}(name) % kNameCacheSlots];
  if (slot.used && slot.name == name) return slot.matches;
  const bool match = matches(name);
  slot.used = false;  // an assign that throws std::bad_alloc leaves no name with another's answer
  slot.name.assign(name.data(), name.size());
  slot.matches = match;
  slot.used = true;
  return match;
}

StepRangeWindows::Depths& StepRangeWindows::depths_of(uint64_t thread) {
  bool inherited = false;
  Depths& t = thread == kCallingThread ? depths_.local(&inherited) : depths_.of_key(thread);
  if (inherited) {  // an exited thread's: none of its ranges is this thread's, nor its window
    for (auto& [d, n] : t.by_domain) n = 0;  // the entries kept: no allocation at the next push
    t.serial = 0;
  }
  // Once per thread and hand-over. Not the system thread id, which Linux gives to a later thread.
  if (t.serial == 0) t.serial = thread_serial_.fetch_add(1, std::memory_order_relaxed);
  return t;
}

StepRangeEvent StepRangeWindows::push(uint64_t thread, std::string_view name, uint64_t domain) {
  Depths& t = depths_of(thread);
  t.pushes.store(t.pushes.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);  // one writer
  auto& by_domain = t.by_domain;
  uint32_t depth = 0;
  for (auto& [d, n] : by_domain)
    if (d == domain) {
      depth = ++n;
      break;
    }
  if (depth == 0) {  // kept when it drops back to 0: the thread will push again
    by_domain.emplace_back(domain, 1);
    depth = 1;
  }
  if (open_.load(std::memory_order_acquire) || !matches_cached(t, name)) return StepRangeEvent::kNone;
  std::lock_guard lock(mutex_);
  if (open_.load(std::memory_order_relaxed)) return StepRangeEvent::kNone;  // another thread's, meanwhile
  by_id_.store(false, std::memory_order_relaxed);
  owner_.store(t.serial, std::memory_order_relaxed);
  owner_domain_.store(domain, std::memory_order_relaxed);
  owner_depth_.store(depth, std::memory_order_relaxed);
  open_.store(true, std::memory_order_release);
  return StepRangeEvent::kOpen;
}

StepRangeEvent StepRangeWindows::pop(uint64_t thread, uint64_t domain) {
  Depths& t = depths_of(thread);
  uint32_t depth = 0;  // before the pop
  for (auto& [d, n] : t.by_domain)
    if (d == domain) {
      if (n == 0) return StepRangeEvent::kNone;  // a pop without a push
      depth = n--;
      break;
    }
  if (depth == 0) return StepRangeEvent::kNone;
  // Only the pop of the window's own range can close a push/pop window: every other stops here.
  auto closes = [&] {
    return open_.load(std::memory_order_acquire) && !by_id_.load(std::memory_order_relaxed) &&
           owner_.load(std::memory_order_relaxed) == t.serial &&
           owner_domain_.load(std::memory_order_relaxed) == domain &&
           owner_depth_.load(std::memory_order_relaxed) == depth;
  };
  if (!closes()) return StepRangeEvent::kNone;
  std::lock_guard lock(mutex_);
  if (!closes()) return StepRangeEvent::kNone;  // read again: another window may have opened
  open_.store(false, std::memory_order_release);
  return StepRangeEvent::kClose;
}

StepRangeEvent StepRangeWindows::start(uint64_t id, std::string_view name) {
  starts_.fetch_add(1, std::memory_order_relaxed);
  if (open_.load(std::memory_order_acquire) || !matches(name)) return StepRangeEvent::kNone;
  std::lock_guard lock(mutex_);
  if (open_.load(std::memory_order_relaxed)) return StepRangeEvent::kNone;
  by_id_.store(true, std::memory_order_relaxed);
  owner_.store(id, std::memory_order_relaxed);
  open_.store(true, std::memory_order_release);
  return StepRangeEvent::kOpen;
}

StepRangeEvent StepRangeWindows::end(uint64_t id) {
  if (!open_.load(std::memory_order_acquire) || !by_id_.load(std::memory_order_relaxed) ||
      owner_.load(std::memory_order_relaxed) != id)
    return StepRangeEvent::kNone;
  std::lock_guard lock(mutex_);
  if (!open_.load(std::memory_order_relaxed) || !by_id_.load(std::memory_order_relaxed) ||
      owner_.load(std::memory_order_relaxed) != id)
    return StepRangeEvent::kNone;
  open_.store(false, std::memory_order_release);
  return StepRangeEvent::kClose;
}

uint64_t StepRangeWindows::ranges_seen() {
  uint64_t n = starts_.load(std::memory_order_relaxed);
  // PerThread::for_each takes no lock: the session's finish calls this, and a thread a signal stopped
  // in its first push would hold that lock until the signal's timeout.
  depths_.for_each([&](Depths& t) { n += t.pushes.load(std::memory_order_relaxed); });
  return n;
}

}  // namespace rf::collector
