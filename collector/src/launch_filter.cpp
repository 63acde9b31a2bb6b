// Kernel name and NVTX filters of launches (rfprof/collector/launch_filter.h).
#include "rfprof/collector/launch_filter.h"

#include <cxxabi.h>

#include <bit>
#include <cstdlib>
#include <memory>

#include "rfprof/collector/regex_subject.h"

namespace rf::collector {
namespace {

std::string demangled(std::string_view symbol) {
  const std::string s(symbol);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> d(abi::__cxa_demangle(s.c_str(), nullptr, nullptr, &status),
                                                &std::free);
  return status == 0 && d ? std::string(d.get()) : s;
}

}  // namespace

// ---- NvtxState ----

namespace {

bool same_name(const NvtxName& a, const NvtxName& b) { return a.literal() == b.literal() && a.text == b.text; }

}  // namespace

uint64_t NvtxState::regex_matches_of(std::string_view text, uint8_t use) const {
  uint64_t bits = 0;
  for (size_t i = 0; i < regexes_.size(); ++i)
    if ((slot_use_[i] & use) && regexes_[i].matches(text)) bits |= uint64_t{1} << i;
  return bits;
}

int NvtxState::watch_regex(const NvtxName& name, bool domain) {
  if (name.literal()) return -1;
  const uint8_t use = domain ? kDomainUse : kRangeUse;
  for (size_t i = 0; i < regexes_.size(); ++i)
    if (regexes_[i].text == name.text) {
      slot_use_[i] |= use;
      return static_cast<int>(i);
    }
  if (regexes_.size() == kRegexSlots) return -1;
  regexes_.push_back(name);
  regexes_.back().slot = -1;  // searched in push(); the slot is the index
  slot_use_.push_back(use);
  return static_cast<int>(regexes_.size() - 1);
}

NvtxState::ThreadStacks& NvtxState::stacks_of(uint64_t thread) const {
  if (thread != kCallingThread) return stacks_.of_key(thread);
  bool inherited = false;
  ThreadStacks& t = stacks_.local(&inherited);
  if (inherited) {  // the stacks of a thread that exited: none of its ranges is this thread's
    std::lock_guard lock(t.mutex);
    for (auto& [name, d] : t.domains) d.depth = 0;  // the entries' strings kept for reuse
  }
  return t;
}

void NvtxState::push(uint64_t thread, std::string_view domain, std::string_view name) {
  // Searched before the thread's lock is taken: another thread reading the stack never waits.
  // Only range-name expressions here; a domain's are searched once, when the thread first uses it.
  const uint64_t bits = regexes_.empty() ? 0 : regex_matches_of(name, kRangeUse);
  ThreadStacks& t = stacks_of(thread);
  std::lock_guard lock(t.mutex);
  auto it = t.domains.find(domain);
  if (it == t.domains.end())
    it = t.domains.emplace(std::string(domain), DomainStack{regex_matches_of(domain, kDomainUse), {}}).first;
  DomainStack& d = it->second;
  if (d.depth < d.ranges.size()) {
    d.ranges[d.depth].name.assign(name.data(), name.size());  // the string's memory reused
    d.ranges[d.depth].regex_matches = bits;
  } else {
    d.ranges.push_back({std::string(name), bits});
  }
  ++d.depth;
}

void NvtxState::pop(uint64_t thread, std::string_view domain) {
  ThreadStacks& t = stacks_of(thread);
  std::lock_guard lock(t.mutex);
  auto it = t.domains.find(domain);
  if (it == t.domains.end() || it->second.depth == 0) return;
  --it->second.depth;  // the entry is kept for the next push; an empty stack too
}

int NvtxState::watch(const NvtxName& domain, const NvtxName& name) {
  for (size_t i = 0; i < watched_.size(); ++i)
    if (same_name(watched_[i]->domain, domain) && same_name(watched_[i]->name, name)) return static_cast<int>(i);
  auto w = std::make_unique<Watched>();
  w->domain = domain;
  w->name = name;
  watched_.push_back(std::move(w));
  return static_cast<int>(watched_.size() - 1);
}

const NvtxState::Watched* NvtxState::find_watched(const NvtxName& domain, const NvtxName& name) const {
  for (const auto& w : watched_)
    if (same_name(w->domain, domain) && same_name(w->name, name)) return w.get();
  return nullptr;
}

void NvtxState::count(uint64_t bits, int64_t delta) const {
  for (; bits != 0; bits &= bits - 1) watched_[static_cast<size_t>(std::countr_zero(bits))]->open.fetch_add(delta);
}

namespace {

/// The bucket of range id `id` (Fibonacci hashing: consecutive ids spread over the buckets).
size_t open_bucket(uint64_t id) {
  constexpr int kBits = std::countr_zero(NvtxState::kOpenBuckets);
  static_assert((size_t{1} << kBits) == NvtxState::kOpenBuckets);
  return static_cast<size_t>((id * 0x9E3779B97F4A7C15ull) >> (64 - kBits));
}

}  // namespace

bool NvtxState::put_open(uint64_t id, uint64_t bits) {
  OpenSlot* bucket = &open_slots_[open_bucket(id) * kOpenWays];
  for (size_t i = 0; i < kOpenWays; ++i) {
    uint64_t expected = 0;
    if (bucket[i].id.load(std::memory_order_relaxed) != 0 ||
        !bucket[i].id.compare_exchange_strong(expected, kBusy, std::memory_order_acquire))
      continue;
    bucket[i].bits.store(bits, std::memory_order_relaxed);
    bucket[i].id.store(id, std::memory_order_release);  // published with its bits
    return true;
  }
  return false;
}

uint64_t NvtxState::take_open(uint64_t id) {
  OpenSlot* bucket = &open_slots_[open_bucket(id) * kOpenWays];
  for (size_t i = 0; i < kOpenWays; ++i) {
    uint64_t expected = id;
    if (bucket[i].id.load(std::memory_order_relaxed) != id ||
        !bucket[i].id.compare_exchange_strong(expected, kBusy, std::memory_order_acquire))
      continue;
    const uint64_t bits = bucket[i].bits.load(std::memory_order_relaxed);
    bucket[i].id.store(0, std::memory_order_release);
    return bits;
  }
  return 0;
}

void NvtxState::end_locked(uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(id);
  if (it == open_.end()) return;
  for (Watched* w : it->second.watched) w->open.fetch_sub(1);
  open_.erase(it);
  locked_open_.store(open_.size(), std::memory_order_release);
}

void NvtxState::start(uint64_t id, std::string_view domain, std::string_view name) {
  if (lock_free(id)) {
    uint64_t bits = 0;
    for (size_t i = 0; i < watched_.size(); ++i)
      if (watched_[i]->domain.matches(domain) && watched_[i]->name.matches(name)) bits |= uint64_t{1} << i;
    count(bits, +1);  // before the id's previous range is taken off: a count shared by both stays open
    count(take_open(id), -1);  // the id reused: its previous range is over
    if (locked_open_.load(std::memory_order_acquire) != 0) end_locked(id);
    if (bits == 0 || put_open(id, bits)) return;
    // Its bucket is full (kOpenWays such ranges open at once): kept under the lock.
    std::vector<Watched*> counted;
    for (uint64_t b = bits; b != 0; b &= b - 1)
      counted.push_back(watched_[static_cast<size_t>(std::countr_zero(b))].get());
    std::lock_guard lock(mutex_);
    open_[id] = Open{{}, {}, std::move(counted)};
    locked_open_.store(open_.size(), std::memory_order_release);
    return;
  }
  std::vector<Watched*> counted;
  for (const auto& w : watched_)
    if (w->domain.matches(domain) && w->name.matches(name)) counted.push_back(w.get());
  std::lock_guard lock(mutex_);
  auto [it, inserted] = open_.try_emplace(id);
  for (Watched* w : counted) w->open.fetch_add(1);
  if (!inserted)
    for (Watched* w : it->second.watched) w->open.fetch_sub(1);  // id reused
  it->second = keep_names_ ? Open{std::string(domain), std::string(name), std::move(counted)}
                           : Open{{}, {}, std::move(counted)};
  locked_open_.store(open_.size(), std::memory_order_release);
}

void NvtxState::end(uint64_t id) {
  if (lock_free(id)) {
    if (const uint64_t bits = take_open(id); bits != 0) return count(bits, -1);
    if (locked_open_.load(std::memory_order_acquire) == 0) return;  // not a range any rule counts
  }
  end_locked(id);
}

size_t NvtxState::open_ranges_locked() const {
  std::lock_guard lock(mutex_);
  return open_.size();
}

std::vector<std::string> NvtxState::stack(uint64_t thread, std::string_view domain) const {
  ThreadStacks& t = stacks_of(thread);
  std::lock_guard lock(t.mutex);
  std::vector<std::string> names;
  if (auto it = t.domains.find(domain); it != t.domains.end())
    for (const auto& r : it->second.stack()) names.push_back(r.name);
  return names;
}

bool NvtxState::stack_matches(uint64_t thread, const NvtxName& domain, const std::vector<NvtxElement>& pattern,
                              bool bottom, bool top) const {
  ThreadStacks& t = stacks_of(thread);
  std::lock_guard lock(t.mutex);  // this thread's own: taken by another thread only in stack()
  if (domain.literal()) {
    std::span<const NvtxStackEntry> stack;  // empty: a domain the thread never pushed in
    if (auto it = t.domains.find(domain.text); it != t.domains.end()) stack = it->second.stack();
    return rf::collector::stack_matches(pattern, bottom, top, stack);
  }
  for (const auto& [name, d] : t.domains) {
    const bool domain_matches = domain.slot >= 0 ? ((d.regex_matches >> domain.slot) & 1u) : domain.matches(name);
    if (domain_matches && rf::collector::stack_matches(pattern, bottom, top, d.stack())) return true;
  }
  return false;
}

bool NvtxState::start_end_open(std::string_view domain, std::string_view name) const {
  for (const auto& w : watched_)
    if (w->domain.literal() && w->name.literal() && w->domain.text == domain && w->name.text == name)
      return w->open.load() > 0;  // no lock
  if (!keep_names_) return false;
  std::lock_guard lock(mutex_);
  for (const auto& [id, r] : open_)
    if (r.domain == domain && r.name == name) return true;
  return false;
}

bool NvtxState::start_end_open(const NvtxName& domain, const NvtxName& name) const {
  if (name.watched >= 0 && static_cast<size_t>(name.watched) < watched_.size())
    return watched_[static_cast<size_t>(name.watched)]->open.load() > 0;  // no lock, no lookup
  if (const Watched* w = find_watched(domain, name)) return w->open.load() > 0;  // no lock
  if (!keep_names_) return false;
  std::lock_guard lock(mutex_);
  for (const auto& [id, r] : open_)
    if (domain.matches(r.domain) && name.matches(r.name)) return true;
  return false;
}

// ---- LaunchFilter ----

bool kernel_name_equals(std::string_view symbol, std::string_view base, std::string_view wanted) {
  if (base == "mangled") return symbol == wanted;
  const std::string d = demangled(symbol);
  if (base == "demangled") return d == wanted;
  return function_name_matches(d, wanted);
}

LaunchFilter::LaunchFilter(const LaunchFilterOptions& options) : base_(options.kernel_name_base) {
  if (base_ != "function" && base_ != "demangled" && base_ != "mangled")
    throw FilterError("kernel name base \"" + base_ + "\": expected function, demangled or mangled");
  if (!options.kernel_name.empty()) {
    has_name_ = true;
    if (options.kernel_name.rfind("regex:", 0) == 0) {
      try {
        regex_.emplace(options.kernel_name.substr(6), std::regex::ECMAScript);
      } catch (const std::regex_error& e) {
        throw FilterError("kernel name \"" + options.kernel_name + "\": not a valid regular expression (" +
                          e.what() + ")");
      }
    } else {
      exact_ = options.kernel_name;
    }
  }
  for (const auto& t : options.nvtx_include) include_.push_back(NvtxRule::parse(t));
  for (const auto& t : options.nvtx_exclude) exclude_.push_back(NvtxRule::parse(t));
  // Answered at a launch without a lock and without a regex search: start/end names are counted
  // as ranges start and end; a push/pop rule's regexes are searched as ranges are pushed.
  for (auto* rules : {&include_, &exclude_})
    for (auto& r : *rules) {
      if (!r.push_pop) {
        for (auto& e : r.pattern) e.name.watched = nvtx_.watch(r.domain, e.name);
        continue;
      }
      r.domain.slot = nvtx_.watch_regex(r.domain, /*domain=*/true);
      for (auto& e : r.pattern)
        if (e.kind == NvtxElement::Kind::kName) e.name.slot = nvtx_.watch_regex(e.name, /*domain=*/false);
    }
}

bool LaunchFilter::name_matches(std::string_view symbol) {
  if (!has_name_) return true;
  if (symbol.empty()) return false;  // a graph launch has no kernel name
  NameCache& cache = name_cache_.local();  // this thread's: no lock
  if (auto it = cache.find(symbol); it != cache.end()) return it->second;
  bool match = false;
  if (regex_) {  // in the name --kernel-name-base reads (kernel_names.h)
    match = regex_names_kernel(*regex_, base_, base_ == "mangled" ? std::string() : demangled(symbol), symbol);
  } else {
    match = kernel_name_equals(symbol, base_, exact_);
  }
  cache.emplace(std::string(symbol), match);
  return match;
}

bool LaunchFilter::selects(std::string_view symbol, uint64_t thread) {
  if (!name_matches(symbol)) return false;
  if (!include_.empty()) {
    bool any = false;
    for (const auto& r : include_) any = any || r.matches(nvtx_, thread);
    if (!any) return false;
  }
  for (const auto& r : exclude_)
    if (r.matches(nvtx_, thread)) return false;
  return true;
}

}  // namespace rf::collector
