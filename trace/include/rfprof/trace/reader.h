// Reads an rfprof trace as a stream of records. Treats every file as hostile: every length is
// checked against the bytes left, no allocation is larger than the bytes that back it, and every
// failure is a TraceError with the byte offset of the first bad byte (a string-table error:
// the offset of its record, see TraceErrorKind::kBadString). Format: docs/trace-format.md.
#pragma once

#include <cstdint>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rfprof/trace/records.h"

namespace rf::trace {

/// What went wrong while reading a trace.
enum class TraceErrorKind {
  kIo,             ///< the file cannot be opened or read
  kBadMagic,       ///< not an rfprof trace
  kBadVersion,     ///< a major version this reader does not know
  kBadChunk,       ///< a chunk header is inconsistent (bad magic, size over the limit, flags)
  kBadRecord,      ///< a record's length or fields are inconsistent
  kBadString,      ///< a record refers to a string id that was never defined, or one is redefined
                   ///< (offset(): the record header's, not the id field's)
};

/// A typed reading error. offset() is the byte offset in the file of the first bad byte; for
/// kBadString, of the header of the record that defines or refers to the bad id.
class TraceError : public std::runtime_error {
 public:
  TraceError(TraceErrorKind kind, uint64_t offset, const std::string& message);
  TraceErrorKind kind() const noexcept { return kind_; }
  uint64_t offset() const noexcept { return offset_; }

 private:
  TraceErrorKind kind_;
  uint64_t offset_;
};

/// One record as stored, before decoding: what Reader::next_raw returns.
struct RawRecord {
  uint16_t type = 0;          ///< on-disk tag: a RecordType, or an unknown one from a newer writer
  std::string_view payload;   ///< the payload bytes; valid until the next call on the Reader
  uint64_t offset = 0;        ///< file offset of the record header (bytes)
};

/// Streaming reader. Memory is bounded by one chunk plus the string table, plus the values of the
/// largest counter record decoded (kept for reuse; a record is at most one chunk).
class Reader {
 public:
  /// Opens `path` and checks the file header. Throws TraceError (kIo, kBadMagic, kBadVersion).
  explicit Reader(std::filesystem::path path);

  /// Size of the file in bytes, as when it was opened.
  uint64_t file_size() const noexcept { return file_size_; }

  /// Reads the next record into `out`. Returns false at the end of the trace, either clean (after
  /// TraceEnd) or truncated (see truncated()). Throws TraceError (kIo, kBadChunk, kBadRecord,
  /// kBadString) on corrupt data. StringDef records are returned too, after being added to the
  /// string table (string()). On TraceError, `out` holds an unspecified record.
  bool next(Record& out);

  /// Reads the next record's header without decoding its payload (rfanalyze's first pass skips
  /// launch, kernel and counter records this way). The chunk and record framing are checked as by
  /// next(), and StringDef records are decoded and added to the string table here, so skipping a
  /// record never loses a string; the payload of any other record is not checked until decode().
  /// Returns false at the end of the trace as next() does (a TraceEnd ends it). Throws TraceError.
  bool next_raw(RawRecord& out);
  /// Decodes a record next_raw() just returned into `out` and checks that every string id it refers
  /// to is defined. Returns false for an unknown tag (a newer writer's record: skip it). Throws
  /// TraceError: kBadRecord with the offset of the bad field, kBadString with the record header's;
  /// `out` is then unspecified.
  bool decode(const RawRecord& raw, Record& out);

  /// True once next() returned false because the file ended inside a chunk or without TraceEnd.
  bool truncated() const noexcept { return truncated_; }
  /// Byte offset where a truncated trace stops being readable.
  uint64_t truncated_at() const noexcept { return truncated_at_; }
  /// The string with `id`; "" for id 0. Throws TraceError(kBadString) for an undefined id, at the
  /// offset of the next unread record. The reference stays valid as long as the Reader: reading
  /// further records never moves a defined string.
  const std::string& string(StringId id) const;
  /// Format version found in the file header.
  uint16_t version_major() const noexcept { return major_; }
  uint16_t version_minor() const noexcept { return minor_; }
  const std::filesystem::path& path() const noexcept { return path_; }

 private:
  bool load_chunk();
  /// Decodes the StringDef `raw` and adds it to the table. Throws TraceError(kBadRecord, kBadString).
  void add_string(const RawRecord& raw);

  std::filesystem::path path_;
  std::ifstream in_;
  uint64_t file_size_ = 0;
  uint64_t offset_ = 0;              // file offset of the next unread chunk
  uint64_t chunk_offset_ = 0;        // file offset of the current chunk's payload
  std::vector<uint8_t> chunk_;
  size_t pos_ = 0;                   // position inside chunk_
  uint32_t chunk_records_left_ = 0;
  bool ended_ = false;
  bool truncated_ = false;
  uint64_t truncated_at_ = 0;
  uint16_t major_ = 0;
  uint16_t minor_ = 0;
  /// The string with `id`, or nullptr when undefined.
  const std::string* find_string(StringId id) const noexcept;
  /// Strings defined in id order 1, 2, 3, ... (as the writer defines them), at index id - 1; any
  /// other id goes to sparse_strings_. Memory: the defined strings only. A deque (and a node map):
  /// a string never moves once defined, so string()'s reference stays valid.
  std::deque<std::string> dense_strings_;
  std::unordered_map<StringId, std::string> sparse_strings_;
  /// The value vector of the last RangeCounters decoded, reused by the next (one record's worth).
  std::vector<double> spare_values_;
};

/// Decodes one record payload (used by the reader and by tests). `type` is the on-disk tag,
/// `payload` its bytes. Returns nullopt for an unknown tag. Throws TraceError(kBadRecord) with
/// `base_offset` + the position of the bad field when the payload is too short or inconsistent.
std::optional<Record> decode_record(uint16_t type, std::string_view payload, uint64_t base_offset);

/// As decode_record, into `out`: returns false for an unknown tag (`out` untouched). A RangeCounters'
/// values go into the memory of `*value_memory` when given (taken, left empty): no allocation per
/// record for a caller that hands the last record's values back.
bool decode_record_into(uint16_t type, std::string_view payload, uint64_t base_offset, Record& out,
                        std::vector<double>* value_memory = nullptr);

/// The time stamp a launch or kernel record ends at (ns, CUPTI clock): LaunchApi::api_end_ns or
/// KernelActivity::end_ns, read from its fixed place in the payload without decoding the rest;
/// nullopt for any other type. Throws TraceError(kBadRecord) when the payload is too short for it.
std::optional<uint64_t> peek_end_ns(const RawRecord& raw);

/// Encodes one record (header and payload) and appends it to `out`.
void encode_record(const Record& record, std::vector<uint8_t>& out);

}  // namespace rf::trace
