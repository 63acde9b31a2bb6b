// The collector session on the fake CUPTI when its trace file stops taking writes (an NFS mount
// that stopped answering; here a FIFO as the `.part` that nobody reads, as in
// tests/trace/test_writer_pipe.cpp): the flush thread is stuck in its write for good. The
// application's launches (and CUPTI's thread) must not wait for it, and neither may its exit
// (docs/failure-modes.md).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "fake_session.h"
#include "session_impl.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// The writer keeps at most 8 MiB waiting for a stalled file, then drops: 200,000 launches through
/// the session's callback alone (DirectLaunch, about 70 bytes of trace each: 14 MB, well past it),
/// and 2,000 through the fake with their kernel records, which CUPTI's thread (here the activity
/// flush thread) writes while the file stalls.
constexpr int kDirectLaunches = 200000;
constexpr int kKernels = 2000;

/// The application's launches: kDirectLaunches of _Z4gemmPKfS0_Pf, one of _Z1kv with its kernel
/// record every 100th.
void launch_all(CUcontext ctx) {
  DirectLaunch direct(ctx, "_Z4gemmPKfS0_Pf", 1, 128);
  if (!direct.ok()) std::_Exit(7);
  for (uint32_t i = 0; i < kDirectLaunches; ++i) {
    direct(1000000 + i);  // ids apart from the fake's own (1, 2, ...)
    if (i % (kDirectLaunches / kKernels) == 0) launch({ctx, "_Z1kv"});
  }
}

/// The number after "`key`" in `err` (-1 when absent).
long long number_after(const std::string& err, const std::string& key) {
  const size_t at = err.find(key);
  return at == std::string::npos ? -1 : std::atoll(err.c_str() + at + key.size());
}

/// Fills the pipe `fd` (non-blocking) with chunk headers of no record, which a reader skips: what
/// the pipe gives later is still a trace (its file header came first).
void fill_with_empty_chunks(int fd) {
  char page[4096];
  const uint32_t empty[4] = {0x4B434652u, 0, 0, 0};  // "RFCK", 0 bytes, 0 records, flags 0
  for (size_t at = 0; at < sizeof page; at += sizeof empty) std::memcpy(page + at, empty, sizeof empty);
  while (::write(fd, page, sizeof page) > 0) {
  }
  while (::write(fd, page, sizeof empty) > 0) {
  }
}

/// Opens `<trace_>.part`, a FIFO the test made, at both ends (non-blocking), so that the session's
/// open succeeds; the test's reader never reads.
struct StalledPart {
  int rd = -1, wr = -1;
  explicit StalledPart(const std::string& part) {
    rd = ::open(part.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    wr = ::open(part.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  }
  bool ok() const { return rd >= 0 && wr >= 0; }
};

// A review: the flush thread stuck in writev held the writer's file lock, and past the writer's
// bound (8 chunks) each launch waited for it: launches stalled (CUPTI's buffer thread too, holding
// the session's activity lock), and exit() never returned, its handler waiting in the same write.
// Now the launches go on at full speed (what passes 8 MiB is dropped and counted, one line says
// so), and the exit waits at most Session::kExitWriteStall for the write before it goes on without
// the trace's end (one more line, with the count): the `.part` is left.
TEST_F(FakeDriverTest, AStalledTraceFileStallsNeitherTheLaunchesNorTheExit) {
  const std::string part = trace_.string() + ".part";
  ASSERT_EQ(::mkfifo(part.c_str(), 0600), 0);
  auto o = options(CollectionMode::kTiming);
  o.force_overwrite = true;  // takes the FIFO as its .part
  const auto began = std::chrono::steady_clock::now();
  const Child c = run_child(
      [&] {
        StalledPart pipe(part);
        if (!pipe.ok()) std::_Exit(6);
        if (!load_fake_driver(RF_FAKE_LIBCUDA)) std::_Exit(4);
        if (!collector::start_session(o)) std::_Exit(3);
        CUcontext ctx = create_context(1);
        fill_with_empty_chunks(pipe.wr);  // from here on every write to the .part blocks
        const auto t0 = std::chrono::steady_clock::now();
        launch_all(ctx);
        std::fprintf(stderr, "launches took %lld ms\n",
                     static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::steady_clock::now() - t0)
                                                .count()));
      },
      std::chrono::seconds(40));
  const auto took = std::chrono::steady_clock::now() - began;
  ASSERT_TRUE(c.exited_zero()) << "status " << c.status << " (-1: hung, killed at 40 s): " << c.err;
  const long long launch_ms = number_after(c.err, "launches took ");
  EXPECT_GE(launch_ms, 0) << c.err;
  EXPECT_LT(launch_ms, 10000) << "the launches waited for the stalled file";  // 0.5 s here
  // The exit: the deadline, plus the launches and some slack for a loaded machine.
  EXPECT_LT(took, collector::Session::kExitWriteStall + std::chrono::milliseconds(launch_ms) + std::chrono::seconds(8));
  EXPECT_EQ(rfprof_lines(c.err), 2u) << c.err;
  EXPECT_NE(c.err.find("rfprof: the trace file " + part + " is not keeping up"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("rfprof: a write to the trace file " + part + " has not returned for "), std::string::npos)
      << c.err;
  EXPECT_GT(number_after(c.err, "there, with what reached it ("), 0) << "records dropped: " << c.err;
  EXPECT_FALSE(std::filesystem::exists(trace_)) << "left as the .part";
}

// The same stall, over before the exit: the trace is finished as usual and reads whole. The
// records dropped while the file stalled are counted in TraceEnd's dropped_records; the
// StringDefs of the dropped chunks were kept (the kernel name of every launch kept is there, or
// reading would throw); one rfprof: line. The test's own thread reads the pipe once the child's
// launches are done, into a file.
TEST_F(FakeDriverTest, RecordsDroppedWhileTheTraceFileStalledAreCountedInTheTraceEnd) {
  const std::string part = trace_.string() + ".part";
  ASSERT_EQ(::mkfifo(part.c_str(), 0600), 0);
  const int rd = ::open(part.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  ASSERT_GE(rd, 0);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const std::filesystem::path copy = dir_ / "copy.rftrace";
  std::thread reader([&] {
    char byte = 0;
    (void)!::read(ready[0], &byte, 1);  // the launches are done (or the child is gone)
    (void)::fcntl(rd, F_SETFL, ::fcntl(rd, F_GETFL) & ~O_NONBLOCK);
    std::ofstream out(copy, std::ios::binary);
    char buf[65536];
    for (ssize_t n; (n = ::read(rd, buf, sizeof buf)) != 0;) {
      if (n > 0) out.write(buf, n);
      else if (errno != EINTR) break;
    }
  });
  auto o = options(CollectionMode::kTiming);
  o.force_overwrite = true;
  // The flush threads write only when a chunk is full, never while the pipe is being filled (a
  // write then could interleave with the filling ones: not a trace).
  o.flush_ms = 60000;
  const Child c = run_child(
      [&] {
        const int wr = ::open(part.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (wr < 0) std::_Exit(6);
        if (!load_fake_driver(RF_FAKE_LIBCUDA)) std::_Exit(4);
        if (!collector::start_session(o)) std::_Exit(3);
        CUcontext ctx = create_context(1);
        fill_with_empty_chunks(wr);
        ::close(wr);  // the session's own descriptor keeps the pipe open
        launch_all(ctx);
        (void)!::write(ready[1], "x", 1);  // the test reads the pipe from now on
      },
      std::chrono::seconds(40));
  ::close(ready[1]);  // a child that never said so: the reader stops waiting
  reader.join();
  ::close(ready[0]);
  ::close(rd);
  ASSERT_TRUE(c.exited_zero()) << c.status << ": " << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("is not keeping up"), std::string::npos) << c.err;
  const Trace t = read_trace(copy);
  EXPECT_FALSE(t.truncated);
  const auto ends = t.all<trace::TraceEnd>();
  ASSERT_EQ(ends.size(), 1u);
  const size_t kept = t.all<trace::LaunchApi>().size();
  EXPECT_GT(ends[0].dropped_records, 0u);
  EXPECT_LT(kept, static_cast<size_t>(kDirectLaunches));
  EXPECT_GT(kept, 0u);
  for (const auto& l : t.all<trace::LaunchApi>()) {
    const std::string& name = t.str(l.kernel_name);
    ASSERT_TRUE(name == "_Z4gemmPKfS0_Pf" || name == "_Z1kv") << name;
  }
  EXPECT_FALSE(t.all<trace::KernelActivity>().empty());
}

}  // namespace
}  // namespace rf::fake_cupti
