// librfinject configuration from RFPROF_* environment variables (docs/inject-env.md).
#include "config.h"

#include <algorithm>
#include <cctype>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>

#include "rfprof/collector/metric_set_names.h"
#include "rfprof/collector/device_filter.h"
#include "rfprof/collector/step_range_windows.h"

namespace rf::inject {
namespace {

std::string trim(std::string_view s) {
  auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

[[noreturn]] void bad(std::string_view var, std::string_view value, std::string_view expected) {
  throw ConfigError("rfprof: " + std::string(var) + "=\"" + std::string(value) +
                    "\": expected " + std::string(expected));
}

/// The trimmed value of `var`, or nullopt when unset or empty.
std::optional<std::string> get(const EnvLookup& env, const char* var) {
  auto v = env(var);
  if (!v) return std::nullopt;
  std::string t = trim(*v);
  if (t.empty()) return std::nullopt;
  return t;
}

bool parse_on_off(const char* var, const std::string& value) {
  std::string v = lower(value);
  if (v == "on" || v == "yes" || v == "1") return true;
  if (v == "off" || v == "no" || v == "0") return false;
  bad(var, value, "one of on, off, yes, no, 1, 0");
}

std::vector<std::string> parse_metrics_impl(const std::string& value) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    size_t comma = value.find(',', pos);
    std::string item =
        trim(std::string_view(value).substr(pos, comma == std::string::npos ? comma : comma - pos));
    if (item.empty())
      bad("RFPROF_METRICS", value,
          "a comma-separated list of metric names without empty items, e.g. "
          "dram__bytes_read.sum,gpu__time_duration.sum");
    if (std::find(out.begin(), out.end(), item) == out.end()) out.push_back(std::move(item));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

uint32_t parse_flush_ms(const std::string& value) {
  constexpr const char* kExpected = "an integer number of milliseconds from 1 to 60000";
  uint64_t ms = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, ms);
  if (ec != std::errc() || ptr != end || ms < 1 || ms > 60000) bad("RFPROF_FLUSH_MS", value, kExpected);
  return static_cast<uint32_t>(ms);
}

uint32_t parse_max_ranges(const std::string& value) {
  const std::string t = trim(value);
  uint64_t n = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), n);
  if (ec != std::errc() || ptr != t.data() + t.size() || n < 1 || n > 100000)
    bad("RFPROF_MAX_RANGES", value, "a number of kernels per counter image from 1 to 100000");
  return static_cast<uint32_t>(n);
}

uint64_t parse_count(const char* var, const std::string& value, uint64_t min) {
  uint64_t n = 0;
  const char* end = value.data() + value.size();
  auto [ptr, ec] = std::from_chars(value.data(), end, n);
  if (ec != std::errc() || ptr != end || n < min)
    bad(var, value, min == 0 ? "a number of launches (0 or more)" : "a number of launches (1 or more)");
  return n;
}

/// ';'-separated NVTX rules (ncu's --nvtx-include/--nvtx-exclude syntax).
std::vector<std::string> split_rules(const char* var, const std::string& value) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (true) {
    const size_t semi = value.find(';', pos);
    std::string rule = trim(std::string_view(value).substr(pos, semi == std::string::npos ? semi : semi - pos));
    if (rule.empty()) bad(var, value, "NVTX rules in ncu's syntax separated by ';', without empty items");
    out.push_back(std::move(rule));
    if (semi == std::string::npos) break;
    pos = semi + 1;
  }
  return out;
}

/// The launch filters: kernel name, NVTX rules, skip and count (docs/inject-env.md).
void read_filters(const EnvLookup& env, Config& c) {
  if (auto v = get(env, "RFPROF_KERNEL_NAME")) c.filter.kernel_name = *v;
  if (auto v = get(env, "RFPROF_KERNEL_NAME_BASE")) c.filter.kernel_name_base = lower(*v);
  if (auto v = get(env, "RFPROF_NVTX_INCLUDE")) c.filter.nvtx_include = split_rules("RFPROF_NVTX_INCLUDE", *v);
  if (auto v = get(env, "RFPROF_NVTX_EXCLUDE")) c.filter.nvtx_exclude = split_rules("RFPROF_NVTX_EXCLUDE", *v);
  if (auto v = get(env, "RFPROF_LAUNCH_SKIP")) c.launch_skip = parse_count("RFPROF_LAUNCH_SKIP", *v, 0);
  if (auto v = get(env, "RFPROF_LAUNCH_COUNT")) c.launch_count = parse_count("RFPROF_LAUNCH_COUNT", *v, 1);
  if (auto v = get(env, "RFPROF_LAUNCH_SKIP_BEFORE_MATCH"))
    c.launch_skip_before_match = parse_count("RFPROF_LAUNCH_SKIP_BEFORE_MATCH", *v, 0);
  if (auto v = get(env, "RFPROF_FILTER_MODE")) {
    auto mode = collector::parse_filter_mode(lower(*v));
    if (!mode) bad("RFPROF_FILTER_MODE", *v, "global, per-gpu or per-launch-config");
    c.filter_mode = *mode;
  }
  if (auto v = get(env, "RFPROF_KERNEL_ID")) {
    try {
      c.kernel_id = collector::KernelId::parse(*v);
    } catch (const collector::FilterError& e) {
      std::string what = e.what();  // "--kernel-id VALUE: why": the variable is named instead
      const std::string flag = "--kernel-id " + *v + ": ";
      if (what.rfind(flag, 0) == 0) what.erase(0, flag.size());
      throw ConfigError("rfprof: RFPROF_KERNEL_ID=\"" + *v + "\": " + what);
    }
  }
  if (auto v = get(env, "RFPROF_DEVICES")) {
    auto devices = collector::parse_device_list(*v);
    if (!devices)
      bad("RFPROF_DEVICES", *v, "CUDA device ordinals below 1024 separated by commas, none twice, such as 0 or 0,2");
    c.filter.devices = std::move(*devices);
  }
  // Each variable's filter alone, so that an error names the variable its value came from (an
  // include rule's error may quote an exclude rule's text).
  const auto check = [](const char* var, const std::string& value, const collector::LaunchFilterOptions& only) {
    try {
      collector::LaunchFilter filter(only);
    } catch (const collector::FilterError& e) {
      throw ConfigError("rfprof: " + std::string(var) + "=\"" + value + "\": " + e.what());
    }
  };
  collector::LaunchFilterOptions only;
  only.kernel_name_base = c.filter.kernel_name_base;
  check("RFPROF_KERNEL_NAME_BASE", get(env, "RFPROF_KERNEL_NAME_BASE").value_or(""), only);
  only.kernel_name = c.filter.kernel_name;
  check("RFPROF_KERNEL_NAME", c.filter.kernel_name, only);
  only = {};
  only.nvtx_include = c.filter.nvtx_include;
  check("RFPROF_NVTX_INCLUDE", get(env, "RFPROF_NVTX_INCLUDE").value_or(""), only);
  only = {};
  only.nvtx_exclude = c.filter.nvtx_exclude;
  check("RFPROF_NVTX_EXCLUDE", get(env, "RFPROF_NVTX_EXCLUDE").value_or(""), only);
}

/// RFPROF_KERNEL_RECORDS (after RFPROF_REPLAY): replay across steps records kernels serialized,
/// since concurrent kernel tracing makes user replay count no smsp__sass_* instruction
/// (collector::KernelRecords); asking for concurrent with it is refused.
void read_kernel_records(const EnvLookup& env, Config& c) {
  if (c.replay_across_steps) c.kernel_records = collector::KernelRecords::kSerial;
  auto v = get(env, "RFPROF_KERNEL_RECORDS");
  if (!v) return;
  const std::string k = lower(trim(*v));
  if (k == "concurrent") {
    if (c.replay_across_steps)
      bad("RFPROF_KERNEL_RECORDS", *v,
          "serial (or unset) with RFPROF_REPLAY=step (rfprof --replay-mode step): concurrent kernel tracing "
          "instruments the kernels, "
          "and the passes then count no smsp__sass_* instruction");
    c.kernel_records = collector::KernelRecords::kConcurrent;
  } else if (k == "serial") {
    c.kernel_records = collector::KernelRecords::kSerial;
  } else {
    // No "off": the analyzer joins each launch with its kernel record, and would hold them all.
    bad("RFPROF_KERNEL_RECORDS", *v, "concurrent or serial");
  }
}

/// RFPROF_REPLAY, RFPROF_REPLAY_GROUPS, RFPROF_REPLAY_RANGE and RFPROF_STEP_PASS_START (after the mode,
/// the window and the filters are read).
void read_replay(const EnvLookup& env, Config& c) {
  std::string replay;  // RFPROF_REPLAY as given, for the messages below
  if (auto v = get(env, "RFPROF_REPLAY")) {
    replay = *v;
    const std::string r = lower(trim(*v));
    if (r == "step") c.replay_across_steps = true;
    else if (r != "kernel") bad("RFPROF_REPLAY", *v, "kernel or step");
  }
  if (auto v = get(env, "RFPROF_REPLAY_GROUPS")) {
    uint32_t g = 0;
    auto [ptr, ec] = std::from_chars(v->data(), v->data() + v->size(), g);
    if (ec != std::errc() || ptr != v->data() + v->size() || g < 1 || g > 1000)
      bad("RFPROF_REPLAY_GROUPS", *v, "a number of groups from 1 to 1000");
    if (!c.replay_across_steps) bad("RFPROF_REPLAY_GROUPS", *v, "RFPROF_REPLAY=step with it (groups are its passes)");
    c.replay_groups = g;
  }
  if (auto v = get(env, "RFPROF_REPLAY_RANGE")) {
    try {
      collector::StepRangeWindows check(*v);
    } catch (const std::invalid_argument& e) {
      bad("RFPROF_REPLAY_RANGE", *v, std::string("an NVTX range name or regex:EXPR: ") + e.what());
    }
    if (!c.replay_across_steps)
      bad("RFPROF_REPLAY_RANGE", *v, "RFPROF_REPLAY=step with it (the range is the window of one pass)");
    c.replay_range = *v;
  }
  if (auto v = get(env, "RFPROF_STEP_PASS_START")) {
    const std::string w = lower(trim(*v));
    if (w == "launch") c.step_pass_start = collector::StepPassStart::kFirstLaunch;
    else if (w == "window") c.step_pass_start = collector::StepPassStart::kWindowOpen;
    else bad("RFPROF_STEP_PASS_START", *v, "launch or window");
    if (!c.replay_across_steps) bad("RFPROF_STEP_PASS_START", *v, "RFPROF_REPLAY=step with it");
  }
  if (!c.replay_across_steps) return;
  const std::string& v = replay;
  if (c.mode != trace::CollectionMode::kCounters)
    bad("RFPROF_REPLAY", v,
        std::string("counters mode with it (") + (c.metric_set == "timing" ? "RFPROF_METRIC_SET=timing" : "RFPROF_MODE=timing") +
            " is timing mode, which runs no passes to replay)");
  if (c.profile_from_start)
    bad("RFPROF_REPLAY", v,
        "RFPROF_PROFILE_FROM_START=off with it: each cudaProfilerStart/Stop window (one training step) "
        "is one pass");
  // Each filter set, by its variable: every kernel of a window must run the pass.
  std::string filters;
  auto set = [&](bool is_set, const char* var) {
    if (is_set) filters += (filters.empty() ? "" : ", ") + std::string(var);
  };
  set(!c.filter.kernel_name.empty(), "RFPROF_KERNEL_NAME");
  set(!c.filter.nvtx_include.empty(), "RFPROF_NVTX_INCLUDE");
  set(!c.filter.nvtx_exclude.empty(), "RFPROF_NVTX_EXCLUDE");
  set(c.launch_skip > 0, "RFPROF_LAUNCH_SKIP");
  set(c.launch_count.has_value(), "RFPROF_LAUNCH_COUNT");
  set(!c.filter.devices.empty(), "RFPROF_DEVICES");
  set(c.kernel_id.has_value(), "RFPROF_KERNEL_ID");
  set(c.filter_mode != collector::FilterMode::kGlobal, "RFPROF_FILTER_MODE");
  set(c.launch_skip_before_match > 0, "RFPROF_LAUNCH_SKIP_BEFORE_MATCH");
  if (!filters.empty())
    bad("RFPROF_REPLAY", v,
        "no kernel, NVTX, launch or device filter with it (every kernel of a window runs the pass); " + filters +
            (filters.find(',') == std::string::npos ? " is set" : " are set"));
}

}  // namespace

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

/// `name` with `tag` inserted before its ".rftrace", or appended when it has none.
std::string with_tag_before_extension(std::string name, std::string_view tag) {
  constexpr std::string_view kExt = ".rftrace";
  const size_t at = name.ends_with(kExt) ? name.size() - kExt.size() : name.size();
  return name.insert(at, tag);
}

std::string per_process_pattern(std::string_view pattern, uint32_t pid, std::optional<uint32_t> root_pid) {
  std::string p(pattern);
  if (!root_pid || *root_pid == pid) return p;
  for (size_t i = 0; i + 1 < p.size(); ++i) {
    if (p[i] != '%') continue;
    const char c = p[i + 1];
    if (c == 'p' || c == 'i' || c == 'q') return p;  // already one name per process
    ++i;                                             // "%%" and "%h" are skipped whole
  }
  return with_tag_before_extension(std::move(p), ".%p");
}

std::vector<std::string> parse_metric_list(const std::string& value) { return parse_metrics_impl(value); }

Config read_config(const EnvLookup& env) {
  Config c;
  if (auto v = env("RFPROF_OUTPUT"); v && !trim(*v).empty()) c.output_pattern = trim(*v);
  if (auto v = get(env, "RFPROF_METRICS")) c.metrics = parse_metric_list(*v);
  if (auto v = get(env, "RFPROF_PROFILE_FROM_START"))
    c.profile_from_start = parse_on_off("RFPROF_PROFILE_FROM_START", *v);
  const auto mode = get(env, "RFPROF_MODE");
  if (mode) {
    std::string m = lower(*mode);
    if (m == "counters")
      c.mode = trace::CollectionMode::kCounters;
    else if (m == "timing")
      c.mode = trace::CollectionMode::kTiming;
    else
      bad("RFPROF_MODE", *mode, "counters or timing");
    // Timing mode collects no counters: metrics asked for besides would be dropped without a word.
    if (c.mode == trace::CollectionMode::kTiming && !c.metrics.empty())
      bad("RFPROF_MODE", *mode, "no RFPROF_METRICS with it (timing mode collects no counters)");
  }
  if (auto v = get(env, "RFPROF_METRIC_SET")) {
    const auto& sets = collector::metric_set_names();
    const std::string name = lower(trim(*v));
    if (std::find(sets.begin(), sets.end(), name) == sets.end()) {
      std::string known;
      for (const auto& n : sets) known += (known.empty() ? "" : ", ") + n;
      bad("RFPROF_METRIC_SET", *v, "one of " + known);
    }
    if (!c.metrics.empty() && name == "timing")
      bad("RFPROF_METRIC_SET", *v, "no RFPROF_METRICS with it (the timing set collects no counters)");
    // A set of counters in timing mode, or the timing set in counters mode: one of them is dropped.
    if (mode && (name == "timing") != (c.mode == trace::CollectionMode::kTiming))
      bad("RFPROF_METRIC_SET", *v,
          "a set that agrees with RFPROF_MODE=" + lower(trim(*mode)) +
              " (the timing set is timing mode, the others counters mode)");
    c.metric_set = name;
    if (name == "timing") c.mode = trace::CollectionMode::kTiming;
  }
  if (auto v = get(env, "RFPROF_DISABLE_PROFILER_START_STOP")) {
    if (*v == "1") c.disable_profiler_start_stop = true;
    else if (*v != "0") bad("RFPROF_DISABLE_PROFILER_START_STOP", *v, "0 or 1");
  }
  if (auto v = get(env, "RFPROF_TARGET_PROCESSES")) {
    const std::string t = lower(trim(*v));
    if (t == "all") c.all_processes = true;
    else if (t == "application-only") c.all_processes = false;
    else bad("RFPROF_TARGET_PROCESSES", *v, "application-only or all");
  }
  if (auto v = get(env, "RFPROF_ROOT_PID")) {
    uint32_t pid = 0;
    const std::string t = trim(*v);
    auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), pid);
    if (ec != std::errc() || ptr != t.data() + t.size() || pid == 0) bad("RFPROF_ROOT_PID", *v, "a process id");
    c.root_pid = pid;
  }
  // application-only names its process by RFPROF_ROOT_PID: without it every process would be
  // profiled, the opposite of what was asked (librfinject used without the rfprof launcher).
  if (auto v = get(env, "RFPROF_TARGET_PROCESSES"); v && !c.all_processes && !c.root_pid)
    bad("RFPROF_TARGET_PROCESSES", *v,
        "all, or application-only with RFPROF_ROOT_PID set to the application's process id (rfprof sets both)");
  if (auto v = get(env, "RFPROF_TRACE_LIST")) c.trace_list = trim(*v);
  if (auto v = get(env, "RFPROF_FORCE_OVERWRITE")) {
    if (*v == "1")
      c.force_overwrite = true;
    else if (*v == "0")
      c.force_overwrite = false;
    else
      bad("RFPROF_FORCE_OVERWRITE", *v, "0 or 1");
  }
  if (auto v = get(env, "RFPROF_FLUSH_MS")) c.flush_ms = parse_flush_ms(*v);
  if (auto v = get(env, "RFPROF_MAX_RANGES")) c.max_ranges = parse_max_ranges(*v);
  if (auto v = get(env, "RFPROF_CALLSTACKS")) c.call_stacks = parse_on_off("RFPROF_CALLSTACKS", *v);
  if (auto v = get(env, "RFPROF_MEMORY")) c.memory = parse_on_off("RFPROF_MEMORY", *v);
  read_filters(env, c);
  read_replay(env, c);
  // Nothing open at the start and every cudaProfilerStart ignored: no window would ever open
  // (replay across steps with an NVTX range as the window needs neither).
  if (!c.profile_from_start && c.disable_profiler_start_stop && c.replay_range.empty())
    bad("RFPROF_DISABLE_PROFILER_START_STOP", "1",
        "RFPROF_PROFILE_FROM_START=on with it (profiling off at the start, and cudaProfilerStart ignored: "
        "nothing would be profiled)");
  read_kernel_records(env, c);
  return c;
}

namespace {

/// Expands every placeholder but %i, which becomes `index_text`. Sets `has_index`.
std::string expand_once(std::string_view pattern, const PatternContext& ctx,
                        const std::string& index_text, bool& has_index) {
  auto fail = [&](const std::string& what) -> std::string {
    bad("RFPROF_OUTPUT", pattern, what);
  };
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c != '%') {
      out += c;
      continue;
    }
    if (i + 1 >= pattern.size())
      return fail("a path pattern; it ends with a lone % (write %% for a literal %)");
    char p = pattern[++i];
    switch (p) {
      case 'p':
        out += std::to_string(ctx.pid);
        break;
      case 'h':
        out += ctx.hostname;
        break;
      case 'i':
        has_index = true;
        out += index_text;
        break;
      case '%':
        out += '%';
        break;
      case 'q': {
        if (i + 1 >= pattern.size() || pattern[i + 1] != '{')
          return fail("%q followed by {VAR}, the name of an environment variable, e.g. %q{RANK}");
        size_t close = pattern.find('}', i + 2);
        if (close == std::string_view::npos || close == i + 2)
          return fail("%q{VAR} with a non-empty variable name and a closing }");
        std::string var(pattern.substr(i + 2, close - i - 2));
        std::optional<std::string> value = ctx.env ? ctx.env(var) : std::nullopt;
        if (!value) return fail("%q{" + var + "} naming a set environment variable; " + var + " is not set");
        out += *value;
        i = close;
        break;
      }
      default:
        return fail(std::string("placeholders %p, %h, %q{VAR}, %i or %%; %") + p + " is unknown");
    }
  }
  return out;
}

}  // namespace

std::filesystem::path expand_output_pattern(std::string_view pattern, const PatternContext& ctx) {
  if (trim(pattern).empty()) bad("RFPROF_OUTPUT", pattern, "a non-empty path pattern");
  bool has_index = false;
  std::string first = expand_once(pattern, ctx, "1", has_index);
  if (!has_index) return first;
  auto exists = ctx.exists ? ctx.exists : [](const std::filesystem::path& p) {
    std::error_code ec;
    return std::filesystem::exists(p, ec);
  };
  constexpr uint32_t kMaxIndex = 1000000;
  for (uint32_t n = 1; n <= kMaxIndex; ++n) {
    std::string candidate = n == 1 ? first : expand_once(pattern, ctx, std::to_string(n), has_index);
    if (!exists(candidate) && !exists(candidate + ".part")) return candidate;
  }
  bad("RFPROF_OUTPUT", pattern, "a %i pattern with a free index from 1 to 1000000");
}

bool has_index_placeholder(std::string_view pattern) noexcept {
  for (size_t i = 0; i + 1 < pattern.size(); ++i) {
    if (pattern[i] != '%') continue;
    if (pattern[i + 1] == 'i') return true;
    ++i;  // "%%" and the other placeholders' letters are skipped whole
  }
  return false;
}

std::filesystem::path output_after_in_use(std::string_view pattern, const PatternContext& ctx,
                                          const std::filesystem::path& taken, uint32_t attempt, bool live) noexcept {
  try {
    const bool indexed = has_index_placeholder(pattern);
    if (indexed) {
      std::filesystem::path next = expand_output_pattern(pattern, ctx);
      if (next != taken) return next;
    }
    if (!live && !indexed) return {};
    return with_tag_before_extension(taken.string(), "." + std::to_string(ctx.pid) +
                                                         (attempt > 1 ? "-" + std::to_string(attempt) : ""));
  } catch (...) {
    return {};
  }
}

collector::SessionOptions session_options(const Config& config, std::filesystem::path output) {
  collector::SessionOptions options;
  options.output = std::move(output);
  options.metrics = config.metrics;
  options.metric_set = config.metric_set;
  options.profile_from_start = config.profile_from_start;
  options.mode = config.mode;
  options.force_overwrite = config.force_overwrite;
  options.disable_profiler_start_stop = config.disable_profiler_start_stop;
  options.flush_ms = config.flush_ms;
  options.max_ranges_per_image = config.max_ranges;
  options.call_stacks = config.call_stacks;
  options.memory = config.memory;
  options.kernel_records = config.kernel_records;
  options.filter = config.filter;
  options.launch_skip = config.launch_skip;
  options.launch_count = config.launch_count;
  options.filter_mode = config.filter_mode;
  options.kernel_id = config.kernel_id;
  options.launch_skip_before_match = config.launch_skip_before_match;
  options.replay_across_steps = config.replay_across_steps;
  options.replay_groups = config.replay_groups;
  options.replay_range = config.replay_range;
  options.step_pass_start = config.step_pass_start;
  return options;
}

bool profiles_process(const Config& config, uint32_t pid) noexcept {
  return config.all_processes || !config.root_pid || *config.root_pid == pid;
}

bool append_trace_list(const std::filesystem::path& list, const std::filesystem::path& trace) noexcept {
  try {
    const std::string line = std::filesystem::absolute(trace).string() + "\n";
    // O_NONBLOCK: a pipe that no process reads fails at once (ENXIO) instead of blocking the
    // application's CUDA initialization for good; anything but a regular file is refused.
    const int fd = ::open(list.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    if (fd < 0) return false;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      const int err = S_ISREG(st.st_mode) ? errno : EINVAL;  // a pipe with a reader, a device: not a file
      ::close(fd);
      errno = err;
      return false;
    }
    // One write of the whole line: O_APPEND writes of processes sharing the list never interleave.
    const bool ok = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
    return ::close(fd) == 0 && ok;
  } catch (...) {
    return false;
  }
}

}  // namespace rf::inject
