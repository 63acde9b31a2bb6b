// Streaming, hostile-input trace reader. docs/trace-format.md
#include "rfprof/trace/reader.h"

#include <cstring>
#include <system_error>

#include "codec.h"
#include "wire.h"

namespace rf::trace {

TraceError::TraceError(TraceErrorKind kind, uint64_t offset, const std::string& message)
    : std::runtime_error(message + " (at byte " + std::to_string(offset) + ")"),
      kind_(kind),
      offset_(offset) {}

Reader::Reader(std::filesystem::path path) : path_(std::move(path)) {
  std::error_code ec;
  file_size_ = std::filesystem::file_size(path_, ec);
  if (ec) throw TraceError(TraceErrorKind::kIo, 0, path_.string() + ": " + ec.message());
  in_.open(path_, std::ios::binary);
  if (!in_) throw TraceError(TraceErrorKind::kIo, 0, path_.string() + ": cannot open");
  char header[wire::kFileHeaderBytes];
  if (file_size_ < wire::kFileHeaderBytes || !in_.read(header, sizeof header) ||
      std::memcmp(header, wire::kFileMagic, sizeof wire::kFileMagic) != 0)
    throw TraceError(TraceErrorKind::kBadMagic, 0, path_.string() + " is not an rfprof trace");
  uint32_t header_bytes = 0;
  std::memcpy(&major_, header + 8, 2);
  std::memcpy(&minor_, header + 10, 2);
  std::memcpy(&header_bytes, header + 12, 4);
  if (major_ != kFormatMajor)
    throw TraceError(TraceErrorKind::kBadVersion, 8,
                     path_.string() + " has trace format " + std::to_string(major_) + "." +
                         std::to_string(minor_) + "; this reader knows " +
                         std::to_string(kFormatMajor) + ".x");
  if (header_bytes < wire::kFileHeaderBytes || header_bytes > wire::kMaxFileHeaderBytes ||
      header_bytes > file_size_)
    throw TraceError(TraceErrorKind::kBadMagic, 12,
                     "file header size " + std::to_string(header_bytes) + " out of range");
  offset_ = header_bytes;
}

const std::string* Reader::find_string(StringId id) const noexcept {
  if (id >= 1 && id <= dense_strings_.size()) return &dense_strings_[id - 1];
  auto it = sparse_strings_.find(id);
  return it == sparse_strings_.end() ? nullptr : &it->second;
}

const std::string& Reader::string(StringId id) const {
  static const std::string kEmpty;
  if (id == 0) return kEmpty;
  const std::string* s = find_string(id);
  if (!s)
    throw TraceError(TraceErrorKind::kBadString, chunk_offset_ + pos_,
                     "string id " + std::to_string(id) + " is not defined");
  return *s;
}

bool Reader::load_chunk() {
  const uint64_t left = file_size_ - offset_;
  if (left == 0) {
    truncated_ = true;  // no TraceEnd: the writer did not finish
    truncated_at_ = offset_;
    return false;
  }
  if (left < wire::kChunkHeaderBytes) {
    truncated_ = true;
    truncated_at_ = offset_;
    return false;
  }
  uint32_t header[4];
  in_.seekg(static_cast<std::streamoff>(offset_));
  if (!in_.read(reinterpret_cast<char*>(header), sizeof header))
    throw TraceError(TraceErrorKind::kIo, offset_, path_.string() + ": read failed");
  const uint32_t magic = header[0], payload = header[1], records = header[2], flags = header[3];
  if (magic != wire::kChunkMagic)
    throw TraceError(TraceErrorKind::kBadChunk, offset_, "bad chunk magic");
  // Checked in the order of the header's fields, so the error names the first bad byte.
  if (payload > wire::kMaxChunkBytes)
    throw TraceError(TraceErrorKind::kBadChunk, offset_ + 4,
                     "chunk of " + std::to_string(payload) + " bytes exceeds the limit of " +
                         std::to_string(wire::kMaxChunkBytes));
  if (static_cast<uint64_t>(records) * wire::kRecordHeaderBytes > payload)
    throw TraceError(TraceErrorKind::kBadChunk, offset_ + 8,
                     std::to_string(records) + " records cannot fit in " + std::to_string(payload) +
                         " bytes");
  if (flags != 0)
    throw TraceError(TraceErrorKind::kBadChunk, offset_ + 12,
                     "unsupported chunk flags " + std::to_string(flags));
  if (payload > left - wire::kChunkHeaderBytes) {
    truncated_ = true;  // the process died while writing this chunk
    truncated_at_ = offset_;
    return false;
  }
  chunk_.resize(payload);  // bounded: checked against the bytes in the file above
  if (!in_.read(reinterpret_cast<char*>(chunk_.data()), payload))
    throw TraceError(TraceErrorKind::kIo, offset_, path_.string() + ": read failed");
  chunk_offset_ = offset_ + wire::kChunkHeaderBytes;
  offset_ = chunk_offset_ + payload;
  pos_ = 0;
  chunk_records_left_ = records;
  return true;
}

bool Reader::next_raw(RawRecord& out) {
  while (!ended_) {
    if (chunk_records_left_ == 0) {
      if (pos_ != chunk_.size())
        throw TraceError(TraceErrorKind::kBadChunk, chunk_offset_ + pos_,
                         "chunk has bytes after its last record");
      if (!load_chunk()) return false;
      if (chunk_records_left_ == 0) {
        if (!chunk_.empty())
          throw TraceError(TraceErrorKind::kBadChunk, chunk_offset_, "chunk has bytes but no records");
        continue;
      }
    }
    const uint64_t at = chunk_offset_ + pos_;
    if (chunk_.size() - pos_ < wire::kRecordHeaderBytes)
      throw TraceError(TraceErrorKind::kBadRecord, at, "record header past the end of its chunk");
    uint16_t type = 0;
    uint32_t size = 0;
    std::memcpy(&type, chunk_.data() + pos_, 2);
    std::memcpy(&size, chunk_.data() + pos_ + 4, 4);
    if (size > chunk_.size() - pos_ - wire::kRecordHeaderBytes)
      throw TraceError(TraceErrorKind::kBadRecord, at + 4,
                       "record of " + std::to_string(size) + " bytes overruns its chunk");
    out.type = type;
    out.payload = std::string_view(
        reinterpret_cast<const char*>(chunk_.data()) + pos_ + wire::kRecordHeaderBytes, size);
    out.offset = at;
    pos_ += wire::kRecordHeaderBytes + size;
    --chunk_records_left_;
    if (type == static_cast<uint16_t>(RecordType::kString)) add_string(out);
    if (type == static_cast<uint16_t>(RecordType::kEnd)) {
      // Checked before the trace counts as ended: a corrupt TraceEnd must not read as a clean end.
      (void)decode_record(out.type, out.payload, out.offset + wire::kRecordHeaderBytes);
      // TraceEnd is the file's last record: anything after it (a flipped tag that made an early
      // record read as TraceEnd, a second trace appended with cat) would otherwise be dropped
      // from a trace that reads as whole.
      if (chunk_records_left_ != 0 || pos_ != chunk_.size())
        throw TraceError(TraceErrorKind::kBadChunk, chunk_offset_ + pos_, "data after TraceEnd in its chunk");
      if (offset_ != file_size_)
        throw TraceError(TraceErrorKind::kBadChunk, offset_,
                         std::to_string(file_size_ - offset_) + " bytes after the chunk of TraceEnd");
      ended_ = true;
    }
    return true;
  }
  return false;
}

void Reader::add_string(const RawRecord& raw) {
  std::optional<Record> record = decode_record(raw.type, raw.payload, raw.offset + wire::kRecordHeaderBytes);
  auto& def = std::get<StringDef>(*record);
  if (def.id == 0) throw TraceError(TraceErrorKind::kBadString, raw.offset, "string id 0 defined");
  if (const std::string* known = find_string(def.id)) {
    if (*known != def.value)
      throw TraceError(TraceErrorKind::kBadString, raw.offset,
                       "string id " + std::to_string(def.id) + " redefined");
  } else if (def.id == dense_strings_.size() + 1 && sparse_strings_.empty()) {
    dense_strings_.push_back(std::move(def.value));
  } else {
    sparse_strings_.emplace(def.id, std::move(def.value));
  }
}

bool Reader::decode(const RawRecord& raw, Record& out) {
  // The tags are 1 to N in the order of Record's alternatives (records.h, record_type).
  static_assert(static_cast<size_t>(RecordType::kOverhead) == std::variant_size_v<Record>);
  if (raw.type == 0 || raw.type > std::variant_size_v<Record>)
    return false;  // unknown tag from a newer writer: `out` untouched
  // Counter records alternate with launch and kernel records: the memory of the last one's values
  // is kept for the next.
  if (auto* before = std::get_if<RangeCounters>(&out)) spare_values_ = std::move(before->values);
  if (!decode_record_into(raw.type, raw.payload, raw.offset + wire::kRecordHeaderBytes, out, &spare_values_))
    return false;
  if (raw.type != static_cast<uint16_t>(RecordType::kString))
    for_each_string_id(out, [&](StringId id) {
      if (id != 0 && !find_string(id))
        throw TraceError(TraceErrorKind::kBadString, raw.offset,
                         "record refers to undefined string id " + std::to_string(id));
    });
  return true;
}

bool Reader::next(Record& out) {
  RawRecord raw;
  while (next_raw(raw))
    if (decode(raw, out)) return true;
  return false;
}

}  // namespace rf::trace
