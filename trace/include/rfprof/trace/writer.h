// Writes an rfprof trace: a file header, then self-delimiting chunks of records.
// Format: docs/trace-format.md. Thread-safe: every public member may be called from any thread.
#pragma once

#include <signal.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rfprof/trace/per_thread.h"
#include "rfprof/trace/records.h"

namespace rf::trace {

/// Thrown by Writer on I/O failures (open, write, rename). what() names the path and errno text.
class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by Writer's constructor when another live process is writing the same trace: its
/// `.part` is locked (flock) by that process's Writer, or is shorter than the file header (being
/// created), or that process finished the trace while this one was opening it. Not thrown for a
/// `.part` a killed run left (nothing holds its lock): that is a TraceExistsError without
/// force_overwrite, replaced with it.
class TraceInUseError : public WriteError {
 public:
  using WriteError::WriteError;
};

/// Thrown by Writer's constructor without force_overwrite when the trace exists, or its `.part`
/// exists and no live process holds it (a killed run's). Nothing on disk is changed.
class TraceExistsError : public WriteError {
 public:
  using WriteError::WriteError;
};

/// Options of a Writer.
struct WriterOptions {
  /// Close the current chunk once it holds this many bytes (a chunk never exceeds kMaxChunkBytes).
  /// 0 or more than 32 MiB (half the reader's 64 MiB chunk limit): the 1 MiB default is used.
  uint32_t chunk_bytes = 1u << 20;
  /// Overwrite an existing file at the final path (ncu's -f), and a `.part` no live process holds
  /// (a killed run's). Without it, either throws TraceExistsError. A `.part` a live Writer holds is
  /// never overwritten: TraceInUseError, forced or not.
  bool force_overwrite = false;
  /// 0: a full chunk is written at once by the appending thread. N > 0: up to N full chunks wait
  /// in memory for flush() (the collector's flush thread), so appending threads do no file I/O;
  /// once more wait, the appending thread writes them itself, after the write another thread is
  /// making (the flush thread's), or never (appending_threads_never_write). A write blocked for
  /// stalled_write (a stalled file: NFS, a pipe nobody reads) is never waited for: once the
  /// waiting chunks hold more than N chunks' memory (N * (chunk_bytes + 4 KiB) of capacity), the
  /// oldest are dropped (their StringDefs kept) and counted in dropped_while_stalled() and
  /// TraceEnd, so memory stays bounded (docs/trace-format.md).
  uint32_t max_pending_chunks = 0;
  /// Called (outside the writer's lock, by the appending thread) when a chunk starts waiting and
  /// none waited before: the owner wakes its flush thread. Must not call back into the Writer.
  std::function<void()> on_chunk_pending = nullptr;
  /// Called once (outside the writer's locks, by the appending thread) when records are first
  /// dropped because the file did not keep up (dropped_while_stalled()): the owner says so. Must
  /// not call back into the Writer.
  std::function<void()> on_stalled = nullptr;
  /// Bytes a thread's buffer (append_buffered) holds before it joins the ordered stream as one
  /// chunk. 0 or more than 32 MiB: the 64 KiB default is used. Memory: about this much per thread
  /// that appended.
  uint32_t thread_buffer_bytes = 64u << 10;
  /// Signals blocked on a thread while it holds the writer's shared locks (appending, interning,
  /// moving a full thread buffer, flushing, finishing), restored after. The collector names the
  /// signals whose handler finishes the trace (SIGTERM, SIGINT, SIGHUP): such a handler then never
  /// runs on a thread that holds the lock its finish needs; a process-directed signal goes to
  /// another thread or waits until the lock is released (docs/failure-modes.md). Cost: two
  /// pthread_sigmask calls per lock taken from a thread that did not block them already
  /// (ThreadSignalsBlocked). Empty: none blocked.
  std::vector<int> signals_blocked_while_locked = {};
  /// A write blocked this long is a file that does not keep up (a stalled NFS mount, a pipe nobody
  /// reads; 1 MiB in 100 ms is 10 MB/s): an appending thread past max_pending_chunks and flush()
  /// no longer wait for it (write_blocked_for()).
  std::chrono::milliseconds stalled_write = std::chrono::milliseconds(100);
  /// With max_pending_chunks > 0 and a thread that calls flush() (the collector's flush thread):
  /// an appending thread never writes, not even past max_pending_chunks, since a write that
  /// stalls would hold that thread (the application's) for good. Once more than
  /// max_pending_chunks chunks' memory waits, it waits for flush() to take them (a slow disk, a
  /// flush thread scheduled late: nothing is lost), for at most max_append_wait, and not at all
  /// once a write has been blocked for stalled_write; then it drops the oldest chunks (StringDefs
  /// kept, counted in dropped_while_stalled()). Only flush() and finish() write, until
  /// allow_inline_writes() (the owner's flush thread stopped).
  bool appending_threads_never_write = false;
  /// appending_threads_never_write: the longest an appending thread waits past the bound.
  std::chrono::milliseconds max_append_wait = std::chrono::milliseconds(2000);
};

/// Blocks WriterOptions::signals_blocked_while_locked of `writer`'s options on the calling thread
/// for its lifetime; nested guards (any writer) leave the mask to the outermost. A thread that
/// writes many records in a row (the collector's activity-buffer callback) takes one around them,
/// so that each append does no system call.
class ThreadSignalsBlocked {
 public:
  explicit ThreadSignalsBlocked(const std::vector<int>& signals) noexcept;
  ~ThreadSignalsBlocked();
  ThreadSignalsBlocked(const ThreadSignalsBlocked&) = delete;
  ThreadSignalsBlocked& operator=(const ThreadSignalsBlocked&) = delete;

 private:
  bool counted_ = false;  // this guard counts in the thread's depth
  bool restore_ = false;  // the outermost guard, which blocked: restores old_
  sigset_t old_{};
};

/// Streams records into `<path>.part`, renamed to `<path>` by finish().
/// A process killed at any point leaves a `.part` file whose complete chunks are all readable.
/// Every write blocks SIGXFSZ and SIGPIPE on the writing thread and takes back the one a failed
/// write raised (EFBIG past RLIMIT_FSIZE, `ulimit -f`; EPIPE on a pipe whose reader left): the
/// failure is a WriteError, never that signal's default action killing the process.
class Writer {
 public:
  /// Creates `<path>.part`. Throws WriteError if `path` exists (without force_overwrite), if `path`
  /// or `<path>.part` exists as something else than a file or a link (a folder, a device, a pipe:
  /// force_overwrite replaces earlier traces only), or if it cannot be created.
  Writer(std::filesystem::path path, WriterOptions options = {});
  ~Writer();  ///< Calls finish() if not done yet; never throws.
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  /// Returns the id of `value` in the string table, appending a StringDef record the first time
  /// (ids 1, 2, 3, ..., skipping any a StringDef given to append() took). `value` is cut to 1 MiB
  /// at a whole UTF-8 character. Throws WriteError when appending that record writes (inline mode
  /// or past max_pending_chunks) and the write fails, as append() does.
  StringId intern(std::string_view value);
  /// A new id for `value` and its StringDef record, as intern() gives a string the first time, but
  /// not remembered: the same text defined again gets another id (the reader takes both). For
  /// strings of unbounded variety whose owner keeps its own bounded cache (NVTX range names such
  /// as emit_nvtx's "aten::mm, seq = N"), so that the writer's table does not grow with them.
  /// Throws WriteError as intern() does.
  StringId define(std::string_view value);
  /// intern() behind a cache of the calling thread: a string this thread interned before is found
  /// without any lock shared with other threads (the launch path's kernel names). Memory: one
  /// entry per distinct string and thread that asked for it, so use it for bounded sets of names.
  /// Throws WriteError as intern() does.
  StringId intern_cached(std::string_view value);
  /// Appends one record to the ordered stream. A ProfilingWindow record that closes a window first
  /// collects every thread's buffer (collect_thread_buffers), so every append_buffered record that
  /// returned before it precedes the close in the file.
  /// Dropped and counted in TraceEnd's dropped_records (never written, as the reader would refuse
  /// it and every record after it): a record with an enum field out of its range
  /// (docs/trace-format.md, "Records"; dropped_invalid()), one over kMaxRecordBytes
  /// (dropped_oversized()). StringDef records are written by intern(); one passed here is written
  /// when its id is new (intern() then skips that id) or it repeats an earlier definition exactly,
  /// and dropped as invalid when its id is 0 or was defined with another value. Dropped without
  /// a count after finish(), and counted in dropped_after_failure() after a failed write.
  /// Throws WriteError when this call writes (inline mode, past max_pending_chunks, or the
  /// window close's collection) and the write fails: the file is closed, what was written before
  /// stays readable, and every later record is dropped.
  void append(const Record& record);
  /// Appends one record to the calling thread's buffer: the launch path's writer. It takes no lock
  /// shared with other threads (only the thread's own buffer lock, which the flush thread takes
  /// once per flush) and allocates nothing once the thread's buffer exists. The buffer joins the
  /// ordered stream as one chunk when it holds thread_buffer_bytes (taking the writer's lock once
  /// per chunk), and at flush(), finish() and a window's close. Order: each thread's buffered
  /// records keep their order; a StringDef (interned before the append) precedes them; records of
  /// different threads and append() records may interleave in any order between chunks
  /// (docs/trace-format.md, "Order"). Dropped like append()'s (out-of-range enums, oversized, after
  /// a failed write, after finish()); a StringDef goes to append(). A record appended once finish()
  /// has started collecting the buffers is dropped and counted in its TraceEnd.
  /// Throws WriteError when its full buffer is written by this thread (inline mode or past
  /// max_pending_chunks) and the write fails, as append() does.
  void append_buffered(const Record& record);
  /// Moves every thread's buffered records into the ordered stream, one chunk per thread that has
  /// any (the flush thread, window close, finish). Throws WriteError when that writes and fails.
  void collect_thread_buffers();
  /// Closes the current chunk and write()s it, after every waiting chunk, to the file (no fsync).
  /// The writing happens outside the lock appending threads take. While another thread writes,
  /// it waits for it holding that lock (so batches keep their order), unless that write has been
  /// blocked for stalled_write: then its chunks wait again, ahead of any later one, and it
  /// returns without writing (the caller never waits for a stalled file while holding the lock
  /// every appending thread needs). `buffer_wait`: how long to wait
  /// for each thread's buffer lock (nullopt: as long as it takes); a buffer still busy then stays
  /// for the next flush, so a thread stopped inside append_buffered (a signal handler running on
  /// it) cannot stop the flushing thread. Throws WriteError when a write fails: the file is closed
  /// (the `.part` keeps the chunks written before), the records not written are counted in
  /// dropped_after_failure(), and every later record is dropped (counted there too).
  void flush(std::optional<std::chrono::nanoseconds> buffer_wait = std::nullopt);
  /// From now on appending threads past max_pending_chunks write themselves (as without
  /// appending_threads_never_write): the owner's flush thread has stopped (its finish), and
  /// nothing else would take the waiting chunks. Thread-safe.
  void allow_inline_writes() noexcept { inline_writes_allowed_.store(true); }
  /// The calling thread is the one that calls flush() (the owner's flush thread): past
  /// max_pending_chunks its own appends write, as it would wait for itself. Any Writer.
  static void writes_on_this_thread() noexcept { inline_thread() = true; }
  /// Appends TraceEnd, flushes, closes and renames `<path>.part` to `<path>`. Idempotent.
  /// `timestamp_ns`: TraceEnd's time stamp (ns, CUPTI clock); `dropped_records`: the caller's
  /// count of records it could not write, to which TraceEnd adds dropped_oversized(),
  /// dropped_invalid(), dropped_while_stalled() and the records append_buffered dropped while
  /// finishing.
  /// Throws WriteError when the last write fails (the `.part` then ends without TraceEnd, as a
  /// killed run's) or the rename fails (the complete trace stays at `<path>.part`). After an
  /// earlier failed write it writes nothing, leaves the `.part` (readable up to the failure, read
  /// as truncated) and returns without throwing.
  void finish(uint64_t timestamp_ns = 0, uint64_t dropped_records = 0);
  /// From now on every collection of the thread buffers (a window's close, flush() without its
  /// own wait, finish()) waits at most `wait` for each thread's buffer lock and leaves a buffer
  /// still busy out, counted in buffers_left_out(): a fatal signal's handler finishes the trace
  /// while the thread it interrupted may hold its own buffer, which it never releases.
  void bound_buffer_waits(std::chrono::nanoseconds wait) noexcept {
    buffer_wait_bound_ns_.store(wait.count(), std::memory_order_relaxed);
  }
  /// Thread buffers skipped under bound_buffer_waits() (their records are not in the trace).
  uint64_t buffers_left_out() const noexcept { return buffers_left_out_.load(std::memory_order_relaxed); }
  /// Runs `fn` holding the calling thread's buffer lock, as append_buffered does while it encodes:
  /// how a test stands for a thread a signal stopped inside append_buffered.
  void with_thread_buffer_locked(const std::function<void()>& fn);
  /// Runs `fn` holding the writer's shared lock as append() does (signals blocked as
  /// WriterOptions::signals_blocked_while_locked says): how a test stands for a thread a signal
  /// reached inside append().
  void with_shared_lock_held(const std::function<void()>& fn);
  /// The options given at construction.
  const WriterOptions& options() const noexcept { return options_; }

  /// In a child forked without exec (fork handler, the only thread there): closes this process's
  /// descriptor of the `.part` without writing, so the parent alone holds its lock (a child that
  /// outlived a killed parent kept a killed run's `.part` locked, refusing -f). Later records are
  /// dropped. Never throws.
  void abandon_in_forked_child() noexcept;

  /// Final path of the trace.
  const std::filesystem::path& path() const noexcept { return path_; }
  /// Records in the ordered stream so far (strings included; records still in a thread's buffer
  /// are counted once collected). After a failed write: those written to the file before it
  /// (the records it did not write moved to dropped_after_failure()).
  uint64_t records_written() const;
  /// Records lost to a failed write: those of the chunk that failed and of every chunk not written
  /// yet then, and every record appended after it (the file is closed; memory stays bounded).
  uint64_t dropped_after_failure() const {
    std::lock_guard lock(mutex_);
    return dropped_after_failure_;
  }
  /// Largest encoded record (header included) the writer keeps: half the reader's chunk limit, so a
  /// chunk (closed once it reaches at most kMaxChunkBytes / 2 bytes) never passes the limit.
  static constexpr size_t kMaxRecordBytes = 32u << 20;
  /// Records dropped because their encoding was over kMaxRecordBytes (a chunk holding one would
  /// make the whole trace unreadable); counted into TraceEnd's dropped_records by finish().
  uint64_t dropped_oversized() const noexcept { return dropped_oversized_.load(std::memory_order_relaxed); }
  /// Records dropped because the reader would refuse them (an enum field out of its range, a
  /// StringDef with id 0 or redefining an id); counted into TraceEnd's dropped_records by finish().
  uint64_t dropped_invalid() const noexcept { return dropped_invalid_.load(std::memory_order_relaxed); }
  /// Records dropped because the file did not keep up (max_pending_chunks): more than
  /// max_pending_chunks chunks' memory waited, with another thread's write blocked for
  /// stalled_write (or with appending_threads_never_write). Counted into TraceEnd's
  /// dropped_records by finish(). Never takes a lock.
  uint64_t dropped_while_stalled() const noexcept {
    return dropped_while_stalled_.load(std::memory_order_relaxed);
  }
  /// How long the chunk being written now has been in its write() (zero when none is): a file that
  /// takes no write (a stalled NFS mount, a pipe nobody reads) shows here. Never takes a lock.
  std::chrono::nanoseconds write_blocked_for() const noexcept;
  /// Bytes of memory the writer holds for chunk bodies (capacity, not size): the open chunk, the
  /// waiting chunks, the spare bodies kept for reuse and every thread's buffer. Takes each thread's
  /// buffer lock, then the writer's lock. For tests and diagnostics.
  uint64_t buffer_capacity_bytes();

 private:
  /// Transparent hash: intern() looks up a string_view without building a std::string.
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  /// A closed chunk waiting to be written.
  struct Pending {
    std::array<uint8_t, 16> header{};  // chunk header
    std::vector<uint8_t> body;         // its records
    uint32_t records = 0;
    bool strings_only = false;  // the StringDefs of dropped chunks (drop_oldest_pending_locked)
  };
  /// One thread's buffered records (append_buffered) and its intern cache.
  struct ThreadBuffer {
    std::mutex mutex;              // the owner's appends vs. collection (flush thread, close, finish)
    std::vector<uint8_t> bytes;    // (mutex) encoded records
    uint32_t records = 0;          // (mutex)
    std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> strings;  // owner thread only
  };
  /// Moves `b`'s records, after the open shared chunk, to pending_ (caller holds b.mutex and
  /// mutex_). Returns true when a chunk started waiting (on_chunk_pending is due). With
  /// `apply_bound`, past max_pending_chunks this thread writes them (bound_pending_locked).
  bool move_buffer_locked(ThreadBuffer& b, bool apply_bound = true);
  /// collect_thread_buffers without the callback; returns true when on_chunk_pending is due. The
  /// bound is applied once every buffer is collected, never while a thread's buffer lock is held
  /// (that thread's next append would wait for the write); `apply_bound` false: the caller writes
  /// right after (flush).
  /// `buffer_wait`: per buffer lock; a busy buffer is skipped (left for a later collection).
  /// nullopt: the bound_buffer_waits() bound if one is set (a skipped buffer is then counted in
  /// buffers_left_out_), else block.
  bool collect_locked_buffers(bool apply_bound = true,
                              std::optional<std::chrono::nanoseconds> buffer_wait = std::nullopt);
  /// Gives `p` its chunk header and appends it to pending_.
  void push_pending_locked(Pending p);
  /// After chunks were pushed: writes inline in inline mode or past max_pending_chunks (after
  /// another thread's write, unless that is stalled or appending_threads_never_write: then
  /// drop_oldest_pending_locked). Returns true when chunks now wait and none did before
  /// (`was_empty`): on_chunk_pending is due.
  bool bound_pending_locked(bool was_empty);
  /// Past the bound, not writing: drops the oldest waiting chunks (never the newest) until they
  /// hold at most max_pending_chunks chunks' memory, keeping their StringDefs in a chunk ahead of
  /// the rest (later records use them; the reader refuses an undefined id). Caller holds mutex_.
  void drop_oldest_pending_locked();
  /// Runs on_chunk_pending when `started`, and on_stalled once records were first dropped.
  void after_unlock(bool started) {
    if (started || stall_report_due_.load(std::memory_order_relaxed)) after_unlock_slow(started);
  }
  void after_unlock_slow(bool started);
  /// Keeps a written or dropped chunk body for reuse (return_spares_locked's rule).
  void keep_spare_locked(std::vector<uint8_t>& body);
  /// An empty body with chunk capacity: a spare one (written earlier) or a new one.
  std::vector<uint8_t> take_spare_locked(size_t capacity);
  /// Keeps written bodies for reuse (at most a few), so steady appends allocate nothing: only those
  /// take_spare_locked may reuse (within twice a chunk's or a thread buffer's size); larger ones
  /// (a large record's) are freed.
  void return_spares_locked(std::vector<Pending>& batch);
  /// Returns true when a chunk started waiting (the caller runs on_chunk_pending after unlocking).
  bool append_locked(const Record& record);
  /// intern() (`remember`: found again by its text) or define(): a new id and its StringDef.
  StringId add_string(std::string_view value, bool remember);
  /// Whether a StringDef given to append() may be written: a new id (then taken, so that intern()
  /// skips it) or the same definition again. False for id 0 or an id defined with another value.
  bool take_string_id_locked(const StringDef& def);
  /// Moves the open chunk, if any, to pending_.
  void close_chunk_locked();
  /// Writes `batch` in order to `fd` unless an earlier write failed; caller holds io_mutex_.
  /// Returns 0 or an errno (then io_failed_ is set and nothing more is ever written), with
  /// `unwritten` the records of the chunk that failed and of those after it in `batch`.
  int write_batch_locked(int fd, std::vector<Pending>& batch, uint64_t& unwritten);
  /// Closes the file after a failed write and throws WriteError; caller holds mutex_ only. The
  /// `unwritten` records of the failed batch, the waiting chunks' and the open chunk's move from
  /// records_written_ to dropped_after_failure_.
  [[noreturn]] void fail_locked(int err, uint64_t unwritten);
  /// Closes the open chunk and takes every pending one, in order (empty after a failed write).
  std::vector<Pending> take_pending_locked();
  /// Writes the open chunk and every pending one, holding mutex_ (finish, inline mode).
  void flush_locked();
  /// Writes `batch` (taken by take_pending_locked) holding mutex_ and `io` (io_mutex_, released
  /// here); a failure closes the file and throws (fail_locked).
  void write_taken_locked(std::vector<Pending>& batch, std::unique_lock<std::mutex>& io);
  /// Takes `io` (io_mutex_; caller holds mutex_), polling, unless the write holding it has been
  /// blocked for stalled_write: then false, without it.
  bool lock_io_unless_stalled(std::unique_lock<std::mutex>& io);

  std::filesystem::path path_;
  std::filesystem::path part_path_;
  WriterOptions options_;
  std::atomic<bool> inline_writes_allowed_{false};  // allow_inline_writes()
  static bool& inline_thread() noexcept {  // writes_on_this_thread()
    static thread_local bool inline_here = false;
    return inline_here;
  }
  mutable std::mutex mutex_;
  std::mutex io_mutex_;           // held while writing, taken after mutex_: chunks stay in order
  std::vector<Pending> pending_;  // closed chunks not written yet (bound_pending_locked bounds them)
  uint64_t pending_bytes_ = 0;    // (mutex_) their bodies' memory (capacity)
  std::atomic<int64_t> write_began_ns_{0};  // steady clock of the write in progress; 0: none
  bool io_failed_ = false;        // (io_mutex_) a write failed: nothing more is written
  int fd_ = -1;
  std::atomic<int64_t> buffer_wait_bound_ns_{-1};  // bound_buffer_waits(); -1: none
  std::atomic<uint64_t> buffers_left_out_{0};
  std::atomic<bool> finished_{false};  // set under mutex_; read without it by append_buffered
  std::atomic<bool> finishing_{false};  // finish() started collecting: buffers take no more records
  std::vector<uint8_t> chunk_;   // encoded records of the open chunk
  uint32_t chunk_records_ = 0;
  uint64_t records_written_ = 0;
  uint64_t dropped_after_failure_ = 0;
  std::atomic<uint64_t> dropped_oversized_{0};
  std::atomic<uint64_t> dropped_invalid_{0};
  std::atomic<uint64_t> dropped_while_finishing_{0};  // append_buffered after finish() began
  std::atomic<uint64_t> dropped_while_stalled_{0};   // drop_oldest_pending_locked
  std::atomic<bool> stall_report_due_{false};         // on_stalled is due (set once)
  bool stall_reported_ = false;                       // (mutex_) stall_report_due_ was set
  std::unordered_map<std::string, StringId, StringHash, std::equal_to<>> strings_;
  StringId next_string_id_ = 1;  // (mutex_) the id intern() gives next, unless append() took it
  std::unordered_map<StringId, std::string> appended_strings_;  // (mutex_) ids StringDefs given to append() defined
  std::vector<std::vector<uint8_t>> spares_;  // (mutex_) written chunk bodies kept for reuse
  PerThread<ThreadBuffer> buffers_;  // walked (for_each) without its registry lock
};

}  // namespace rf::trace
