// Call stack capture, deduplication and symbolization (rfprof/collector/call_stacks.h).
#define UNW_LOCAL_ONLY
#include "rfprof/collector/call_stacks.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <libunwind.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace rf::collector {
namespace {

/// FNV-1a over the frame addresses.
uint64_t hash_frames(std::span<const uintptr_t> frames) noexcept {
  uint64_t h = 1469598103934665603ull;
  for (uintptr_t f : frames) {
    h ^= static_cast<uint64_t>(f);
    h *= 1099511628211ull;
  }
  return h;
}

std::string_view basename_of(std::string_view path) noexcept {
  auto slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

/// dladdr of a return address: the function it returns into, and its module.
StackFrame resolve(uintptr_t return_address) {
  StackFrame f;
  // A return address points after the call instruction, possibly at the next function: look up
  // the byte before it.
  const uintptr_t pc = return_address > 0 ? return_address - 1 : 0;
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(pc), &info) == 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(pc));
    f.function = buf;
    return f;
  }
  if (info.dli_fname) f.module = info.dli_fname;
  if (info.dli_sname) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> d(
        abi::__cxa_demangle(info.dli_sname, nullptr, nullptr, &status), &std::free);
    f.function = (status == 0 && d) ? d.get() : info.dli_sname;
  } else {
    const auto base = reinterpret_cast<uintptr_t>(info.dli_fbase);
    char buf[32];
    std::snprintf(buf, sizeof buf, "+0x%llx", static_cast<unsigned long long>(pc - base));
    f.function = std::string(basename_of(f.module)) + buf;
  }
  return f;
}

}  // namespace

size_t CallStackTable::capture(std::span<uintptr_t> frames) noexcept {
  if (frames.empty()) return 0;
  const int max = static_cast<int>(std::min<size_t>(frames.size(), 1u << 16));
  const int n = ::unw_backtrace(reinterpret_cast<void**>(frames.data()), max);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

uint32_t CallStackTable::intern(std::span<const uintptr_t> frames) noexcept {
  if (frames.size() > kMaxDepth) frames = frames.first(kMaxDepth);
  if (frames.empty()) return 0;
  const uint64_t h = hash_frames(frames);
  try {
    ThreadCache& cache = thread_caches_.local();  // this thread's: no lock
    auto [first, last] = cache.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (std::equal(frames.begin(), frames.end(), it->second.second.begin(), it->second.second.end()))
        return it->second.first;
    const uint32_t id = intern_shared(frames, h);
    if (id != 0 && cache.size() < kThreadCacheStacks)
      cache.emplace(h, std::make_pair(id, std::vector<uintptr_t>(frames.begin(), frames.end())));
    return id;
  } catch (...) {  // out of memory for the thread's cache: the shared table answers
    return intern_shared(frames, h);
  }
}

uint32_t CallStackTable::intern_shared(std::span<const uintptr_t> frames, uint64_t h) noexcept {
  std::lock_guard lock(mutex_);
  auto [first, last] = by_hash_.equal_range(h);
  for (auto it = first; it != last; ++it) {
    const Entry& e = stacks_[it->second - 1];
    if (e.length == frames.size() &&
        std::equal(frames.begin(), frames.end(), frames_.begin() + static_cast<ptrdiff_t>(e.offset)))
      return it->second;
  }
  if (stacks_.size() >= max_stacks_) {
    ++overflowed_;
    return 0;
  }
  try {
    const auto id = static_cast<uint32_t>(stacks_.size() + 1);
    const size_t offset = frames_.size();
    frames_.insert(frames_.end(), frames.begin(), frames.end());
    stacks_.push_back({offset, frames.size()});
    by_hash_.emplace(h, id);
    return id;
  } catch (...) {  // out of memory: the launch goes without a stack
    ++overflowed_;
    return 0;
  }
}

uint32_t CallStackTable::capture_and_intern() noexcept {
  uintptr_t frames[kMaxDepth];
  const size_t n = capture(frames);
  return intern(std::span<const uintptr_t>(frames, n));
}

std::vector<std::pair<uint32_t, std::vector<StackFrame>>> CallStackTable::symbolize(
    const std::function<bool(std::string_view module)>& skip_leading) const {
  std::vector<uintptr_t> frames;
  std::vector<Entry> stacks;
  {
    std::lock_guard lock(mutex_);
    frames = frames_;
    stacks = stacks_;
  }
  std::unordered_map<uintptr_t, StackFrame> resolved;  // each distinct address once
  std::vector<std::pair<uint32_t, std::vector<StackFrame>>> out;
  out.reserve(stacks.size());
  for (size_t s = 0; s < stacks.size(); ++s) {
    std::vector<StackFrame> symbolized;
    bool leading = true;
    for (size_t i = 0; i < stacks[s].length; ++i) {
      const uintptr_t pc = frames[stacks[s].offset + i];
      auto it = resolved.find(pc);
      if (it == resolved.end()) it = resolved.emplace(pc, resolve(pc)).first;
      if (leading && skip_leading && skip_leading(it->second.module)) continue;
      leading = false;
      symbolized.push_back(it->second);
    }
    out.emplace_back(static_cast<uint32_t>(s + 1), std::move(symbolized));
  }
  return out;
}

size_t CallStackTable::size() const {
  std::lock_guard lock(mutex_);
  return stacks_.size();
}

uint64_t CallStackTable::overflowed() const {
  std::lock_guard lock(mutex_);
  return overflowed_;
}

bool is_launch_machinery(std::string_view module) noexcept {
  const std::string_view base = basename_of(module);
  for (std::string_view prefix : {"librfinject", "libcupti", "libcuda.so", "libcuda-"})
    if (base.substr(0, prefix.size()) == prefix) return true;
  return false;
}

}  // namespace rf::collector
