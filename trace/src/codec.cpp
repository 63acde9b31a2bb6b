// Encoding and decoding of record payloads. Layouts: docs/trace-format.md ("Records").
#include <cmath>
#include <type_traits>

#include "codec.h"
#include "rfprof/trace/reader.h"
#include "wire.h"

namespace rf::trace {
namespace {

void put_dim3(wire::Out& o, const int32_t (&d)[3]) {
  for (int32_t v : d) o.put(v);
}
void get_dim3(wire::In& in, int32_t (&d)[3], const char* field) {
  for (int32_t& v : d) v = in.get<int32_t>(field);
}

/// Reads a u8 enum and checks it is at most `max`.
template <typename E>
E get_enum(wire::In& in, uint8_t max, const char* field) {
  uint64_t at = in.offset();
  auto raw = in.get<uint8_t>(field);
  if (raw > max)
    throw TraceError(TraceErrorKind::kBadRecord, at,
                     std::string("invalid ") + field + " " + std::to_string(raw));
  return static_cast<E>(raw);
}

bool get_bool(wire::In& in, const char* field) { return get_enum<uint8_t>(in, 1, field) != 0; }

void encode_payload(const Record& record, wire::Out& o) {
  std::visit(
      Overloaded{
          [&](const StringDef& r) {
            o.put(r.id);
            o.put(static_cast<uint32_t>(r.value.size()));
            o.put_bytes(r.value.data(), r.value.size());
          },
          [&](const ProcessInfo& r) {
            o.put(r.pid); o.put(r.ppid); o.put(r.start_ns); o.put(r.wall_clock_ns);
            o.put(r.hostname); o.put(r.process_name); o.put(r.command_line); o.put(r.rfprof_version);
            o.put(static_cast<uint8_t>(r.mode)); o.put(r.cupti_version); o.put(r.driver_version);
          },
          [&](const DeviceInfo& r) {
            o.put(r.device_id); o.put(r.name); o.put(r.chip); o.put_bytes(r.uuid, sizeof r.uuid);
            o.put(r.cc_major); o.put(r.cc_minor); o.put(r.sm_count); o.put(r.core_clock_khz);
            o.put(r.memory_clock_khz); o.put(r.memory_bus_width_bits); o.put(r.global_memory_bytes);
            o.put(r.global_memory_bandwidth_kbps); o.put(r.l2_cache_bytes);
          },
          [&](const KernelActivity& r) {
            o.put(r.correlation_id); o.put(r.device_id); o.put(r.context_id); o.put(r.stream_id);
            o.put(r.start_ns); o.put(r.end_ns); put_dim3(o, r.grid); put_dim3(o, r.block);
            o.put(r.dynamic_shared_bytes); o.put(r.static_shared_bytes); o.put(r.registers_per_thread);
            o.put(r.mangled_name); o.put(r.demangled_name); o.put(r.graph_id); o.put(r.graph_node_id);
          },
          [&](const LaunchApi& r) {
            o.put(r.correlation_id); o.put(r.runtime_correlation_id);
            o.put(static_cast<uint8_t>(r.domain)); o.put(r.cbid); o.put(r.thread_id);
            o.put(r.api_start_ns); o.put(r.api_end_ns); o.put(r.window_id); o.put(r.launch_index);
            o.put(r.kernel_name); put_dim3(o, r.grid); put_dim3(o, r.block);
            o.put(static_cast<uint8_t>(r.is_graph ? 1 : 0)); o.put(r.stack_id);
          },
          [&](const NvtxEvent& r) {
            o.put(r.id); o.put(static_cast<uint8_t>(r.kind)); o.put(static_cast<uint8_t>(r.style));
            o.put(r.timestamp_ns); o.put(r.thread_id); o.put(r.domain); o.put(r.name);
          },
          [&](const MetricConfig& r) {
            o.put(r.config_id); o.put(r.chip); o.put(r.num_passes);
            o.put(static_cast<uint32_t>(r.metrics.size()));
            for (StringId id : r.metrics) o.put(id);
          },
          [&](const RangeCounters& r) {
            o.put(r.config_id); o.put(r.window_id); o.put(r.range_index); o.put(r.correlation_id);
            o.put(r.range_name); o.put(static_cast<uint32_t>(r.values.size()));
            for (double v : r.values) o.put(v);
          },
          [&](const ProfilingWindow& r) {
            o.put(r.window_id); o.put(static_cast<uint8_t>(r.begin ? 1 : 0)); o.put(r.timestamp_ns);
            o.put(r.cbid);
          },
          [&](const CollectorError& r) {
            o.put(static_cast<uint32_t>(r.code)); o.put(r.window_id); o.put(r.timestamp_ns);
            o.put(r.expected); o.put(r.actual); o.put(r.message);
          },
          [&](const TraceEnd& r) {
            o.put(r.timestamp_ns); o.put(r.records_written); o.put(r.dropped_records);
          },
          [&](const MemoryActivity& r) {
            o.put(static_cast<uint8_t>(r.operation)); o.put(static_cast<uint8_t>(r.memory_kind));
            o.put(r.device_id); o.put(r.context_id); o.put(r.stream_id); o.put(r.correlation_id);
            o.put(r.address); o.put(r.bytes); o.put(r.timestamp_ns);
          },
          [&](const CallStack& r) {
            o.put(r.stack_id); o.put(static_cast<uint32_t>(r.functions.size()));
            for (size_t i = 0; i < r.functions.size(); ++i) {
              o.put(r.functions[i]);
              o.put(i < r.modules.size() ? r.modules[i] : StringId{0});
            }
          },
          [&](const ProfilerOverhead& r) {
            o.put(r.phase); o.put(r.count); o.put(r.total_ns); o.put(r.max_ns);
          },
      },
      record);
}

}  // namespace

bool enums_in_range(const Record& record) noexcept {
  // The highest values get_enum accepts in decode_record_into below.
  const auto le = [](auto value, unsigned max) { return static_cast<unsigned>(value) <= max; };
  if (const auto* r = std::get_if<ProcessInfo>(&record)) return le(r->mode, 1);
  if (const auto* r = std::get_if<LaunchApi>(&record)) return le(r->domain, 1);
  if (const auto* r = std::get_if<NvtxEvent>(&record)) return le(r->kind, 2) && le(r->style, 2);
  if (const auto* r = std::get_if<MemoryActivity>(&record)) return le(r->operation, 1) && le(r->memory_kind, 7);
  return true;  // bools are written as 0 or 1; other records have no enum the reader checks
}

RecordType record_type(const Record& record) noexcept {
  static constexpr RecordType kTypes[] = {
      RecordType::kString, RecordType::kProcess,      RecordType::kDevice,   RecordType::kKernel,
      RecordType::kLaunch, RecordType::kNvtx,         RecordType::kMetricConfig,
      RecordType::kCounters, RecordType::kWindow,     RecordType::kError,    RecordType::kEnd,
      RecordType::kMemory, RecordType::kCallStack, RecordType::kOverhead};
  static_assert(std::size(kTypes) == std::variant_size_v<Record>);
  return kTypes[record.index()];
}

void encode_record(const Record& record, std::vector<uint8_t>& out) {
  const size_t header_at = out.size();
  wire::Out o(out);
  o.put(static_cast<uint16_t>(record_type(record)));
  o.put(static_cast<uint16_t>(0));
  o.put(static_cast<uint32_t>(0));  // payload size, patched below
  encode_payload(record, o);
  const auto payload = static_cast<uint32_t>(out.size() - header_at - wire::kRecordHeaderBytes);
  std::memcpy(out.data() + header_at + 4, &payload, sizeof payload);
}

std::optional<Record> decode_record(uint16_t type, std::string_view payload, uint64_t base_offset) {
  Record out;
  if (!decode_record_into(type, payload, base_offset, out)) return std::nullopt;
  return out;
}

std::optional<uint64_t> peek_end_ns(const RawRecord& raw) {
  size_t at = 0;  // where the time stamp is
  switch (static_cast<RecordType>(raw.type)) {
    case RecordType::kLaunch: at = 4 + 4 + 1 + 4 + 8 + 8; break;  // correlation ids, domain, cbid, thread, api_start_ns
    case RecordType::kKernel: at = 4 + 4 + 4 + 4 + 8; break;      // correlation, device, context, stream, start_ns
    default: return std::nullopt;
  }
  // Too short: decoding the whole record throws the error a full read gives, at the same byte.
  if (raw.payload.size() < at + sizeof(uint64_t))
    (void)decode_record(raw.type, raw.payload, raw.offset + wire::kRecordHeaderBytes);
  uint64_t end_ns = 0;
  std::memcpy(&end_ns, raw.payload.data() + at, sizeof end_ns);  // little-endian, as wire::In reads
  return end_ns;
}

bool decode_record_into(uint16_t type, std::string_view payload, uint64_t base_offset, Record& out,
                        std::vector<double>* value_memory) {
  wire::In in(payload, base_offset);
  switch (static_cast<RecordType>(type)) {
    case RecordType::kString: {
      auto& r = out.emplace<StringDef>();
      r.id = in.get<uint32_t>("string.id");
      uint32_t len = in.get_count(1, "string.length");
      r.value.assign(in.get_bytes(len, "string.bytes"));
      return true;
    }
    case RecordType::kProcess: {
      auto& r = out.emplace<ProcessInfo>();
      r.pid = in.get<uint32_t>("process.pid"); r.ppid = in.get<uint32_t>("process.ppid");
      r.start_ns = in.get<uint64_t>("process.start_ns");
      r.wall_clock_ns = in.get<uint64_t>("process.wall_clock_ns");
      r.hostname = in.get<uint32_t>("process.hostname");
      r.process_name = in.get<uint32_t>("process.process_name");
      r.command_line = in.get<uint32_t>("process.command_line");
      r.rfprof_version = in.get<uint32_t>("process.rfprof_version");
      r.mode = get_enum<CollectionMode>(in, 1, "process.mode");
      r.cupti_version = in.get<uint32_t>("process.cupti_version");
      r.driver_version = in.get<uint32_t>("process.driver_version");
      return true;
    }
    case RecordType::kDevice: {
      auto& r = out.emplace<DeviceInfo>();
      r.device_id = in.get<uint32_t>("device.id"); r.name = in.get<uint32_t>("device.name");
      r.chip = in.get<uint32_t>("device.chip");
      std::string_view uuid = in.get_bytes(sizeof r.uuid, "device.uuid");
      std::memcpy(r.uuid, uuid.data(), sizeof r.uuid);
      r.cc_major = in.get<uint32_t>("device.cc_major"); r.cc_minor = in.get<uint32_t>("device.cc_minor");
      r.sm_count = in.get<uint32_t>("device.sm_count");
      r.core_clock_khz = in.get<uint32_t>("device.core_clock_khz");
      r.memory_clock_khz = in.get<uint32_t>("device.memory_clock_khz");
      r.memory_bus_width_bits = in.get<uint32_t>("device.memory_bus_width_bits");
      r.global_memory_bytes = in.get<uint64_t>("device.global_memory_bytes");
      r.global_memory_bandwidth_kbps = in.get<uint64_t>("device.global_memory_bandwidth_kbps");
      r.l2_cache_bytes = in.get<uint32_t>("device.l2_cache_bytes");
      return true;
    }
    case RecordType::kKernel: {
      auto& r = out.emplace<KernelActivity>();
      r.correlation_id = in.get<uint32_t>("kernel.correlation_id");
      r.device_id = in.get<uint32_t>("kernel.device_id");
      r.context_id = in.get<uint32_t>("kernel.context_id");
      r.stream_id = in.get<uint32_t>("kernel.stream_id");
      r.start_ns = in.get<uint64_t>("kernel.start_ns"); r.end_ns = in.get<uint64_t>("kernel.end_ns");
      get_dim3(in, r.grid, "kernel.grid"); get_dim3(in, r.block, "kernel.block");
      r.dynamic_shared_bytes = in.get<uint32_t>("kernel.dynamic_shared_bytes");
      r.static_shared_bytes = in.get<uint32_t>("kernel.static_shared_bytes");
      r.registers_per_thread = in.get<uint32_t>("kernel.registers_per_thread");
      r.mangled_name = in.get<uint32_t>("kernel.mangled_name");
      r.demangled_name = in.get<uint32_t>("kernel.demangled_name");
      r.graph_id = in.get<uint32_t>("kernel.graph_id");
      r.graph_node_id = in.get<uint64_t>("kernel.graph_node_id");
      return true;
    }
    case RecordType::kLaunch: {
      auto& r = out.emplace<LaunchApi>();
      r.correlation_id = in.get<uint32_t>("launch.correlation_id");
      r.runtime_correlation_id = in.get<uint32_t>("launch.runtime_correlation_id");
      r.domain = get_enum<ApiDomain>(in, 1, "launch.domain");
      r.cbid = in.get<uint32_t>("launch.cbid"); r.thread_id = in.get<uint64_t>("launch.thread_id");
      r.api_start_ns = in.get<uint64_t>("launch.api_start_ns");
      r.api_end_ns = in.get<uint64_t>("launch.api_end_ns");
      r.window_id = in.get<uint32_t>("launch.window_id");
      r.launch_index = in.get<uint64_t>("launch.launch_index");
      r.kernel_name = in.get<uint32_t>("launch.kernel_name");
      get_dim3(in, r.grid, "launch.grid"); get_dim3(in, r.block, "launch.block");
      r.is_graph = get_bool(in, "launch.is_graph");
      // 1.1. Absent (a 1.0 payload of 78 bytes): 0; 1 to 3 bytes of it: too short, kBadRecord there.
      if (in.remaining() != 0) r.stack_id = in.get<uint32_t>("launch.stack_id");
      return true;
    }
    case RecordType::kNvtx: {
      auto& r = out.emplace<NvtxEvent>();
      r.id = in.get<uint64_t>("nvtx.id");
      r.kind = get_enum<NvtxEventKind>(in, 2, "nvtx.kind");
      r.style = get_enum<NvtxRangeStyle>(in, 2, "nvtx.style");
      r.timestamp_ns = in.get<uint64_t>("nvtx.timestamp_ns");
      r.thread_id = in.get<uint64_t>("nvtx.thread_id");
      r.domain = in.get<uint32_t>("nvtx.domain"); r.name = in.get<uint32_t>("nvtx.name");
      return true;
    }
    case RecordType::kMetricConfig: {
      auto& r = out.emplace<MetricConfig>();
      r.config_id = in.get<uint32_t>("metric_config.config_id");
      r.chip = in.get<uint32_t>("metric_config.chip");
      r.num_passes = in.get<uint32_t>("metric_config.num_passes");
      uint32_t n = in.get_count(sizeof(uint32_t), "metric_config.metrics");
      r.metrics.reserve(n);
      for (uint32_t i = 0; i < n; ++i) r.metrics.push_back(in.get<uint32_t>("metric_config.metric"));
      return true;
    }
    case RecordType::kCounters: {
      std::vector<double> values;
      if (value_memory) values = std::move(*value_memory);
      auto& r = out.emplace<RangeCounters>();
      r.values = std::move(values);
      r.values.clear();
      r.config_id = in.get<uint32_t>("counters.config_id");
      r.window_id = in.get<uint32_t>("counters.window_id");
      r.range_index = in.get<uint64_t>("counters.range_index");
      r.correlation_id = in.get<uint32_t>("counters.correlation_id");
      r.range_name = in.get<uint32_t>("counters.range_name");
      uint32_t n = in.get_count(sizeof(double), "counters.values");
      const std::string_view bytes = in.get_bytes(n * sizeof(double), "counters.value");  // checked above
      r.values.resize(n);
      if (n != 0) std::memcpy(r.values.data(), bytes.data(), bytes.size());  // little-endian doubles
      return true;
    }
    case RecordType::kWindow: {
      auto& r = out.emplace<ProfilingWindow>();
      r.window_id = in.get<uint32_t>("window.window_id");
      r.begin = get_bool(in, "window.begin");
      r.timestamp_ns = in.get<uint64_t>("window.timestamp_ns");
      r.cbid = in.get<uint32_t>("window.cbid");
      return true;
    }
    case RecordType::kError: {
      auto& r = out.emplace<CollectorError>();
      r.code = static_cast<ErrorCode>(in.get<uint32_t>("error.code"));
      r.window_id = in.get<uint32_t>("error.window_id");
      r.timestamp_ns = in.get<uint64_t>("error.timestamp_ns");
      r.expected = in.get<uint64_t>("error.expected"); r.actual = in.get<uint64_t>("error.actual");
      r.message = in.get<uint32_t>("error.message");
      return true;
    }
    case RecordType::kEnd: {
      auto& r = out.emplace<TraceEnd>();
      r.timestamp_ns = in.get<uint64_t>("end.timestamp_ns");
      r.records_written = in.get<uint64_t>("end.records_written");
      r.dropped_records = in.get<uint64_t>("end.dropped_records");
      return true;
    }
    case RecordType::kMemory: {
      auto& r = out.emplace<MemoryActivity>();
      r.operation = get_enum<MemoryOperation>(in, 1, "memory.operation");
      r.memory_kind = get_enum<MemoryKind>(in, 7, "memory.memory_kind");
      r.device_id = in.get<uint32_t>("memory.device_id");
      r.context_id = in.get<uint32_t>("memory.context_id");
      r.stream_id = in.get<uint32_t>("memory.stream_id");
      r.correlation_id = in.get<uint32_t>("memory.correlation_id");
      r.address = in.get<uint64_t>("memory.address");
      r.bytes = in.get<uint64_t>("memory.bytes");
      r.timestamp_ns = in.get<uint64_t>("memory.timestamp_ns");
      return true;
    }
    case RecordType::kCallStack: {
      auto& r = out.emplace<CallStack>();
      r.stack_id = in.get<uint32_t>("call_stack.stack_id");
      uint32_t n = in.get_count(2 * sizeof(uint32_t), "call_stack.frames");
      r.functions.reserve(n);
      r.modules.reserve(n);
      for (uint32_t i = 0; i < n; ++i) {
        r.functions.push_back(in.get<uint32_t>("call_stack.function"));
        r.modules.push_back(in.get<uint32_t>("call_stack.module"));
      }
      return true;
    }
    case RecordType::kOverhead: {
      auto& r = out.emplace<ProfilerOverhead>();
      r.phase = in.get<uint32_t>("overhead.phase");
      r.count = in.get<uint64_t>("overhead.count");
      r.total_ns = in.get<uint64_t>("overhead.total_ns");
      r.max_ns = in.get<uint64_t>("overhead.max_ns");
      return true;
    }
  }
  return false;  // unknown tag: a newer writer; the caller skips it
}

}  // namespace rf::trace
