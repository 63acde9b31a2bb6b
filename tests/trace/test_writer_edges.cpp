// The writer's edges: option bounds at their limits, when a chunk closes and who is woken, the
// file's mode and descriptor, signal masks of nested guards (docs/trace-format.md). What it drops
// and counts, and what a failed write leaves: test_writer_drops.cpp.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <functional>
#include <future>
#include <thread>

#include "rfprof/trace/reader.h"
#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::chunk_ends;
using testing::launch;
using testing::read_whole;
using testing::readable_launches;
using testing::slurp;
using testing::TempDir;
using testing::fds_naming;

/// Bytes one launch takes in a chunk (its 8-byte header included).
size_t launch_bytes() {
  std::vector<uint8_t> bytes;
  encode_record(launch(0), bytes);
  return bytes.size();
}

/// Whether `sig` is blocked on the calling thread.
bool blocked_here(int sig) {
  sigset_t now;
  ::pthread_sigmask(SIG_BLOCK, nullptr, &now);
  return ::sigismember(&now, sig) == 1;
}

TEST(WriterEdges, AChunkOfExactlyChunkBytesIsClosed) {
  TempDir dir;
  const auto p = dir.path / "exact.rftrace";
  const std::string part = p.string() + ".part";
  Writer w(p, {.chunk_bytes = static_cast<uint32_t>(10 * launch_bytes())});  // inline mode
  for (uint64_t i = 0; i < 9; ++i) w.append(launch(i));
  EXPECT_EQ(readable_launches(part), 0);
  w.append(launch(9));  // the chunk now holds chunk_bytes: closed and written at once
  EXPECT_EQ(readable_launches(part), 10);
  w.finish();
  const std::vector<size_t> ends = chunk_ends(slurp(p));
  ASSERT_EQ(ends.size(), 3u);  // header, the ten launches, TraceEnd
  EXPECT_EQ(ends[1] - ends[0], 16 + 10 * launch_bytes());
}

TEST(WriterEdges, AThreadBufferOfExactlyThreadBufferBytesJoinsTheStream) {
  TempDir dir;
  const auto p = dir.path / "exact.rftrace";
  const std::string part = p.string() + ".part";
  Writer w(p, {.thread_buffer_bytes = static_cast<uint32_t>(10 * launch_bytes())});  // inline mode
  for (uint64_t i = 0; i < 9; ++i) w.append_buffered(launch(i));
  EXPECT_EQ(w.records_written(), 0u);
  w.append_buffered(launch(9));
  EXPECT_EQ(w.records_written(), 10u);
  EXPECT_EQ(readable_launches(part), 10) << "inline mode: the full buffer is written at once";
}

// A chunk_bytes of 0 or past half the reader's 64 MiB chunk limit means the 1 MiB default: four
// 256 KiB strings fill exactly one chunk, three do not.
TEST(WriterEdges, ChunkBytesOfZeroOrAbove32MiBFallBackToExactly1MiB) {
  for (uint32_t given : {0u, (32u << 20) + 1}) {
    SCOPED_TRACE("chunk_bytes " + std::to_string(given));
    TempDir dir;
    const auto p = dir.path / "default.rftrace";
    const std::string part = p.string() + ".part";
    Writer w(p, {.chunk_bytes = given});  // inline mode: a closed chunk is written at once
    const size_t string_bytes = (256u << 10) - 16;  // a StringDef of 256 KiB with its headers
    for (char c : {'a', 'b', 'c'}) w.intern(std::string(string_bytes, c));
    EXPECT_EQ(std::filesystem::file_size(part), 16u) << "768 KiB: the chunk is still open";
    w.intern(std::string(string_bytes, 'd'));
    const std::vector<size_t> ends = chunk_ends(slurp(part));
    ASSERT_EQ(ends.size(), 2u);
    EXPECT_EQ(ends[1], 16u + 16 + (1u << 20));
  }
}

TEST(WriterEdges, ChunkBytesOfExactly32MiBIsHonoured) {
  TempDir dir;
  const auto p = dir.path / "large.rftrace";
  {
    Writer w(p, {.chunk_bytes = 32u << 20});
    w.intern(std::string(1u << 20, 'a'));
    w.intern(std::string(1u << 20, 'b'));
    w.finish();
  }
  EXPECT_EQ(chunk_ends(slurp(p)).size(), 2u) << "both 1 MiB strings and TraceEnd in one chunk";
}

// The 64 KiB default takes ceil(65536 / 90) = 729 launches of 90 bytes to fill.
TEST(WriterEdges, ThreadBufferBytesOfZeroOrAbove32MiBFallBackToExactly64KiB) {
  const size_t fill = ((64u << 10) + launch_bytes() - 1) / launch_bytes();
  for (uint32_t given : {0u, (32u << 20) + 1}) {
    SCOPED_TRACE("thread_buffer_bytes " + std::to_string(given));
    TempDir dir;
    Writer w(dir.path / "default.rftrace", {.thread_buffer_bytes = given});
    for (uint64_t i = 0; i + 1 < fill; ++i) w.append_buffered(launch(i));
    EXPECT_EQ(w.records_written(), 0u) << "the buffer holds less than 64 KiB";
    w.append_buffered(launch(fill));
    EXPECT_EQ(w.records_written(), fill) << "the buffer reached 64 KiB and joined the stream";
  }
}

TEST(WriterEdges, ThreadBufferBytesOfExactly32MiBIsHonoured) {
  TempDir dir;
  Writer w(dir.path / "large.rftrace", {.thread_buffer_bytes = 32u << 20});
  for (uint64_t i = 0; i < 2000; ++i) w.append_buffered(launch(i));  // 180 KB
  EXPECT_EQ(w.records_written(), 0u);
  w.flush();
  EXPECT_EQ(w.records_written(), 2000u);
}

// -f on a name whose stale .part (a killed run's) is longer than the new trace.
TEST(WriterEdges, ForceOverwriteTruncatesAStaleLongerPartFile) {
  TempDir dir;
  const auto p = dir.path / "stale.rftrace";
  std::ofstream(p.string() + ".part") << std::string(100000, 'x');
  {
    Writer w(p, {.force_overwrite = true});
    w.append(launch(0));
    w.finish();
  }
  const std::vector<char> bytes = slurp(p);
  EXPECT_EQ(bytes.size(), chunk_ends(bytes).back());
  EXPECT_LT(bytes.size(), 1000u);
  const testing::ReadOutcome o = read_whole(p);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_FALSE(o.truncated);
  EXPECT_EQ(o.records, 2u);
}

// -f replaces an earlier trace, never something else that has its name: a folder, a pipe, a device
// (RFPROF_OUTPUT=/dev/null with -f replaced /dev/null with a file, as root). Each is refused at once,
// naming it, and left as it was; so is a folder as the .part.
TEST(WriterEdges, ForceOverwriteReplacesOnlyFilesAndLinks) {
  TempDir dir;
  const auto folder = dir.path / "folder.rftrace";
  std::filesystem::create_directory(folder);
  const auto pipe = dir.path / "pipe.rftrace";
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0644), 0);
  const auto part_folder = dir.path / "p2.rftrace";
  std::filesystem::create_directory(part_folder.string() + ".part");
  for (const auto& [path, named] : std::vector<std::pair<std::filesystem::path, std::filesystem::path>>{
           {folder, folder}, {pipe, pipe}, {part_folder, part_folder.string() + ".part"}}) {
    try {
      Writer w(path, {.force_overwrite = true});
      ADD_FAILURE() << path << " was replaced";
    } catch (const WriteError& e) {
      EXPECT_EQ(std::string(e.what()), "rfprof: trace " + named.string() +
                                           " exists and is not a file (a folder, a device or a pipe); name another path");
    }
  }
  EXPECT_TRUE(std::filesystem::is_directory(folder));
  EXPECT_FALSE(std::filesystem::exists(folder.string() + ".part"));
  EXPECT_EQ(std::filesystem::status(pipe).type(), std::filesystem::file_type::fifo);
  // A link as the trace is replaced by the finished trace, not followed; a link as the .part is not
  // followed to truncate what it points to.
  const auto target = dir.path / "keep.txt";
  std::ofstream(target) << "keep";
  const auto linked = dir.path / "linked.rftrace";
  std::filesystem::create_symlink(target, linked);
  {
    Writer w(linked, {.force_overwrite = true});
    w.append(launch(0));
    w.finish();
  }
  EXPECT_FALSE(std::filesystem::is_symlink(linked));
  const auto part_linked = dir.path / "pl.rftrace";
  std::filesystem::create_symlink(target, part_linked.string() + ".part");
  EXPECT_THROW(Writer(part_linked, {.force_overwrite = true}), WriteError);
  std::ifstream in(target);
  std::string kept;
  in >> kept;
  EXPECT_EQ(kept, "keep");
}

/// Sets the process's umask for its lifetime.
struct Umask {
  explicit Umask(mode_t mask) : old(::umask(mask)) {}
  ~Umask() { ::umask(old); }
  mode_t old;
};

TEST(WriterEdges, TheTraceIsCreatedWorldReadable) {
  TempDir dir;
  const auto p = dir.path / "mode.rftrace";
  struct stat st {};
  {
    const Umask usual(022);
    Writer w(p);
    ASSERT_EQ(::stat((p.string() + ".part").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    w.finish();
  }
  ASSERT_EQ(::stat(p.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
}

// The profiled application may exec (a DataLoader worker, a shell): the trace's descriptor must
// not be inherited.
TEST(WriterEdges, ThePartFilesDescriptorIsClosedOnExecAndClosedByFinish) {
  TempDir dir;
  const auto p = std::filesystem::canonical(dir.path) / "fd.rftrace";
  const auto part = std::filesystem::path(p.string() + ".part");
  Writer w(p);
  const std::vector<int> fds = fds_naming(part);
  ASSERT_EQ(fds.size(), 1u);
  const int flags = ::fcntl(fds[0], F_GETFD);
  ASSERT_GE(flags, 0);
  EXPECT_TRUE(flags & FD_CLOEXEC);
  w.append(launch(0));
  w.finish();
  EXPECT_TRUE(std::filesystem::exists(p));
  EXPECT_TRUE(fds_naming(part).empty());
  EXPECT_TRUE(fds_naming(p).empty()) << "finish() left the renamed trace open";
}

TEST(WriterEdges, TheFileHeaderNamesTheFormatVersionWritten) {
  TempDir dir;
  const auto p = dir.path / "version.rftrace";
  {
    Writer w(p);
    testing::write_sample(w, 1);
    w.finish();
  }
  Reader r(p);
  EXPECT_EQ(r.version_major(), kFormatMajor);
  EXPECT_EQ(r.version_minor(), kFormatMinor);
}

TEST(WriterEdges, InternedIdsAreDenseFromOne) {
  TempDir dir;
  Writer w(dir.path / "ids.rftrace");
  EXPECT_EQ(w.intern("a"), 1u);
  EXPECT_EQ(w.intern("b"), 2u);
  EXPECT_EQ(w.intern("a"), 1u);
  EXPECT_EQ(w.intern_cached("c"), 3u);
}

// A guard given no signals (a writer without signals_blocked_while_locked) is no outer guard: a
// guard inside it with signals (another writer's) still blocks them.
TEST(WriterEdges, AGuardWithoutSignalsDoesNotStopAnInnerGuardBlocking) {
  ASSERT_FALSE(blocked_here(SIGUSR2));
  {
    ThreadSignalsBlocked none({});
    ThreadSignalsBlocked inner({SIGUSR2});
    EXPECT_TRUE(blocked_here(SIGUSR2));
  }
  EXPECT_FALSE(blocked_here(SIGUSR2));
  TempDir dir;
  Writer plain(dir.path / "plain.rftrace");
  bool inside = false;
  plain.with_shared_lock_held([&] {
    ThreadSignalsBlocked inner({SIGUSR2});
    inside = blocked_here(SIGUSR2);
  });
  EXPECT_TRUE(inside);
  EXPECT_FALSE(blocked_here(SIGUSR2));
}

TEST(WriterEdges, AGuardAddsToTheSignalsTheThreadHadBlocked) {
  sigset_t usr1, old;
  ::sigemptyset(&usr1);
  ::sigaddset(&usr1, SIGUSR1);
  ASSERT_EQ(::pthread_sigmask(SIG_BLOCK, &usr1, &old), 0);
  {
    ThreadSignalsBlocked guard({SIGUSR2});
    EXPECT_TRUE(blocked_here(SIGUSR2));
    EXPECT_TRUE(blocked_here(SIGUSR1)) << "the guard unblocked a signal the thread had blocked";
  }
  EXPECT_TRUE(blocked_here(SIGUSR1));
  EXPECT_FALSE(blocked_here(SIGUSR2));
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

/// A counter of on_chunk_pending calls and the options that call it (chunks wait for flush()).
struct Wakes {
  int count = 0;
  WriterOptions options(uint32_t max_pending_chunks = 4) {
    return {.max_pending_chunks = max_pending_chunks, .on_chunk_pending = [this] { ++count; }};
  }
};

TEST(WriterEdges, AStringThatStartsAWaitingChunkWakesTheOwner) {
  TempDir dir;
  const auto p = dir.path / "wake.rftrace";
  Wakes wakes;
  WriterOptions o = wakes.options();
  o.chunk_bytes = 64;
  Writer w(p, o);
  w.intern(std::string(100, 's'));  // a StringDef past chunk_bytes: its chunk closes and waits
  EXPECT_EQ(wakes.count, 1);
  EXPECT_EQ(std::filesystem::file_size(p.string() + ".part"), 16u);
}

TEST(WriterEdges, CollectingBuffersThatStartAWaitingChunkWakesTheOwner) {
  TempDir dir;
  Wakes wakes;
  Writer w(dir.path / "wake.rftrace", wakes.options());
  w.append_buffered(launch(0));
  w.collect_thread_buffers();
  EXPECT_EQ(wakes.count, 1);
  EXPECT_EQ(w.records_written(), 1u);
}

// Only the first buffer collected starts the wait; the owner is woken all the same.
TEST(WriterEdges, CollectingTwoThreadsBuffersWakesTheOwnerOnce) {
  TempDir dir;
  Wakes wakes;
  Writer w(dir.path / "wake.rftrace", wakes.options());
  std::thread other([&] { w.append_buffered(launch(0)); });
  other.join();
  w.append_buffered(launch(1));
  w.collect_thread_buffers();
  EXPECT_EQ(wakes.count, 1);
  EXPECT_EQ(w.records_written(), 2u);
}

TEST(WriterEdges, AFullThreadBufferThatAlsoClosesTheSharedChunkWakesTheOwner) {
  TempDir dir;
  Wakes wakes;
  WriterOptions o = wakes.options();
  o.thread_buffer_bytes = static_cast<uint32_t>(10 * launch_bytes());
  Writer w(dir.path / "wake.rftrace", o);
  w.append(KernelActivity{});  // the shared chunk is open, nothing waits
  for (uint64_t i = 0; i < 10; ++i) w.append_buffered(launch(i));
  EXPECT_EQ(w.records_written(), 11u);
  EXPECT_EQ(wakes.count, 1);
}

TEST(WriterEdges, InlineModeNeverWakesTheOwner) {
  TempDir dir;
  const auto p = dir.path / "inline.rftrace";
  Wakes wakes;
  WriterOptions o = wakes.options(/*max_pending_chunks=*/0);
  o.chunk_bytes = static_cast<uint32_t>(10 * launch_bytes());
  Writer w(p, o);
  for (uint64_t i = 0; i < 30; ++i) w.append(launch(i));
  EXPECT_EQ(readable_launches(p.string() + ".part"), 30);
  w.append_buffered(launch(30));
  w.collect_thread_buffers();  // collected and written by this thread
  EXPECT_EQ(readable_launches(p.string() + ".part"), 31);
  EXPECT_EQ(wakes.count, 0) << "the appending thread already wrote every chunk";
}

// Inline mode: a window's close writes the buffers it collected (and the shared records before
// them), but with no buffered records it leaves the open shared chunk open.
TEST(WriterEdges, AWindowsCloseWritesWhatItCollectedInInlineMode) {
  TempDir dir;
  const auto p = dir.path / "close.rftrace";
  const std::string part = p.string() + ".part";
  Writer w(p);
  w.append(KernelActivity{});
  w.append(ProfilingWindow{1, false, 10, 0});
  EXPECT_EQ(std::filesystem::file_size(part), 16u) << "nothing buffered: the chunk stays open";
  w.append_buffered(launch(0));
  w.append(ProfilingWindow{2, false, 20, 0});
  EXPECT_EQ(readable_launches(part), 1) << "the collected launch was written at the close";
  w.finish();
  const testing::ReadOutcome o = read_whole(p);
  EXPECT_FALSE(o.error) << o.message;
  EXPECT_EQ(o.records, 5u);
}

TEST(WriterEdges, AWindowsOpeningRecordCollectsNoBuffer) {
  TempDir dir;
  const auto p = dir.path / "open.rftrace";
  Writer w(p);
  w.append_buffered(launch(0));
  w.append(ProfilingWindow{1, true, 10, 0});
  EXPECT_EQ(w.records_written(), 1u) << "the launch is still in its thread's buffer";
  w.finish();
  Reader r(p);
  Record rec;
  std::vector<size_t> order;  // variant indices as read
  while (r.next(rec)) order.push_back(rec.index());
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], Record{ProfilingWindow{}}.index());
  EXPECT_EQ(order[1], Record{LaunchApi{}}.index());
}

TEST(WriterEdges, AFlushWithNothingNewWritesNoEmptyChunk) {
  TempDir dir;
  const auto p = dir.path / "empty.rftrace";
  const std::string part = p.string() + ".part";
  Writer w(p);
  w.flush();
  EXPECT_EQ(std::filesystem::file_size(part), 16u);
  w.append(launch(0));
  w.append_buffered(launch(1));
  w.flush();
  const auto size = std::filesystem::file_size(part);
  EXPECT_EQ(chunk_ends(slurp(part)).size(), 3u) << "the shared chunk, then the thread's";
  w.flush();
  w.collect_thread_buffers();
  w.flush();
  EXPECT_EQ(std::filesystem::file_size(part), size);
}

/// Holds `w`'s buffer of a thread of its own, as a thread a signal stopped inside
/// append_buffered, until release() (or, so that a test that waits for it fails instead of
/// hanging, 10 s).
class HeldBuffer {
 public:
  explicit HeldBuffer(Writer& w) {
    thread_ = std::thread([this, &w, released = release_.get_future()] {
      w.append_buffered(launch(99));
      w.with_thread_buffer_locked([&] {
        holding_.set_value();
        (void)released.wait_for(std::chrono::seconds(10));
      });
    });
    holding_.get_future().wait();
  }
  ~HeldBuffer() { release(); }
  void release() {
    if (!thread_.joinable()) return;
    release_.set_value();
    thread_.join();
  }

 private:
  std::promise<void> holding_, release_;
  std::thread thread_;
};

TEST(WriterEdges, BoundBufferWaitsOfZeroSkipsAHeldBufferAtOnce) {
  TempDir dir;
  Writer w(dir.path / "zero.rftrace");
  HeldBuffer held(w);
  w.bound_buffer_waits(std::chrono::nanoseconds(0));
  w.collect_thread_buffers();  // with the bound ignored, this would wait for the buffer
  EXPECT_EQ(w.buffers_left_out(), 1u);
  held.release();
}

// flush(wait) is the flush thread's own bound: a buffer it skips is collected by a later flush,
// not left out of the trace.
TEST(WriterEdges, AFlushWithItsOwnWaitDoesNotCountASkippedBufferAsLeftOut) {
  TempDir dir;
  const auto p = dir.path / "own.rftrace";
  Writer w(p);
  HeldBuffer held(w);
  w.bound_buffer_waits(std::chrono::nanoseconds(0));
  w.flush(std::chrono::nanoseconds(0));
  EXPECT_EQ(w.buffers_left_out(), 0u);
  held.release();
  w.flush(std::chrono::nanoseconds(0));
  EXPECT_EQ(readable_launches(p.string() + ".part"), 1);
}

}  // namespace
}  // namespace rf::trace
