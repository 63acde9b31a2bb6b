// The reader treats every file as hostile: truncation at every byte, corrupt headers, lengths,
// counts and string ids give a readable prefix or a typed TraceError, never a crash.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include "rfprof/trace/reader.h"
#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::chunk_ends;
using testing::read_whole;
using testing::ReadOutcome;
using testing::record_headers;
using testing::RecordAt;
using testing::slurp;
using testing::spit;
using testing::TempDir;

class HostileTrace : public ::testing::Test {
 protected:
  void SetUp() override {
    full_ = dir_.path / "full.rftrace";
    Writer w(full_, {.chunk_bytes = 200});
    testing::write_sample(w, 8);
    w.finish();
    bytes_ = slurp(full_);
    cut_ = dir_.path / "cut.rftrace";
  }
  TempDir dir_;
  std::filesystem::path full_, cut_;
  std::vector<char> bytes_;
};

TEST_F(HostileTrace, TruncatedAtEveryChunkBoundaryKeepsEveryCompleteChunk) {
  auto ends = chunk_ends(bytes_);
  ASSERT_GT(ends.size(), 5u) << "the sample must span several chunks";
  ASSERT_EQ(ends.back(), bytes_.size());
  const ReadOutcome whole = read_whole(full_);
  ASSERT_FALSE(whole.error);
  ASSERT_FALSE(whole.truncated);
  size_t previous_records = 0;
  for (size_t i = 0; i + 1 < ends.size(); ++i) {
    spit(cut_, bytes_, ends[i]);
    ReadOutcome res = read_whole(cut_);
    ASSERT_FALSE(res.error) << "cut at chunk end " << ends[i];
    EXPECT_TRUE(res.truncated) << "cut at chunk end " << ends[i];
    EXPECT_GE(res.records, previous_records);  // every chunk adds its records
    EXPECT_LT(res.records, whole.records);
    if (i > 0) {
      EXPECT_GT(res.records, previous_records);
    }
    previous_records = res.records;
  }
}

TEST_F(HostileTrace, TruncatedAtEveryByteIsAReadablePrefix) {
  auto ends = chunk_ends(bytes_);
  const ReadOutcome whole = read_whole(full_);
  for (size_t size = 0; size < bytes_.size(); ++size) {
    spit(cut_, bytes_, size);
    ReadOutcome res = read_whole(cut_);
    if (size < 16) {
      EXPECT_EQ(res.error, TraceErrorKind::kBadMagic) << size;
      continue;
    }
    ASSERT_FALSE(res.error) << "cut at byte " << size;
    EXPECT_TRUE(res.truncated) << size;
    // The readable prefix is exactly the complete chunks before the cut.
    size_t complete = *std::prev(std::upper_bound(ends.begin(), ends.end(), size));
    spit(cut_, bytes_, complete);
    EXPECT_EQ(read_whole(cut_).records, res.records) << size;
    EXPECT_LT(res.records, whole.records);
  }
}

TEST_F(HostileTrace, BadMagicAndVersionAreTyped) {
  auto bad = bytes_;
  bad[0] = 'X';
  spit(cut_, bad, bad.size());
  EXPECT_EQ(read_whole(cut_).error, TraceErrorKind::kBadMagic);
  bad = bytes_;
  bad[8] = 99;  // major version
  spit(cut_, bad, bad.size());
  ReadOutcome res = read_whole(cut_);
  EXPECT_TRUE(res.error);
  EXPECT_EQ(res.error, TraceErrorKind::kBadVersion);
  EXPECT_TRUE(read_whole(dir_.path / "missing.rftrace").error);
  EXPECT_EQ(read_whole(dir_.path / "missing.rftrace").error, TraceErrorKind::kIo);
}

TEST_F(HostileTrace, HugeChunkLengthIsRejectedWithoutAllocating) {
  auto bad = bytes_;
  uint32_t huge = 0xFFFFFFF0u;
  std::memcpy(bad.data() + 16 + 4, &huge, 4);
  spit(cut_, bad, bad.size());
  ReadOutcome res = read_whole(cut_);
  ASSERT_TRUE(res.error);
  EXPECT_EQ(res.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(res.error_offset, 20u);
}

TEST_F(HostileTrace, RecordLengthOverrunningItsChunkIsReportedAtItsOffset) {
  auto bad = bytes_;
  uint32_t huge = 1u << 30;
  std::memcpy(bad.data() + 32 + 4, &huge, 4);  // first record's size field
  spit(cut_, bad, bad.size());
  ReadOutcome res = read_whole(cut_);
  ASSERT_TRUE(res.error);
  EXPECT_EQ(res.error, TraceErrorKind::kBadRecord);
  EXPECT_EQ(res.error_offset, 36u);
}

TEST_F(HostileTrace, HugeElementCountIsRejected) {
  std::vector<uint8_t> rec;
  MetricConfig mc;
  mc.metrics = {1, 2};
  encode_record(mc, rec);
  uint32_t huge = 0x40000000u;
  std::memcpy(rec.data() + 8 + 12, &huge, 4);  // metrics count
  std::string_view payload(reinterpret_cast<const char*>(rec.data()) + 8, rec.size() - 8);
  try {
    decode_record(static_cast<uint16_t>(RecordType::kMetricConfig), payload, 1000);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.kind(), TraceErrorKind::kBadRecord);
    EXPECT_EQ(e.offset(), 1012u);
  }
}

TEST_F(HostileTrace, UndefinedStringIdIsTyped) {
  TempDir dir;
  auto p = dir.path / "s.rftrace";
  {
    Writer w(p);
    KernelActivity k;
    k.demangled_name = 77;  // never interned
    w.append(k);
    w.finish();
  }
  ReadOutcome res = read_whole(p);
  EXPECT_TRUE(res.error);
  EXPECT_EQ(res.error, TraceErrorKind::kBadString);
}

TEST_F(HostileTrace, OutOfRangeEnumIsTyped) {
  std::vector<uint8_t> rec;
  encode_record(NvtxEvent{}, rec);
  rec[8 + 8] = 7;  // kind
  std::string_view payload(reinterpret_cast<const char*>(rec.data()) + 8, rec.size() - 8);
  EXPECT_THROW(decode_record(static_cast<uint16_t>(RecordType::kNvtx), payload, 0), TraceError);
}

// Each check of the chunk header and of the string table, named by its typed error at the offset
// of the bad field or record (docs/trace-format.md).
TEST_F(HostileTrace, ChunkHeaderAndStringTableChecksAreTypedAtTheirOffset) {
  uint32_t payload = 0, records = 0;
  std::memcpy(&payload, bytes_.data() + 16 + 4, 4);
  std::memcpy(&records, bytes_.data() + 16 + 8, 4);
  ASSERT_GT(records, 1u);
  auto expect_error = [&](const std::vector<char>& bad, TraceErrorKind kind, uint64_t offset, const char* what) {
    spit(cut_, bad, bad.size());
    const ReadOutcome res = read_whole(cut_);
    ASSERT_TRUE(res.error) << what;
    EXPECT_EQ(res.error, kind) << what;
    EXPECT_EQ(res.error_offset, offset) << what;
  };
  // Chunk flags (none is defined).
  auto bad = bytes_;
  bad[16 + 12] = 1;
  expect_error(bad, TraceErrorKind::kBadChunk, 28, "flags");
  // More records than 8-byte headers fit in the payload.
  bad = bytes_;
  const uint32_t too_many = payload / 8 + 1;
  std::memcpy(bad.data() + 16 + 8, &too_many, 4);
  expect_error(bad, TraceErrorKind::kBadChunk, 24, "record count");
  // One record fewer than the chunk holds: its last record is bytes after the last record.
  const std::vector<RecordAt> headers = record_headers(bytes_);
  ASSERT_GE(headers.size(), records);
  bad = bytes_;
  const uint32_t fewer = records - 1;
  std::memcpy(bad.data() + 16 + 8, &fewer, 4);
  expect_error(bad, TraceErrorKind::kBadChunk, headers[records - 1].offset, "bytes after the last record");
  // String definitions: id 0 (reserved for "no string"), and an id defined twice with two values.
  std::vector<RecordAt> defs;
  for (const RecordAt& r : headers)
    if (r.type == static_cast<uint16_t>(RecordType::kString)) defs.push_back(r);
  ASSERT_GE(defs.size(), 2u);
  bad = bytes_;
  std::memset(bad.data() + defs[0].offset + 8, 0, 4);
  expect_error(bad, TraceErrorKind::kBadString, defs[0].offset, "string id 0");
  bad = bytes_;
  std::memcpy(bad.data() + defs[1].offset + 8, bad.data() + defs[0].offset + 8, 4);
  expect_error(bad, TraceErrorKind::kBadString, defs[1].offset, "string id redefined");
}

TEST_F(HostileTrace, EveryByteFlipGivesRecordsOrATypedError) {
  // A small deterministic fuzz: each byte replaced by values that break lengths, counts and tags.
  const uint8_t values[] = {0x00, 0x01, 0x7F, 0x80, 0xFF};
  size_t errors = 0;
  for (size_t i = 0; i < bytes_.size(); i += 3) {
    for (uint8_t v : values) {
      auto bad = bytes_;
      if (static_cast<uint8_t>(bad[i]) == v) continue;
      bad[i] = static_cast<char>(v);
      spit(cut_, bad, bad.size());
      ReadOutcome res = read_whole(cut_);  // must not crash or throw anything but TraceError
      errors += res.error.has_value();
    }
  }
  EXPECT_GT(errors, 0u);
}

}  // namespace
}  // namespace rf::trace
