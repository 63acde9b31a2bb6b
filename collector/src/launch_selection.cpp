// ncu's launch counting options (rfprof/collector/launch_selection.h).
#include "rfprof/collector/launch_selection.h"

#include <charconv>
#include <cstdio>
#include <cstring>
#include <functional>
#include <mutex>
#include <regex>
#include <unordered_map>

namespace rf::collector {

std::optional<FilterMode> parse_filter_mode(std::string_view text) {
  if (text == "global") return FilterMode::kGlobal;
  if (text == "per-gpu") return FilterMode::kPerGpu;
  if (text == "per-launch-config") return FilterMode::kPerLaunchConfig;
  return std::nullopt;
}

std::string_view filter_mode_name(FilterMode mode) noexcept {
  switch (mode) {
    case FilterMode::kPerGpu:
      return "per-gpu";
    case FilterMode::kPerLaunchConfig:
      return "per-launch-config";
    case FilterMode::kGlobal:
      break;
  }
  return "global";
}

namespace {

constexpr std::string_view kExpected =
    "expected CONTEXT:STREAM:[regex:]NAME:INVOCATION, empty fields matching anything (e.g. ::foo:2, "
    "the second launch of foo)";

/// A compiled field of a kernel id; nullopt for an empty field. Throws FilterError.
std::optional<std::regex> field_regex(std::string_view id, std::string_view field, const char* what) {
  if (field.empty()) return std::nullopt;
  try {
    return std::regex(std::string(field), std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw FilterError("--kernel-id " + std::string(id) + ": " + what + " '" + std::string(field) +
                      "' is not a valid regular expression: " + e.what());
  }
}

}  // namespace

/// A numeric field of a kernel id: empty (any), a number (matched exactly: no regular expression
/// is searched at a launch), or a regular expression on the whole decimal number.
struct LaunchSelection::IdField {
  std::optional<uint64_t> number;
  std::optional<std::regex> re;

  IdField() = default;
  IdField(std::string_view id, std::string_view field, const char* what) {
    uint64_t n = 0;
    auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), n);
    if (!field.empty() && ec == std::errc() && ptr == field.data() + field.size())
      number = n;
    else
      re = field_regex(id, field, what);
  }
  bool matches(uint64_t n) const {
    if (number) return n == *number;
    if (!re) return true;
    char buf[24];
    const int len = std::snprintf(buf, sizeof buf, "%llu", static_cast<unsigned long long>(n));
    return std::regex_match(buf, buf + len, *re);
  }
};

namespace {

template <typename T>
void put(std::string& key, const T& value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  key.append(bytes, sizeof(T));
}

}  // namespace

KernelId KernelId::parse(std::string_view text) {
  const size_t p1 = text.find(':');
  const size_t p2 = p1 == std::string_view::npos ? p1 : text.find(':', p1 + 1);
  const size_t p3 = text.rfind(':');
  if (p2 == std::string_view::npos || p3 <= p2)
    throw FilterError("--kernel-id " + std::string(text) + ": " + std::string(kExpected));
  KernelId id;
  id.context = std::string(text.substr(0, p1));
  id.stream = std::string(text.substr(p1 + 1, p2 - p1 - 1));
  id.kernel_name = std::string(text.substr(p2 + 1, p3 - p2 - 1));
  id.invocation = std::string(text.substr(p3 + 1));
  // A field that can name no launch (a NAME with ':' whose INVOCATION was left out: "::ns::foo";
  // a context "-1" or a stream "1 ") is a mistake to report now, not a filter that silently
  // selects nothing. Tried: 0 (context and stream ids) or 1 (invocations) to 1000, and for each
  // further decimal length and leading digit the first 1000 numbers (2[0-9]{3}: 2000).
  const auto check = [&](const std::string& field, const char* what, uint64_t first, const char* counting) {
    if (field.empty()) return;
    const LaunchSelection::IdField f(text, field, what);
    bool any = f.number.has_value() && *f.number >= first;
    for (uint64_t n = first; n <= 1000 && !any; ++n) any = f.matches(n);
    for (uint64_t base = 1000; base <= 1000000000000000000ull && !any; base *= 10)
      for (uint64_t d = 1; d <= 9 && !any; ++d)
        for (uint64_t n = d * base; n < d * base + 1000 && !any; ++n) any = f.matches(n);
    if (!any)
      throw FilterError("--kernel-id " + std::string(text) + ": " + what + " '" + field + "' matches no " + counting +
                        "; " + std::string(kExpected));
  };
  check(id.context, "the context", 0, "context id (a number from 0, CUPTI's)");
  check(id.stream, "the stream", 0, "stream id (a number from 0, CUPTI's)");
  check(id.invocation, "the invocation", 1, "launch number (they count from 1)");
  if (id.kernel_name == "regex:")
    throw FilterError("--kernel-id " + std::string(text) + ": regex: needs an expression (" + std::string(kExpected) + ")");
  if (id.kernel_name.rfind("regex:", 0) == 0)
    (void)field_regex(text, std::string_view(id.kernel_name).substr(6), "the kernel name");
  return id;
}

/// Keyed counters: kShards maps from an encoded key to the next ordinal, each under its lock.
struct LaunchSelection::Shards {
  struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  struct Shard {
    std::mutex mutex;
    std::unordered_map<std::string, uint64_t, Hash, std::equal_to<>> next;
  };
  std::array<Shard, kShards> shards;
};

LaunchSelection::LaunchSelection(LaunchSelectionOptions options)
    : options_(std::move(options)), shards_(std::make_unique<Shards>()) {
  if (options_.kernel_id) {
    const KernelId& id = *options_.kernel_id;
    const std::string text = id.context + ":" + id.stream + ":" + id.kernel_name + ":" + id.invocation;
    context_ = std::make_unique<IdField>(text, id.context, "the context");
    stream_ = std::make_unique<IdField>(text, id.stream, "the stream");
    invocation_ = std::make_unique<IdField>(text, id.invocation, "the invocation");
  }
}

LaunchSelection::~LaunchSelection() = default;

bool LaunchSelection::needs_stream_id() const noexcept {
  return options_.kernel_id && !options_.kernel_id->stream.empty();
}

bool LaunchSelection::kernel_id_matches(const CountedLaunch& launch) const {
  return launch.kernel_id_name_matches && context_->matches(launch.context_id) && stream_->matches(launch.stream_id);
}

uint64_t LaunchSelection::next_ordinal(int kind, const CountedLaunch& launch) {
  // The key: kind, then the fields this kind and mode count separately, then the kernel.
  thread_local std::string key;
  key.clear();
  put(key, static_cast<uint8_t>(kind));
  constexpr uint32_t kAny = ~uint32_t{0};
  if (kind == 0) {  // invocations: per kernel, and per context/stream when the id names them
    put(key, options_.kernel_id->context.empty() ? kAny : launch.context_id);
    put(key, options_.kernel_id->stream.empty() ? kAny : launch.stream_id);
  }
  const bool per_config = options_.mode == FilterMode::kPerLaunchConfig;
  if (options_.mode == FilterMode::kPerGpu) put(key, launch.device.value_or(kAny));
  if (per_config) {
    put(key, launch.grid);
    put(key, launch.block);
    put(key, launch.shared_bytes);
  }
  if (kind == 0 || per_config) key.append(launch.kernel);
  Shards::Shard& shard = shards_->shards[Shards::Hash{}(key) % kShards];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.next.find(std::string_view(key));
  if (it == shard.next.end()) it = shard.next.emplace(key, 0).first;
  return it->second++;
}

bool LaunchSelection::admit(const CountedLaunch& launch, bool filtered_in) {
  if (options_.skip_before_match > 0 && all_.fetch_add(1, std::memory_order_relaxed) < options_.skip_before_match)
    return false;
  if (!filtered_in) return false;
  if (options_.kernel_id) {
    if (!kernel_id_matches(launch)) return false;
    if (!options_.kernel_id->invocation.empty() && !invocation_->matches(next_ordinal(0, launch) + 1)) return false;
  }
  if (options_.launch_skip == 0 && !options_.launch_count) return true;
  const uint64_t ordinal = options_.mode == FilterMode::kGlobal ? global_.fetch_add(1, std::memory_order_relaxed)
                                                                : next_ordinal(1, launch);
  return ordinal >= options_.launch_skip &&
         (!options_.launch_count || ordinal - options_.launch_skip < *options_.launch_count);
}

}  // namespace rf::collector
