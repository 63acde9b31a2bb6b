// The records of an rfprof trace: the contract between collector (writer) and analyzer (reader).
// Byte layout of each record: docs/trace-format.md. All times are CUPTI timestamps in ns;
// all strings are ids into the trace's string table (0 = no string).
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace rf::trace {

/// Version of the trace format written by this build. Readers accept equal major versions.
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 2;

/// Id of a string in the trace's string table. 0 means "no string".
using StringId = uint32_t;

/// Tag of a record on disk (u16). Unknown tags are skipped by readers (forward compatibility).
enum class RecordType : uint16_t {
  kString = 1,         ///< StringDef
  kProcess = 2,        ///< ProcessInfo
  kDevice = 3,         ///< DeviceInfo
  kKernel = 4,         ///< KernelActivity
  kLaunch = 5,         ///< LaunchApi
  kNvtx = 6,           ///< NvtxEvent
  kMetricConfig = 7,   ///< MetricConfig
  kCounters = 8,       ///< RangeCounters
  kWindow = 9,         ///< ProfilingWindow
  kError = 10,         ///< CollectorError
  kEnd = 11,           ///< TraceEnd
  kMemory = 12,        ///< MemoryActivity (format 1.1)
  kCallStack = 13,     ///< CallStack (format 1.1)
  kOverhead = 14,      ///< ProfilerOverhead (format 1.2)
};

/// One string table entry: `id` maps to `value` (UTF-8 bytes, not NUL-terminated on disk).
/// A string is always defined before the first record that refers to it.
struct StringDef {
  StringId id = 0;
  std::string value;
  /// Every field equal.
  bool operator==(const StringDef&) const = default;
};

/// Collection mode of a process.
enum class CollectionMode : uint8_t {
  kTiming = 0,    ///< activity only: kernel durations, NVTX; no counters
  kCounters = 1,  ///< activity plus Range Profiler counters
};

/// The profiled process; one per trace, first record after the header.
struct ProcessInfo {
  uint32_t pid = 0;
  uint32_t ppid = 0;
  uint64_t start_ns = 0;        ///< CUPTI timestamp at injection (ns)
  uint64_t wall_clock_ns = 0;   ///< Unix epoch time at injection (ns)
  StringId hostname = 0;
  StringId process_name = 0;    ///< executable name (basename of /proc/self/exe)
  StringId command_line = 0;    ///< /proc/self/cmdline, arguments joined by spaces
  StringId rfprof_version = 0;
  CollectionMode mode = CollectionMode::kTiming;
  uint32_t cupti_version = 0;   ///< cuptiGetVersion
  uint32_t driver_version = 0;  ///< cuDriverGetVersion, e.g. 13000
  /// Every field equal.
  bool operator==(const ProcessInfo&) const = default;
};

/// Identity of a CUDA device, from CUPTI's device activity record and cuptiDeviceGetChipName.
struct DeviceInfo {
  uint32_t device_id = 0;
  StringId name = 0;                 ///< e.g. "NVIDIA H100 80GB HBM3"
  StringId chip = 0;                 ///< e.g. "GH100"
  uint8_t uuid[16] = {};
  uint32_t cc_major = 0;
  uint32_t cc_minor = 0;
  uint32_t sm_count = 0;
  uint32_t core_clock_khz = 0;       ///< max SM clock (kHz)
  uint32_t memory_clock_khz = 0;     ///< peak memory clock (kHz, cuDeviceGetAttribute); 0: unknown
  uint32_t memory_bus_width_bits = 0;  ///< global memory bus width (bits, ditto); 0: unknown
  uint64_t global_memory_bytes = 0;
  uint64_t global_memory_bandwidth_kbps = 0;  ///< CUPTI globalMemoryBandwidth (KB/s)
  uint32_t l2_cache_bytes = 0;
  /// Every field equal.
  bool operator==(const DeviceInfo&) const = default;
};

/// One kernel execution, from CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL.
struct KernelActivity {
  uint32_t correlation_id = 0;  ///< matches LaunchApi::correlation_id or ::runtime_correlation_id
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  uint32_t dynamic_shared_bytes = 0;
  uint32_t static_shared_bytes = 0;
  uint32_t registers_per_thread = 0;
  StringId mangled_name = 0;
  StringId demangled_name = 0;
  uint32_t graph_id = 0;        ///< 0 when not launched through a CUDA graph
  uint64_t graph_node_id = 0;
  /// Every field equal.
  bool operator==(const KernelActivity&) const = default;
};

/// API family of a launch call.
enum class ApiDomain : uint8_t { kDriver = 0, kRuntime = 1 };

/// One kernel (or graph) launch API call seen by the launch callbacks.
struct LaunchApi {
  uint32_t correlation_id = 0;          ///< CUPTI correlation id of this API call
  uint32_t runtime_correlation_id = 0;  ///< enclosing runtime call's id for a driver call (0: none)
  ApiDomain domain = ApiDomain::kDriver;
  uint32_t cbid = 0;                    ///< CUPTI callback id (cupti_driver_cbid.h / cupti_runtime_cbid.h)
  uint64_t thread_id = 0;               ///< system thread id (gettid)
  uint64_t api_start_ns = 0;
  uint64_t api_end_ns = 0;
  uint32_t window_id = 0;               ///< profiling window (0: profile-from-start window)
  uint64_t launch_index = 0;            ///< driver launches: index within the counter image since its reset
  StringId kernel_name = 0;             ///< symbol name from the callback (mangled); 0 for graphs
  int32_t grid[3] = {0, 0, 0};
  int32_t block[3] = {0, 0, 0};
  bool is_graph = false;                ///< cuGraphLaunch: one call, many kernels
  /// CallStack::stack_id of the native call stack of this launch (format 1.1; 0: not recorded).
  uint32_t stack_id = 0;
  /// Every field equal.
  bool operator==(const LaunchApi&) const = default;
};

/// Kind of an NVTX event, from CUPTI_ACTIVITY_KIND_MARKER flags.
enum class NvtxEventKind : uint8_t { kStart = 0, kEnd = 1, kInstant = 2 };

/// Whether an NVTX range was pushed/popped (nests per thread) or started/ended (any thread).
enum class NvtxRangeStyle : uint8_t { kUnknown = 0, kPushPop = 1, kStartEnd = 2 };

/// One NVTX marker event. A range is the kStart and kEnd events that share `id`.
struct NvtxEvent {
  uint64_t id = 0;
  NvtxEventKind kind = NvtxEventKind::kStart;
  NvtxRangeStyle style = NvtxRangeStyle::kUnknown;
  uint64_t timestamp_ns = 0;
  uint64_t thread_id = 0;   ///< system thread id of the thread that recorded the event
  StringId domain = 0;      ///< NVTX domain name (0: default domain)
  StringId name = 0;        ///< message; set on kStart and kInstant
  /// Every field equal.
  bool operator==(const NvtxEvent&) const = default;
};

/// A list of metrics evaluated for counter ranges; RangeCounters refer to it by `config_id`.
struct MetricConfig {
  uint32_t config_id = 0;
  StringId chip = 0;
  uint32_t num_passes = 0;
  std::vector<StringId> metrics;  ///< metric names, exactly as NVIDIA spells them
  /// Every field equal.
  bool operator==(const MetricConfig&) const = default;
};

/// Evaluated metric values of one Range Profiler range (one kernel launch under auto range).
struct RangeCounters {
  uint32_t config_id = 0;
  uint32_t window_id = 0;
  uint64_t range_index = 0;     ///< index of the range in its counter image
  uint32_t correlation_id = 0;  ///< the launch mapped to this range; 0 when the mapping failed
  StringId range_name = 0;
  std::vector<double> values;   ///< one per MetricConfig::metrics, same order; NaN: not available
  /// Every field equal (a NaN value is unequal to itself, as doubles compare).
  bool operator==(const RangeCounters&) const = default;
};

/// Profiling window boundary: cudaProfilerStart/Stop, cuProfilerStart/Stop, or profile-from-start.
struct ProfilingWindow {
  uint32_t window_id = 0;
  bool begin = true;        ///< true: window opens; false: window closes
  uint64_t timestamp_ns = 0;
  uint32_t cbid = 0;        ///< API that opened/closed it (0: process start/exit)
  /// Every field equal.
  bool operator==(const ProfilingWindow&) const = default;
};

/// Error codes recorded in a trace.
enum class ErrorCode : uint32_t {
  kUnknown = 0,
  kRangeLaunchMismatch = 1,   ///< ranges decoded != launches seen; counters left unmapped
  kCuptiCall = 2,             ///< a CUPTI call failed
  kCountersUnavailable = 3,   ///< counters refused (privileges, busy, multiple subscribers)
  kDroppedRecords = 4,        ///< CUPTI dropped activity records
  kDecodeFailed = 5,
  kCallStacksDropped = 6,     ///< launches without a call stack: the stack table was full (1.1)
  kFinishCutShort = 7,        ///< a fatal signal's finish was blocked: the trace was ended early
};

/// Something the collector could not do, recorded instead of silently losing or shifting data.
struct CollectorError {
  ErrorCode code = ErrorCode::kUnknown;
  uint32_t window_id = 0;
  uint64_t timestamp_ns = 0;
  uint64_t expected = 0;  ///< e.g. launches seen
  uint64_t actual = 0;    ///< e.g. ranges decoded
  StringId message = 0;
  /// Every field equal.
  bool operator==(const CollectorError&) const = default;
};

/// Last record of a cleanly finished trace. Its absence means the trace is truncated.
struct TraceEnd {
  uint64_t timestamp_ns = 0;
  uint64_t records_written = 0;  ///< records before this one, strings included
  uint64_t dropped_records = 0;  ///< records the collector could not write
  /// Every field equal.
  bool operator==(const TraceEnd&) const = default;
};

/// Whether a MemoryActivity allocated or released memory.
enum class MemoryOperation : uint8_t { kAllocation = 0, kRelease = 1 };

/// Kind of memory of a MemoryActivity, as CUPTI's CUpti_ActivityMemoryKind (same values).
enum class MemoryKind : uint8_t {
  kUnknown = 0,
  kPageable = 1,
  kPinned = 2,
  kDevice = 3,
  kArray = 4,
  kManaged = 5,
  kDeviceStatic = 6,
  kManagedStatic = 7,
};

/// One allocation or release of memory by the CUDA driver, from CUPTI_ACTIVITY_KIND_MEMORY2
/// (format 1.1). A caching allocator (PyTorch's) appears as its large cudaMalloc blocks, i.e. the
/// memory it reserved, not the tensors it hands out.
struct MemoryActivity {
  MemoryOperation operation = MemoryOperation::kAllocation;
  MemoryKind memory_kind = MemoryKind::kUnknown;
  uint32_t device_id = 0;
  uint32_t context_id = 0;
  uint32_t stream_id = 0;       ///< stream of an asynchronous (pool) allocation; 0 otherwise
  uint32_t correlation_id = 0;  ///< the API call that allocated or released it
  uint64_t address = 0;
  uint64_t bytes = 0;
  uint64_t timestamp_ns = 0;
  /// Every field equal.
  bool operator==(const MemoryActivity&) const = default;
};

/// One native call stack of kernel launches, written once per distinct stack when the process
/// ends (symbolized then, not per launch; format 1.1). LaunchApi::stack_id refers to it.
struct CallStack {
  uint32_t stack_id = 0;  ///< 1, 2, ...
  /// One frame per element, innermost (the launch API's caller) first: function name
  /// (demangled; "module+0xOFFSET" when the symbol is unknown) and module (shared object path).
  std::vector<StringId> functions;
  std::vector<StringId> modules;  ///< same length as `functions`
  /// Every field equal.
  bool operator==(const CallStack&) const = default;
};

/// The collector's own cost in one phase (format 1.2), e.g. "counters.enable" or
/// "launch.counters" (docs/trace-format.md lists the phases). Totals since the process started:
/// a phase is written again whenever it grew (every flush interval and at exit), and its last
/// record in the trace holds its totals.
struct ProfilerOverhead {
  StringId phase = 0;
  uint64_t count = 0;     ///< times the phase ran (timed)
  uint64_t total_ns = 0;  ///< summed wall-clock time (ns)
  uint64_t max_ns = 0;    ///< the longest single run (ns)
  /// Every field equal.
  bool operator==(const ProfilerOverhead&) const = default;
};

/// Any record. The reader yields these; the writer accepts them.
using Record = std::variant<StringDef, ProcessInfo, DeviceInfo, KernelActivity, LaunchApi, NvtxEvent,
                            MetricConfig, RangeCounters, ProfilingWindow, CollectorError, TraceEnd,
                            MemoryActivity, CallStack, ProfilerOverhead>;

/// On-disk tag of a record.
RecordType record_type(const Record& record) noexcept;

}  // namespace rf::trace
