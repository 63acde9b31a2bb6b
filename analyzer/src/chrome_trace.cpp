// trace.json writer (rfprof/analyzer/chrome_trace.h).
#include "rfprof/analyzer/chrome_trace.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include "rfprof/trace/api_names.h"

namespace rf::analyzer {
namespace {

using json = nlohmann::json;

/// Track process ids of GPU devices start here, far above real pids (Linux pid_max <= 2^22) and
/// below 2^31: Perfetto reads pid and tid as 32-bit (json_trace_tokenizer.cc, CoerceToUint32 gives
/// 0 above UINT32_MAX, which folded every GPU of every process into one track process) and
/// process_sort_index as a signed 32-bit integer.
constexpr int64_t kGpuPidBase = int64_t{1} << 30;
/// Track process ids of a trace whose pid an earlier trace of the run had (ranks in containers
/// of different hosts): between pid_max and the GPU tracks.
constexpr int64_t kSharedPidBase = int64_t{1} << 29;

json opt(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

/// Slot order of the per-launch event templates (ChromeTrace::Event::slots).
enum CallSlot { kCallName, kCallPid, kCallTid, kCallTs, kCallDur, kCallArgs, kCallCorrelation };
enum KernelSlot { kKName, kKPid, kKTid, kKTs, kKDur, kKArgs, kKId, kKFlop, kKDram, kKIntensity, kKFlopPerS, kKNvtx, kKPhase };
enum FlowSlot { kFlowId, kFlowPid, kFlowTid, kFlowTs };

/// `doc` with pointers to its values at `paths` ("key" or "args/key"), in that order.
template <typename Event>
Event make_event(json doc, std::initializer_list<const char*> paths) {
  Event e{std::move(doc), {}};
  for (std::string path : paths) {
    const auto slash = path.find('/');
    e.slots.push_back(slash == std::string::npos ? &e.doc[path] : &e.doc[path.substr(0, slash)][path.substr(slash + 1)]);
  }
  return e;
}

}  // namespace

ChromeTrace::ChromeTrace(std::ostream& out) : out_(out) {
  text_ = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  call_ = make_event<Event>({{"ph", "X"}, {"cat", "cuda_api"}},
                            {"name", "pid", "tid", "ts", "dur", "args", "args/correlation"});
  kernel_ = make_event<Event>({{"ph", "X"}, {"cat", "kernel"}},
                              {"name", "pid", "tid", "ts", "dur", "args", "args/id", "args/flop", "args/dram_bytes",
                               "args/arithmetic_intensity", "args/flop_per_s", "args/nvtx", "args/phase"});
  flow_start_ = make_event<Event>({{"ph", "s"}, {"cat", "ac2g"}, {"name", "ac2g"}}, {"id", "pid", "tid", "ts"});
  flow_end_ = make_event<Event>({{"ph", "f"}, {"bp", "e"}, {"cat", "ac2g"}, {"name", "ac2g"}}, {"id", "pid", "tid", "ts"});
  for (json* text : {call_.slots[kCallName], kernel_.slots[kKName], kernel_.slots[kKNvtx], kernel_.slots[kKPhase]})
    *text = std::string();  // filled with get_ref<std::string&>, which needs a string
}

void ChromeTrace::write_event(const json& event) {
  if (!first_) text_ += ",\n";
  first_ = false;
  serializer_.dump(event, false, false, 0);  // as event.dump(-1, ' ', false, replace)
  ++events_;
  if (text_.size() >= kFlushBytes) flush_text();
}

void ChromeTrace::flush_text() {
  out_.write(text_.data(), static_cast<std::streamsize>(text_.size()));
  text_.clear();
}

double ChromeTrace::us(uint64_t ns) const {
  // The difference first, in integers: CUPTI time stamps (Unix epoch ns, ~1.8e18) are above 2^53,
  // and each one made a double was rounded to 256 ns.
  // (Unsigned either way: a time stamp 2^63 ns past the base, from a hostile trace, stays positive.)
  return ns >= base_ns_ ? static_cast<double>(ns - base_ns_) / 1000.0 : -static_cast<double>(base_ns_ - ns) / 1000.0;
}

void ChromeTrace::set_time_base(uint64_t base_ns) {
  base_ns_ = base_ns;
  have_base_ = true;
}

int64_t ChromeTrace::gpu_pid(uint32_t device) {
  auto key = std::make_pair(track_pid_, device);
  auto it = gpu_pids_.find(key);
  if (it != gpu_pids_.end()) return it->second;
  const int64_t track = kGpuPidBase + static_cast<int64_t>(gpu_pids_.size());
  gpu_pids_.emplace(key, track);
  std::string name = "GPU " + std::to_string(device);
  if (auto d = device_names_.find(device); d != device_names_.end()) name += " " + d->second;
  name += " (" + label_ + ")";
  write_event({{"ph", "M"}, {"name", "process_name"}, {"pid", track}, {"args", {{"name", name}}}});
  write_event({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", track}, {"args", {{"sort_index", track}}}});
  return track;
}

void ChromeTrace::begin_trace(const TraceContext& ctx) {
  pid_ = ctx.pid();
  ++traces_;
  // A pid an earlier trace had (ranks in containers of different hosts) gets a track id of its own.
  const bool shared = !used_pids_.insert(pid_).second;
  track_pid_ = shared ? kSharedPidBase + shared_pids_++ : int64_t{pid_};
  label_ = "pid " + std::to_string(pid_);
  if (shared) label_ += ctx.hostname.empty() ? ", trace " + std::to_string(traces_) : ", " + ctx.hostname;
  device_names_.clear();
  for (const auto& [id, d] : ctx.devices) device_names_[id] = d.name;
  if (!timed_events_) {  // the axis may still move: no event with a time stamp was written
    if (ctx.process && (!have_base_ || ctx.process->start_ns < base_ns_)) {
      base_ns_ = ctx.process->start_ns;
      have_base_ = true;
    }
    ctx.nvtx.for_each_range([this](const NvtxRange& r) {
      if (!have_base_ || r.start_ns < base_ns_) {
        base_ns_ = r.start_ns;
        have_base_ = true;
      }
    });
  }
  timed_events_ = true;  // from here on
  std::string pname = ctx.process_name.empty() ? "process" : ctx.process_name;
  write_event({{"ph", "M"}, {"name", "process_name"}, {"pid", track_pid_}, {"args", {{"name", pname + " (" + label_ + ")"}}}});
  graph_calls_.clear();
  // A range is a complete event on its thread's track when it nests in the ones drawn there before
  // it; one that does not (nvtxRangeStart/End ranges that overlap, or a start out of order) would
  // overlap a slice partially, which Perfetto moves aside or mis-nests: it is an async slice of the
  // process instead, as Nsight Systems draws start/end ranges on a row of the process.
  uint64_t thread = 0, last_start = 0;
  bool first = true;
  std::vector<uint64_t> ends;  // ends of the open slices of `thread`, innermost last
  ctx.nvtx.for_each_range([&](const NvtxRange& r) {
    name_thread(r.thread_id);
    if (first || r.thread_id != thread) {
      thread = r.thread_id;
      first = false;
      ends.clear();
      last_start = 0;
    }
    const bool open = r.end_ns == std::numeric_limits<uint64_t>::max();
    // Never ended: open to the end of the trace, as attribution has it (nvtx_attribution.h).
    const uint64_t end = open ? std::max(ctx.last_event_ns, r.start_ns) : r.end_ns;
    while (!ends.empty() && ends.back() <= r.start_ns) ends.pop_back();
    const bool nests = r.start_ns >= last_start && (ends.empty() || end <= ends.back());
    if (nests) {
      ends.push_back(end);
      last_start = r.start_ns;
      json e = {{"ph", "X"}, {"cat", "nvtx"}, {"name", std::string(r.name)}, {"pid", track_pid_}, {"tid", r.thread_id},
                {"ts", us(r.start_ns)}, {"dur", static_cast<double>(end - r.start_ns) / 1000.0}};
      if (open) e["args"] = {{"never_ended", true}};
      write_event(e);
      return;
    }
    const uint64_t id = ++async_ranges_;
    json b = {{"ph", "b"}, {"cat", "nvtx"}, {"id", id}, {"name", std::string(r.name)}, {"pid", track_pid_},
              {"tid", r.thread_id}, {"ts", us(r.start_ns)}, {"args", {{"thread", r.thread_id}}}};
    if (open) b["args"]["never_ended"] = true;
    write_event(b);
    write_event({{"ph", "e"}, {"cat", "nvtx"}, {"id", id}, {"name", std::string(r.name)}, {"pid", track_pid_},
                 {"tid", r.thread_id}, {"ts", us(end)}});
  });
  // GPU memory in use (RFPROF_MEMORY): a counter track of the process, one sample per event.
  for (const auto& p : ctx.memory.points())
    write_event({{"ph", "C"}, {"name", "GPU memory in use (bytes)"}, {"pid", track_pid_},
                 {"ts", us(p.event.timestamp_ns)}, {"args", {{"in_use_bytes", p.in_use_bytes}}}});
}

void ChromeTrace::name_thread(uint64_t thread_id) {
  auto& named = threads_named_[{track_pid_, thread_id}];
  if (named) return;
  named = true;
  write_event({{"ph", "M"}, {"name", "thread_name"}, {"pid", track_pid_}, {"tid", thread_id},
               {"args", {{"name", "thread " + std::to_string(thread_id)}}}});
}

void ChromeTrace::add_launch_call(const KernelRow& row) {
  if (row.launch_is_graph) {
    if (std::find(graph_calls_.begin(), graph_calls_.end(), row.id) != graph_calls_.end()) return;
    graph_calls_.push_back(row.id);
    if (graph_calls_.size() > kGraphCallsKept) graph_calls_.pop_front();
  }
  name_thread(*row.thread_id);
  auto& v = call_.slots;
  if (auto name = trace::launch_api_name(row.launch_domain, row.launch_cbid); !name.empty())
    v[kCallName]->get_ref<std::string&>().assign(name);
  else
    *v[kCallName] = trace::launch_api_label(row.launch_domain, row.launch_cbid);
  *v[kCallPid] = track_pid_;
  *v[kCallTid] = *row.thread_id;
  *v[kCallTs] = us(*row.launch_start_ns);
  *v[kCallDur] = static_cast<double>(*row.launch_end_ns - *row.launch_start_ns) / 1000.0;
  *v[kCallCorrelation] = row.id;
  if (row.launch_is_graph) (*v[kCallArgs])["graph"] = true;
  write_event(call_.doc);
  if (row.launch_is_graph) v[kCallArgs]->erase("graph");
}

void ChromeTrace::add_launch(const KernelRow& row) {
  const bool call = row.thread_id && row.launch_start_ns && row.launch_end_ns;
  if (call) add_launch_call(row);
  if (!row.start_ns || !row.duration_ns) {
    ++skipped_;
    return;
  }
  const uint32_t device = row.device.value_or(0);
  const uint32_t stream = row.stream.value_or(0);
  const int64_t track = gpu_pid(device);
  if (!streams_named_[{track, stream}]) {
    streams_named_[{track, stream}] = true;
    write_event({{"ph", "M"}, {"name", "thread_name"}, {"pid", track}, {"tid", stream},
                 {"args", {{"name", "stream " + std::to_string(stream)}}}});
  }
  const auto& m = row.metrics;
  auto& v = kernel_.slots;
  v[kKName]->get_ref<std::string&>() = row.kernel;
  *v[kKPid] = track;
  *v[kKTid] = stream;
  *v[kKTs] = us(*row.start_ns);
  *v[kKDur] = static_cast<double>(*row.duration_ns) / 1000.0;
  *v[kKId] = row.id;
  *v[kKFlop] = opt(m.total_flop());
  *v[kKDram] = opt(m.dram_bytes());
  *v[kKIntensity] = opt(row.arithmetic_intensity());
  *v[kKFlopPerS] = opt(row.flop_per_s());
  v[kKNvtx]->get_ref<std::string&>() = row.nvtx;
  v[kKPhase]->get_ref<std::string&>() = row.phase;
  // Kernel replay gave no GPU timestamps: the kernel is drawn at the end of its launch call.
  if (row.start_from_launch)
    (*v[kKArgs])["start"] = "end of the launch call (no GPU timestamp under kernel replay)";
  write_event(kernel_.doc);
  if (row.start_from_launch) v[kKArgs]->erase("start");
  if (call) {  // the arrow from the call to its kernel (Kineto: "ac2g", bound to the enclosing slice)
    const uint64_t flow = ++flows_;
    *flow_start_.slots[kFlowId] = flow;
    *flow_start_.slots[kFlowPid] = track_pid_;
    *flow_start_.slots[kFlowTid] = *row.thread_id;
    *flow_start_.slots[kFlowTs] = us(*row.launch_start_ns);
    write_event(flow_start_.doc);
    *flow_end_.slots[kFlowId] = flow;
    *flow_end_.slots[kFlowPid] = track;
    *flow_end_.slots[kFlowTid] = stream;
    *flow_end_.slots[kFlowTs] = us(*row.start_ns);
    write_event(flow_end_.doc);
  }
}

void ChromeTrace::finish() {
  text_ += "\n]}\n";
  flush_text();
}

}  // namespace rf::analyzer
