// Writes an rfprof trace: a file header, then self-delimiting chunks of records.
// Format: docs/trace-format.md. Thread-safe: every public member may be called from any thread.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rfprof/trace/records.h"

namespace rf::trace {

/// Thrown by Writer on I/O failures (open, write, rename). what() names the path and errno text.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Options of a Writer.
struct WriterOptions {
  /// Close the current chunk once it holds this many bytes (a chunk never exceeds kMaxChunkBytes).
  uint32_t chunk_bytes = 1u << 20;
  /// Overwrite an existing file at the final path (ncu's -f). Without it, open() throws.
  bool force_overwrite = false;
};

/// Streams records into `<path>.part`, renamed to `<path>` by finish().
/// A process killed at any point leaves a `.part` file whose complete chunks are all readable.
class Writer {
 public:
  /// Creates `<path>.part`. Throws WriteError if `path` exists (without force_overwrite) or cannot
  /// be created.
  Writer(std::filesystem::path path, WriterOptions options = {});
  ~Writer();  ///< Calls finish() if not done yet; never throws.
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Returns the id of `value` in the string table, appending a StringDef record the first time.
  StringId intern(std::string_view value);
  /// Appends one record (StringDef records are written by intern(); passing one is allowed).
  void append(const Record& record);
  /// Closes the current chunk and write()s it to the file (no fsync). Throws WriteError.
  void flush();
  /// Appends TraceEnd, flushes, closes and renames `<path>.part` to `<path>`. Idempotent.
  void finish(uint64_t timestamp_ns = 0, uint64_t dropped_records = 0);

  /// Final path of the trace.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// Records appended so far (strings included).
  uint64_t records_written() const;
  /// Records dropped because an earlier write failed (the file is closed then; memory stays bounded).
  uint64_t dropped_after_failure() const {
    std::lock_guard lock(mutex_);
    return dropped_after_failure_;
  }

 private:
  void append_locked(const Record& record);
  void flush_locked();

  std::filesystem::path path_;
  std::filesystem::path part_path_;
  WriterOptions options_;
  mutable std::mutex mutex_;
  int fd_ = -1;
  bool finished_ = false;
  std::vector<uint8_t> chunk_;   // encoded records of the open chunk
  uint32_t chunk_records_ = 0;
  uint64_t records_written_ = 0;
  uint64_t dropped_after_failure_ = 0;
  /// Transparent hash: intern() looks up a string_view without building a std::string.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> strings_;
};

}  // namespace rf::trace
