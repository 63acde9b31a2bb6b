// Trace writer: file header, then chunks written with one write() each. docs/trace-format.md
#include "rfprof/trace/writer.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <thread>

#include "codec.h"
#include "rfprof/trace/reader.h"
#include "rfprof/trace/utf8.h"
#include "wire.h"
#include "writer_io.h"

namespace rf::trace {
namespace {

using detail::errno_text;
using detail::write_all;
using detail::WriteSignalsBlocked;

/// flock(fd, op | LOCK_NB), retried on EINTR: 0, or the errno (EWOULDBLOCK: another open file
/// description holds a conflicting lock; ENOLCK or EINVAL: a file system without locks).
int try_flock(int fd, int op) {
  while (::flock(fd, op | LOCK_NB) != 0) {
    if (errno != EINTR) return errno;
  }
  return 0;
}

/// Whether a live Writer holds the `.part` at `part`: its exclusive flock is held, or the file is
/// shorter than the file header (a writer between creating it and locking it; a killed run's
/// `.part` always holds its header, written right after the lock). False for a file no process
/// holds, one that cannot be opened, or a file system without locks.
bool held_by_live_writer(const std::filesystem::path& part) {
  const int fd = ::open(part.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  const bool held = try_flock(fd, LOCK_SH) == EWOULDBLOCK ||
                    (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < static_cast<off_t>(wire::kFileHeaderBytes));
  ::close(fd);
  return held;
}

/// Takes the exclusive flock of a `.part` just opened: 0, EWOULDBLOCK (another writer holds it),
/// or another errno (a file system without locks: carried on without). Retried for 20 ms, as
/// another process's held_by_live_writer probe holds a shared lock for microseconds.
int lock_part(int fd) {
  int err = try_flock(fd, LOCK_EX);
  for (int i = 0; err == EWOULDBLOCK && i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    err = try_flock(fd, LOCK_EX);
  }
  return err;
}

/// Whether `fd` is still the file named `path` (same device and inode): a `.part` opened by name
/// may have been renamed (its writer finished) or replaced before its lock was taken.
bool still_named(int fd, const std::filesystem::path& path) {
  struct stat by_fd {}, by_name {};
  if (::fstat(fd, &by_fd) != 0) return true;  // cannot tell: as before
  if (::lstat(path.c_str(), &by_name) != 0) return false;
  return by_fd.st_dev == by_name.st_dev && by_fd.st_ino == by_name.st_ino;
}

static_assert(2 * Writer::kMaxRecordBytes <= wire::kMaxChunkBytes,
              "a chunk closed below kMaxChunkBytes / 2 plus one record must stay within the reader's limit");

/// Gives `v` (holding `v.size()` bytes to keep) a capacity of `target` again once a large record
/// grew it past twice that, so that one large record does not pin its memory for the whole run.
void shrink_if_grown(std::vector<uint8_t>& v, size_t target) {
  if (v.capacity() <= 2 * target) return;
  std::vector<uint8_t> smaller;
  smaller.reserve(std::max(target, v.size()));
  smaller.assign(v.begin(), v.end());
  v.swap(smaller);
}

}  // namespace

Writer::Writer(std::filesystem::path path, WriterOptions options)
    : path_(std::move(path)),
      part_path_(path_.string() + ".part"),
      options_(options) {
  if (options_.chunk_bytes == 0 || options_.chunk_bytes > wire::kMaxChunkBytes / 2)
    options_.chunk_bytes = 1u << 20;
  if (options_.thread_buffer_bytes == 0 || options_.thread_buffer_bytes > wire::kMaxChunkBytes / 2)
    options_.thread_buffer_bytes = 64u << 10;
  std::error_code ec;
  const bool existed_before = std::filesystem::exists(path_, ec);  // what -f may replace
  if (!options_.force_overwrite && existed_before)
    throw TraceExistsError("rfprof: trace " + path_.string() +
                           " already exists; remove it or pass -f / RFPROF_FORCE_OVERWRITE=1");
  // Overwriting replaces an earlier trace (a file, or a link, which the final rename replaces):
  // never a folder, a device or a pipe (RFPROF_OUTPUT=/dev/null with -f would replace /dev/null).
  // The .part may be a pipe (the tests' way to make writes wait), not a folder or a device.
  using Type = std::filesystem::file_type;
  for (const std::filesystem::path& p : {path_, part_path_}) {
    const Type type = std::filesystem::symlink_status(p, ec).type();
    const bool replaceable = type == Type::not_found || type == Type::none || type == Type::regular ||
                             type == Type::symlink || (type == Type::fifo && p == part_path_);
    if (!replaceable)
      throw WriteError("rfprof: trace " + p.string() +
                       " exists and is not a file (a folder, a device or a pipe); name another path");
  }
  // O_EXCL: two processes given the same name must not destroy each other's trace. O_NOFOLLOW:
  // a link left as the .part is not followed to truncate what it points to.
  // O_NONBLOCK: a pipe as the .part that no process reads fails at once (ENXIO) instead of
  // blocking the application's CUDA initialization forever; cleared once open.
  // The exclusive flock held until finish() tells a live writer's .part from a killed run's: with
  // force_overwrite, the .part is truncated only once its lock is taken, never under a live writer.
  const int open_flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NONBLOCK | (options_.force_overwrite ? O_NOFOLLOW : O_EXCL);
  const auto in_use = [this] {
    return TraceInUseError("rfprof: trace " + part_path_.string() + " is being written by another process");
  };
  for (int attempt = 0;; ++attempt) {
    fd_ = ::open(part_path_.c_str(), open_flags, 0644);
    if (fd_ < 0 && errno == EEXIST) {
      if (held_by_live_writer(part_path_)) throw in_use();
      throw TraceExistsError("rfprof: trace " + part_path_.string() +
                             " exists (a killed run left it); remove it or pass -f / RFPROF_FORCE_OVERWRITE=1");
    }
    if (fd_ < 0 && errno == ENXIO)
      throw WriteError("rfprof: trace " + part_path_.string() + " is a pipe that no process reads; remove it");
    if (fd_ < 0)
      throw WriteError("rfprof: cannot create trace " + part_path_.string() + ": " + errno_text(errno));
    if (lock_part(fd_) == EWOULDBLOCK) {  // other errors: a file system without locks
      ::close(fd_);
      fd_ = -1;
      throw in_use();
    }
    // Forced, the .part opened may be one whose writer renamed it (finished) or another replaced
    // before the lock was taken: locking and truncating that file would empty a finished trace.
    if (still_named(fd_, part_path_)) break;
    ::close(fd_);
    fd_ = -1;
    if (attempt == 8) throw in_use();
  }
  // The trace itself may have appeared since the check above: a process that had this .part
  // finished and renamed it in between (two processes given one name, or one %i index). That is
  // another live process's trace, never replaced, forced or not: this writer takes another name.
  if (!existed_before && std::filesystem::exists(path_, ec)) {
    ::unlink(part_path_.c_str());  // opened and locked by this writer, nothing written yet
    ::close(fd_);
    fd_ = -1;
    throw in_use();
  }
  struct stat st {};
  const bool regular = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);  // a pipe (tests) is not truncated
  if (options_.force_overwrite && regular && ::ftruncate(fd_, 0) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw WriteError("rfprof: cannot truncate trace " + part_path_.string() + ": " + errno_text(err));
  }
  if (const int flags = ::fcntl(fd_, F_GETFL); flags >= 0) (void)::fcntl(fd_, F_SETFL, flags & ~O_NONBLOCK);
  std::vector<uint8_t> header;
  wire::Out o(header);
  o.put_bytes(wire::kFileMagic, sizeof wire::kFileMagic);
  o.put(kFormatMajor);
  o.put(kFormatMinor);
  o.put(wire::kFileHeaderBytes);
  struct iovec iov {header.data(), header.size()};
  WriteSignalsBlocked quiet_write;
  if (int err = write_all(fd_, &iov, 1)) {
    quiet_write.take_back(err);
    ::close(fd_);
    fd_ = -1;
    throw WriteError("rfprof: cannot write trace " + part_path_.string() + ": " + errno_text(err));
  }
  chunk_.reserve(options_.chunk_bytes + 4096);
  pending_.reserve(options_.max_pending_chunks + 2);
}

namespace {
thread_local int t_signals_blocked_depth = 0;  // ThreadSignalsBlocked guards alive on this thread
}  // namespace

ThreadSignalsBlocked::ThreadSignalsBlocked(const std::vector<int>& signals) noexcept {
  if (signals.empty()) return;
  counted_ = true;
  if (t_signals_blocked_depth++ > 0) return;  // an outer guard blocked them
  sigset_t set;
  ::sigemptyset(&set);
  for (int s : signals) ::sigaddset(&set, s);
  restore_ = ::pthread_sigmask(SIG_BLOCK, &set, &old_) == 0;
}

ThreadSignalsBlocked::~ThreadSignalsBlocked() {
  if (restore_) (void)::pthread_sigmask(SIG_SETMASK, &old_, nullptr);  // a pending one arrives now
  if (counted_) --t_signals_blocked_depth;
}

Writer::~Writer() {
  try {
    finish();
  } catch (...) {
    // The destructor never throws; finish() already made the failure visible where it could.
  }
}

StringId Writer::intern(std::string_view value) { return add_string(value, /*remember=*/true); }

StringId Writer::define(std::string_view value) { return add_string(value, /*remember=*/false); }

StringId Writer::add_string(std::string_view value, bool remember) {
  value = utf8_prefix(value, wire::kMaxStringBytes);  // a cut never splits a UTF-8 character
  bool started = false;
  StringId id = 0;
  {
    ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
    std::lock_guard lock(mutex_);
    if (remember)
      if (auto it = strings_.find(value); it != strings_.end()) return it->second;  // no allocation
    do {
      id = next_string_id_++;
    } while (appended_strings_.contains(id));  // taken by a StringDef given to append()
    if (remember) strings_.emplace(std::string(value), id);
    started = append_locked(StringDef{id, std::string(value)});
  }
  after_unlock(started);
  return id;
}

StringId Writer::intern_cached(std::string_view value) {
  value = utf8_prefix(value, wire::kMaxStringBytes);  // a cut never splits a UTF-8 character
  ThreadBuffer& b = buffers_.local();
  auto it = b.strings.find(value);  // this thread's cache: no lock
  if (it != b.strings.end()) return it->second;
  const StringId id = intern(value);
  if (id != 0) b.strings.emplace(std::string(value), id);
  return id;
}

void Writer::append_buffered(const Record& record) {
  if (finished_.load(std::memory_order_relaxed)) return;
  if (std::holds_alternative<StringDef>(record)) return append(record);  // checked against intern()'s ids
  if (!enums_in_range(record)) {  // the reader would refuse it and every record after it
    dropped_invalid_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ThreadBuffer& b = buffers_.local();
  bool started = false;
  {
    std::lock_guard own(b.mutex);  // taken by another thread only to collect (once per flush)
    if (b.bytes.capacity() == 0) {  // first use
      // A buffer finish()'s collection may have missed (added after its walk): ordered with
      // finish()'s store of finishing_ and its walk, so this thread sees finishing_ or is collected.
      std::atomic_thread_fence(std::memory_order_seq_cst);
      b.bytes.reserve(options_.thread_buffer_bytes + 4096);
    }
    // finish() collects every buffer once, after setting finishing_ (a buffer lock apart): a
    // record this buffer took later would be in no chunk. Dropped, and counted in TraceEnd.
    if (finishing_.load(std::memory_order_relaxed)) {
      dropped_while_finishing_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    const size_t before = b.bytes.size();
    encode_record(record, b.bytes);
    if (b.bytes.size() - before > kMaxRecordBytes) {  // its chunk would pass the reader's limit
      b.bytes.resize(before);
      shrink_if_grown(b.bytes, options_.thread_buffer_bytes + 4096);
      dropped_oversized_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    ++b.records;
    if (b.bytes.size() < options_.thread_buffer_bytes) return;
    ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
    std::lock_guard lock(mutex_);  // once per chunk of this thread's records
    started = move_buffer_locked(b);
  }
  after_unlock(started);
}

bool Writer::move_buffer_locked(ThreadBuffer& b, bool apply_bound) {
  if (b.records == 0) return false;
  if (finished_.load(std::memory_order_relaxed) || fd_ < 0) {  // dropped, memory stays bounded
    if (!finished_.load(std::memory_order_relaxed)) dropped_after_failure_ += b.records;
    b.bytes.clear();
    b.records = 0;
    return false;
  }
  const bool was_empty = pending_.empty();
  close_chunk_locked();  // shared records first: the StringDefs these records use are among them
  Pending p;
  p.records = b.records;
  p.body.swap(b.bytes);
  b.bytes = take_spare_locked(options_.thread_buffer_bytes + 4096);
  records_written_ += b.records;
  b.records = 0;
  push_pending_locked(std::move(p));
  return apply_bound ? bound_pending_locked(was_empty) : was_empty && !pending_.empty();
}

void Writer::collect_thread_buffers() {
  ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
  after_unlock(collect_locked_buffers());
}

void Writer::after_unlock_slow(bool started) {
  if (started && options_.on_chunk_pending) options_.on_chunk_pending();
  if (stall_report_due_.load(std::memory_order_relaxed) && stall_report_due_.exchange(false) &&
      options_.on_stalled)
    options_.on_stalled();
}

namespace {

/// Takes `lock` within `wait`, polling try_lock (a timed mutex's timed lock, pthread_mutex_clocklock,
/// is invisible to ThreadSanitizer, which then reports its unlock). The owner of a thread buffer
/// holds it for one record's encoding, so the first or second try normally succeeds.
bool lock_within(std::unique_lock<std::mutex>& lock, std::chrono::nanoseconds wait) {
  const auto end = std::chrono::steady_clock::now() + wait;
  while (!lock.try_lock()) {
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

}  // namespace

bool Writer::collect_locked_buffers(bool apply_bound, std::optional<std::chrono::nanoseconds> buffer_wait) {
  bool count_left_out = false;
  if (!buffer_wait)
    if (const int64_t bound = buffer_wait_bound_ns_.load(std::memory_order_relaxed); bound >= 0) {
      buffer_wait = std::chrono::nanoseconds(bound);
      count_left_out = true;
    }
  bool started = false, moved = false;
  buffers_.for_each([&](ThreadBuffer& b) {
    std::unique_lock own(b.mutex, std::defer_lock);
    if (!buffer_wait) {
      own.lock();
    } else if (!lock_within(own, *buffer_wait)) {
      if (count_left_out) buffers_left_out_.fetch_add(1, std::memory_order_relaxed);
      return;  // its thread is stopped inside append_buffered (or writing past the bound)
    }
    if (b.records == 0) return;
    std::lock_guard lock(mutex_);
    moved = true;
    started = move_buffer_locked(b, /*apply_bound=*/false) || started;
  });
  if (!apply_bound || !moved) return started;
  std::lock_guard lock(mutex_);
  (void)bound_pending_locked(false);  // past the bound this thread writes, holding no buffer lock
  return started && !pending_.empty();
}

void Writer::append(const Record& record) {
  if (!enums_in_range(record)) {  // the reader would refuse it and every record after it
    dropped_invalid_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
  if (const auto* w = std::get_if<ProfilingWindow>(&record); w && !w->begin)
    (void)collect_locked_buffers();  // the window's buffered launches precede its close
  bool started = false;
  {
    std::lock_guard lock(mutex_);
    if (const auto* s = std::get_if<StringDef>(&record); s && !take_string_id_locked(*s)) {
      dropped_invalid_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    started = append_locked(record);
  }
  after_unlock(started);
}

bool Writer::take_string_id_locked(const StringDef& def) {
  if (def.id == 0) return false;  // 0 is "no string"
  if (auto it = appended_strings_.find(def.id); it != appended_strings_.end())
    return it->second == def.value;  // the same definition again is accepted by the reader
  if (def.id < next_string_id_) {    // intern() gave it
    auto it = strings_.find(def.value);
    return it != strings_.end() && it->second == def.id;
  }
  appended_strings_.emplace(def.id, def.value);
  return true;
}

bool Writer::append_locked(const Record& record) {
  if (finished_) return false;
  if (fd_ < 0) {  // writing failed earlier (disk full): drop, so that memory stays bounded
    ++dropped_after_failure_;
    return false;
  }
  const size_t before = chunk_.size();
  encode_record(record, chunk_);
  if (chunk_.size() - before > kMaxRecordBytes) {  // its chunk would pass the reader's limit
    chunk_.resize(before);
    shrink_if_grown(chunk_, options_.chunk_bytes + 4096);
    dropped_oversized_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ++chunk_records_;
  ++records_written_;
  if (chunk_.size() < options_.chunk_bytes) return false;
  const bool was_empty = pending_.empty();
  close_chunk_locked();
  return bound_pending_locked(was_empty);
}

void Writer::with_thread_buffer_locked(const std::function<void()>& fn) {
  ThreadBuffer& b = buffers_.local();
  std::lock_guard own(b.mutex);
  fn();
}

void Writer::with_shared_lock_held(const std::function<void()>& fn) {
  ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
  std::lock_guard lock(mutex_);
  fn();
}

void Writer::finish(uint64_t timestamp_ns, uint64_t dropped_records) {
  if (finished_.load()) return;
  ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
  // From here a thread's buffer takes no record (append_buffered drops and counts it): the one
  // collection below is the last, and a record taken after it would be lost uncounted.
  finishing_.store(true);
  std::atomic_thread_fence(std::memory_order_seq_cst);  // with append_buffered's, for new buffers
  // Every thread's records precede TraceEnd (a buffer left out under bound_buffer_waits excepted).
  (void)collect_locked_buffers();
  std::lock_guard lock(mutex_);
  if (finished_.load()) return;
  append_locked(TraceEnd{timestamp_ns, records_written_,
                         dropped_records + dropped_oversized_.load() + dropped_invalid_.load() +
                             dropped_while_finishing_.load() + dropped_while_stalled_.load()});
  finished_.store(true);
  flush_locked();
  if (fd_ < 0) return;
  // Renamed before the close releases the .part's lock: a process opening the .part between the
  // two would find it unlocked and take it for a killed run's (and, forced, truncate this trace).
  std::error_code ec;
  std::filesystem::rename(part_path_, path_, ec);
  ::close(fd_);
  fd_ = -1;
  if (ec)
    throw WriteError("rfprof: cannot rename " + part_path_.string() + " to " + path_.string() + ": " +
                     ec.message());
}

void Writer::abandon_in_forked_child() noexcept {
  // No lock: the threads that may have held the writer's locks do not exist in the child.
  if (fd_ >= 0) ::close(fd_);  // the parent's descriptor keeps the open file and its lock
  fd_ = -1;
  finished_.store(true);
}

uint64_t Writer::buffer_capacity_bytes() {
  ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
  uint64_t bytes = 0;
  buffers_.for_each([&](ThreadBuffer& b) {
    std::lock_guard own(b.mutex);
    bytes += b.bytes.capacity();
  });
  std::lock_guard lock(mutex_);
  bytes += chunk_.capacity();
  for (const Pending& p : pending_) bytes += p.body.capacity();
  for (const auto& v : spares_) bytes += v.capacity();
  return bytes;
}

uint64_t Writer::records_written() const {
  ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
  std::lock_guard lock(mutex_);
  return records_written_;
}

}  // namespace rf::trace
