// Writer behaviour: no silent overwrite, .part until finished, a killed writer leaves a readable
// prefix, concurrent appends are neither lost nor torn.
#include <gtest/gtest.h>
#include <csignal>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <future>
#include <random>
#include <thread>

#include "rfprof/trace/reader.h"
#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::readable_launches;
using testing::TempDir;

TEST(TraceWriter, RefusesToOverwriteWithoutForce) {
  TempDir dir;
  auto p = dir.path / "t.rftrace";
  { Writer w(p); }
  ASSERT_TRUE(std::filesystem::exists(p));
  EXPECT_THROW(Writer w(p), WriteError);
  EXPECT_NO_THROW(Writer w(p, {.force_overwrite = true}));
}

// Two processes given one name: the second finds the first's .part locked and refuses with
// TraceInUseError, leaving the first's records intact, even with -f (which once truncated it:
// 24 processes under RFPROF_OUTPUT=r_%i with -f kept 23 traces). A .part nothing holds is a
// killed run's: a WriteError that is not TraceInUseError, and -f replaces it.
TEST(TraceWriter, APartFileOfALiveWriterIsNeverTruncated) {
  TempDir dir;
  auto p = dir.path / "t.rftrace";
  auto first = std::make_unique<Writer>(p);
  first->append(ProcessInfo{});
  first->flush();
  const auto part = std::filesystem::path(p.string() + ".part");
  const auto size = std::filesystem::file_size(part);
  ASSERT_GT(size, 16u);
  for (const bool force : {false, true}) {
    try {
      Writer second(p, {.force_overwrite = force});
      FAIL() << "no error, force " << force;
    } catch (const TraceInUseError& e) {
      EXPECT_EQ(std::string(e.what()), "rfprof: trace " + part.string() + " is being written by another process");
    }
    EXPECT_EQ(std::filesystem::file_size(part), size) << "force " << force;
  }
  first->finish();
  first.reset();
  {  // the first trace is whole: its ProcessInfo, then the TraceEnd
    Reader r(p);
    Record rec;
    ASSERT_TRUE(r.next(rec));
    EXPECT_TRUE(std::holds_alternative<ProcessInfo>(rec));
    ASSERT_TRUE(r.next(rec));
    EXPECT_TRUE(std::holds_alternative<TraceEnd>(rec));
    EXPECT_FALSE(r.next(rec));
    EXPECT_FALSE(r.truncated());
  }
  std::filesystem::rename(p, part);  // a killed run's .part: nothing holds it
  try {
    Writer stale(p);
    FAIL() << "no error";
  } catch (const TraceInUseError& e) {
    FAIL() << "a stale .part taken for a live one: " << e.what();
  } catch (const WriteError& e) {
    EXPECT_NE(std::string(e.what()).find(part.string() + " exists (a killed run left it)"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(Writer forced(p, {.force_overwrite = true}));
}

// A .part shorter than the file header whose lock nobody holds is a writer between creating it
// and locking it, not a killed run's (which always holds its header): in use, so that writer is
// not taken for dead (a review delayed flock and got "a killed run left it" from a live writer).
TEST(TraceWriter, APartShorterThanItsHeaderIsAWriterStartingNotAKilledRun) {
  TempDir dir;
  auto p = dir.path / "t.rftrace";
  const auto part = std::filesystem::path(p.string() + ".part");
  { std::ofstream(part) << "RFP"; }
  EXPECT_THROW(Writer w(p), TraceInUseError);
  EXPECT_EQ(std::filesystem::file_size(part), 3u);
  std::filesystem::resize_file(part, 16);  // a header's length: a killed run's
  EXPECT_THROW(
      {
        try {
          Writer w(p);
        } catch (const TraceInUseError&) {
          ADD_FAILURE() << "taken for live";
          throw WriteError("");
        }
      },
      TraceExistsError);
}

// A child forked without exec shares the .part's open file, and with it the lock: once it closes
// its descriptor (Writer::abandon_in_forked_child, the collector's fork handler), a parent killed
// while the child lives on leaves a .part -f may replace. Before, the sleeping child kept it
// locked and a forced rerun got "being written by another process".
TEST(TraceWriter, AForkedChildDoesNotKeepAKilledParentsPartLocked) {
  TempDir dir;
  auto p = dir.path / "t.rftrace";
  std::fflush(nullptr);
  const pid_t app = ::fork();
  if (app == 0) {
    Writer w(p);
    w.append(ProcessInfo{});
    w.flush();
    if (::fork() == 0) {  // a DataLoader worker: lives on after the application dies
      w.abandon_in_forked_child();
      ::sleep(3);
      ::_exit(0);
    }
    ::_exit(0);  // killed: no finish, the kernel closes its descriptors
  }
  int status = 0;
  ASSERT_EQ(::waitpid(app, &status, 0), app);
  ASSERT_TRUE(std::filesystem::exists(p.string() + ".part"));
  EXPECT_NO_THROW(Writer forced(p, {.force_overwrite = true}));  // the worker still sleeps
}

TEST(TraceWriter, UnwritableDirectoryIsAWriteErrorNamingThePath) {
  try {
    Writer w("/nonexistent-dir/x.rftrace");
    FAIL();
  } catch (const WriteError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x.rftrace.part"), std::string::npos);
  }
}

TEST(TraceWriter, KilledWriterLeavesReadablePartFile) {
  TempDir dir;
  auto p = dir.path / "k.rftrace";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Writer w(p, {.chunk_bytes = 1u << 20});
    testing::write_sample(w, 20);
    w.flush();
    testing::write_sample(w, 3);  // still in memory when the process dies
    _exit(0);                      // no finish(), no destructors: like SIGKILL
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_FALSE(std::filesystem::exists(p));
  Reader r(p.string() + ".part");
  Record rec;
  int kernels = 0;
  while (r.next(rec)) kernels += std::holds_alternative<KernelActivity>(rec);
  EXPECT_TRUE(r.truncated());
  EXPECT_EQ(kernels, 20);
}

/// A writer child appends kernels numbered 1, 2, 3, ... (through its thread buffer when
/// `buffered`, as the launch path does) and flushes every 50 (as the session's flush thread does
/// every RFPROF_FLUSH_MS), telling the parent each flushed count through a pipe; the parent
/// SIGKILLs it after a seeded random delay. Afterwards every kernel up to the last flush reported
/// must be in the .part, in order, and the trace must read as truncated.
void sigkill_at_random_points(bool buffered) {
  std::mt19937 rng(buffered ? 20261123 : 20261122);
  std::uniform_int_distribution<int> delay_us(1000, 40000);
  for (int run = 0; run < 8; ++run) {
    TempDir dir;
    auto p = dir.path / "k.rftrace";
    int pipefd[2];
    ASSERT_EQ(::pipe(pipefd), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      ::close(pipefd[0]);
      Writer w(p, {.chunk_bytes = 1u << 16});
      const uint32_t opened = 0;  // the .part exists: the random delay starts now
      (void)!::write(pipefd[1], &opened, sizeof opened);
      for (uint32_t corr = 1;; ++corr) {
        KernelActivity k;
        k.correlation_id = corr;
        k.start_ns = corr;
        k.end_ns = corr + 1;
        if (buffered)
          w.append_buffered(k);
        else
          w.append(k);
        if (corr % 50 == 0) {
          w.flush();
          (void)!::write(pipefd[1], &corr, sizeof corr);
        }
      }
    }
    ::close(pipefd[1]);
    // Killed before the writer opened its file, the child would leave nothing to check (seen on
    // a loaded machine): the delay counts from the child's first report.
    uint32_t flushed = 0, value = 0;
    ASSERT_EQ(::read(pipefd[0], &value, sizeof value), static_cast<ssize_t>(sizeof value));
    ::usleep(static_cast<useconds_t>(delay_us(rng)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    while (::read(pipefd[0], &value, sizeof value) == static_cast<ssize_t>(sizeof value)) flushed = value;
    ::close(pipefd[0]);
    SCOPED_TRACE("run " + std::to_string(run) + ", last flush reported at kernel " + std::to_string(flushed));
    ASSERT_TRUE(std::filesystem::exists(p.string() + ".part"));
    Reader r(p.string() + ".part");
    Record rec;
    uint32_t expected = 1;
    while (r.next(rec))
      if (auto* k = std::get_if<KernelActivity>(&rec)) {
        ASSERT_EQ(k->correlation_id, expected);  // nothing lost, torn or reordered
        ++expected;
      }
    EXPECT_TRUE(r.truncated());
    EXPECT_GE(expected - 1, flushed);  // every record older than the last flush is there
  }
}

TEST(TraceWriter, SigkillAtRandomPointsKeepsEverythingFlushed) { sigkill_at_random_points(false); }

TEST(TraceWriter, SigkillAtRandomPointsKeepsEveryBufferedRecordFlushed) {
  sigkill_at_random_points(true);
}

/// Whether `sig` is blocked on the calling thread.
bool blocked_here(int sig) {
  sigset_t now;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return ::sigismember(&now, sig) == 1;
}

// The collector names the signals whose handler finishes the trace: the writer blocks them while
// a thread holds its shared lock and restores the thread's mask after; nested guards leave the
// mask to the outermost (signal_finish_helper's held-lock shows why: tests/collector).
TEST(TraceWriter, SignalsNamedInTheOptionsAreBlockedWhileTheLockIsHeld) {
  ASSERT_FALSE(blocked_here(SIGUSR2));
  {
    ThreadSignalsBlocked outer({SIGUSR2});
    EXPECT_TRUE(blocked_here(SIGUSR2));
    {
      ThreadSignalsBlocked inner({SIGUSR2});
      EXPECT_TRUE(blocked_here(SIGUSR2));
    }
    EXPECT_TRUE(blocked_here(SIGUSR2)) << "the inner guard restored the mask the outer one set";
  }
  EXPECT_FALSE(blocked_here(SIGUSR2));
  TempDir dir;
  Writer w(dir.path / "t.rftrace", {.signals_blocked_while_locked = {SIGUSR2}});
  bool inside = false;
  w.with_shared_lock_held([&] { inside = blocked_here(SIGUSR2); });
  EXPECT_TRUE(inside);
  EXPECT_FALSE(blocked_here(SIGUSR2));
  w.append(KernelActivity{});
  EXPECT_FALSE(blocked_here(SIGUSR2));
  Writer plain(dir.path / "u.rftrace");
  plain.with_shared_lock_held([&] { inside = blocked_here(SIGUSR2); });
  EXPECT_FALSE(inside);
  w.finish();
  plain.finish();
}

/// A thread stopped while it holds its own buffer (a fatal signal's handler runs on it, waiting
/// for the trace to be finished): flush() with a buffer wait skips that buffer for a later flush,
/// and under bound_buffer_waits() a window's close and finish() go on without it, counting it,
/// instead of waiting forever.
TEST(TraceWriter, ABufferHeldByAStoppedThreadDoesNotStopFlushOrFinish) {
  using namespace std::chrono_literals;
  TempDir dir;
  auto p = dir.path / "held.rftrace";
  Writer w(p);
  KernelActivity mine;
  mine.correlation_id = 1;
  w.append_buffered(mine);
  std::promise<void> holding, release;
  std::shared_future<void> released = release.get_future().share();
  std::thread stopped([&, released] {
    KernelActivity theirs;
    theirs.correlation_id = 2;
    w.append_buffered(theirs);
    w.with_thread_buffer_locked([&] {
      holding.set_value();
      (void)released.wait_for(10s);  // a finish() that waited for it fails below, not hangs
    });
  });
  holding.get_future().wait();
  const auto t0 = std::chrono::steady_clock::now();
  w.flush(50ms);  // skips the held buffer (for a later flush); mine reaches the file
  EXPECT_EQ(w.buffers_left_out(), 0u);
  w.bound_buffer_waits(50ms);  // what a fatal signal's finish does first
  w.append(ProfilingWindow{1, false, 5, 0});  // a window's close collects the buffers: skips it
  w.finish();
  const auto waited = std::chrono::steady_clock::now() - t0;
  release.set_value();
  stopped.join();
  EXPECT_LT(waited, 5s);
  EXPECT_EQ(w.buffers_left_out(), 2u);  // skipped at the window's close and at finish()
  ASSERT_TRUE(std::filesystem::exists(p));  // finished: renamed, not left as .part
  Reader r(p);
  Record rec;
  std::vector<uint32_t> kernels;
  bool ended = false;
  while (r.next(rec)) {
    if (auto* k = std::get_if<KernelActivity>(&rec)) kernels.push_back(k->correlation_id);
    ended = ended || std::holds_alternative<TraceEnd>(rec);
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_TRUE(ended);
  EXPECT_EQ(kernels, std::vector<uint32_t>{1});  // the held buffer's record is the one left out
}

/// Without a buffer wait, finish() waits for a held buffer and keeps its records.
TEST(TraceWriter, FinishWithoutABufferWaitKeepsAHeldBuffersRecords) {
  using namespace std::chrono_literals;
  TempDir dir;
  auto p = dir.path / "wait.rftrace";
  Writer w(p);
  std::promise<void> holding;
  std::thread owner([&] {
    KernelActivity k;
    k.correlation_id = 7;
    w.append_buffered(k);
    w.with_thread_buffer_locked([&] {
      holding.set_value();
      std::this_thread::sleep_for(100ms);
    });
  });
  holding.get_future().wait();
  w.finish();
  owner.join();
  EXPECT_EQ(w.buffers_left_out(), 0u);
  Reader r(p);
  Record rec;
  int kernels = 0;
  while (r.next(rec)) kernels += std::holds_alternative<KernelActivity>(rec);
  EXPECT_EQ(kernels, 1);
}

/// A file size limit (RLIMIT_FSIZE, SIGXFSZ ignored) makes write() fail with EFBIG as a full
/// disk fails with ENOSPC: the writer throws once, stops, and the chunks before stay readable.
/// `buffered`: the kernels go through the appending thread's buffer (append_buffered).
void full_disk_stops_writing(bool buffered) {
  TempDir dir;
  auto p = dir.path / "full.rftrace";
  int pipefd[2];
  ASSERT_EQ(::pipe(pipefd), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::close(pipefd[0]);
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim {64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    Writer w(p, {.chunk_bytes = 4096, .thread_buffer_bytes = 4096});
    int errors = 0, after = 0;
    for (int i = 0; i < 2000; ++i) {
      try {
        if (buffered) {
          KernelActivity k;
          k.correlation_id = static_cast<uint32_t>(i + 1);
          for (int j = 0; j < 8; ++j) w.append_buffered(k);
        } else {
          testing::write_sample(w, 1);
        }
      } catch (const WriteError&) {
        ++errors;
      }
      if (errors) ++after;
    }
    try {
      w.finish();
    } catch (const WriteError&) {
      ++errors;
    }
    // Nothing more is buffered after the failure: every later append was dropped and counted.
    if (w.dropped_after_failure() < static_cast<uint64_t>(after) - 1) errors += 100;
    const int result[2] = {errors, after};
    (void)!::write(pipefd[1], result, sizeof result);
    _exit(0);
  }
  ::close(pipefd[1]);
  int result[2] = {-1, -1};
  ASSERT_EQ(::read(pipefd[0], result, sizeof result), static_cast<ssize_t>(sizeof result));
  ::close(pipefd[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));  // not killed by SIGXFSZ: the process goes on
  EXPECT_EQ(result[0], 1) << "one WriteError, then silence";
  EXPECT_GT(result[1], 100) << "appends after the failure are accepted and dropped";
  ASSERT_TRUE(std::filesystem::exists(p.string() + ".part"));
  EXPECT_LE(std::filesystem::file_size(p.string() + ".part"), 64u * 1024);
  Reader r(p.string() + ".part");
  Record rec;
  int kernels = 0;
  while (r.next(rec)) kernels += std::holds_alternative<KernelActivity>(rec);
  EXPECT_TRUE(r.truncated());
  EXPECT_GT(kernels, 10);  // the chunks written before the limit
}

TEST(TraceWriter, FullDiskStopsWritingAndKeepsWhatWasWritten) { full_disk_stops_writing(false); }

TEST(TraceWriter, FullDiskStopsBufferedWritingAndKeepsWhatWasWritten) { full_disk_stops_writing(true); }

/// Reads a finished trace of LaunchApi records written by `threads` threads, `per_thread` each
/// (thread_id = thread, launch_index = 0, 1, ..., kernel "k<index % names>"), and checks that
/// every one is there once, in order per thread, untorn.
/// `threads` threads each append `per_thread` LaunchApi records (thread_id = t, launch_index = i,
/// kernel name "k<i % names>", interned concurrently); returns once all have joined.
/// `buffered`: through each thread's buffer and intern cache, as the launch path writes.
void append_launches_concurrently(Writer& w, int threads, int per_thread, int names, bool buffered = false) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int i = 0; i < per_thread; ++i) {
        LaunchApi l;
        l.thread_id = static_cast<uint64_t>(t);
        l.launch_index = static_cast<uint64_t>(i);
        const std::string name = "k" + std::to_string(i % names);
        if (buffered) {
          l.kernel_name = w.intern_cached(name);
          w.append_buffered(l);
        } else {
          l.kernel_name = w.intern(name);
          w.append(l);
        }
      }
    });
  for (auto& th : pool) th.join();
}

void expect_launches_in_order(const std::filesystem::path& p, int threads, int per_thread, int names) {
  Reader r(p);
  Record rec;
  std::vector<int64_t> last(static_cast<size_t>(threads), -1);
  int total = 0;
  while (r.next(rec)) {
    if (auto* l = std::get_if<LaunchApi>(&rec)) {
      ASSERT_LT(l->thread_id, static_cast<uint64_t>(threads));
      EXPECT_EQ(static_cast<int64_t>(l->launch_index), last[l->thread_id] + 1);
      last[l->thread_id] = static_cast<int64_t>(l->launch_index);
      EXPECT_EQ(r.string(l->kernel_name), "k" + std::to_string(l->launch_index % static_cast<uint64_t>(names)));
      ++total;
    }
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(total, threads * per_thread);
}

TEST(TraceWriter, ConcurrentAppendsAreAllReadBackInOrderPerThread) {
  TempDir dir;
  auto p = dir.path / "c.rftrace";
  constexpr int kThreads = 8, kPerThread = 5000;
  {
    Writer w(p, {.chunk_bytes = 4096});
    append_launches_concurrently(w, kThreads, kPerThread, 7);
    w.finish();
  }
  expect_launches_in_order(p, kThreads, kPerThread, 7);
}

TEST(TraceWriter, WaitingChunksAreWrittenByFlushNotByTheAppendingThread) {
  TempDir dir;
  auto p = dir.path / "w.rftrace";
  const std::string part = p.string() + ".part";
  int woken = 0;
  Writer w(p, {.chunk_bytes = 1024, .max_pending_chunks = 4, .on_chunk_pending = [&] { ++woken; }});
  auto append = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      LaunchApi l;
      l.launch_index = static_cast<uint64_t>(i);
      w.append(l);
    }
  };
  append(0, 40);  // 40 launches of 90 bytes: 3 full chunks of 12 wait, 4 launches in the open one
  EXPECT_EQ(std::filesystem::file_size(part), 16u) << "only the file header: the appending thread wrote nothing";
  EXPECT_EQ(woken, 1) << "the owner is woken when the first chunk starts waiting";
  w.flush();
  EXPECT_EQ(readable_launches(part), 40);
  append(40, 200);  // past 4 waiting chunks the appending thread writes them itself
  EXPECT_GT(readable_launches(part), 40) << "bounded: the fifth full chunk was written inline";
  EXPECT_GE(woken, 2);
  w.finish();
  Reader r(p);
  Record rec;
  uint64_t next = 0;
  while (r.next(rec)) {
    if (auto* l = std::get_if<LaunchApi>(&rec)) {
      EXPECT_EQ(l->launch_index, next++);
    }
  }
  EXPECT_EQ(next, 200u);
  EXPECT_FALSE(r.truncated());
}

TEST(TraceWriter, FlushThreadAndAppendingThreadsKeepEveryRecordInOrder) {
  TempDir dir;
  auto p = dir.path / "f.rftrace";
  constexpr int kThreads = 6, kPerThread = 6000;
  {
    Writer w(p, {.chunk_bytes = 2048, .max_pending_chunks = 3});
    std::atomic<bool> stop{false};
    std::thread flusher([&] {
      while (!stop.load()) w.flush();
    });
    append_launches_concurrently(w, kThreads, kPerThread, 5);
    stop = true;
    flusher.join();
    w.finish();
  }
  expect_launches_in_order(p, kThreads, kPerThread, 5);
}

TEST(TraceWriter, BufferedAppendsOfManyThreadsWithAFlushThreadKeepEveryRecordInOrder) {
  // The launch path: every thread appends through its own buffer and interns through its own
  // cache while the flush thread collects. The reader checks that each StringDef precedes its use.
  TempDir dir;
  auto p = dir.path / "b.rftrace";
  constexpr int kThreads = 8, kPerThread = 6000;
  {
    Writer w(p, {.chunk_bytes = 2048, .max_pending_chunks = 3, .thread_buffer_bytes = 1024});
    std::atomic<bool> stop{false};
    std::thread flusher([&] {
      while (!stop.load()) w.flush();
    });
    append_launches_concurrently(w, kThreads, kPerThread, 11, /*buffered=*/true);
    stop = true;
    flusher.join();
    w.finish();  // collects what is still in the threads' buffers
  }
  expect_launches_in_order(p, kThreads, kPerThread, 11);
}

TEST(TraceWriter, BufferedRecordsWaitInTheirThreadUntilFlushCloseOrAFullBuffer) {
  TempDir dir;
  auto p = dir.path / "t.rftrace";
  const std::string part = p.string() + ".part";
  int woken = 0;
  Writer w(p, {.max_pending_chunks = 4, .on_chunk_pending = [&] { ++woken; }, .thread_buffer_bytes = 2048});
  uint64_t next = 0;
  auto launch = [&](int n) {
    for (int i = 0; i < n; ++i) {
      LaunchApi l;
      l.launch_index = next++;
      l.kernel_name = w.intern_cached("k");
      w.append_buffered(l);
    }
  };
  launch(10);
  EXPECT_EQ(w.records_written(), 1u) << "only the StringDef is in the ordered stream";
  w.flush();
  EXPECT_EQ(readable_launches(part), 10) << "flush collects the thread's buffer";
  EXPECT_EQ(woken, 0);

  // A window's close collects every thread's buffer first, even one of another thread.
  std::thread other([&] { launch(5); });
  other.join();
  w.append(ProfilingWindow{0, false, 7, 0});
  w.flush();
  {
    Reader r(part);
    Record rec;
    uint64_t seen = 0;
    bool closed = false;
    while (r.next(rec)) {
      if (std::holds_alternative<LaunchApi>(rec)) {
        EXPECT_FALSE(closed) << "a launch appended before the close follows it";
        ++seen;
      }
      closed = closed || std::holds_alternative<ProfilingWindow>(rec);
    }
    EXPECT_EQ(seen, 15u);
    EXPECT_TRUE(closed);
  }
  // A full buffer joins the ordered stream by itself and wakes the flush thread once.
  const uint64_t before = w.records_written();
  launch(40);  // 40 launches of about 90 bytes: past the 2048-byte buffer
  EXPECT_GT(w.records_written(), before);
  EXPECT_EQ(woken, 1);
  EXPECT_EQ(readable_launches(part), 15) << "the appending thread wrote nothing itself";
  w.finish();
  Reader r(p);
  Record rec;
  uint64_t expected = 0;
  while (r.next(rec))
    if (auto* l = std::get_if<LaunchApi>(&rec)) {
      if (expected == 10) expected = 15;  // the other thread's five carry indices 10..14
      EXPECT_TRUE(l->launch_index == expected || (l->launch_index >= 10 && l->launch_index < 15));
      if (l->launch_index == expected) ++expected;
    }
  EXPECT_EQ(expected, 55u);
  EXPECT_FALSE(r.truncated());
}

}  // namespace
}  // namespace rf::trace
