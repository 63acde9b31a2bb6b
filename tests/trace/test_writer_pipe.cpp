// The writer on a file whose writes block (a FIFO as the .part, as a trace on a stalled NFS mount
// or named as a pipe): a write interrupted by a signal is retried, chunks reach the file in
// the order they were closed (docs/trace-format.md), an appending thread never waits for a write
// that does not return (past the bound it drops the oldest chunks), and a pipe whose reader left
// is a WriteError, not SIGPIPE. The tests read each thread's state from /proc/self/task/*/syscall
// and skip where it cannot be read.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <future>
#include <optional>
#include <thread>

#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::launch;
using testing::TempDir;

/// The system call thread `tid` of this process is blocked in; -1 while it runs ("running").
long blocked_in_syscall(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/syscall");
  long nr = -1;
  return in >> nr ? nr : -1;
}

pid_t this_thread_id() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

/// Polls `ready` (no sleep: a thread's state is what is waited for); false after 30 s, so that a
/// writer that never blocks fails the test instead of hanging it.
bool wait_until(const std::function<bool()>& ready) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!ready()) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::yield();
  }
  return true;
}

/// A FIFO at `<path>.part`, which a Writer given force_overwrite opens as its file: once fill()ed,
/// each write into it blocks, without writing a byte, until drain().
class PipeFile {
 public:
  explicit PipeFile(const std::filesystem::path& path) {
    const std::string part = path.string() + ".part";
    if (::mkfifo(part.c_str(), 0600) != 0) return;
    read_ = ::open(part.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    write_ = ::open(part.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  }
  ~PipeFile() {
    if (read_ >= 0) ::close(read_);
    if (write_ >= 0) ::close(write_);
  }
  bool ok() const { return read_ >= 0 && write_ >= 0; }
  /// Fills the pipe with zero bytes; `as_empty_chunks`: with chunk headers of no record instead,
  /// which a reader skips, so that what is read from the pipe is still a trace (drain_into).
  void fill(bool as_empty_chunks = false) {
    char page[4096] = {};
    const uint32_t empty[4] = {0x4B434652u, 0, 0, 0};  // "RFCK", 0 bytes, 0 records, flags 0
    if (as_empty_chunks)
      for (size_t at = 0; at < sizeof page; at += sizeof empty) std::memcpy(page + at, empty, sizeof empty);
    while (::write(write_, page, sizeof page) > 0) {
    }
    const size_t unit = as_empty_chunks ? sizeof empty : 1;
    while (::write(write_, page, unit) > 0) {  // a page the last write left part-empty
    }
  }
  void drain() {
    char buf[65536];
    while (::read(read_, buf, sizeof buf) > 0) {
    }
  }
  /// Closes this end for writing (the writer's own descriptor keeps the pipe open) and copies what
  /// the pipe gives to `out` on a thread, blocking, until the writer closes its end.
  std::thread drain_into(const std::filesystem::path& out) {
    if (write_ >= 0) ::close(write_);
    write_ = -1;
    if (const int flags = ::fcntl(read_, F_GETFL); flags >= 0) (void)::fcntl(read_, F_SETFL, flags & ~O_NONBLOCK);
    return std::thread([fd = read_, out] {
      std::ofstream file(out, std::ios::binary);
      char buf[65536];
      ssize_t n = 0;
      while ((n = ::read(fd, buf, sizeof buf)) != 0) {
        if (n > 0) file.write(buf, n);
        else if (errno != EINTR) break;
      }
    });
  }

 private:
  int read_ = -1, write_ = -1;
};

std::atomic<bool> g_usr1_handled{false};
extern "C" void note_usr1(int) { g_usr1_handled.store(true); }

// A write() blocked on a pipe (a trace named as a FIFO) or on NFS returns EINTR when a signal
// handler without SA_RESTART runs on its thread: the writer retries it.
TEST(WriterEdges, AWriteInterruptedByASignalIsRetried) {
  if (blocked_in_syscall(this_thread_id()) < 0) GTEST_SKIP() << "no /proc/self/task/*/syscall";
  TempDir dir;
  const auto p = dir.path / "fifo.rftrace";
  PipeFile pipe(p);
  ASSERT_TRUE(pipe.ok());
  pipe.fill();
  struct sigaction sa {}, old {};
  sa.sa_handler = note_usr1;  // sa_flags 0: no SA_RESTART
  ::sigemptyset(&sa.sa_mask);
  ASSERT_EQ(::sigaction(SIGUSR1, &sa, &old), 0);
  g_usr1_handled = false;
  std::atomic<pid_t> tid{0};
  std::atomic<bool> done{false};
  std::string error;
  std::thread writer([&] {
    tid = this_thread_id();
    try {
      Writer w(p, {.force_overwrite = true});  // the file header's write blocks: the pipe is full
      w.append(launch(0));
      w.finish();
    } catch (const WriteError& e) {
      error = e.what();
    }
    done = true;
  });
  EXPECT_TRUE(wait_until([&] { return tid != 0 && blocked_in_syscall(tid) == SYS_writev; }));
  ::pthread_kill(writer.native_handle(), SIGUSR1);
  // Once the handler has run, the write is blocked again (retried) or the writer gave up.
  EXPECT_TRUE(wait_until([&] { return g_usr1_handled && (done || blocked_in_syscall(tid) == SYS_writev); }));
  EXPECT_FALSE(done) << error;
  pipe.drain();
  writer.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(error, "");
}

// docs/trace-format.md: chunks reach the file in the order they were closed because flush() takes
// the file's lock before it releases the append lock. So while one flush's batch waits behind
// another's write (blocked on a full pipe, not yet taken for stalled: stalled_write), no appending
// thread gets the append lock, and none can close and write a later chunk ahead of that batch.
TEST(WriterEdges, AFlushWaitingForTheFileKeepsTheAppendLockSoItsBatchIsWrittenNext) {
  if (blocked_in_syscall(this_thread_id()) < 0) GTEST_SKIP() << "no /proc/self/task/*/syscall";
  TempDir dir;
  const auto p = dir.path / "order.rftrace";
  PipeFile pipe(p);
  ASSERT_TRUE(pipe.ok());
  Writer w(p, {.force_overwrite = true, .max_pending_chunks = 8, .stalled_write = std::chrono::hours(1)});
  w.append(launch(0));
  pipe.fill();
  std::atomic<pid_t> first_tid{0}, second_tid{0}, appender_tid{0};
  std::atomic<bool> appended{false};
  std::thread first([&] {
    first_tid = this_thread_id();
    w.flush();  // blocks in writev, holding the file's lock only
  });
  EXPECT_TRUE(wait_until([&] { return first_tid != 0 && blocked_in_syscall(first_tid) == SYS_writev; }));
  w.append(launch(1));
  std::thread second([&] {
    second_tid = this_thread_id();
    w.flush();  // takes launch 1's chunk, then waits for the file's lock (polling it)
  });
  EXPECT_TRUE(wait_until([&] {
    const long in = second_tid != 0 ? blocked_in_syscall(second_tid) : -1;
    return in == SYS_futex || in == SYS_clock_nanosleep || in == SYS_nanosleep;
  }));
  std::thread appender([&] {
    appender_tid = this_thread_id();
    w.with_shared_lock_held([] {});
    appended = true;
  });
  EXPECT_TRUE(wait_until(
      [&] { return appended || (appender_tid != 0 && blocked_in_syscall(appender_tid) == SYS_futex); }));
  EXPECT_FALSE(appended) << "an appending thread took the lock while a flush's batch waited";
  pipe.drain();
  first.join();
  second.join();
  appender.join();
  w.finish();
}

// A stalled file (an NFS mount that stopped answering; here a FIFO nobody reads) holds the flush
// thread in its write. Past max_pending_chunks an appending thread (the application's, CUPTI's)
// waited for that write's lock: every launch stalled with it (a review). Now it never waits (for
// more than stalled_write; with appending_threads_never_write, the collector's, not at all): once
// more than max_pending_chunks chunks' memory waits, the oldest chunks are dropped and counted,
// memory stays bounded and on_stalled runs once. The StringDefs of the dropped chunks are kept
// (the reader refuses a record whose string is undefined): once the file takes writes again, the
// trace reads whole, every launch kept names its kernel, and TraceEnd counts what was dropped.
void an_append_never_waits_for_a_stalled_write(bool never_write) {
  if (blocked_in_syscall(this_thread_id()) < 0) GTEST_SKIP() << "no /proc/self/task/*/syscall";
  TempDir dir;
  const auto p = dir.path / "stalled.rftrace";
  PipeFile pipe(p);
  ASSERT_TRUE(pipe.ok());
  constexpr uint32_t kChunk = 4096;
  std::atomic<int> said{0};
  Writer w(p, {.chunk_bytes = kChunk, .force_overwrite = true, .max_pending_chunks = 8,
               .on_stalled = [&] { ++said; }, .thread_buffer_bytes = kChunk,
               .appending_threads_never_write = never_write});
  w.append(launch(0));
  pipe.fill(/*as_empty_chunks=*/true);
  std::atomic<pid_t> flusher_tid{0};
  std::thread flusher([&] {
    flusher_tid = this_thread_id();
    w.flush();  // blocks in writev: the pipe is full and nobody reads it
  });
  EXPECT_TRUE(wait_until([&] { return flusher_tid != 0 && blocked_in_syscall(flusher_tid) == SYS_writev; }));
  constexpr int kLaunches = 20000, kNames = 3000;  // about 1 MB of records: 30 times the bound
  uint64_t most_held = 0;
  auto app = std::async(std::launch::async, [&] {
    for (int i = 1; i <= kLaunches; ++i) {
      LaunchApi l = launch(static_cast<uint64_t>(i));
      l.kernel_name = w.intern_cached("k" + std::to_string(i % kNames));  // StringDefs while stalled
      w.append_buffered(l);
      if (i % 500 == 0) most_held = std::max(most_held, w.buffer_capacity_bytes());
    }
  });
  EXPECT_EQ(app.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "an append waited for the write";
  EXPECT_EQ(said.load(), 1);
  EXPECT_GT(w.dropped_while_stalled(), 0u);
  EXPECT_LT(most_held, 512u * 1024) << "the waiting chunks, the spare bodies and the kept StringDefs";
  const auto copy = dir.path / "copy.rftrace";
  std::thread drainer = pipe.drain_into(copy);  // the file takes writes again
  app.wait();
  flusher.join();
  w.finish();
  drainer.join();
  Reader r(copy);  // throws TraceError for an undefined string id
  Record rec;
  uint64_t launches = 0;
  std::optional<TraceEnd> end;
  while (r.next(rec)) {
    if (const auto* l = std::get_if<LaunchApi>(&rec)) {
      ++launches;
      if (l->launch_index > 0) {
        EXPECT_EQ(r.string(l->kernel_name), "k" + std::to_string(l->launch_index % kNames)) << l->launch_index;
      }
    }
    if (const auto* e = std::get_if<TraceEnd>(&rec)) end = *e;
  }
  EXPECT_FALSE(r.truncated());
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->dropped_records, w.dropped_while_stalled());
  EXPECT_EQ(launches + w.dropped_while_stalled(), uint64_t{kLaunches} + 1);
  EXPECT_LT(launches, uint64_t{kLaunches} / 2);
}

TEST(WriterEdges, PastTheBoundAnAppendNeverWaitsForAStalledWriteAndDropsTheOldestChunks) {
  an_append_never_waits_for_a_stalled_write(/*never_write=*/false);
}

TEST(WriterEdges, AnAppendingThreadThatNeverWritesDropsTheOldestChunksPastTheBound) {
  an_append_never_waits_for_a_stalled_write(/*never_write=*/true);
}

// A flush behind a write that has been blocked for stalled_write (the flush thread's, on a stalled
// file) held the append lock while it waited, for good: every appending thread, and the exit's
// finish, waited with it. Now it returns without writing, its chunks waiting again ahead of any
// later one: appending goes on, and once the file takes writes the order is kept.
TEST(WriterEdges, AFlushBehindAStalledWriteReturnsAndItsChunksStayFirst) {
  if (blocked_in_syscall(this_thread_id()) < 0) GTEST_SKIP() << "no /proc/self/task/*/syscall";
  TempDir dir;
  const auto p = dir.path / "behind.rftrace";
  PipeFile pipe(p);
  ASSERT_TRUE(pipe.ok());
  Writer w(p, {.force_overwrite = true, .max_pending_chunks = 8, .stalled_write = std::chrono::milliseconds(50)});
  w.append(launch(0));
  pipe.fill(/*as_empty_chunks=*/true);
  std::atomic<pid_t> first_tid{0};
  std::thread first([&] {
    first_tid = this_thread_id();
    w.flush();  // blocks in writev
  });
  EXPECT_TRUE(wait_until([&] { return first_tid != 0 && blocked_in_syscall(first_tid) == SYS_writev; }));
  w.append(launch(1));
  auto second = std::async(std::launch::async, [&] { w.flush(); });
  EXPECT_EQ(second.wait_for(std::chrono::seconds(20)), std::future_status::ready) << "the flush waited for good";
  const auto copy = dir.path / "copy.rftrace";
  std::thread drainer = pipe.drain_into(copy);  // the file takes writes again
  second.wait();
  w.append(launch(2));
  first.join();
  w.finish();
  drainer.join();
  Reader r(copy);
  Record rec;
  std::vector<uint64_t> order;
  while (r.next(rec))
    if (const auto* l = std::get_if<LaunchApi>(&rec)) order.push_back(l->launch_index);
  EXPECT_EQ(order, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_FALSE(r.truncated());
}

// A `.part` that is a pipe whose reader left (a trace named as a FIFO whose reading process
// ended): the next write raised SIGPIPE on the writing thread, whose default action killed the
// application. It is a WriteError now, the signal neither pending nor blocked after. Exit status
// bits (a child with SIGPIPE's default action): 1 no WriteError, 2 SIGPIPE pending, 4 blocked.
TEST(WriterEdges, APipeWhoseReaderLeftIsAWriteErrorNotTheApplicationsSigpipe) {
  TempDir dir;
  const auto p = dir.path / "gone.rftrace";
  const std::string part = p.string() + ".part";
  ASSERT_EQ(::mkfifo(part.c_str(), 0600), 0);
  std::fflush(nullptr);
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    const int reader = ::open(part.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    int bits = 1;
    try {
      Writer w(p, {.chunk_bytes = 1024, .force_overwrite = true});  // inline: this thread writes
      ::close(reader);  // the reader leaves
      for (uint64_t i = 0; i < 1000 && (bits & 1); ++i) {
        try {
          w.append(launch(i));
        } catch (const WriteError&) {
          bits = 0;
        }
      }
    } catch (...) {
      _exit(99);
    }
    sigset_t pending, mask;
    ::sigpending(&pending);
    ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    if (::sigismember(&pending, SIGPIPE)) bits |= 2;
    if (::sigismember(&mask, SIGPIPE)) bits |= 4;
    _exit(bits);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

// A stale FIFO as the .part that no process reads: -f must not block the application's CUDA
// initialization in open() forever; the writer refuses it at once, naming it. A FIFO with a
// reader (the tests above) is written as usual, in blocking mode.
TEST(WriterEdges, AForcedPartThatIsAPipeNobodyReadsIsRefusedAtOnce) {
  TempDir dir;
  const auto p = dir.path / "stale.rftrace";
  ASSERT_EQ(::mkfifo((p.string() + ".part").c_str(), 0600), 0);
  auto writer = std::async(std::launch::async, [&]() -> std::string {
    try {
      Writer w(p, {.force_overwrite = true});
      return "opened";
    } catch (const WriteError& e) {
      return e.what();
    }
  });
  ASSERT_EQ(writer.wait_for(std::chrono::seconds(10)), std::future_status::ready) << "open() blocked";
  EXPECT_EQ(writer.get(), "rfprof: trace " + p.string() + ".part is a pipe that no process reads; remove it");
}

}  // namespace
}  // namespace rf::trace
