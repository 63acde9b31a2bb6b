// The trace writer's waiting chunks (trace/include/rfprof/trace/writer.h): the bound on them,
// the drops past it while the file does not keep up, the writes (SIGXFSZ and SIGPIPE blocked),
// a failed write, flush. The rest of the writer: writer.cpp. docs/trace-format.md
#include <sys/uio.h>

#include <algorithm>
#include <cstring>
#include <thread>

#include "rfprof/trace/writer.h"
#include "wire.h"
#include "writer_io.h"

namespace rf::trace {
namespace {

using detail::errno_text;
using detail::write_all;
using detail::WriteSignalsBlocked;

/// Spare chunk bodies kept for reuse.
constexpr size_t kMaxSpares = 16;

/// Whether a body of `capacity` bytes is fit for reuse where `target` bytes are wanted: at least
/// that, at most twice (take_spare_locked's rule). Larger ones (grown by a large record) are freed.
bool fits(size_t capacity, size_t target) { return capacity >= target && capacity <= 2 * target; }

/// Gives `p` the chunk header of its body and record count.
template <class P>
void set_chunk_header(P& p) {
  const uint32_t header[4] = {wire::kChunkMagic, static_cast<uint32_t>(p.body.size()), p.records, 0};
  std::memcpy(p.header.data(), header, sizeof header);  // little-endian, as wire::Out writes
}

/// Appends the StringDef records of chunk body `body` (whole, header included) to `out`; returns
/// how many. Record header: u16 type, u16 reserved, u32 payload bytes (docs/trace-format.md).
uint32_t copy_string_defs(const std::vector<uint8_t>& body, std::vector<uint8_t>& out) {
  uint32_t n = 0;
  for (size_t at = 0; at + wire::kRecordHeaderBytes <= body.size();) {
    uint16_t type = 0;
    uint32_t size = 0;
    std::memcpy(&type, body.data() + at, 2);
    std::memcpy(&size, body.data() + at + 4, 4);
    const size_t end = at + wire::kRecordHeaderBytes + size;
    if (end > body.size()) break;  // never: the writer encoded it
    if (type == static_cast<uint16_t>(RecordType::kString)) {
      out.insert(out.end(), body.begin() + static_cast<std::ptrdiff_t>(at), body.begin() + static_cast<std::ptrdiff_t>(end));
      ++n;
    }
    at = end;
  }
  return n;
}

}  // namespace

std::chrono::nanoseconds Writer::write_blocked_for() const noexcept {
  const int64_t began = write_began_ns_.load(std::memory_order_relaxed);
  if (began == 0) return std::chrono::nanoseconds(0);
  const int64_t now = std::chrono::steady_clock::now().time_since_epoch().count();
  return std::chrono::nanoseconds(std::max<int64_t>(0, now - began));
}

std::vector<uint8_t> Writer::take_spare_locked(size_t capacity) {
  std::vector<uint8_t> v;
  // A thread buffer's body (64 KiB) and a shared chunk's (1 MiB) are told apart by capacity.
  for (size_t i = spares_.size(); i-- > 0;) {
    const size_t c = spares_[i].capacity();
    if (c >= capacity && c <= 2 * capacity) {
      v.swap(spares_[i]);
      spares_.erase(spares_.begin() + static_cast<std::ptrdiff_t>(i));
      break;
    }
  }
  if (v.capacity() < capacity) v.reserve(capacity);
  return v;
}

void Writer::keep_spare_locked(std::vector<uint8_t>& body) {
  if (spares_.size() >= kMaxSpares) return;
  const size_t c = body.capacity();
  if (!fits(c, options_.chunk_bytes + 4096) && !fits(c, options_.thread_buffer_bytes + 4096))
    return;  // grown by a large record (or too small): freed with its chunk
  body.clear();
  spares_.push_back(std::move(body));
}

void Writer::return_spares_locked(std::vector<Pending>& batch) {
  for (auto& p : batch) {
    if (spares_.size() >= kMaxSpares) break;
    keep_spare_locked(p.body);
  }
  batch.clear();
}

void Writer::push_pending_locked(Pending p) {
  set_chunk_header(p);
  pending_bytes_ += p.body.capacity();
  pending_.push_back(std::move(p));
}

bool Writer::bound_pending_locked(bool was_empty) {
  if (options_.max_pending_chunks == 0) {
    flush_locked();  // inline mode: this thread writes
    return false;
  }
  if (pending_.size() <= options_.max_pending_chunks) return was_empty && !pending_.empty();
  if (options_.appending_threads_never_write && !inline_writes_allowed_.load() && !inline_thread()) {
    // The flush thread writes. Past the bound this thread waits for it to take chunks (the lock
    // released meanwhile; a slow disk or a flush thread scheduled late loses nothing), unless its
    // write is blocked (a stalled file) or max_append_wait passed: then the oldest are dropped.
    const uint64_t limit = uint64_t{options_.max_pending_chunks} * (options_.chunk_bytes + 4096);
    const auto deadline = std::chrono::steady_clock::now() + options_.max_append_wait;
    bool woke = false;
    while (pending_.size() > options_.max_pending_chunks && pending_bytes_ > limit) {
      if (write_blocked_for() >= options_.stalled_write || std::chrono::steady_clock::now() >= deadline) {
        drop_oldest_pending_locked();
        break;
      }
      mutex_.unlock();  // the caller's guard owns it again below
      if (!woke && options_.on_chunk_pending) options_.on_chunk_pending();  // the flush thread, now
      woke = true;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      mutex_.lock();
    }
    return was_empty && !pending_.empty();
  }
  // Past the bound this thread writes them once the file's lock is free. The thread holding it
  // (the flush thread) is normally in a write for a moment: waited for, as on a healthy disk no
  // record may be lost. A write blocked for stalled_write is a file that does not keep up (a
  // stalled NFS mount, a pipe nobody reads): never waited for again, what passes the byte bound
  // is dropped (polling try_lock: a blocking lock would wait for that write for good).
  std::unique_lock io(io_mutex_, std::defer_lock);
  if (!lock_io_unless_stalled(io)) {
    drop_oldest_pending_locked();
    return was_empty && !pending_.empty();
  }
  std::vector<Pending> batch = take_pending_locked();
  if (!batch.empty()) write_taken_locked(batch, io);
  return false;
}

bool Writer::lock_io_unless_stalled(std::unique_lock<std::mutex>& io) {
  while (!io.try_lock()) {
    if (write_blocked_for() >= options_.stalled_write) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

void Writer::drop_oldest_pending_locked() {
  const uint64_t limit = uint64_t{options_.max_pending_chunks} * (options_.chunk_bytes + 4096);  // as reserved
  const size_t first = !pending_.empty() && pending_.front().strings_only ? 1 : 0;  // never dropped
  size_t end = first;
  uint64_t dropped = 0;
  uint32_t kept = 0;
  std::vector<uint8_t> strings;
  while (end + 1 < pending_.size() && pending_bytes_ > limit) {  // the newest chunk stays
    Pending& p = pending_[end++];
    kept += copy_string_defs(p.body, strings);
    dropped += p.records;
    pending_bytes_ -= p.body.capacity();
    keep_spare_locked(p.body);
  }
  if (end == first) return;
  pending_.erase(pending_.begin() + static_cast<std::ptrdiff_t>(first),
                 pending_.begin() + static_cast<std::ptrdiff_t>(end));
  if (kept > 0) {  // ahead of every chunk left: the records that use them follow
    if (first == 0) {
      Pending p;
      p.strings_only = true;
      pending_.insert(pending_.begin(), std::move(p));
    }
    Pending& s = pending_.front();
    pending_bytes_ -= s.body.capacity();
    s.body.insert(s.body.end(), strings.begin(), strings.end());
    s.records += kept;
    set_chunk_header(s);
    pending_bytes_ += s.body.capacity();
  }
  records_written_ -= std::min(dropped - kept, records_written_);
  dropped_while_stalled_.fetch_add(dropped - kept, std::memory_order_relaxed);
  if (!stall_reported_) {
    stall_reported_ = true;
    stall_report_due_.store(true);
  }
}

void Writer::close_chunk_locked() {
  if (chunk_records_ == 0) return;
  Pending p;
  p.records = chunk_records_;
  p.body.swap(chunk_);
  chunk_ = take_spare_locked(options_.chunk_bytes + 4096);
  chunk_records_ = 0;
  push_pending_locked(std::move(p));
}

int Writer::write_batch_locked(int fd, std::vector<Pending>& batch, uint64_t& unwritten) {
  unwritten = 0;
  WriteSignalsBlocked quiet_write;  // SIGXFSZ, SIGPIPE: an error, never the process's death
  for (size_t i = 0; i < batch.size(); ++i) {
    Pending& p = batch[i];
    int err = io_failed_ ? EIO : 0;
    if (!err) {
      struct iovec iov[2] = {{p.header.data(), p.header.size()}, {p.body.data(), p.body.size()}};
      write_began_ns_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                            std::memory_order_relaxed);
      err = write_all(fd, iov, 2);
      if (err) {
        io_failed_ = true;  // a partial chunk may be on disk: nothing may follow it
        quiet_write.take_back(err);
      }
    }
    if (err) {
      write_began_ns_.store(0, std::memory_order_relaxed);
      for (size_t k = i; k < batch.size(); ++k) unwritten += batch[k].records;
      return err;
    }
  }
  write_began_ns_.store(0, std::memory_order_relaxed);
  return 0;
}

void Writer::fail_locked(int err, uint64_t unwritten) {
  if (fd_ >= 0) {
    ::close(fd_);
    fd_ = -1;
  }
  // The records of the chunk that failed, of those after it and of those still waiting were
  // counted as written: they never reach the file.
  for (const Pending& p : pending_) unwritten += p.records;
  unwritten += chunk_records_;
  records_written_ -= std::min(unwritten, records_written_);
  dropped_after_failure_ += unwritten;
  pending_.clear();
  pending_bytes_ = 0;
  chunk_.clear();
  chunk_records_ = 0;
  throw WriteError("rfprof: cannot write trace " + part_path_.string() + ": " + errno_text(err) +
                   "; the trace keeps what was written before");
}

void Writer::flush(std::optional<std::chrono::nanoseconds> buffer_wait) {
  ThreadSignalsBlocked quiet(options_.signals_blocked_while_locked);
  (void)collect_locked_buffers(/*apply_bound=*/false, buffer_wait);  // written just below
  std::unique_lock lock(mutex_);
  std::vector<Pending> batch = take_pending_locked();
  if (batch.empty()) return;
  // Taken before mutex_ is released: batches keep their order. Not behind a stalled write: the
  // batch waits again, first, and appending threads are not held up by this thread's wait.
  std::unique_lock io(io_mutex_, std::defer_lock);
  if (!lock_io_unless_stalled(io)) {
    for (const Pending& p : batch) pending_bytes_ += p.body.capacity();
    batch.insert(batch.end(), std::make_move_iterator(pending_.begin()), std::make_move_iterator(pending_.end()));
    pending_.swap(batch);  // pending_ was empty: mutex_ was held since the batch was taken
    return;
  }
  const int fd = fd_;
  lock.unlock();  // appending threads go on while this thread writes
  uint64_t unwritten = 0;
  const int err = write_batch_locked(fd, batch, unwritten);
  io.unlock();
  lock.lock();
  if (err) fail_locked(err, unwritten);
  return_spares_locked(batch);
}

std::vector<Writer::Pending> Writer::take_pending_locked() {
  std::vector<Pending> batch;
  if (fd_ < 0) return batch;
  close_chunk_locked();
  batch.swap(pending_);
  pending_bytes_ = 0;
  pending_.reserve(options_.max_pending_chunks + 2);
  return batch;
}

void Writer::flush_locked() {
  std::vector<Pending> batch = take_pending_locked();
  if (batch.empty()) return;
  std::unique_lock io(io_mutex_);
  write_taken_locked(batch, io);
}

void Writer::write_taken_locked(std::vector<Pending>& batch, std::unique_lock<std::mutex>& io) {
  uint64_t unwritten = 0;
  const int err = write_batch_locked(fd_, batch, unwritten);
  io.unlock();
  if (err) fail_locked(err, unwritten);
  return_spares_locked(batch);
}

}  // namespace rf::trace
