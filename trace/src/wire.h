// Little-endian primitives of the trace format, bounds-checked on the reading side.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "rfprof/trace/reader.h"

namespace rf::trace::wire {

/// File header: magic, u16 major, u16 minor, u32 header size (>= 16).
inline constexpr char kFileMagic[8] = {'R', 'F', 'P', 'T', 'R', 'A', 'C', 'E'};
inline constexpr uint32_t kFileHeaderBytes = 16;
inline constexpr uint32_t kMaxFileHeaderBytes = 4096;
/// Chunk header: u32 magic "RFCK", u32 payload bytes, u32 record count, u32 flags (0).
inline constexpr uint32_t kChunkMagic = 0x4B434652u;  // "RFCK" little-endian
inline constexpr uint32_t kChunkHeaderBytes = 16;
/// Largest chunk payload a reader accepts (and a writer produces).
inline constexpr uint32_t kMaxChunkBytes = 64u << 20;
/// Record header: u16 type, u16 reserved (0), u32 payload bytes.
inline constexpr uint32_t kRecordHeaderBytes = 8;
/// Longest string the writer stores; longer ones are cut (bytes).
inline constexpr uint32_t kMaxStringBytes = 1u << 20;

/// Appends little-endian values to a byte vector.
class Out {
 public:
  explicit Out(std::vector<uint8_t>& bytes) : bytes_(bytes) {}
  template <typename T>
  void put(T value) {
    static_assert(std::is_integral_v<T> || std::is_floating_point_v<T> || std::is_enum_v<T>);
    uint8_t raw[sizeof(T)];
    std::memcpy(raw, &value, sizeof(T));  // x86-64 and aarch64 are little-endian
    bytes_.insert(bytes_.end(), raw, raw + sizeof(T));
  }
  void put_bytes(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    bytes_.insert(bytes_.end(), p, p + size);
  }

 private:
  std::vector<uint8_t>& bytes_;
};

/// Reads little-endian values from a payload; every read is checked against the bytes left and a
/// short read throws TraceError(kBadRecord) with the file offset of the field.
class In {
 public:
  In(std::string_view bytes, uint64_t base_offset) : bytes_(bytes), base_(base_offset) {}
  template <typename T>
  T get(const char* field) {
    if (sizeof(T) > remaining()) [[unlikely]]
      too_short(field);
    T value;
    std::memcpy(&value, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return value;
  }
  std::string_view get_bytes(size_t size, const char* field) {
    if (size > remaining()) [[unlikely]]
      too_short(field);
    std::string_view out = bytes_.substr(pos_, size);
    pos_ += size;
    return out;
  }
  /// A count of elements of `elem_size` bytes each that must fit in the bytes left.
  uint32_t get_count(size_t elem_size, const char* field) {
    uint64_t at = offset();
    auto count = get<uint32_t>(field);
    if (static_cast<uint64_t>(count) * elem_size > remaining())
      throw TraceError(TraceErrorKind::kBadRecord, at,
                       std::string(field) + " count " + std::to_string(count) +
                           " exceeds the record's remaining " + std::to_string(remaining()) + " bytes");
    return count;
  }
  size_t remaining() const { return bytes_.size() - pos_; }
  uint64_t offset() const { return base_ + pos_; }

 private:
  /// Throws TraceError(kBadRecord) at the current offset; kept out of line so that the reads
  /// above stay small enough to inline (the decoder calls them ~13 times per record).
  [[noreturn, gnu::noinline, gnu::cold]] void too_short(const char* field) const {
    throw TraceError(TraceErrorKind::kBadRecord, offset(),
                     std::string("record too short for field ") + field);
  }
  std::string_view bytes_;
  uint64_t base_;
  size_t pos_ = 0;
};

}  // namespace rf::trace::wire
