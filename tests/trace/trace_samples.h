// A trace with every record type, for the trace tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

#include "rfprof/trace/reader.h"
#include "rfprof/trace/writer.h"

namespace rf::trace::testing {

/// A fresh, empty directory under the system temp dir, removed by the destructor.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "rftrace-XXXXXX").string();
    path = ::mkdtemp(pattern.data());
  }
  ~TempDir() { std::filesystem::remove_all(path); }
};

/// Descriptors of this process whose target is `path` (give it without symbolic links).
inline std::vector<int> fds_naming(const std::filesystem::path& path) {
  std::vector<int> fds;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path(), ec) == path && !ec)
      fds.push_back(std::stoi(e.path().filename().string()));
  }
  return fds;
}

/// The bytes of file `p` (empty when it cannot be read).
inline std::vector<char> slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Writes the first `size` bytes of `bytes` (all of them by default) to `p`, replacing it.
inline void spit(const std::filesystem::path& p, const std::vector<char>& bytes, size_t size = SIZE_MAX) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(std::min(size, bytes.size())));
}

/// File offsets where chunks end (the file header end first), parsed from the format spec.
inline std::vector<size_t> chunk_ends(const std::vector<char>& bytes) {
  std::vector<size_t> ends{16};
  size_t at = 16;
  while (at + 16 <= bytes.size()) {
    uint32_t payload = 0;
    std::memcpy(&payload, bytes.data() + at + 4, 4);
    at += 16 + payload;
    ends.push_back(at);
  }
  return ends;
}

/// A record header of a trace file: where the record starts (file offset), its tag and size.
struct RecordAt {
  size_t offset;
  uint16_t type;
  uint32_t size;
};

/// The record headers of a trace file's bytes, in order.
inline std::vector<RecordAt> record_headers(const std::vector<char>& bytes) {
  std::vector<RecordAt> out;
  for (size_t chunk = 16; chunk + 16 <= bytes.size();) {
    uint32_t payload = 0;
    std::memcpy(&payload, bytes.data() + chunk + 4, 4);
    for (size_t at = chunk + 16; at + 8 <= chunk + 16 + payload;) {
      RecordAt r{at, 0, 0};
      std::memcpy(&r.type, bytes.data() + at, 2);
      std::memcpy(&r.size, bytes.data() + at + 4, 4);
      out.push_back(r);
      at += 8 + r.size;
    }
    chunk += 16 + payload;
  }
  return out;
}

/// The header of the first record of `type` in a trace file's bytes; nullopt when there is none.
inline std::optional<RecordAt> first_record_of(const std::vector<char>& bytes, RecordType type) {
  for (const RecordAt& r : record_headers(bytes))
    if (r.type == static_cast<uint16_t>(type)) return r;
  return std::nullopt;
}

/// What reading a whole trace file gave: its records (kernels among them) and where it ends cut
/// short, or the typed error that stopped it, with its byte offset and message.
struct ReadOutcome {
  size_t records = 0;
  size_t kernels = 0;
  bool truncated = false;
  uint64_t truncated_at = 0;
  std::optional<TraceErrorKind> error;
  uint64_t error_offset = 0;
  std::string message;
};

/// Reads `path` to its end; catches only TraceError (anything else fails the test).
inline ReadOutcome read_whole(const std::filesystem::path& path) {
  ReadOutcome o;
  try {
    Reader r(path);
    Record rec;
    while (r.next(rec)) {
      ++o.records;
      o.kernels += std::holds_alternative<KernelActivity>(rec);
    }
    o.truncated = r.truncated();
    o.truncated_at = r.truncated_at();
  } catch (const TraceError& e) {
    o.error = e.kind();
    o.error_offset = e.offset();
    o.message = e.what();
  }
  return o;
}

/// The encoded payload of `rec`, without its 8-byte record header.
inline std::string payload_of(const Record& rec) {
  std::vector<uint8_t> bytes;
  encode_record(rec, bytes);
  return std::string(reinterpret_cast<const char*>(bytes.data()) + 8, bytes.size() - 8);
}

/// The TraceError decoding `payload` as a record of `type` at file offset `base` throws; nullopt
/// when it decodes.
inline std::optional<TraceError> decode_error(RecordType type, std::string_view payload, uint64_t base) {
  try {
    decode_record(static_cast<uint16_t>(type), payload, base);
  } catch (const TraceError& e) {
    return e;
  }
  return std::nullopt;
}

/// A LaunchApi record whose launch_index is `index` (every other field zero).
inline LaunchApi launch(uint64_t index) {
  LaunchApi l;
  l.launch_index = index;
  return l;
}

/// LaunchApi records readable in `path`, a finished trace or a live writer's .part file (its
/// complete chunks). Throws TraceError for a file that is not a trace.
inline int readable_launches(const std::filesystem::path& path) {
  Reader r(path);
  Record rec;
  int n = 0;
  while (r.next(rec)) n += std::holds_alternative<LaunchApi>(rec);
  return n;
}

/// Appends `launches` kernels with launch and counter records, plus one of each other record.
inline void write_sample(Writer& w, int launches) {
  ProcessInfo p;
  p.pid = 4242; p.ppid = 1; p.start_ns = 1000; p.wall_clock_ns = 1700000000000000000ull;
  p.hostname = w.intern("node01"); p.process_name = w.intern("python3");
  p.command_line = w.intern("python3 main.py -a resnet18"); p.rfprof_version = w.intern("0.1.0");
  p.mode = CollectionMode::kCounters; p.cupti_version = 26; p.driver_version = 13000;
  w.append(p);
  DeviceInfo d;
  d.device_id = 0; d.name = w.intern("NVIDIA H100 80GB HBM3"); d.chip = w.intern("GH100");
  for (int i = 0; i < 16; ++i) d.uuid[i] = static_cast<uint8_t>(i * 7);
  d.cc_major = 9; d.cc_minor = 0; d.sm_count = 132; d.core_clock_khz = 1980000;
  d.memory_clock_khz = 2619000; d.memory_bus_width_bits = 5120;
  d.global_memory_bytes = 85520809984ull; d.global_memory_bandwidth_kbps = 3352320000ull;
  d.l2_cache_bytes = 52428800;
  w.append(d);
  MetricConfig mc;
  mc.config_id = 1; mc.chip = d.chip; mc.num_passes = 2;
  mc.metrics = {w.intern("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"),
                w.intern("dram__bytes_read.sum")};
  w.append(mc);
  w.append(ProfilingWindow{1, true, 2000, 17});
  for (int i = 0; i < launches; ++i) {
    auto corr = static_cast<uint32_t>(100 + i);
    LaunchApi l;
    l.correlation_id = corr; l.runtime_correlation_id = corr + 10000; l.domain = ApiDomain::kDriver;
    l.cbid = 307; l.thread_id = 77; l.api_start_ns = 3000u + 10u * static_cast<uint64_t>(i);
    l.api_end_ns = l.api_start_ns + 5; l.window_id = 1; l.launch_index = static_cast<uint64_t>(i);
    l.kernel_name = w.intern("_Z9ffma_loopPfi"); l.grid[0] = 1024; l.block[0] = 256;
    l.stack_id = 1 + static_cast<uint32_t>(i % 2);
    w.append(l);
    KernelActivity k;
    k.correlation_id = corr; k.device_id = 0; k.context_id = 1; k.stream_id = 7;
    k.start_ns = 5000u + 100u * static_cast<uint64_t>(i); k.end_ns = k.start_ns + 90;
    k.grid[0] = 1024; k.grid[1] = 1; k.grid[2] = 1; k.block[0] = 256; k.block[1] = 1; k.block[2] = 1;
    k.registers_per_thread = 32; k.mangled_name = w.intern("_Z9ffma_loopPfi");
    k.demangled_name = w.intern("ffma_loop(float*, int)"); k.graph_id = 0;
    w.append(k);
    RangeCounters rc;
    rc.config_id = 1; rc.window_id = 1; rc.range_index = static_cast<uint64_t>(i); rc.correlation_id = corr;
    rc.range_name = w.intern(std::to_string(i)); rc.values = {262144.0 * (i + 1), 4096.5};
    w.append(rc);
  }
  NvtxEvent n;
  n.id = 9; n.kind = NvtxEventKind::kStart; n.style = NvtxRangeStyle::kPushPop; n.timestamp_ns = 2500;
  n.thread_id = 77; n.name = w.intern("forward");
  w.append(n);
  n.kind = NvtxEventKind::kEnd; n.timestamp_ns = 9000; n.name = 0;
  w.append(n);
  w.append(ProfilingWindow{1, false, 9500, 18});
  CollectorError e;
  e.code = ErrorCode::kRangeLaunchMismatch; e.window_id = 1; e.timestamp_ns = 9600; e.expected = 3;
  e.actual = 2; e.message = w.intern("2 ranges for 3 launches");
  w.append(e);
  MemoryActivity m;
  m.operation = MemoryOperation::kAllocation; m.memory_kind = MemoryKind::kDevice; m.device_id = 0;
  m.context_id = 1; m.correlation_id = 55; m.address = 0x7f0000000000ull; m.bytes = 2ull << 30;
  m.timestamp_ns = 2100;
  w.append(m);
  m.operation = MemoryOperation::kRelease; m.timestamp_ns = 9700;
  w.append(m);
  for (uint32_t id : {1u, 2u}) {
    CallStack cs;
    cs.stack_id = id;
    cs.functions = {w.intern("at::native::cudnn_convolution"), w.intern(id == 1 ? "main" : "worker")};
    cs.modules = {w.intern("/usr/lib/libtorch_cuda.so"), w.intern("/usr/bin/python3")};
    w.append(cs);
  }
  // The collector's cost (format 1.2): a phase written twice, its totals growing.
  w.append(ProfilerOverhead{w.intern("counters.enable"), 1, 2300000000ull, 2300000000ull});
  w.append(ProfilerOverhead{w.intern("launch.counters"), 3, 900, 400});
  w.append(ProfilerOverhead{w.intern("launch.counters"), 5, 1500, 400});
}

}  // namespace rf::trace::testing
