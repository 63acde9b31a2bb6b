// Reading records without decoding them (Reader::next_raw, Reader::decode, peek_end_ns), as
// rfanalyze's first pass does for launch, kernel and counter records, and the reuse of counter
// value memory from one decoded record to the next.
#include <gtest/gtest.h>

#include <cstring>
#include <set>
#include <tuple>

#include "rfprof/trace/reader.h"
#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::first_record_of;
using testing::payload_of;
using testing::slurp;
using testing::spit;
using testing::TempDir;

/// A finished trace of write_sample with `launches` launches, written in `dir`.
std::filesystem::path sample_file(const TempDir& dir, int launches) {
  const auto p = dir.path / "sample.rftrace";
  Writer w(p);
  testing::write_sample(w, launches);
  w.finish();
  return p;
}

/// The bytes of sample_file(dir, launches).
std::vector<char> sample_bytes(const TempDir& dir, int launches) { return slurp(sample_file(dir, launches)); }

bool skimmed(uint16_t type) {
  return type == static_cast<uint16_t>(RecordType::kLaunch) ||
         type == static_cast<uint16_t>(RecordType::kKernel) ||
         type == static_cast<uint16_t>(RecordType::kCounters);
}

// Strings are defined by the writer just before the first record that uses them, often a launch
// or kernel record; skipping those records must not lose the strings a later record refers to.
TEST(Skim, SkippedRecordsLoseNoStringAndTheRecordCountMatchesNext) {
  TempDir dir;
  const auto p = dir.path / "t.rftrace";
  {
    Writer w(p, {.chunk_bytes = 256});
    testing::write_sample(w, 40);
    w.finish();
  }
  size_t decoded_count = 0;
  {
    Reader r(p);
    Record rec;
    while (r.next(rec)) ++decoded_count;
  }
  Reader r(p);
  RawRecord raw;
  Record rec;
  size_t raw_count = 0, skipped = 0;
  std::set<StringId> launch_names;
  while (r.next_raw(raw)) {
    ++raw_count;
    if (skimmed(raw.type)) {
      ++skipped;
      // Ids read from the undecoded payload: the kernel name of a launch is at byte 49.
      if (raw.type == static_cast<uint16_t>(RecordType::kLaunch)) {
        StringId id = 0;
        std::memcpy(&id, raw.payload.data() + 49, sizeof id);
        launch_names.insert(id);
      }
      continue;
    }
    ASSERT_TRUE(r.decode(raw, rec));
  }
  EXPECT_EQ(raw_count, decoded_count);
  EXPECT_EQ(skipped, 3u * 40u);
  EXPECT_FALSE(r.truncated());
  ASSERT_EQ(launch_names.size(), 1u);
  EXPECT_EQ(r.string(*launch_names.begin()), "_Z9ffma_loopPfi");
  // "0" .. "39", the counters' range names, were each defined just before a skipped record.
  for (int i = 0; i < 40; ++i) {
    bool found = false;
    for (StringId id = 1; id < 200 && !found; ++id) {
      try {
        found = r.string(id) == std::to_string(i);
      } catch (const TraceError&) {
        break;  // past the last defined id
      }
    }
    EXPECT_TRUE(found) << "range name " << i;
  }
}

TEST(Skim, PeekEndNsIsTheDecodedEndOfLaunchesAndKernelsOnly) {
  TempDir dir;
  Reader r(sample_file(dir, 6));
  RawRecord raw;
  Record rec;
  int launches = 0, kernels = 0;
  while (r.next_raw(raw)) {
    const std::optional<uint64_t> peeked = peek_end_ns(raw);
    ASSERT_TRUE(r.decode(raw, rec));
    if (const auto* l = std::get_if<LaunchApi>(&rec)) {
      ++launches;
      ASSERT_TRUE(peeked);
      EXPECT_EQ(*peeked, l->api_end_ns);
      EXPECT_NE(l->api_end_ns, l->api_start_ns);  // the sample tells the two apart
    } else if (const auto* k = std::get_if<KernelActivity>(&rec)) {
      ++kernels;
      ASSERT_TRUE(peeked);
      EXPECT_EQ(*peeked, k->end_ns);
      EXPECT_NE(k->end_ns, k->start_ns);
    } else {
      EXPECT_FALSE(peeked) << "record type " << raw.type;
    }
  }
  EXPECT_EQ(launches, 6);
  EXPECT_EQ(kernels, 6);
}

// A payload too short for its time stamp gives the error a full decode gives: the same kind, byte
// and message, so rfanalyze's first pass reports a short record as a full read does.
TEST(Skim, PeekEndNsOnAShortPayloadFailsAsTheFullDecode) {
  LaunchApi l;
  l.api_end_ns = 77;
  l.domain = ApiDomain::kRuntime;
  KernelActivity k;
  k.end_ns = 99;
  for (const auto& [type, payload, end] : {std::tuple{RecordType::kLaunch, payload_of(l), uint64_t{77}},
                                           std::tuple{RecordType::kKernel, payload_of(k), uint64_t{99}}}) {
    const auto tag = static_cast<uint16_t>(type);
    size_t fitting = payload.size();  // the shortest prefix whose time stamp peek_end_ns reads
    for (size_t n = 0; n < payload.size(); ++n) {
      const std::string_view cut = std::string_view(payload).substr(0, n);
      const std::optional<TraceError> full = testing::decode_error(type, cut, 1000 + 8);
      try {
        const std::optional<uint64_t> end_ns = peek_end_ns(RawRecord{tag, cut, 1000});
        ASSERT_TRUE(end_ns) << n;
        EXPECT_EQ(*end_ns, end) << n;
        fitting = std::min(fitting, n);
      } catch (const TraceError& e) {
        ASSERT_TRUE(full) << "type " << tag << ", " << n << " bytes: " << e.what();
        EXPECT_EQ(e.kind(), full->kind()) << n;
        EXPECT_EQ(e.offset(), full->offset()) << n;
        EXPECT_STREQ(e.what(), full->what()) << n;
      }
    }
    EXPECT_EQ(fitting, type == RecordType::kLaunch ? 37u : 32u);  // the time stamp's end
  }
  // The byte and field of the first missing one, as the reader has always reported them.
  const std::string kp = payload_of(k);
  try {
    peek_end_ns(RawRecord{static_cast<uint16_t>(RecordType::kKernel), std::string_view(kp).substr(0, 10), 0});
    FAIL() << "10 bytes hold no kernel end_ns";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.offset(), 8u + 8u);  // record header, then correlation and device ids
    EXPECT_NE(std::string(e.what()).find("kernel.context_id"), std::string::npos) << e.what();
  }
}

// A launch record with an invalid API domain passes next_raw (its payload is not read) and is
// reported by decode, at the domain's byte.
TEST(Skim, ACorruptPayloadIsFoundByDecodeNotByNextRaw) {
  TempDir dir;
  const auto bad = dir.path / "bad.rftrace";
  std::vector<char> bytes = sample_bytes(dir, 3);
  const auto launch = first_record_of(bytes, RecordType::kLaunch);
  ASSERT_TRUE(launch);
  const size_t domain_at = launch->offset + 8 + 8;  // header, the two correlation ids
  bytes[domain_at] = 7;
  spit(bad, bytes);

  Reader skim(bad);
  RawRecord raw;
  size_t n = 0;
  while (skim.next_raw(raw)) ++n;
  EXPECT_FALSE(skim.truncated());
  EXPECT_GT(n, 10u);

  const testing::ReadOutcome decoded = testing::read_whole(bad);
  ASSERT_TRUE(decoded.error) << "the launch's domain 7 was not reported";
  EXPECT_EQ(*decoded.error, TraceErrorKind::kBadRecord);
  EXPECT_EQ(decoded.error_offset, domain_at);
  EXPECT_NE(decoded.message.find("launch.domain"), std::string::npos) << decoded.message;
}

// A TraceEnd too short for its fields is an error from next_raw, not a clean end of the trace.
TEST(Skim, ACorruptTraceEndIsAnErrorNotAnEnd) {
  TempDir dir;
  const auto bad = dir.path / "bad.rftrace";
  std::vector<char> bytes = sample_bytes(dir, 2);
  const auto end = first_record_of(bytes, RecordType::kEnd);
  ASSERT_TRUE(end);
  ASSERT_EQ(end->size, 24u);
  const uint32_t shorter = 16;  // its dropped_records no longer inside it; 8 bytes left in the chunk
  std::memcpy(bytes.data() + end->offset + 4, &shorter, 4);
  spit(bad, bytes);
  Reader r(bad);
  RawRecord raw;
  try {
    while (r.next_raw(raw)) {
    }
    FAIL() << "the short TraceEnd ended the trace cleanly";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.kind(), TraceErrorKind::kBadRecord);
    EXPECT_EQ(e.offset(), end->offset + 8 + 16);
    EXPECT_NE(std::string(e.what()).find("end.dropped_records"), std::string::npos) << e.what();
  }
}

// The reader reuses the memory of one counter record's values for the next: each record must
// still come out with exactly its own values, longer, shorter or empty, with other records between.
TEST(Skim, CounterValuesAreNeverCarriedIntoTheNextRecord) {
  TempDir dir;
  const auto p = dir.path / "t.rftrace";
  const std::vector<std::vector<double>> values = {
      {1, 2, 3, 4, 5}, {6, 7}, {}, {8, 9, 10, 11, 12, 13, 14}, {15}};
  {
    Writer w(p);
    for (size_t i = 0; i < values.size(); ++i) {
      RangeCounters rc;
      rc.config_id = 1;
      rc.range_index = i;
      rc.values = values[i];
      w.append(rc);
      if (i % 2 == 0) w.append(testing::launch(i));  // another record between some of them
    }
    w.finish();
  }
  Reader r(p);
  Record rec;
  size_t i = 0;
  while (r.next(rec)) {
    if (const auto* rc = std::get_if<RangeCounters>(&rec)) {
      ASSERT_LT(i, values.size());
      EXPECT_EQ(rc->range_index, i);
      EXPECT_EQ(rc->values, values[i]) << "record " << i;
      ++i;
    }
  }
  EXPECT_EQ(i, values.size());
}

}  // namespace
}  // namespace rf::trace
