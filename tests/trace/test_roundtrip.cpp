// Round trip: every record written by Writer comes back from Reader with the same fields.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "rfprof/trace/reader.h"
#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::TempDir;

std::vector<Record> read_all(Reader& r) {
  std::vector<Record> out;
  Record rec;
  while (r.next(rec)) out.push_back(rec);
  return out;
}

TEST(TraceRoundTrip, EveryRecordTypeKeepsItsFields) {
  TempDir dir;
  auto path = dir.path / "t.rftrace";
  {
    Writer w(path, {.chunk_bytes = 256});  // small chunks: records span many chunks
    testing::write_sample(w, 5);
    w.finish(12345, 3);
  }
  ASSERT_TRUE(std::filesystem::exists(path));
  ASSERT_FALSE(std::filesystem::exists(path.string() + ".part"));
  Reader r(path);
  auto recs = read_all(r);
  EXPECT_FALSE(r.truncated());

  std::map<RecordType, int> counts;
  for (const auto& rec : recs) counts[record_type(rec)]++;
  EXPECT_EQ(counts[RecordType::kKernel], 5);
  EXPECT_EQ(counts[RecordType::kLaunch], 5);
  EXPECT_EQ(counts[RecordType::kCounters], 5);
  EXPECT_EQ(counts[RecordType::kNvtx], 2);
  EXPECT_EQ(counts[RecordType::kEnd], 1);
  EXPECT_EQ(counts[RecordType::kProcess], 1);
  EXPECT_EQ(counts[RecordType::kMemory], 2);
  EXPECT_EQ(counts[RecordType::kCallStack], 2);
  EXPECT_EQ(counts[RecordType::kOverhead], 3);

  const auto& p = std::get<ProcessInfo>(recs.at(4));  // 4 strings interned first
  EXPECT_EQ(p.pid, 4242u);
  EXPECT_EQ(r.string(p.command_line), "python3 main.py -a resnet18");
  EXPECT_EQ(p.mode, CollectionMode::kCounters);

  int kernel_seen = 0;
  for (const auto& rec : recs) {
    if (auto* k = std::get_if<KernelActivity>(&rec)) {
      EXPECT_EQ(k->correlation_id, 100u + static_cast<uint32_t>(kernel_seen));
      EXPECT_EQ(k->end_ns - k->start_ns, 90u);
      EXPECT_EQ(k->grid[0], 1024);
      EXPECT_EQ(k->block[2], 1);
      EXPECT_EQ(r.string(k->demangled_name), "ffma_loop(float*, int)");
      ++kernel_seen;
    } else if (auto* c = std::get_if<RangeCounters>(&rec)) {
      ASSERT_EQ(c->values.size(), 2u);
      EXPECT_DOUBLE_EQ(c->values[0], 262144.0 * static_cast<double>(c->range_index + 1));
      EXPECT_DOUBLE_EQ(c->values[1], 4096.5);
    } else if (auto* d = std::get_if<DeviceInfo>(&rec)) {
      EXPECT_EQ(r.string(d->chip), "GH100");
      EXPECT_EQ(d->uuid[15], 105);
      EXPECT_EQ(d->global_memory_bytes, 85520809984ull);
    } else if (auto* e = std::get_if<TraceEnd>(&rec)) {
      EXPECT_EQ(e->timestamp_ns, 12345u);
      EXPECT_EQ(e->dropped_records, 3u);
      EXPECT_EQ(e->records_written, recs.size() - 1);
    } else if (auto* l = std::get_if<LaunchApi>(&rec)) {
      EXPECT_EQ(l->runtime_correlation_id, l->correlation_id + 10000);
      EXPECT_EQ(l->domain, ApiDomain::kDriver);
      EXPECT_EQ(l->stack_id, 1u + (l->correlation_id - 100u) % 2u);
    } else if (auto* m = std::get_if<MemoryActivity>(&rec)) {
      EXPECT_EQ(m->memory_kind, MemoryKind::kDevice);
      EXPECT_EQ(m->bytes, 2ull << 30);
      EXPECT_EQ(m->address, 0x7f0000000000ull);
      EXPECT_EQ(m->correlation_id, 55u);
      EXPECT_EQ(m->operation, m->timestamp_ns == 2100 ? MemoryOperation::kAllocation
                                                      : MemoryOperation::kRelease);
    } else if (auto* cs = std::get_if<CallStack>(&rec)) {
      ASSERT_EQ(cs->functions.size(), 2u);
      ASSERT_EQ(cs->modules.size(), 2u);
      EXPECT_EQ(r.string(cs->functions[0]), "at::native::cudnn_convolution");
      EXPECT_EQ(r.string(cs->functions[1]), cs->stack_id == 1 ? "main" : "worker");
      EXPECT_EQ(r.string(cs->modules[1]), "/usr/bin/python3");
    } else if (auto* o = std::get_if<ProfilerOverhead>(&rec)) {
      if (r.string(o->phase) == "counters.enable") {
        EXPECT_EQ(o->count, 1u);
        EXPECT_EQ(o->total_ns, 2300000000ull);
        EXPECT_EQ(o->max_ns, 2300000000ull);
      } else {
        EXPECT_EQ(r.string(o->phase), "launch.counters");
        EXPECT_EQ(o->max_ns, 400u);
        EXPECT_EQ(o->total_ns, o->count * 300);
      }
    } else if (auto* err = std::get_if<CollectorError>(&rec)) {
      EXPECT_EQ(err->code, ErrorCode::kRangeLaunchMismatch);
      EXPECT_EQ(r.string(err->message), "2 ranges for 3 launches");
    }
  }
  EXPECT_EQ(kernel_seen, 5);
}

TEST(TraceRoundTrip, NaNAndExtremeValuesSurvive) {
  std::vector<uint8_t> bytes;
  RangeCounters rc;
  rc.values = {std::numeric_limits<double>::quiet_NaN(), -0.0, 1e308};
  rc.range_index = std::numeric_limits<uint64_t>::max();
  encode_record(rc, bytes);
  std::string_view payload(reinterpret_cast<const char*>(bytes.data()) + 8, bytes.size() - 8);
  auto back = decode_record(static_cast<uint16_t>(RecordType::kCounters), payload, 0);
  ASSERT_TRUE(back.has_value());
  const auto& out = std::get<RangeCounters>(*back);
  EXPECT_TRUE(std::isnan(out.values[0]));
  EXPECT_TRUE(std::signbit(out.values[1]));
  EXPECT_EQ(out.values[2], 1e308);
  EXPECT_EQ(out.range_index, std::numeric_limits<uint64_t>::max());
}

TEST(TraceRoundTrip, StringsAreInternedOnce) {
  TempDir dir;
  auto path = dir.path / "s.rftrace";
  {
    Writer w(path);
    EXPECT_EQ(w.intern("a"), w.intern("a"));
    EXPECT_NE(w.intern("a"), w.intern("b"));
    w.finish();
  }
  Reader r(path);
  Record rec;
  int strings = 0;
  while (r.next(rec)) strings += std::holds_alternative<StringDef>(rec);
  EXPECT_EQ(strings, 2);
}

TEST(TraceRoundTrip, StringIdsInAnyOrderResolve) {
  // The writer defines ids 1, 2, 3, ...; another writer may use any order and gaps.
  TempDir dir;
  auto path = dir.path / "ids.rftrace";
  {
    Writer w(path);
    for (auto [id, value] : std::vector<std::pair<StringId, std::string>>{
             {1, "one"}, {2, "two"}, {9, "nine"}, {3, "three"}, {4000000000u, "big"}})
      w.append(StringDef{id, value});
    KernelActivity k;
    k.mangled_name = 9;
    k.demangled_name = 3;
    w.append(k);
    w.finish();
  }
  Reader r(path);
  Record rec;
  std::optional<KernelActivity> kernel;
  while (r.next(rec))
    if (auto* k = std::get_if<KernelActivity>(&rec)) kernel = *k;
  ASSERT_TRUE(kernel);
  EXPECT_EQ(r.string(kernel->mangled_name), "nine");
  EXPECT_EQ(r.string(kernel->demangled_name), "three");
  EXPECT_EQ(r.string(1), "one");
  EXPECT_EQ(r.string(2), "two");
  EXPECT_EQ(r.string(4000000000u), "big");
  EXPECT_EQ(r.string(0), "");
  EXPECT_THROW(r.string(5), TraceError);
}

TEST(TraceRoundTrip, UnknownRecordTypesAreSkipped) {
  EXPECT_FALSE(decode_record(999, "abcd", 0).has_value());
}


namespace rf::trace {
namespace {

using testing::decode_error;
using testing::payload_of;

TEST(TraceRoundTrip, FormatOneZeroLaunchWithoutStackIdReadsAsNoStack) {
  LaunchApi l;
  l.correlation_id = 7;
  l.is_graph = true;
  l.stack_id = 99;
  std::string payload = payload_of(l);
  payload.resize(payload.size() - sizeof(uint32_t));  // a 1.0 writer wrote no stack_id
  auto back = decode_record(static_cast<uint16_t>(RecordType::kLaunch), payload, 0);
  ASSERT_TRUE(back.has_value());
  const auto& out = std::get<LaunchApi>(*back);
  EXPECT_EQ(out.correlation_id, 7u);
  EXPECT_TRUE(out.is_graph);
  EXPECT_EQ(out.stack_id, 0u);
}

TEST(TraceRoundTrip, CallStackFrameCountBeyondItsBytesIsABadRecord) {
  CallStack cs;
  cs.stack_id = 3;
  cs.functions = {5, 6};
  cs.modules = {7, 8};
  std::string payload = payload_of(cs);
  const uint32_t huge = 0x40000000;  // 1 Gi frames in a 20-byte payload
  std::memcpy(payload.data() + 4, &huge, sizeof huge);
  auto e = decode_error(RecordType::kCallStack, payload, 1000);
  ASSERT_TRUE(e.has_value()) << "expected TraceError";
  EXPECT_EQ(e->kind(), TraceErrorKind::kBadRecord);
  EXPECT_EQ(e->offset(), 1004u);
}

TEST(TraceRoundTrip, ProfilerOverheadCutShortIsABadRecordAtTheMissingField) {
  std::string payload = payload_of(ProfilerOverhead{9, 2, 3000, 2000});
  ASSERT_EQ(payload.size(), 28u);  // str phase, u64 count, u64 total_ns, u64 max_ns
  payload.resize(20);              // max_ns missing
  auto e = decode_error(RecordType::kOverhead, payload, 500);
  ASSERT_TRUE(e.has_value()) << "expected TraceError";
  EXPECT_EQ(e->kind(), TraceErrorKind::kBadRecord);
  EXPECT_EQ(e->offset(), 520u);
  EXPECT_NE(std::string(e->what()).find("overhead.max_ns"), std::string::npos) << e->what();
}

TEST(TraceRoundTrip, MemoryKindOutOfRangeIsABadRecord) {
  MemoryActivity m;
  std::string payload = payload_of(m);
  payload[1] = 8;  // memory_kind: 0..7
  EXPECT_THROW(decode_record(static_cast<uint16_t>(RecordType::kMemory), payload, 0), TraceError);
}

}  // namespace
}  // namespace rf::trace

namespace every_field {

/// `rec` encoded and decoded again (at file offset 0).
template <typename T>
T round_trip(const T& rec) {
  std::vector<uint8_t> bytes;
  encode_record(rec, bytes);
  uint16_t type = 0;
  std::memcpy(&type, bytes.data(), 2);
  const std::string_view payload(reinterpret_cast<const char*>(bytes.data()) + 8, bytes.size() - 8);
  const std::optional<Record> back = decode_record(type, payload, 0);
  if (!back || !std::holds_alternative<T>(*back)) {
    ADD_FAILURE() << "record type " << type << " did not decode as itself";
    return T{};
  }
  return std::get<T>(*back);
}

}  // namespace every_field

// Every field of every record kind, each with its own value (and 32- and 64-bit fields with high
// bits set): a field decoded into another, or cut to a narrower width, changes the record. The
// sample trace above leaves many fields 0 or equal to each other.
TEST(TraceRoundTrip, EveryFieldKeepsItsOwnValue) {
  using every_field::round_trip;
  constexpr uint64_t kBig = 0x0102030405060708ull;
  constexpr uint32_t kWide = 0x0A0B0C00u;
  ProcessInfo p{kWide + 1, kWide + 2, kBig + 3, kBig + 4, kWide + 5, kWide + 6, kWide + 7, kWide + 8,
                CollectionMode::kCounters, kWide + 9, kWide + 10};
  EXPECT_EQ(round_trip(p), p);
  DeviceInfo d;
  d.device_id = kWide + 1; d.name = kWide + 2; d.chip = kWide + 3;
  for (int i = 0; i < 16; ++i) d.uuid[i] = static_cast<uint8_t>(0xA0 + i);
  d.cc_major = 9; d.cc_minor = 7; d.sm_count = kWide + 4; d.core_clock_khz = kWide + 5;
  d.memory_clock_khz = kWide + 6; d.memory_bus_width_bits = kWide + 7; d.global_memory_bytes = kBig + 8;
  d.global_memory_bandwidth_kbps = kBig + 9; d.l2_cache_bytes = kWide + 10;
  EXPECT_EQ(round_trip(d), d);
  KernelActivity k{kWide + 1, kWide + 2, kWide + 3, kWide + 4, kBig + 5, kBig + 6, {11, 12, 13}, {21, 22, 23},
                   kWide + 7, kWide + 8, kWide + 9, kWide + 10, kWide + 11, kWide + 12, kBig + 13};
  EXPECT_EQ(round_trip(k), k);
  LaunchApi l{kWide + 1, kWide + 2, ApiDomain::kRuntime, kWide + 3, kBig + 4, kBig + 5, kBig + 6, kWide + 7,
              kBig + 8, kWide + 9, {11, 12, 13}, {21, 22, 23}, true, kWide + 10};
  EXPECT_EQ(round_trip(l), l);
  NvtxEvent n{kBig + 1, NvtxEventKind::kInstant, NvtxRangeStyle::kPushPop, kBig + 2, kBig + 3, kWide + 4, kWide + 5};
  EXPECT_EQ(round_trip(n), n);
  MetricConfig mc{kWide + 1, kWide + 2, kWide + 3, {kWide + 4, kWide + 5, kWide + 6}};
  EXPECT_EQ(round_trip(mc), mc);
  RangeCounters rc{kWide + 1, kWide + 2, kBig + 3, kWide + 4, kWide + 5, {1.5, -2.25, 1e300}};
  EXPECT_EQ(round_trip(rc), rc);
  for (const bool begin : {true, false}) {
    ProfilingWindow w{kWide + 1, begin, kBig + 2, kWide + 3};
    EXPECT_EQ(round_trip(w), w);
  }
  CollectorError e{ErrorCode::kDecodeFailed, kWide + 1, kBig + 2, kBig + 3, kBig + 4, kWide + 5};
  EXPECT_EQ(round_trip(e), e);
  TraceEnd end{kBig + 1, kBig + 2, kBig + 3};
  EXPECT_EQ(round_trip(end), end);
  MemoryActivity m{MemoryOperation::kRelease, MemoryKind::kPinned, kWide + 1, kWide + 2, kWide + 3, kWide + 4,
                   kBig + 5, kBig + 6, kBig + 7};
  EXPECT_EQ(round_trip(m), m);
  CallStack cs{kWide + 1, {kWide + 2, kWide + 3}, {kWide + 4, kWide + 5}};
  EXPECT_EQ(round_trip(cs), cs);
  ProfilerOverhead o{kWide + 1, kBig + 2, kBig + 3, kBig + 4};
  EXPECT_EQ(round_trip(o), o);
  StringDef s{kWide + 1, std::string("a\0b", 3)};
  EXPECT_EQ(round_trip(s), s);
  // A call stack with fewer modules than functions: the missing module is 0, no string.
  CallStack short_modules{3, {kWide + 2, kWide + 3}, {kWide + 4}};
  EXPECT_EQ(round_trip(short_modules).modules, (std::vector<StringId>{kWide + 4, 0}));
}

// Fields sit where docs/trace-format.md puts them: a change made the same way in the encoder and
// the decoder round-trips, and still misreads every trace already written (dim3 is x, y, z).
TEST(TraceRoundTrip, AKernelsFieldsSitWhereTheFormatSpecPutsThem) {
  KernelActivity k{101, 102, 103, 104, 105, 106, {11, 12, 13}, {21, 22, 23}, 31, 32, 33, 34, 35, 36, 37};
  const std::string payload = testing::payload_of(k);
  ASSERT_EQ(payload.size(), 4u * 4 + 8 * 2 + 12 * 2 + 4 * 3 + 4 * 2 + 4 + 8);
  auto u32_at = [&](size_t at) {
    uint32_t v = 0;
    std::memcpy(&v, payload.data() + at, 4);
    return v;
  };
  auto u64_at = [&](size_t at) {
    uint64_t v = 0;
    std::memcpy(&v, payload.data() + at, 8);
    return v;
  };
  const std::vector<uint32_t> ids = {u32_at(0), u32_at(4), u32_at(8), u32_at(12)};
  EXPECT_EQ(ids, (std::vector<uint32_t>{101, 102, 103, 104}));
  EXPECT_EQ(u64_at(16), 105u);
  EXPECT_EQ(u64_at(24), 106u);
  const std::vector<uint32_t> dims = {u32_at(32), u32_at(36), u32_at(40), u32_at(44), u32_at(48), u32_at(52)};
  EXPECT_EQ(dims, (std::vector<uint32_t>{11, 12, 13, 21, 22, 23}));
  const std::vector<uint32_t> rest = {u32_at(56), u32_at(60), u32_at(64), u32_at(68), u32_at(72), u32_at(76)};
  EXPECT_EQ(rest, (std::vector<uint32_t>{31, 32, 33, 34, 35, 36}));
  EXPECT_EQ(u64_at(80), 37u);
}

// Every record header's reserved u16 is written 0 (docs/trace-format.md): a later minor version may
// give it a meaning.
TEST(TraceRoundTrip, TheReservedBytesOfEveryRecordHeaderAreZero) {
  TempDir dir;
  {
    Writer w(dir.path / "t.rftrace");
    testing::write_sample(w, 3);
    w.finish(1, 0);
  }
  const auto bytes = testing::slurp(dir.path / "t.rftrace");
  const auto headers = testing::record_headers(bytes);
  ASSERT_GT(headers.size(), 20u);
  for (const auto& h : headers) {
    EXPECT_EQ(bytes[h.offset + 2], 0) << "record at byte " << h.offset;
    EXPECT_EQ(bytes[h.offset + 3], 0) << "record at byte " << h.offset;
  }
}

}  // namespace
}  // namespace rf::trace
