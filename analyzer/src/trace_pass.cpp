// Pass 1 (context, NVTX) and pass 2 (streamed, joined launches) over one trace.
#include "rfprof/analyzer/trace_pass.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <type_traits>
#include <utility>

#include "rfprof/trace/reader.h"

namespace rf::analyzer {

namespace {

TraceContext read_context_records(const std::filesystem::path& path, RecordChecks checks) {
  TraceContext ctx;
  ctx.path = path;
  trace::Reader reader(path);
  ctx.version_major = reader.version_major();
  ctx.version_minor = reader.version_minor();
  trace::Record rec;
  trace::RawRecord raw;
  // What pass 1 copies of the strings its records name (metric names, call stack frames, device
  // names, NVTX paths) may take: 8 times the file, at least 256 MiB. A record of ids naming one 1 MiB string
  // over and over would otherwise turn a 1 MB file into gigabytes (a hostile file: 4 GB and
  // bad_alloc for a 1.07 MB CallStack of 3,000 frames).
  const uint64_t budget = std::max<uint64_t>(uint64_t{256} << 20, 8 * reader.file_size());
  uint64_t copied = 0;
  const auto charge = [&](uint64_t bytes, const char* what) {
    copied += bytes;
    if (copied > budget)
      throw trace::TraceError(trace::TraceErrorKind::kBadRecord, raw.offset,
                              std::string(what) + " names strings that, with those named before, exceed " +
                                  std::to_string(budget >> 20) + " MiB (8 times the file's size, at least 256 MiB): "
                                  "not a trace rfprof wrote");
  };
  ctx.nvtx.set_path_budget(budget);
  while (reader.next_raw(raw)) {
    // Launch, kernel and counter records (all but a few hundred of a trace's records) are read
    // in pass 2; here only the end time stamp of launches and kernels, without decoding them.
    if (checks == RecordChecks::kSkimLaunches) {
      if (const std::optional<uint64_t> end_ns = trace::peek_end_ns(raw)) {
        ++ctx.records;
        ctx.last_event_ns = std::max(ctx.last_event_ns, *end_ns);
        continue;
      }
      if (raw.type == static_cast<uint16_t>(trace::RecordType::kCounters)) {
        ++ctx.records;
        continue;
      }
    }
    if (!reader.decode(raw, rec)) continue;  // a newer writer's record
    ++ctx.records;
    std::visit(
        [&](const auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, trace::ProcessInfo>) {
            if (ctx.process) return;  // one per trace; keep the first
            ctx.process = r;
            ctx.hostname = reader.string(r.hostname);
            ctx.process_name = reader.string(r.process_name);
            ctx.command_line = reader.string(r.command_line);
            ctx.rfprof_version = reader.string(r.rfprof_version);
          } else if constexpr (std::is_same_v<T, trace::DeviceInfo>) {
            charge(reader.string(r.name).size() + reader.string(r.chip).size() + 2 * sizeof(std::string),
                   "a DeviceInfo");
            ctx.devices[r.device_id] = DeviceRecord{r, reader.string(r.name), reader.string(r.chip)};
          } else if constexpr (std::is_same_v<T, trace::MetricConfig>) {
            uint64_t bytes = 0;
            for (auto id : r.metrics) bytes += reader.string(id).size() + sizeof(std::string);
            charge(bytes, "a MetricConfig");
            std::vector<std::string> names;
            names.reserve(r.metrics.size());
            for (auto id : r.metrics) names.push_back(reader.string(id));
            MetricLayout layout(names);
            ctx.configs.erase(r.config_id);
            ctx.configs.emplace(r.config_id, MetricList{std::move(names), layout, r.num_passes});
          } else if constexpr (std::is_same_v<T, trace::LaunchApi>) {  // RecordChecks::kEveryRecord
            ctx.last_event_ns = std::max(ctx.last_event_ns, r.api_end_ns);
          } else if constexpr (std::is_same_v<T, trace::KernelActivity>) {
            ctx.last_event_ns = std::max(ctx.last_event_ns, r.end_ns);
          } else if constexpr (std::is_same_v<T, trace::ProfilingWindow>) {
            ctx.last_event_ns = std::max(ctx.last_event_ns, r.timestamp_ns);
          } else if constexpr (std::is_same_v<T, trace::NvtxEvent>) {
            ctx.last_event_ns = std::max(ctx.last_event_ns, r.timestamp_ns);
            ctx.nvtx.add(r, reader.string(r.name));
          } else if constexpr (std::is_same_v<T, trace::TraceEnd>) {
            ctx.end = r;
          } else if constexpr (std::is_same_v<T, trace::MemoryActivity>) {
            ctx.last_event_ns = std::max(ctx.last_event_ns, r.timestamp_ns);
            ctx.memory.add(r);
          } else if constexpr (std::is_same_v<T, trace::ProfilerOverhead>) {
            // Cumulative totals: the last record of a phase replaces the earlier ones.
            ctx.overhead[reader.string(r.phase)] = OverheadPhaseTotals{r.count, r.total_ns, r.max_ns};
          } else if constexpr (std::is_same_v<T, trace::CallStack>) {
            uint64_t bytes = 0;
            for (size_t i = 0; i < r.functions.size(); ++i)
              bytes += reader.string(r.functions[i]).size() + 2 * sizeof(std::string) +
                       (i < r.modules.size() ? reader.string(r.modules[i]).size() : 0);
            charge(bytes, "a CallStack");
            CallStackFrames frames;
            for (size_t i = 0; i < r.functions.size(); ++i) {
              frames.functions.push_back(reader.string(r.functions[i]));
              frames.modules.push_back(i < r.modules.size() ? reader.string(r.modules[i]) : std::string());
            }
            ctx.call_stacks[r.stack_id] = std::move(frames);
          }
        },
        rec);
  }
  ctx.truncated = reader.truncated();
  ctx.truncated_at = reader.truncated_at();
  try {
    ctx.nvtx.finalize();
  } catch (const NvtxPathBudgetError& e) {  // no single bad byte: the file as a whole
    throw trace::TraceError(trace::TraceErrorKind::kBadRecord, 0, e.what());
  }
  ctx.memory.finalize();
  return ctx;
}

}  // namespace

std::optional<trace::ProcessInfo> first_process_info(const std::filesystem::path& path) noexcept {
  try {
    trace::Reader reader(path);
    trace::RawRecord raw;
    trace::Record rec;
    for (int records = 0; records < 64 && reader.next_raw(raw);) {
      if (raw.type == static_cast<uint16_t>(trace::RecordType::kString)) continue;  // its strings come first
      ++records;
      if (raw.type != static_cast<uint16_t>(trace::RecordType::kProcess)) continue;
      if (reader.decode(raw, rec))
        if (const auto* p = std::get_if<trace::ProcessInfo>(&rec)) return *p;
      return std::nullopt;
    }
  } catch (...) {  // a corrupt or unreadable trace: read_context says so
  }
  return std::nullopt;
}

std::optional<uint64_t> earliest_nvtx_start(const std::filesystem::path& path) noexcept {
  std::optional<uint64_t> earliest;
  try {
    trace::Reader reader(path);
    trace::RawRecord raw;
    trace::Record rec;
    while (reader.next_raw(raw)) {
      if (raw.type != static_cast<uint16_t>(trace::RecordType::kNvtx) || !reader.decode(raw, rec)) continue;
      if (const auto* e = std::get_if<trace::NvtxEvent>(&rec); e && e->kind == trace::NvtxEventKind::kStart)
        earliest = std::min(earliest.value_or(e->timestamp_ns), e->timestamp_ns);
    }
  } catch (...) {  // a corrupt or unreadable trace: read_context says so
  }
  return earliest;
}

TraceContext read_context(const std::filesystem::path& path, RecordChecks checks) {
  try {
    return read_context_records(path, checks);
  } catch (const trace::TraceError&) {
    if (checks == RecordChecks::kEveryRecord) throw;
    // A skimmed record before this one may be corrupt too: report the first bad byte, as a read
    // that decodes every record does (only for a corrupt trace: a second read, to the error).
    trace::Reader full(path);
    for (trace::Record r; full.next(r);) {
    }
    throw;
  }
}

namespace {

/// Turns joined launches into KernelRows (pass 2).
class RowBuilder {
 public:
  RowBuilder(const TraceContext& ctx, const PhaseMap& phases, const trace::Reader& reader,
             StreamStats& stats, const std::function<void(const LaunchOutput&)>& sink)
      : ctx_(ctx), phases_(phases), reader_(reader), stats_(stats), sink_(sink) {}

  void operator()(JoinedLaunch&& j) {
    LaunchOutput out;
    KernelRow& row = out.row;
    row.id = j.id;
    row.pid = ctx_.pid();
    if (j.kernel) {
      const auto& k = *j.kernel;
      row.device = k.device_id;
      row.stream = k.stream_id;
      row.context = k.context_id;
      row.grid = std::array<int32_t, 3>{k.grid[0], k.grid[1], k.grid[2]};
      row.block = std::array<int32_t, 3>{k.block[0], k.block[1], k.block[2]};
      row.shared_bytes = k.dynamic_shared_bytes;
      row.static_shared_bytes = k.static_shared_bytes;
      row.registers_per_thread = k.registers_per_thread;
      if (k.start_ns != 0 || k.end_ns != 0) {  // 0, 0: no timestamps (kernel replay, below)
        row.start_ns = k.start_ns;
        if (k.end_ns >= k.start_ns)
          row.duration_ns = k.end_ns - k.start_ns;
        else
          ++stats_.negative_durations;
      }
      row.mangled = reader_.string(k.mangled_name);
      row.kernel = reader_.string(k.demangled_name);
      if (demangle_refused(row.kernel, row.mangled))
        row.kernel = demangled(k.mangled_name);
      else if (row.kernel.empty())
        row.kernel = row.mangled;  // not a C++ symbol (extern "C"): its name as it is
    } else if (j.launch && !j.launch->is_graph) {
      const auto& l = *j.launch;
      row.grid = std::array<int32_t, 3>{l.grid[0], l.grid[1], l.grid[2]};
      row.block = std::array<int32_t, 3>{l.block[0], l.block[1], l.block[2]};
    }
    if (row.kernel.empty() && j.launch) {
      row.mangled = reader_.string(j.launch->kernel_name);
      row.kernel = demangled(j.launch->kernel_name);
    }
    if (row.mangled.empty() && j.launch) row.mangled = reader_.string(j.launch->kernel_name);

    if (j.counters) {
      auto it = ctx_.configs.find(j.counters->config_id);
      if (it == ctx_.configs.end()) {
        ++stats_.counters_without_config;
      } else {
        row.metrics = it->second.layout.evaluate(j.counters->values);
        out.metric_names = &it->second.names;
        out.metric_values = &j.counters->values;
      }
    }
    // Under the Range Profiler's kernel replay CUPTI gives the kernel's activity record no
    // timestamps (start = end = 0, seen on an H100 with CUPTI 13.0): the duration is then
    // gpu__time_duration.sum, measured during replay, which is what ncu reports as Duration.
    // A row without any kernel record takes it too, counted apart: under replay across steps
    // that is a pass's instrumented time, not the timing window's (a trace cut before the
    // window's activity buffer was written).
    if ((!row.duration_ns || *row.duration_ns == 0) && row.metrics.gpu_time_ns &&
        *row.metrics.gpu_time_ns > 0) {
      row.duration_ns = static_cast<uint64_t>(std::llround(*row.metrics.gpu_time_ns));
      ++(j.kernel ? stats_.durations_from_gpu_time : stats_.durations_from_gpu_time_without_kernel);
    }
    // Such a kernel ran, replays included, inside its launch call (kernel replay is synchronous):
    // placed at the call's end, so that trace.json shows it where it ran, not at time 0.
    if (!row.start_ns && j.launch && !j.launch->is_graph && j.launch->api_end_ns != 0) {
      const uint64_t dur = row.duration_ns.value_or(0);
      const auto& l = *j.launch;
      row.start_ns = l.api_end_ns - std::min(dur, l.api_end_ns - std::min(l.api_start_ns, l.api_end_ns));
      row.start_from_launch = true;
    }

    uint32_t path = NvtxIndex::kNoPath;
    if (j.launch) {
      const auto& l = *j.launch;
      row.thread_id = l.thread_id;
      row.stack_id = l.stack_id;
      row.window = l.window_id;
      if (l.api_end_ns >= l.api_start_ns && l.api_end_ns != 0) {
        row.launch_start_ns = l.api_start_ns;
        row.launch_end_ns = l.api_end_ns;
        row.launch_domain = l.domain;
        row.launch_cbid = l.cbid;
        row.launch_is_graph = l.is_graph;
      }
    }
    if (j.launch)
      path = ctx_.nvtx.attribute(j.launch->thread_id, j.launch->api_start_ns, j.launch->api_end_ns);
    row.nvtx = ctx_.nvtx.path(path).joined;
    out.nvtx_path = &ctx_.nvtx.path(path).names;
    const PathPhase& own = phase_of(path);
    row.phase = own.phase;
    out.path_phase = &own.phase;
    // A path no phase rule matches, on a thread with ranges of its own (a custom autograd
    // Function's range on the autograd thread): the phase of what holds the call around it
    // ("backward" on the main thread).
    if (!own.matched && path != NvtxIndex::kNoPath && j.launch) {
      const uint32_t context = ctx_.nvtx.context_path(j.launch->thread_id, j.launch->api_start_ns, j.launch->api_end_ns);
      if (context != path) row.phase = phase_of(context).phase;
    }
    sink_(out);
  }

 private:
  /// A path's phase, and whether a rule matched (else "other").
  struct PathPhase {
    std::string phase;
    bool matched = false;
  };
  /// By path id, cached (an unordered_map's elements stay where they are: out.path_phase points
  /// into it).
  const PathPhase& phase_of(uint32_t path) {
    auto it = phase_cache_.find(path);
    if (it == phase_cache_.end()) {
      std::optional<std::string> m = phases_.matched_phase(ctx_.nvtx.path(path).names);
      it = phase_cache_.emplace(path, PathPhase{m.value_or(PhaseMap::kOtherPhase), m.has_value()}).first;
    }
    return it->second;
  }

  const TraceContext& ctx_;
  const PhaseMap& phases_;
  const trace::Reader& reader_;
  StreamStats& stats_;
  const std::function<void(const LaunchOutput&)>& sink_;
  std::unordered_map<uint32_t, PathPhase> phase_cache_;  // by NVTX path id
  std::unordered_map<trace::StringId, std::string> demangled_;  // by symbol id: demangled once

  /// The demangled name of the symbol `id` (demangle(): libstdc++'s, else LLVM's), once per symbol.
  const std::string& demangled(trace::StringId id) {
    auto it = demangled_.find(id);
    if (it == demangled_.end()) it = demangled_.emplace(id, demangle(reader_.string(id))).first;
    return it->second;
  }
};

}  // namespace

StreamStats stream_launches(const TraceContext& ctx, const PhaseMap& phases,
                            const std::function<void(const LaunchOutput&)>& sink) {
  StreamStats stats;
  trace::Reader reader(ctx.path);
  RowBuilder builder(ctx, phases, reader, stats, sink);
  LaunchJoiner joiner(ctx.counters_mode(), [&](JoinedLaunch&& j) { builder(std::move(j)); });
  std::map<std::pair<uint32_t, std::string>, size_t> error_index;
  trace::Record rec;
  while (reader.next(rec)) {
    std::visit(
        [&](const auto& r) {
          using T = std::decay_t<decltype(r)>;
          if constexpr (std::is_same_v<T, trace::LaunchApi>) {
            joiner.add_launch(r);
          } else if constexpr (std::is_same_v<T, trace::KernelActivity>) {
            joiner.add_kernel(r);
          } else if constexpr (std::is_same_v<T, trace::RangeCounters>) {
            joiner.add_counters(r);
          } else if constexpr (std::is_same_v<T, trace::ProfilingWindow>) {
            if (!r.begin) joiner.close_window(r.window_id);
          } else if constexpr (std::is_same_v<T, trace::CollectorError>) {
            std::string message = reader.string(r.message);
            auto key = std::make_pair(static_cast<uint32_t>(r.code), message);
            auto [it, added] = error_index.emplace(key, stats.errors.size());
            if (added)
              stats.errors.push_back({r.code, std::move(message), 0, r.window_id, r.expected, r.actual});
            ++stats.errors[it->second].count;
          }
        },
        rec);
  }
  joiner.finish();
  stats.join = joiner.stats();
  return stats;
}

}  // namespace rf::analyzer
