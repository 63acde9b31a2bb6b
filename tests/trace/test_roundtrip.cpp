// Round trip: every record written by Writer comes back from Reader with the same fields.
#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace rf::trace
