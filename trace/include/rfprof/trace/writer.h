// Writes an rfprof trace: a file header, then self-delimiting chunks of records.
// Format: docs/trace-format.md. Thread-safe: every public member may be called from any thread.
#pragma once

#include <functional>

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
  /// 0: a full chunk is written at once by the appending thread. N > 0: up to N full chunks wait
  /// in memory for flush() (the collector's flush thread), so appending threads do no file I/O;
  /// once N wait, the appending thread writes them itself (memory stays bounded by N chunks).
  uint32_t max_pending_chunks = 0;
  /// Called (outside the writer's lock, by the appending thread) when a chunk starts waiting and
  /// none waited before: the owner wakes its flush thread. Must not call back into the Writer.
  std::function<void()> on_chunk_pending = nullptr;
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
  /// Closes the current chunk and write()s it, after every waiting chunk, to the file (no fsync).
  /// The writing happens outside the lock appending threads take. Throws WriteError.
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
  /// A closed chunk waiting to be written.
  struct Pending {
    std::vector<uint8_t> header;  // chunk header (16 bytes)
    std::vector<uint8_t> body;    // its records
    uint32_t records = 0;
  };
  /// Returns true when a chunk started waiting (the caller runs on_chunk_pending after unlocking).
  bool append_locked(const Record& record);
  /// Moves the open chunk, if any, to pending_.
  void close_chunk_locked();
  /// Writes `batch` in order to `fd` unless an earlier write failed; caller holds io_mutex_.
  /// Returns 0 or an errno (then io_failed_ is set and nothing more is ever written).
  int write_batch_locked(int fd, std::vector<Pending>& batch);
  /// Closes the file after a failed write and throws WriteError; caller holds mutex_ only.
  [[noreturn]] void fail_locked(int err);
  /// Writes the open chunk and every pending one, holding mutex_ (finish, inline mode, bound).
  void flush_locked();

  std::filesystem::path path_;
  std::filesystem::path part_path_;
  WriterOptions options_;
  mutable std::mutex mutex_;
  std::mutex io_mutex_;           // held while writing, taken after mutex_: chunks stay in order
  std::vector<Pending> pending_;  // closed chunks not written yet (at most max_pending_chunks)
  bool io_failed_ = false;        // (io_mutex_) a write failed: nothing more is written
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
