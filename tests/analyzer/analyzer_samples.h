// Helpers for the analyzer tests: temp directories and traces written with rf::trace::Writer.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/flops.h"
#include "rfprof/trace/writer.h"

namespace rf::analyzer::testing {

/// A fresh, empty directory under the system temp dir, removed by the destructor.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rfanalyze-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

/// The whole content of a file.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// What one run_analysis call (analyze.h) gave: its exit status (kExitOk, kExitBadInput, ...)
/// and the "rfanalyze: " lines it wrote to its error stream.
struct AnalysisRun {
  int status = 0;
  std::string err;
};

/// Runs run_analysis on `traces` into the folder `out`, with the other options from `opts` (its
/// traces and output_dir are replaced). Never throws for bad input: that is a status.
inline AnalysisRun analyze(std::vector<std::filesystem::path> traces, std::filesystem::path out,
                           AnalyzeOptions opts = {}) {
  opts.traces = std::move(traces);
  opts.output_dir = std::move(out);
  std::ostringstream err;
  const int status = run_analysis(opts, err);
  return {status, err.str()};
}

#ifdef RFPROF_ANALYZER_DATA
/// The shipped H100 ResNet-18 trace, examples/traces/resnet18-h100.rftrace (one training step,
/// 374 launches with counters; examples/traces/README.md).
inline std::filesystem::path shipped_trace() {
  return std::filesystem::path(RFPROF_ANALYZER_DATA) / ".." / ".." / ".." / "examples" / "traces" /
         "resnet18-h100.rftrace";
}
#endif

/// A CSV file read back by column name: RFC 4180 quoting, one record per line (the analyzer's
/// outputs hold no line breaks in fields). cell(r, "col") is "" for an unknown column.
struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;

  static std::vector<std::string> split(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (size_t i = 0; i < line.size(); ++i) {
      char c = line[i];
      if (quoted) {
        if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') out.back() += '"', ++i;
        else if (c == '"') quoted = false;
        else out.back() += c;
      } else if (c == '"') {
        quoted = true;
      } else if (c == ',') {
        out.emplace_back();
      } else {
        out.back() += c;
      }
    }
    return out;
  }
  static CsvTable read(const std::filesystem::path& p) {
    CsvTable t;
    std::ifstream in(p);
    std::string line;
    if (std::getline(in, line)) t.header = split(line);
    while (std::getline(in, line)) t.rows.push_back(split(line));
    return t;
  }
  size_t column(const std::string& name) const {
    for (size_t i = 0; i < header.size(); ++i)
      if (header[i] == name) return i;
    return header.size();
  }
  std::string cell(size_t row, const std::string& name) const {
    size_t c = column(name);
    return row < rows.size() && c < rows[row].size() ? rows[row][c] : std::string();
  }
  /// Index of the first row whose column `name` equals `value` (rows.size() when none).
  size_t find(const std::string& name, const std::string& value) const {
    for (size_t r = 0; r < rows.size(); ++r)
      if (cell(r, name) == value) return r;
    return rows.size();
  }
};

/// The lines of a file, without their "\n".
inline std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The roofline metric list, in the collector's order.
inline std::vector<std::string> roofline_metrics() {
  return {std::string(metric::kDadd),  std::string(metric::kDmul),      std::string(metric::kDfma),
          std::string(metric::kFadd),  std::string(metric::kFmul),      std::string(metric::kFfma),
          std::string(metric::kHadd),  std::string(metric::kHmul),      std::string(metric::kHfma),
          std::string(metric::kDramRead), std::string(metric::kDramWrite), std::string(metric::kGpuTime)};
}

/// Values for roofline_metrics(), by name.
struct Counts {
  double dadd = 0, dmul = 0, dfma = 0, fadd = 0, fmul = 0, ffma = 0, hadd = 0, hmul = 0, hfma = 0;
  double read = 0, write = 0, gpu_time = 0;
  std::vector<double> values() const {
    return {dadd, dmul, dfma, fadd, fmul, ffma, hadd, hmul, hfma, read, write, gpu_time};
  }
};

/// Writes trace records with few words.
class TraceBuilder {
 public:
  explicit TraceBuilder(const std::filesystem::path& path, uint32_t chunk_bytes = 1u << 20)
      : w_(path, {.chunk_bytes = chunk_bytes, .force_overwrite = true}) {}

  trace::Writer& writer() { return w_; }

  /// A ProcessInfo of `command_line` ("python3 train.py") by python3 on `hostname` (node01);
  /// `start_ns`: the collector's start (ns).
  void process(uint32_t pid, trace::CollectionMode mode, uint64_t start_ns = 0,
               const std::string& command_line = "python3 train.py", const std::string& hostname = "node01") {
    trace::ProcessInfo p;
    p.pid = pid;
    p.start_ns = start_ns;
    p.hostname = w_.intern(hostname);
    p.process_name = w_.intern("python3");
    p.command_line = w_.intern(command_line);
    p.mode = mode;
    w_.append(p);
  }
  void device(uint32_t id, const std::string& name, const std::string& chip, uint64_t bandwidth_kbps = 0) {
    trace::DeviceInfo d;
    d.device_id = id;
    d.name = w_.intern(name);
    d.chip = w_.intern(chip);
    d.sm_count = 132;
    d.core_clock_khz = 1980000;
    d.memory_clock_khz = 2619000;
    d.memory_bus_width_bits = 5120;
    d.global_memory_bandwidth_kbps = bandwidth_kbps;
    w_.append(d);
  }
  void config(uint32_t id, const std::vector<std::string>& metrics, uint32_t passes = 2) {
    trace::MetricConfig mc;
    mc.config_id = id;
    mc.chip = w_.intern("GH100");
    mc.num_passes = passes;
    for (const auto& m : metrics) mc.metrics.push_back(w_.intern(m));
    w_.append(mc);
  }
  void launch(uint32_t driver_corr, uint32_t runtime_corr, uint64_t thread, uint64_t t_ns,
              uint32_t window = 0, bool graph = false, uint32_t stack_id = 0) {
    trace::LaunchApi l;
    l.stack_id = stack_id;
    l.correlation_id = driver_corr;
    l.runtime_correlation_id = runtime_corr;
    l.thread_id = thread;
    l.api_start_ns = t_ns;
    l.api_end_ns = t_ns + 3;
    l.window_id = window;
    l.is_graph = graph;
    l.kernel_name = graph ? 0 : w_.intern("_Z9ffma_loopPfi");
    if (!graph) {
      l.grid[0] = 1024; l.grid[1] = 1; l.grid[2] = 1;
      l.block[0] = 256; l.block[1] = 1; l.block[2] = 1;
    }
    w_.append(l);
  }
  void kernel(uint32_t corr, uint64_t start_ns, uint64_t end_ns,
              const std::string& name = "ffma_loop(float*, int)", uint32_t device = 0,
              const std::string& mangled = "_Z9ffma_loopPfi") {
    trace::KernelActivity k;
    k.correlation_id = corr;
    k.device_id = device;
    k.stream_id = 7;
    k.start_ns = start_ns;
    k.end_ns = end_ns;
    k.grid[0] = 1024; k.grid[1] = 1; k.grid[2] = 1;
    k.block[0] = 256; k.block[1] = 1; k.block[2] = 1;
    k.mangled_name = w_.intern(mangled);
    k.demangled_name = w_.intern(name);
    w_.append(k);
  }
  /// A KernelActivity as given, its names interned.
  void kernel(trace::KernelActivity k, const std::string& name, const std::string& mangled) {
    k.mangled_name = w_.intern(mangled);
    k.demangled_name = w_.intern(name);
    w_.append(k);
  }
  void counters(uint32_t config, uint32_t corr, const std::vector<double>& values, uint32_t window = 0) {
    trace::RangeCounters rc;
    rc.config_id = config;
    rc.window_id = window;
    rc.correlation_id = corr;
    rc.values = values;
    w_.append(rc);
  }
  /// An NVTX range's start (push, or with kStartEnd nvtxRangeStart) and end (pop / nvtxRangeEnd).
  void push(uint64_t id, uint64_t thread, uint64_t t_ns, const std::string& name,
            trace::NvtxRangeStyle style = trace::NvtxRangeStyle::kPushPop) {
    trace::NvtxEvent n;
    n.id = id;
    n.kind = trace::NvtxEventKind::kStart;
    n.style = style;
    n.timestamp_ns = t_ns;
    n.thread_id = thread;
    n.name = w_.intern(name);
    w_.append(n);
  }
  void pop(uint64_t id, uint64_t thread, uint64_t t_ns, trace::NvtxRangeStyle style = trace::NvtxRangeStyle::kPushPop) {
    trace::NvtxEvent n;
    n.id = id;
    n.kind = trace::NvtxEventKind::kEnd;
    n.style = style;
    n.timestamp_ns = t_ns;
    n.thread_id = thread;
    w_.append(n);
  }
  void window(uint32_t id, bool begin, uint64_t t_ns) { w_.append(trace::ProfilingWindow{id, begin, t_ns, 0}); }
  /// A CollectorError; `expected` and `actual` as the record documents (e.g. launches, ranges).
  void error(trace::ErrorCode code, const std::string& message, uint32_t window = 0, uint64_t expected = 0,
             uint64_t actual = 0) {
    trace::CollectorError e;
    e.code = code;
    e.window_id = window;
    e.expected = expected;
    e.actual = actual;
    e.message = w_.intern(message);
    w_.append(e);
  }
  /// A MemoryActivity: `bytes` allocated (or released) at `address` on device 0.
  void memory(bool allocation, uint64_t t_ns, uint64_t address, uint64_t bytes,
              trace::MemoryKind kind = trace::MemoryKind::kDevice) {
    trace::MemoryActivity m;
    m.operation = allocation ? trace::MemoryOperation::kAllocation : trace::MemoryOperation::kRelease;
    m.memory_kind = kind;
    m.timestamp_ns = t_ns;
    m.address = address;
    m.bytes = bytes;
    w_.append(m);
  }
  /// A CallStack: (function, module) frames, innermost first.
  void call_stack(uint32_t id, const std::vector<std::pair<std::string, std::string>>& frames) {
    trace::CallStack cs;
    cs.stack_id = id;
    for (const auto& [f, m] : frames) {
      cs.functions.push_back(w_.intern(f));
      cs.modules.push_back(w_.intern(m));
    }
    w_.append(cs);
  }
  void finish() { w_.finish(); }

 private:
  trace::Writer w_;
};

}  // namespace rf::analyzer::testing
