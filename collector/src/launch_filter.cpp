// Kernel name and NVTX filters of launches (rfprof/collector/launch_filter.h).
#include "rfprof/collector/launch_filter.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

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

void NvtxState::push(uint64_t thread, std::string_view domain, std::string_view name) {
  ThreadStacks& t = stacks_.of_key(thread);
  std::lock_guard lock(t.mutex);
  auto it = t.domains.find(domain);
  if (it == t.domains.end()) it = t.domains.emplace(std::string(domain), std::vector<std::string>{}).first;
  it->second.emplace_back(name);
}

void NvtxState::pop(uint64_t thread, std::string_view domain) {
  ThreadStacks& t = stacks_.of_key(thread);
  std::lock_guard lock(t.mutex);
  auto it = t.domains.find(domain);
  if (it == t.domains.end() || it->second.empty()) return;
  it->second.pop_back();  // an empty stack is kept: the thread will push again
}

void NvtxState::watch(std::string_view domain, std::string_view name) {
  for (const auto& w : watched_)
    if (w->domain == domain && w->name == name) return;
  auto w = std::make_unique<Watched>();
  w->domain = domain;
  w->name = name;
  watched_.push_back(std::move(w));
}

void NvtxState::start(uint64_t id, std::string_view domain, std::string_view name) {
  Watched* watched = nullptr;
  for (const auto& w : watched_)
    if (w->domain == domain && w->name == name) watched = w.get();
  std::lock_guard lock(mutex_);
  auto [it, inserted] = open_.try_emplace(id);
  if (!inserted && it->second.watched) it->second.watched->open.fetch_sub(1);  // id reused
  it->second = Open{std::string(domain), std::string(name), watched};
  if (watched) watched->open.fetch_add(1);
}

void NvtxState::end(uint64_t id) {
  std::lock_guard lock(mutex_);
  auto it = open_.find(id);
  if (it == open_.end()) return;
  if (it->second.watched) it->second.watched->open.fetch_sub(1);
  open_.erase(it);
}

std::vector<std::string> NvtxState::stack(uint64_t thread, std::string_view domain) const {
  ThreadStacks& t = stacks_.of_key(thread);
  std::lock_guard lock(t.mutex);
  auto it = t.domains.find(domain);
  return it == t.domains.end() ? std::vector<std::string>{} : it->second;
}

bool NvtxState::stack_matches(uint64_t thread, const NvtxName& domain, const std::vector<NvtxElement>& pattern,
                              bool bottom, bool top) const {
  static const std::vector<std::string> kEmpty;
  ThreadStacks& t = stacks_.of_key(thread);
  std::lock_guard lock(t.mutex);  // this thread's own: taken by another thread only in stack()
  if (domain.literal()) {
    const std::vector<std::string>* stack = &kEmpty;
    if (auto it = t.domains.find(domain.text); it != t.domains.end()) stack = &it->second;
    return rf::collector::stack_matches(pattern, bottom, top, *stack);
  }
  for (const auto& [name, stack] : t.domains)
    if (domain.matches(name) && rf::collector::stack_matches(pattern, bottom, top, stack)) return true;
  return false;
}

bool NvtxState::start_end_open(std::string_view domain, std::string_view name) const {
  for (const auto& w : watched_)
    if (w->domain == domain && w->name == name) return w->open.load() > 0;  // no lock
  std::lock_guard lock(mutex_);
  for (const auto& [id, r] : open_)
    if (r.domain == domain && r.name == name) return true;
  return false;
}

bool NvtxState::start_end_open(const NvtxName& domain, const NvtxName& name) const {
  if (domain.literal() && name.literal()) return start_end_open(domain.text, name.text);
  std::lock_guard lock(mutex_);
  for (const auto& [id, r] : open_)
    if (domain.matches(r.domain) && name.matches(r.name)) return true;
  return false;
}

// ---- LaunchFilter ----

std::string function_name_of(std::string_view d) {
  static constexpr std::string_view kAnon = "(anonymous namespace)";
  std::string out;
  int depth = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    const char c = d[i];
    if (d.substr(i, kAnon.size()) == kAnon) {  // a namespace, not a parameter list
      if (depth == 0) out += kAnon;
      i += kAnon.size() - 1;
    } else if (c == '<') {
      ++depth;
    } else if (c == '>') {
      if (depth > 0) --depth;
    } else if (depth == 0) {
      if (c == '(') break;  // the parameter list
      if (c == ' ') {
        out.clear();  // what came before was the return type
        continue;
      }
      out += c;
    }
  }
  return out;
}

bool function_name_matches(std::string_view demangled_name, std::string_view wanted) {
  if (demangled_name == wanted) return true;
  const std::string f = function_name_of(demangled_name);
  if (f == wanted) return true;
  const size_t colons = f.rfind("::");
  return colons != std::string::npos && std::string_view(f).substr(colons + 2) == wanted;
}

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
  for (const auto* rules : {&include_, &exclude_})
    for (const auto& r : *rules)
      if (!r.push_pop && r.domain.literal())
        for (const auto& e : r.pattern)
          if (e.name.literal()) nvtx_.watch(r.domain.text, e.name.text);  // answered without a lock
}

bool LaunchFilter::name_matches(std::string_view symbol) {
  if (!has_name_) return true;
  if (symbol.empty()) return false;  // a graph launch has no kernel name
  NameCache& cache = name_cache_.local();  // this thread's: no lock
  if (auto it = cache.find(symbol); it != cache.end()) return it->second;
  bool match = false;
  if (regex_) {  // searched in the demangled name (the symbol itself with base "mangled")
    const std::string name = base_ == "mangled" ? std::string(symbol) : demangled(symbol);
    match = std::regex_search(name, *regex_);
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
