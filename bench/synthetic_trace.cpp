// Synthetic training-run trace for the benchmarks (synthetic_trace.h).
#include "synthetic_trace.h"

#include <string>
#include <vector>

#include "rfprof/collector/host_metrics.h"
#include "rfprof/trace/writer.h"

namespace rf::bench {

namespace {
/// The collector's default roofline metric list (rf::collector::default_metrics()).
const std::vector<std::string>& metric_names() { return rf::collector::default_metrics(); }
}  // namespace

uint64_t write_synthetic_trace(const std::filesystem::path& path, const SyntheticShape& shape) {
  using namespace rf::trace;
  Writer w(path, WriterOptions{.chunk_bytes = 1u << 20, .force_overwrite = true});
  ProcessInfo p;
  p.pid = 4242;
  p.hostname = w.intern("bench-host");
  p.process_name = w.intern("python3");
  p.command_line = w.intern("python3 main.py -a resnet18 --batch-size 64");
  p.mode = CollectionMode::kCounters;
  w.append(p);
  DeviceInfo d;
  d.name = w.intern("NVIDIA H100 80GB HBM3");
  d.chip = w.intern("GH100");
  d.sm_count = 132;
  w.append(d);
  if (shape.counters) {
    MetricConfig mc;
    mc.config_id = 1;
    mc.chip = d.chip;
    mc.num_passes = 2;
    for (const auto& m : metric_names()) mc.metrics.push_back(w.intern(m));
    w.append(mc);
  } else {  // as Session::counters_unavailable writes it
    CollectorError e;
    e.code = ErrorCode::kCountersUnavailable;
    e.message = w.intern(
        "rfprof: counters unavailable (synthetic trace: make_synthetic_trace --no-counters); "
        "recording kernel timings only");
    w.append(e);
  }
  w.append(ProfilingWindow{.window_id = 0, .begin = true, .timestamp_ns = 1000, .cbid = 0});

  std::vector<StringId> kernels;
  for (uint32_t k = 0; k < shape.distinct_kernels; ++k)
    kernels.push_back(w.intern("_Z" + std::to_string(7 + std::to_string(k).size()) + "kernel_" +
                               std::to_string(k) + "Pfi"));  // kernel_<k>(float*, int)
  const StringId phase_names[3] = {w.intern("forward"), w.intern("backward"), w.intern("optimizer")};
  std::vector<StringId> op_names;
  for (int op = 0; op < 40; ++op) op_names.push_back(w.intern("aten::op_" + std::to_string(op)));
  const uint64_t main_tid = 100, autograd_tid = 101;

  uint64_t t = 10'000, nvtx_id = 1, launched = 0;
  uint32_t corr = 1;
  const uint32_t per_iter = shape.launches_per_iteration;
  while (launched < shape.launches) {
    // forward 40%, backward 50%, optimizer 10% of an iteration's launches
    const uint32_t counts[3] = {per_iter * 4 / 10, per_iter / 2, per_iter - per_iter * 4 / 10 - per_iter / 2};
    for (int ph = 0; ph < 3 && launched < shape.launches; ++ph) {
      const uint64_t range = nvtx_id++;
      w.append(NvtxEvent{.id = range, .kind = NvtxEventKind::kStart, .style = NvtxRangeStyle::kPushPop,
                         .timestamp_ns = t, .thread_id = main_tid, .domain = 0, .name = phase_names[ph]});
      for (uint32_t i = 0; i < counts[ph] && launched < shape.launches; ++i, ++launched) {
        t += 1000;
        const uint64_t launch_tid = ph == 1 ? autograd_tid : main_tid;
        const uint64_t op_range = shape.op_ranges ? nvtx_id++ : 0;
        if (op_range)
          w.append(NvtxEvent{.id = op_range, .kind = NvtxEventKind::kStart, .style = NvtxRangeStyle::kPushPop,
                             .timestamp_ns = t - 100, .thread_id = launch_tid, .domain = 0,
                             .name = op_names[launched % op_names.size()]});
        LaunchApi l;
        l.correlation_id = corr;
        l.thread_id = launch_tid;
        l.api_start_ns = t;
        l.api_end_ns = t + 400;
        l.launch_index = launched;
        l.kernel_name = kernels[launched % kernels.size()];
        l.grid[0] = 1024; l.grid[1] = l.grid[2] = 1;
        l.block[0] = 256; l.block[1] = l.block[2] = 1;
        w.append(l);
        if (op_range)
          w.append(NvtxEvent{.id = op_range, .kind = NvtxEventKind::kEnd, .style = NvtxRangeStyle::kPushPop,
                             .timestamp_ns = t + 600, .thread_id = launch_tid});
        KernelActivity k;
        k.correlation_id = corr;
        k.start_ns = t + 2000;
        k.end_ns = t + 2000 + 5000 + (launched % 7) * 100;
        k.mangled_name = l.kernel_name;  // demangled by rfanalyze
        k.grid[0] = 1024; k.grid[1] = k.grid[2] = 1;
        k.block[0] = 256; k.block[1] = k.block[2] = 1;
        w.append(k);
        if (!shape.counters) {
          ++corr;
          continue;
        }
        RangeCounters rc;
        rc.config_id = 1;
        rc.range_index = launched;
        rc.correlation_id = corr;
        rc.values.assign(metric_names().size(), 0.0);
        rc.values[2] = 1e6 + static_cast<double>(launched % 13);  // ffma
        rc.values[9] = 4e5;                                        // dram read
        rc.values[10] = 2e5;                                       // dram write
        rc.values[11] = 5000;
        w.append(rc);
        ++corr;
      }
      t += shape.op_ranges ? 700 : 500;  // after the last op range's end (t + 600): pops nest
      w.append(NvtxEvent{.id = range, .kind = NvtxEventKind::kEnd, .style = NvtxRangeStyle::kPushPop,
                         .timestamp_ns = t, .thread_id = main_tid});
    }
  }
  w.append(ProfilingWindow{.window_id = 0, .begin = false, .timestamp_ns = t + 1000, .cbid = 0});
  w.finish(t + 2000, 0);
  return launched;
}

}  // namespace rf::bench
