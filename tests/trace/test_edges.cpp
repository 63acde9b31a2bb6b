// Each bound of the trace reader and writer tried at its edge: the last value accepted and the
// first refused, with the typed error and byte offset the reader reports (docs/trace-format.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>

#include "rfprof/trace/reader.h"
#include "rfprof/trace/utf8.h"
#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::chunk_ends;
using testing::decode_error;
using testing::payload_of;
using testing::read_whole;
using testing::readable_launches;
using testing::ReadOutcome;
using testing::record_headers;
using testing::RecordAt;
using testing::slurp;
using testing::spit;
using testing::TempDir;

void put_u32(std::vector<char>& bytes, size_t at, uint32_t v) { std::memcpy(bytes.data() + at, &v, 4); }

/// The sample trace in chunks of about 200 bytes.
class ReaderEdges : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto full = dir_.path / "full.rftrace";
    Writer w(full, {.chunk_bytes = 200});
    testing::write_sample(w, 4);
    w.finish();
    bytes_ = slurp(full);
    whole_ = read_whole(full);
    ASSERT_FALSE(whole_.error);
    path_ = dir_.path / "edited.rftrace";
  }
  ReadOutcome read(const std::vector<char>& bytes) {
    spit(path_, bytes);
    return read_whole(path_);
  }
  /// The trace with `extra` zero bytes after the 16-byte file header, which then says 16 + extra.
  std::vector<char> with_longer_header(uint32_t extra) const {
    std::vector<char> out(bytes_.begin(), bytes_.begin() + 16);
    out.insert(out.end(), extra, '\0');
    out.insert(out.end(), bytes_.begin() + 16, bytes_.end());
    put_u32(out, 12, 16 + extra);
    return out;
  }
  /// File offset of the second chunk (the first starts at 16).
  size_t second_chunk() const {
    uint32_t payload = 0;
    std::memcpy(&payload, bytes_.data() + 20, 4);
    return 16 + 16 + payload;
  }
  TempDir dir_;
  std::vector<char> bytes_;
  ReadOutcome whole_;
  std::filesystem::path path_;
};

TEST_F(ReaderEdges, FileHeaderSizeFrom16To4096AndNotPastTheFile) {
  auto bad = bytes_;
  put_u32(bad, 12, 15);
  ReadOutcome o = read(bad);
  EXPECT_EQ(o.error, TraceErrorKind::kBadMagic);
  EXPECT_EQ(o.error_offset, 12u);

  o = read(with_longer_header(4096 - 16));  // a newer writer's longer header is skipped
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_EQ(o.records, whole_.records);
  EXPECT_FALSE(o.truncated);
  o = read(with_longer_header(4097 - 16));
  EXPECT_EQ(o.error, TraceErrorKind::kBadMagic);
  EXPECT_EQ(o.error_offset, 12u);

  // A header exactly as long as the file: no chunk yet, a trace cut short right after it.
  std::vector<char> header_only(bytes_.begin(), bytes_.begin() + 40);
  put_u32(header_only, 12, 40);
  o = read(header_only);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_EQ(o.records, 0u);
  EXPECT_TRUE(o.truncated);
  EXPECT_EQ(o.truncated_at, 40u);
  put_u32(header_only, 12, 41);
  o = read(header_only);
  EXPECT_EQ(o.error, TraceErrorKind::kBadMagic);
  EXPECT_EQ(o.error_offset, 12u);
}

TEST_F(ReaderEdges, OnlyMajorVersionOneIsReadWhateverTheMinor) {
  auto edited = bytes_;
  edited[8] = 0;  // major 0
  ReadOutcome o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadVersion);
  EXPECT_EQ(o.error_offset, 8u);
  EXPECT_NE(o.message.find("trace format 0."), std::string::npos) << o.message;
  edited = bytes_;
  edited[10] = 99;  // minor 99: a newer writer of the same major
  o = read(edited);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_EQ(o.records, whole_.records);
}

TEST_F(ReaderEdges, TruncatedAtIsWhereTheUnfinishedChunkStarts) {
  const size_t chunk = second_chunk();
  ASSERT_LT(chunk + 40, bytes_.size());
  for (size_t cut : {chunk, chunk + 5, chunk + 16, chunk + 40}) {
    ReadOutcome o = read(std::vector<char>(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(cut)));
    ASSERT_FALSE(o.error) << cut << ": " << o.message;
    EXPECT_TRUE(o.truncated) << cut;
    EXPECT_EQ(o.truncated_at, chunk) << "cut at " << cut;
  }
}

TEST_F(ReaderEdges, AChunkMayHoldUpTo64MiB) {
  auto edited = bytes_;
  put_u32(edited, 20, 64u << 20);  // the limit: more than the file holds, so a cut chunk
  ReadOutcome o = read(edited);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_TRUE(o.truncated);
  EXPECT_EQ(o.truncated_at, 16u);
  put_u32(edited, 20, (64u << 20) + 1);
  o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, 20u);
}

TEST_F(ReaderEdges, AnEmptyChunkIsSkippedAndBytesWithoutRecordsAreNamed) {
  auto edited = bytes_;
  const char empty_chunk[16] = {'R', 'F', 'C', 'K'};  // payload 0, records 0, flags 0
  edited.insert(edited.begin() + 16, std::begin(empty_chunk), std::end(empty_chunk));
  ReadOutcome o = read(edited);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_EQ(o.records, whole_.records);

  edited = bytes_;
  put_u32(edited, 24, 0);  // the first chunk's record count
  o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, 32u);
  EXPECT_NE(o.message.find("bytes but no records"), std::string::npos) << o.message;
}

TEST_F(ReaderEdges, ARecordOfAnUnknownTypeIsSkippedAndTheRestIsRead) {
  // Retag the first ProfilingWindow (it names no string) as a type from a newer writer.
  auto edited = bytes_;
  const std::optional<RecordAt> window = testing::first_record_of(edited, RecordType::kWindow);
  ASSERT_TRUE(window.has_value());
  const uint16_t unknown = 999;
  std::memcpy(edited.data() + window->offset, &unknown, 2);
  ReadOutcome o = read(edited);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_FALSE(o.truncated);
  EXPECT_EQ(o.records, whole_.records - 1);
}

// TraceEnd is the last byte of a trace: a record after it in its chunk (an early record whose
// flipped tag reads as TraceEnd) or bytes after its chunk (a second trace appended with cat) are
// errors at the first extra byte. Before, the reader stopped at TraceEnd and the rest was dropped
// from a trace that read as whole (one flipped byte in the recorded ResNet-18 trace: 1,749
// records -> 23, rfanalyze exit 0 with 0 launches).
TEST_F(ReaderEdges, NothingMayFollowTraceEnd) {
  auto appended = bytes_;
  appended.insert(appended.end(), bytes_.begin(), bytes_.end());  // cat a.rftrace a.rftrace
  ReadOutcome o = read(appended);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, bytes_.size());
  EXPECT_NE(o.message.find(std::to_string(bytes_.size()) + " bytes after the chunk of TraceEnd"), std::string::npos)
      << o.message;

  // The last chunk with a second record after its TraceEnd (a copy of it), payload and count grown.
  const std::optional<RecordAt> end = testing::first_record_of(bytes_, RecordType::kEnd);
  ASSERT_TRUE(end.has_value());
  const std::vector<size_t> ends = chunk_ends(bytes_);
  ASSERT_EQ(ends.back(), bytes_.size());
  const size_t last_chunk = ends[ends.size() - 2];
  ASSERT_EQ(end->offset + 8 + end->size, bytes_.size()) << "TraceEnd ends the file";
  auto inside = bytes_;
  inside.insert(inside.end(), bytes_.begin() + static_cast<long>(end->offset), bytes_.end());
  uint32_t payload = 0, records = 0;
  std::memcpy(&payload, inside.data() + last_chunk + 4, 4);
  std::memcpy(&records, inside.data() + last_chunk + 8, 4);
  put_u32(inside, last_chunk + 4, payload + 8 + end->size);
  put_u32(inside, last_chunk + 8, records + 1);
  o = read(inside);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, bytes_.size());
  EXPECT_NE(o.message.find("data after TraceEnd in its chunk"), std::string::npos) << o.message;

  // A trailing byte too.
  auto one_more = bytes_;
  one_more.push_back('\0');
  EXPECT_EQ(read(one_more).error, TraceErrorKind::kBadChunk);
  EXPECT_FALSE(read(bytes_).error);
}

// Two bad fields in one chunk header: the error names the first (the payload size at byte 20,
// not the flags at byte 28, which were checked first before).
TEST_F(ReaderEdges, TwoBadChunkHeaderFieldsAreNamedAtTheFirst) {
  auto bad = bytes_;
  put_u32(bad, 20, 0xFFFFFFFFu);  // the first chunk's payload size
  put_u32(bad, 28, 1);            // and its flags
  const ReadOutcome o = read(bad);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, 20u) << o.message;
}

TEST_F(ReaderEdges, ErrorsNameTheByteOffsetInTheirMessage) {
  auto bad = bytes_;
  put_u32(bad, 36, 1u << 30);  // the first record's size
  ReadOutcome o = read(bad);
  EXPECT_EQ(o.error, TraceErrorKind::kBadRecord);
  EXPECT_NE(o.message.find("(at byte 36)"), std::string::npos) << o.message;
}

// A ninth mutation round (docs/testing.md): each check below failed with one change to the reader.
TEST_F(ReaderEdges, EveryHeaderByteCountsAndEachErrorIsNamedWhereItStarts) {
  for (size_t at : {size_t{0}, size_t{7}}) {  // the file magic's first and last byte
    auto edited = bytes_;
    edited[at] = static_cast<char>(edited[at] ^ 1);
    ReadOutcome o = read(edited);
    EXPECT_EQ(o.error, TraceErrorKind::kBadMagic) << at;
    EXPECT_EQ(o.error_offset, 0u) << at;
  }
  ReadOutcome tiny = read(std::vector<char>(bytes_.begin(), bytes_.begin() + 15));
  EXPECT_EQ(tiny.error, TraceErrorKind::kBadMagic);
  EXPECT_EQ(tiny.error_offset, 0u);
  auto edited = bytes_;
  put_u32(edited, 12, 0x10010);  // a u32: 65552 bytes, not 16
  ReadOutcome o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadMagic);
  EXPECT_EQ(o.error_offset, 12u);
  edited = bytes_;
  edited[8] = 2;  // major 2
  o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadVersion);
  EXPECT_EQ(o.error_offset, 8u);
  edited = bytes_;
  edited[16 + 3] = 'X';  // "RFCX": the chunk magic's fourth byte
  o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, 16u);
  edited = bytes_;
  put_u32(edited, 28, 0x100);  // chunk flags: any bit of the u32
  o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, 28u);
  edited = bytes_;
  put_u32(edited, 24, 0x20000001);  // 8 bytes each: more than 32 bits can count
  o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, 24u);
}

TEST_F(ReaderEdges, VersionsAndUndefinedStringsAsTheReaderReportsThem) {
  auto edited = bytes_;
  edited[10] = 7;
  spit(path_, edited);
  Reader r(path_);
  EXPECT_EQ(r.version_major(), 1u);
  EXPECT_EQ(r.version_minor(), 7u);
  Record rec;
  ASSERT_TRUE(r.next(rec));
  // An undefined id asked for by the caller: kBadString where the reader stands (the next record).
  try {
    (void)r.string(999999);
    ADD_FAILURE() << "an undefined string id was given a value";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.kind(), TraceErrorKind::kBadString);
    EXPECT_EQ(e.offset(), record_headers(bytes_).at(1).offset);
  }
}

TEST_F(ReaderEdges, AFieldErrorInAFileIsNamedAtTheField) {
  auto edited = bytes_;
  const std::optional<RecordAt> process = testing::first_record_of(edited, RecordType::kProcess);
  ASSERT_TRUE(process.has_value());
  edited[process->offset + 8 + 40] = 9;  // process.mode, after the 8-byte record header
  ReadOutcome o = read(edited);
  EXPECT_EQ(o.error, TraceErrorKind::kBadRecord);
  EXPECT_EQ(o.error_offset, process->offset + 8 + 40);
}

TEST_F(ReaderEdges, AChunkOrARecordOfOnlyItsHeaderIsRead) {
  // An empty chunk that ends a cut trace is read; the trace is cut after it.
  const size_t chunk = second_chunk();
  std::vector<char> cut(bytes_.begin(), bytes_.begin() + static_cast<std::ptrdiff_t>(chunk));
  const char empty_chunk[16] = {'R', 'F', 'C', 'K'};
  cut.insert(cut.end(), std::begin(empty_chunk), std::end(empty_chunk));
  ReadOutcome o = read(cut);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_TRUE(o.truncated);
  EXPECT_EQ(o.truncated_at, chunk + 16);
  cut[chunk] = 'X';  // and 16 bytes that are no chunk are a bad chunk, not a cut one
  o = read(cut);
  EXPECT_EQ(o.error, TraceErrorKind::kBadChunk);
  EXPECT_EQ(o.error_offset, chunk);
  // A record without payload (a newer writer's type) as the last 8 bytes of a chunk.
  auto edited = bytes_;
  uint32_t payload = 0, records = 0;
  std::memcpy(&payload, edited.data() + 20, 4);
  std::memcpy(&records, edited.data() + 24, 4);
  const char empty_record[8] = {static_cast<char>(0xE7), 0x03};  // type 999, size 0
  edited.insert(edited.begin() + 32 + payload, std::begin(empty_record), std::end(empty_record));
  put_u32(edited, 20, payload + 8);
  put_u32(edited, 24, records + 1);
  o = read(edited);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_EQ(o.records, whole_.records);
}

TEST(ReaderStrings, TheSameDefinitionTwiceIsAccepted) {
  TempDir dir;
  const auto p = dir.path / "twice.rftrace";
  {
    Writer w(p);
    w.append(StringDef{1, "gemm"});
    w.append(StringDef{1, "gemm"});  // two writers' tables merged, or a repeated flush
    KernelActivity k;
    k.demangled_name = 1;
    w.append(k);
    w.finish();
  }
  Reader r(p);
  Record rec;
  size_t records = 0;
  while (r.next(rec)) ++records;
  EXPECT_EQ(records, 4u);  // two definitions, the kernel, TraceEnd
  EXPECT_EQ(r.string(1), "gemm");
}

/// One record whose string field `field` refers to `id`, written alone to a fresh trace.
struct StringField {
  const char* field;
  std::function<Record(StringId)> make;
};

// string() returned a reference into a vector that later definitions reallocated (a review): a
// defined string now stays where it is for the Reader's lifetime.
TEST(ReaderStrings, AStringsReferenceStaysValidWhileMoreStringsAreRead) {
  TempDir dir;
  const auto p = dir.path / "many.rftrace";
  {
    Writer w(p);
    w.intern("first");
    for (int i = 0; i < 1000; ++i) w.intern("s" + std::to_string(i));
    w.finish();
  }
  Reader r(p);
  Record rec;
  ASSERT_TRUE(r.next(rec));
  const std::string* first = &r.string(1);
  while (r.next(rec)) {
  }
  ASSERT_EQ(&r.string(1), first) << "moved by later definitions";
  EXPECT_EQ(*first, "first");
}

TEST(ReaderStrings, EveryStringFieldOfEveryRecordMustBeDefined) {
  const std::vector<StringField> fields = {
      {"process.hostname", [](StringId id) { ProcessInfo r; r.hostname = id; return Record{r}; }},
      {"process.process_name", [](StringId id) { ProcessInfo r; r.process_name = id; return Record{r}; }},
      {"process.command_line", [](StringId id) { ProcessInfo r; r.command_line = id; return Record{r}; }},
      {"process.rfprof_version", [](StringId id) { ProcessInfo r; r.rfprof_version = id; return Record{r}; }},
      {"device.name", [](StringId id) { DeviceInfo r; r.name = id; return Record{r}; }},
      {"device.chip", [](StringId id) { DeviceInfo r; r.chip = id; return Record{r}; }},
      {"kernel.mangled_name", [](StringId id) { KernelActivity r; r.mangled_name = id; return Record{r}; }},
      {"kernel.demangled_name", [](StringId id) { KernelActivity r; r.demangled_name = id; return Record{r}; }},
      {"launch.kernel_name", [](StringId id) { LaunchApi r; r.kernel_name = id; return Record{r}; }},
      {"nvtx.domain", [](StringId id) { NvtxEvent r; r.domain = id; return Record{r}; }},
      {"nvtx.name", [](StringId id) { NvtxEvent r; r.name = id; return Record{r}; }},
      {"metric_config.chip", [](StringId id) { MetricConfig r; r.chip = id; return Record{r}; }},
      {"metric_config.metric", [](StringId id) { MetricConfig r; r.metrics = {0, id}; return Record{r}; }},
      {"counters.range_name", [](StringId id) { RangeCounters r; r.range_name = id; return Record{r}; }},
      {"error.message", [](StringId id) { CollectorError r; r.message = id; return Record{r}; }},
      {"call_stack.function", [](StringId id) { CallStack r; r.functions = {id}; r.modules = {0}; return Record{r}; }},
      {"call_stack.module", [](StringId id) { CallStack r; r.functions = {0}; r.modules = {id}; return Record{r}; }},
      {"overhead.phase", [](StringId id) { ProfilerOverhead r; r.phase = id; return Record{r}; }},
  };
  TempDir dir;
  for (const StringField& f : fields) {
    for (StringId id : {StringId{0}, StringId{1}}) {  // 0 is "no string"; 1 is never defined here
      const auto p = dir.path / (std::string(f.field) + "-" + std::to_string(id) + ".rftrace");
      {
        Writer w(p);
        w.append(f.make(id));
        w.finish();
      }
      ReadOutcome o = read_whole(p);
      if (id == 0) {
        EXPECT_FALSE(o.error) << f.field << ": " << o.message;
        EXPECT_EQ(o.records, 2u) << f.field;
        continue;
      }
      EXPECT_EQ(o.error, TraceErrorKind::kBadString) << f.field;
      EXPECT_EQ(o.error_offset, 32u) << f.field << ": the record's offset";
      EXPECT_NE(o.message.find("undefined string id 1"), std::string::npos) << f.field << ": " << o.message;
    }
  }
}

/// The offset of the TraceError decoding `payload` as `type` at file offset 1000 throws; nullopt
/// when it decodes.
std::optional<uint64_t> error_offset(RecordType type, std::string_view payload) {
  const std::optional<TraceError> e = decode_error(type, payload, 1000);
  if (!e) return std::nullopt;
  EXPECT_EQ(e->kind(), TraceErrorKind::kBadRecord);
  return e->offset();
}

TEST(DecodeEdges, AStringLengthOneByteTooLongIsReportedAtTheLengthField) {
  std::string payload = payload_of(StringDef{5, "gemm"});  // u32 id, u32 length, bytes
  ASSERT_EQ(payload.size(), 12u);
  EXPECT_EQ(error_offset(RecordType::kString, payload), std::nullopt);
  const uint32_t one_more = 5;
  std::memcpy(payload.data() + 4, &one_more, 4);
  EXPECT_EQ(error_offset(RecordType::kString, payload), 1004u);
}

TEST(DecodeEdges, AFieldOneByteShortIsABadRecordAtThatField) {
  std::string payload = payload_of(ProfilerOverhead{9, 2, 3000, 2000});
  ASSERT_EQ(payload.size(), 28u);
  payload.pop_back();  // max_ns has 7 of its 8 bytes
  EXPECT_EQ(error_offset(RecordType::kOverhead, payload), 1020u);
  payload = payload_of(ProcessInfo{});
  payload.pop_back();  // driver_version has 3 of its 4 bytes
  EXPECT_EQ(error_offset(RecordType::kProcess, payload), 1000u + payload.size() - 3);
}

/// Decodes `rec` with the byte at `at` set to `value`: true when it decodes.
bool decodes_with(const Record& rec, RecordType type, size_t at, uint8_t value) {
  std::string payload = payload_of(rec);
  payload.at(at) = static_cast<char>(value);
  return !error_offset(type, payload).has_value();
}

TEST(DecodeEdges, EachEnumAcceptsItsLastValueAndRefusesTheNext) {
  struct Enum {
    const char* name;
    Record rec;
    RecordType type;
    size_t at;       // the enum's byte in the payload
    uint8_t last;    // its highest valid value
  };
  const Enum enums[] = {
      {"process.mode", ProcessInfo{}, RecordType::kProcess, 40, 1},
      {"launch.domain", LaunchApi{}, RecordType::kLaunch, 8, 1},
      {"launch.is_graph", LaunchApi{}, RecordType::kLaunch, 77, 1},
      {"nvtx.kind", NvtxEvent{}, RecordType::kNvtx, 8, 2},
      {"nvtx.style", NvtxEvent{}, RecordType::kNvtx, 9, 2},
      {"window.begin", ProfilingWindow{}, RecordType::kWindow, 4, 1},
      {"memory.operation", MemoryActivity{}, RecordType::kMemory, 0, 1},
      {"memory.memory_kind", MemoryActivity{}, RecordType::kMemory, 1, 7},
  };
  for (const Enum& e : enums) {
    EXPECT_TRUE(decodes_with(e.rec, e.type, e.at, e.last)) << e.name;
    EXPECT_FALSE(decodes_with(e.rec, e.type, e.at, static_cast<uint8_t>(e.last + 1))) << e.name;
    std::string payload = payload_of(e.rec);
    payload.at(e.at) = static_cast<char>(e.last + 1);
    EXPECT_EQ(error_offset(e.type, payload), 1000u + e.at) << e.name << ": the enum's own byte";
  }
}

TEST(DecodeEdges, ACountBeyondTheBytesLeftIsNamedAtTheCount) {
  struct Case {
    const char* name;
    Record rec;
    RecordType type;
    size_t count_at;   // the count field's byte in the payload
    uint32_t too_many; // one element more than the bytes after the count hold
  };
  const Case cases[] = {
      {"metric_config.metrics", MetricConfig{1, 2, 3, {4, 5, 6}}, RecordType::kMetricConfig, 12, 4},
      {"counters.values", RangeCounters{1, 2, 3, 4, 5, {1.0, 2.0, 3.0}}, RecordType::kCounters, 24, 4},
      {"call_stack.frames", CallStack{1, {2, 3}, {4, 5}}, RecordType::kCallStack, 4, 3},
  };
  for (const Case& c : cases) {
    std::string payload = payload_of(c.rec);
    EXPECT_EQ(error_offset(c.type, payload), std::nullopt) << c.name;
    std::memcpy(payload.data() + c.count_at, &c.too_many, 4);
    EXPECT_EQ(error_offset(c.type, payload), 1000u + c.count_at) << c.name;
  }
}

// A 1.0 launch (78 bytes) has no stack id; one of 79 to 81 bytes holds part of one (a torn or
// corrupt record: every writer since 1.1 writes all 4 bytes before any later field), and was read
// as stack id 0 (a review): it is a bad record at the stack id. 82 bytes and more: 1.1 and later.
TEST(DecodeEdges, ALaunchOf78BytesHasNoStackAndOneOf79To81IsABadRecordAtTheStackId) {
  LaunchApi l;
  l.correlation_id = 7;
  l.stack_id = 5;
  std::string payload = payload_of(l);
  ASSERT_EQ(payload.size(), 82u);
  payload.resize(78);  // a 1.0 launch: no stack id
  const auto kLaunch = static_cast<uint16_t>(RecordType::kLaunch);
  std::optional<Record> rec = decode_record(kLaunch, payload, 1000);
  ASSERT_TRUE(rec.has_value());
  EXPECT_EQ(std::get<LaunchApi>(*rec).stack_id, 0u);
  EXPECT_EQ(std::get<LaunchApi>(*rec).correlation_id, 7u);
  for (size_t size = 79; size < 82; ++size) {
    const std::string torn = payload_of(l).substr(0, size);
    EXPECT_EQ(error_offset(RecordType::kLaunch, torn), 1078u) << size;
  }
  for (size_t size : {82u, 83u, 90u}) {  // later fields of a newer minor version are skipped
    std::string longer = payload_of(l);
    longer.resize(size, '\x01');
    rec = decode_record(kLaunch, longer, 1000);
    ASSERT_TRUE(rec.has_value()) << size;
    EXPECT_EQ(std::get<LaunchApi>(*rec).stack_id, 5u) << size;
  }
}

// Control characters of both ranges become one '?' each: C1 ones (U+0080..U+009F, the bytes
// C2 80..C2 9F; U+009B is a CSI terminals act on) passed unchanged (a review).
TEST(Utf8Edges, PrintableReplacesC0DelAndC1Controls) {
  EXPECT_EQ(printable("a\x1b[31m b\xC2\x9B" "31m c\xC2\x85" "d\x7f\xC2\x80\xC2\x9F"), "a?[31m b?31m c?d???");
  EXPECT_EQ(printable("\xC2\xA0\xC2\xBF \xC3\xA9 \xE2\x82\xAC"), "\xC2\xA0\xC2\xBF \xC3\xA9 \xE2\x82\xAC")
      << "U+00A0 and later are kept";
  EXPECT_EQ(printable("x\xC2"), "x\xEF\xBF\xBD") << "a lone lead byte is U+FFFD, not a control";
  EXPECT_EQ(printable("\x85"), "\xEF\xBF\xBD") << "a stray continuation byte is U+FFFD";
}

/// Chunks in a trace file and the largest payload among them.
std::pair<size_t, size_t> chunks_of(const std::vector<char>& bytes) {
  const std::vector<size_t> ends = chunk_ends(bytes);
  size_t largest = 0;
  for (size_t i = 1; i < ends.size(); ++i) largest = std::max(largest, ends[i] - ends[i - 1] - 16);
  return {ends.size() - 1, largest};
}

TEST(WriterEdges, StringsAreCutAt1MiBAndChunksAbove32MiBFallBackTo1MiB) {
  TempDir dir;
  const auto p = dir.path / "long.rftrace";
  const size_t limit = 1u << 20;
  {
    Writer w(p, {.chunk_bytes = 48u << 20});  // more than half the reader's 64 MiB: not honoured
    w.intern(std::string(limit + 10, 'a'));
    w.intern_cached(std::string(limit + 10, 'b'));
    w.intern(std::string(limit, 'c'));
    w.finish();
  }
  const auto [chunks, largest] = chunks_of(slurp(p));
  EXPECT_EQ(chunks, 4u) << "each 1 MiB string fills a chunk of the 1 MiB default; TraceEnd has its own";
  EXPECT_LT(largest, limit + 64);
  Reader r(p);
  Record rec;
  std::vector<size_t> sizes;
  while (r.next(rec))
    if (auto* s = std::get_if<StringDef>(&rec)) sizes.push_back(s->value.size());
  EXPECT_EQ(sizes, (std::vector<size_t>{limit, limit, limit}));
}

// A cut at 1 MiB moves back to the last whole UTF-8 character: a 1 MiB + 1 byte name ending in
// "é" was stored ending with its lead byte 0xC3 alone (a review).
TEST(WriterEdges, ACutStringNeverEndsInsideAUtf8Character) {
  TempDir dir;
  const auto p = dir.path / "utf8.rftrace";
  const size_t limit = 1u << 20;
  const std::string two = std::string(limit - 1, 'a') + "\xc3\xa9";           // é across the limit
  const std::string four = std::string(limit - 2, 'b') + "\xf0\x9f\x94\xa5";  // U+1F525 across it
  {
    Writer w(p);
    w.intern(two);
    w.intern_cached(four);
    w.finish();
  }
  Reader r(p);
  Record rec;
  std::vector<std::string> values;
  while (r.next(rec))
    if (auto* s = std::get_if<StringDef>(&rec)) values.push_back(s->value);
  ASSERT_EQ(values.size(), 2u);
  EXPECT_EQ(values[0], std::string(limit - 1, 'a'));
  EXPECT_EQ(values[1], std::string(limit - 2, 'b'));
  EXPECT_TRUE(is_valid_utf8(values[0]) && is_valid_utf8(values[1]));
  // Not UTF-8 (continuation bytes only): cut at the limit as before.
  EXPECT_EQ(utf8_prefix(std::string(limit + 5, '\x80'), limit).size(), limit);
  EXPECT_EQ(utf8_prefix("ab\xc3\xa9", 3), "ab");
  EXPECT_EQ(utf8_prefix("ab\xc3\xa9", 4), "ab\xc3\xa9");
  EXPECT_EQ(utf8_prefix("abc", 1), "a");
}

TEST(WriterEdges, TheAppendingThreadWritesOnlyPastMaxPendingChunks) {
  TempDir dir;
  const auto p = dir.path / "bound.rftrace";
  const std::string part = p.string() + ".part";
  Writer w(p, {.chunk_bytes = 1024, .max_pending_chunks = 4, .on_chunk_pending = [] {}});
  uint64_t index = 0;
  auto append = [&](int n) {
    for (int i = 0; i < n; ++i) {
      LaunchApi l;
      l.launch_index = index++;
      w.append(l);  // 90 bytes: a chunk closes at its 12th launch
    }
  };
  append(48);
  EXPECT_EQ(readable_launches(part), 0) << "4 closed chunks wait: the bound is not passed";
  append(11);
  EXPECT_EQ(readable_launches(part), 0);
  append(1);
  EXPECT_EQ(readable_launches(part), 60) << "the fifth closed chunk passes the bound: all five written";
  w.finish();
  EXPECT_EQ(readable_launches(p), 60);
}

}  // namespace
}  // namespace rf::trace
