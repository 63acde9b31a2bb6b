// The writer on a file whose writes block (a FIFO as the .part, as a trace on a stalled NFS mount
// or named as a pipe): a write interrupted by a signal is retried, and chunks reach the file in
// the order they were closed (docs/trace-format.md). The tests read each thread's state from
// /proc/self/task/*/syscall and skip where it cannot be read.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <future>
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
  void fill() {
    const char page[4096] = {};
    while (::write(write_, page, sizeof page) > 0) {
    }
    while (::write(write_, page, 1) > 0) {  // a page the last write left part-empty
    }
  }
  void drain() {
    char buf[65536];
    while (::read(read_, buf, sizeof buf) > 0) {
    }
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
// another's write (blocked on a full pipe), no appending thread gets the append lock, and none can
// close and write a later chunk ahead of that batch.
TEST(WriterEdges, AFlushWaitingForTheFileKeepsTheAppendLockSoItsBatchIsWrittenNext) {
  if (blocked_in_syscall(this_thread_id()) < 0) GTEST_SKIP() << "no /proc/self/task/*/syscall";
  TempDir dir;
  const auto p = dir.path / "order.rftrace";
  PipeFile pipe(p);
  ASSERT_TRUE(pipe.ok());
  Writer w(p, {.force_overwrite = true, .max_pending_chunks = 8});
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
    w.flush();  // takes launch 1's chunk, then waits for the file's lock
  });
  EXPECT_TRUE(wait_until([&] { return second_tid != 0 && blocked_in_syscall(second_tid) == SYS_futex; }));
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
