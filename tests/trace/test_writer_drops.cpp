// What the writer drops and counts rather than writes, and what a failed write, rename or file
// header leaves: a record over 32 MiB, records after a failed write, a write past the file size
// limit (an error, never SIGXFSZ), a record buffered while finish() waits, enums out of range, a
// StringDef given to append(), and the memory of large records (docs/trace-format.md,
// docs/failure-modes.md). The writer's other edges:
// test_writer_edges.cpp.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
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

using testing::launch;
using testing::readable_launches;
using testing::TempDir;
using testing::fds_naming;

/// Runs `body` in a fork()ed child whose files may grow to `limit` bytes (SIGXFSZ ignored: a write
/// past it fails with EFBIG, as one on a full disk fails with ENOSPC; with `keep_sigxfsz`, its
/// default action, as in an application that never set it). Returns the child's exit status
/// (body's result), minus the signal that killed it when it did not exit.
int in_child_with_file_limit(rlim_t limit, const std::function<int()>& body, bool keep_sigxfsz = false) {
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGXFSZ, keep_sigxfsz ? SIG_DFL : SIG_IGN);
    struct rlimit lim {limit, limit};
    ::setrlimit(RLIMIT_FSIZE, &lim);
    int rc = 99;
    try {
      rc = body();
    } catch (...) {
      rc = 98;
    }
    _exit(rc);
  }
  int status = 0;
  if (child < 0 || ::waitpid(child, &status, 0) != child) return -1000;
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -999;
}

// The finished path is an existing folder that is not empty: the rename fails, and finish() says so.
// A record over 32 MiB (here RangeCounters of 4.5M values, 36 MB) is dropped and counted in
// TraceEnd: a chunk holding it could pass the reader's 64 MiB limit, and one of 8.5M values made
// a trace whose every record, its MetricConfig first, was unreadable (a review).
TEST(WriterEdges, ARecordOver32MiBIsDroppedAndCountedNotWritten) {
  TempDir dir;
  const auto p = dir.path / "big.rftrace";
  {
    Writer w(p);
    RangeCounters huge;
    huge.config_id = 1;
    huge.values.assign(4'500'000, 1.0);
    w.append(launch(1));
    w.append(huge);
    w.append_buffered(huge);
    w.append_buffered(launch(2));
    EXPECT_EQ(w.dropped_oversized(), 2u);
    w.finish(7, 3);
  }
  Reader r(p);
  Record rec;
  size_t launches = 0, counters = 0;
  std::optional<TraceEnd> end;
  while (r.next(rec)) {
    if (std::holds_alternative<LaunchApi>(rec)) ++launches;
    if (std::holds_alternative<RangeCounters>(rec)) ++counters;
    if (auto* e = std::get_if<TraceEnd>(&rec)) end = *e;
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(launches, 2u);
  EXPECT_EQ(counters, 0u);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->dropped_records, 3u + 2u);  // the session's 3 and the two oversized records
}

TEST(WriterEdges, AFailedRenameIsAWriteErrorFromFinish) {
  TempDir dir;
  const auto p = dir.path / "taken.rftrace";
  Writer w(p, {.force_overwrite = true});
  std::filesystem::create_directory(p);  // taken while the trace was written (one is refused at start)
  std::ofstream(p / "inside") << "x";
  w.append(launch(0));
  try {
    w.finish();
    FAIL() << "no error";
  } catch (const WriteError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot rename"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::exists(p.string() + ".part"));
  EXPECT_EQ(readable_launches(p.string() + ".part"), 1);
}

TEST(WriterEdges, AFileHeaderThatCannotBeWrittenIsAWriteError) {
  TempDir dir;
  const auto p = dir.path / "header.rftrace";
  const int rc = in_child_with_file_limit(8, [&] {  // 8 of the header's 16 bytes fit
    try {
      Writer w(p);
      return 1;
    } catch (const WriteError& e) {
      return std::string(e.what()).find("cannot write trace") != std::string::npos ? 0 : 2;
    }
  });
  EXPECT_EQ(rc, 0) << "1: no WriteError, 2: not the write's message";
}

// A write past RLIMIT_FSIZE (`ulimit -f`, which Slurm passes on to a job) raises SIGXFSZ on the
// writing thread, and its default action killed the application (tests that ignore SIGXFSZ hid
// it). An application thread writes (inline, or past max_pending_chunks) with SIGXFSZ blocked and
// takes back the signal its failed write raised: a WriteError, the process goes on, the signal is
// neither pending nor blocked after, its disposition is the default still, and the application's
// own write past the limit still dies of it. Exit status bits: 1 no WriteError, 2 SIGXFSZ left
// pending, 4 SIGXFSZ left blocked, 8 its disposition changed.
TEST(WriterEdges, AWritePastTheFileSizeLimitIsAWriteErrorNotTheApplicationsSigxfsz) {
  TempDir dir;
  for (uint32_t waiting : {0u, 8u}) {
    const auto p = dir.path / ("limit" + std::to_string(waiting) + ".rftrace");
    const int rc = in_child_with_file_limit(
        4096,
        [&] {
          Writer w(p, {.chunk_bytes = 1024, .max_pending_chunks = waiting});
          int bits = 1;
          for (uint64_t i = 0; i < 1000 && (bits & 1); ++i) {
            try {
              w.append(launch(i));
            } catch (const WriteError&) {
              bits = 0;
            }
          }
          sigset_t pending, mask;
          ::sigpending(&pending);
          ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
          struct sigaction now {};
          ::sigaction(SIGXFSZ, nullptr, &now);
          if (::sigismember(&pending, SIGXFSZ)) bits |= 2;
          if (::sigismember(&mask, SIGXFSZ)) bits |= 4;
          if (now.sa_handler != SIG_DFL) bits |= 8;
          return bits;
        },
        /*keep_sigxfsz=*/true);
    EXPECT_EQ(rc, 0) << "max_pending_chunks " << waiting << " (" << -SIGXFSZ << ": killed by SIGXFSZ)";
  }
  const int own = in_child_with_file_limit(
      4096,
      [&] {
        std::ofstream out(dir.path / "own.bin", std::ios::binary);
        const std::string page(8192, 'x');
        out << page << std::flush;
        return 0;
      },
      /*keep_sigxfsz=*/true);
  EXPECT_EQ(own, -SIGXFSZ) << "the application's own write past the limit";
}

// Exit status bits: 1 no WriteError, 2 the .part still open, 4 a later record not dropped.
TEST(WriterEdges, AWriteFailingInFlushThrowsClosesTheFileAndDropsLaterRecords) {
  TempDir dir;
  const auto p = std::filesystem::canonical(dir.path) / "flush.rftrace";
  const auto part = std::filesystem::path(p.string() + ".part");
  const int rc = in_child_with_file_limit(4096, [&] {
    Writer w(p, {.chunk_bytes = 1024, .max_pending_chunks = 1000});
    for (uint64_t i = 0; i < 100; ++i) w.append(launch(i));  // 9 KB, all waiting
    if (fds_naming(part).size() != 1) return 8;
    try {
      w.flush();
      return 1;
    } catch (const WriteError&) {
    }
    int bits = fds_naming(part).empty() ? 0 : 2;
    const uint64_t lost = w.dropped_after_failure();  // the chunks the failed flush did not write
    w.append(launch(100));
    if (lost == 0 || w.dropped_after_failure() != lost + 1 || w.records_written() + lost != 100) bits |= 4;
    return bits;
  });
  EXPECT_EQ(rc, 0);
}

TEST(WriterEdges, RecordsAfterAFailedWriteAreDroppedNotCounted) {
  TempDir dir;
  const auto p = dir.path / "after.rftrace";
  const int rc = in_child_with_file_limit(4096, [&] {
    Writer w(p, {.chunk_bytes = 1024});  // inline: the appending thread writes and fails
    uint64_t i = 0;
    for (bool failed = false; !failed; ++i) {
      if (i == 1000) return 1;
      try {
        w.append(launch(i));
      } catch (const WriteError&) {
        failed = true;
      }
    }
    const uint64_t written = w.records_written();
    const uint64_t lost = w.dropped_after_failure();  // the failed chunk's
    for (uint64_t j = 0; j < 100; ++j) w.append(launch(i + j));
    return (w.records_written() == written ? 0 : 2) | (w.dropped_after_failure() == lost + 100 ? 0 : 4);
  });
  EXPECT_EQ(rc, 0) << "1: no WriteError, 2: later records counted as written, 4: not as dropped";
}

// A failed write loses the chunk it was writing and every chunk waiting behind it: their records
// were counted as written (882 written, 392 readable, a review). Now records_written() is what the
// `.part` holds and the rest is in dropped_after_failure(); finish() then leaves the `.part`
// without TraceEnd and does not throw. Exit status bits: 1 no WriteError, 2 written is not what
// is readable, 4 written + dropped is not every record, 8 finish threw or renamed.
TEST(WriterEdges, RecordsAFailedWriteLosesAreCountedAsDroppedNotWritten) {
  TempDir dir;
  const auto p = dir.path / "lost.rftrace";
  const auto part = std::filesystem::path(p.string() + ".part");
  const int rc = in_child_with_file_limit(20000, [&] {
    Writer w(p, {.chunk_bytes = 4096, .max_pending_chunks = 8});
    bool threw = false;
    for (uint64_t i = 0; i < 2000; ++i) {
      try {
        w.append(launch(i));
      } catch (const WriteError&) {
        threw = true;
      }
    }
    int bits = threw ? 0 : 1;
    if (w.records_written() != static_cast<uint64_t>(readable_launches(part))) bits |= 2;
    if (w.records_written() + w.dropped_after_failure() != 2000) bits |= 4;
    try {
      w.finish();
    } catch (...) {
      bits |= 8;
    }
    if (!std::filesystem::exists(part) || std::filesystem::exists(p)) bits |= 8;
    return bits;
  });
  EXPECT_EQ(rc, 0);
}

// finish() collects the thread buffers once, then waits for the writer's lock: a record a thread
// buffered in between was in no chunk and counted nowhere (TraceEnd dropped_records 0, a review).
// It is now written or counted in TraceEnd's dropped_records.
TEST(WriterEdges, ARecordBufferedWhileFinishWaitsForTheLockIsWrittenOrCounted) {
  TempDir dir;
  const auto p = dir.path / "finishing.rftrace";
  Writer w(p);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::promise<void> holding;
  std::thread holder([&] { w.with_shared_lock_held([&] { holding.set_value(); released.wait(); }); });
  holding.get_future().wait();
  std::thread finisher([&] { w.finish(7, 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // finish collected, waits for the lock
  std::thread appender([&] { w.append_buffered(launch(42)); });
  appender.join();  // returned: accepted before finish() ended
  release.set_value();
  holder.join();
  finisher.join();
  Reader r(p);
  Record rec;
  uint64_t launches = 0;
  std::optional<TraceEnd> end;
  while (r.next(rec)) {
    launches += std::holds_alternative<LaunchApi>(rec);
    if (auto* e = std::get_if<TraceEnd>(&rec)) end = *e;
  }
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(launches + end->dropped_records, 1u) << "written, or counted as dropped";
}

// An enum out of its range (NvtxEvent kind 3) was written, and the reader refused it and every
// record after it (a review): such a record is dropped and counted in TraceEnd instead.
TEST(WriterEdges, ARecordWithAnEnumOutOfRangeIsDroppedAndCounted) {
  TempDir dir;
  const auto p = dir.path / "enum.rftrace";
  {
    Writer w(p);
    w.append(NvtxEvent{.id = 1});
    w.append(NvtxEvent{.id = 2, .kind = static_cast<NvtxEventKind>(3)});
    w.append(NvtxEvent{.id = 3, .style = static_cast<NvtxRangeStyle>(3)});
    LaunchApi l = launch(1);
    l.domain = static_cast<ApiDomain>(2);
    w.append_buffered(l);
    MemoryActivity m;
    m.memory_kind = static_cast<MemoryKind>(8);
    w.append(m);
    ProcessInfo pi;
    pi.mode = static_cast<CollectionMode>(2);
    w.append_buffered(pi);
    for (uint64_t i = 0; i < 10; ++i) w.append(NvtxEvent{.id = 100 + i, .kind = NvtxEventKind::kInstant});
    w.append_buffered(launch(2));
    EXPECT_EQ(w.dropped_invalid(), 5u);
    w.finish(0, 1);
  }
  Reader r(p);
  Record rec;
  size_t nvtx = 0, launches = 0;
  std::optional<TraceEnd> end;
  while (r.next(rec)) {
    nvtx += std::holds_alternative<NvtxEvent>(rec);
    launches += std::holds_alternative<LaunchApi>(rec);
    if (auto* e = std::get_if<TraceEnd>(&rec)) end = *e;
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(nvtx, 11u);
  EXPECT_EQ(launches, 1u);
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->dropped_records, 1u + 5u);
}

// A StringDef given to append() took id 1, and intern() gave id 1 again: "string id 1 redefined"
// for the reader (a review). intern() now skips ids append() defined; a definition the reader
// would refuse (id 0, an id defined with another value) is dropped and counted.
TEST(WriterEdges, AStringDefGivenToAppendKeepsItsIdFromIntern) {
  TempDir dir;
  const auto p = dir.path / "strings.rftrace";
  StringId interned = 0, later = 0;
  {
    Writer w(p);
    w.append(StringDef{1, "from-append"});
    w.append_buffered(StringDef{3, "buffered"});
    interned = w.intern("from-intern");
    later = w.intern("later");
    EXPECT_EQ(interned, 2u);
    EXPECT_EQ(later, 4u);
    w.append(StringDef{1, "from-append"});    // the same definition again: written
    w.append(StringDef{interned, "from-intern"});
    w.append(StringDef{interned, "another"});  // refused by the reader: dropped
    w.append(StringDef{1, "another"});
    w.append(StringDef{0, "zero"});
    EXPECT_EQ(w.dropped_invalid(), 3u);
    w.append(NvtxEvent{.id = 1, .domain = 1, .name = interned});
    w.append(NvtxEvent{.id = 2, .domain = 3, .name = later});
    w.finish();
  }
  Reader r(p);
  Record rec;
  std::optional<TraceEnd> end;
  while (r.next(rec))
    if (auto* e = std::get_if<TraceEnd>(&rec)) end = *e;
  ASSERT_TRUE(end.has_value());
  EXPECT_EQ(end->dropped_records, 3u);
  EXPECT_EQ(r.string(1), "from-append");
  EXPECT_EQ(r.string(interned), "from-intern");
  EXPECT_EQ(r.string(3), "buffered");
  EXPECT_EQ(r.string(later), "later");
}

// A record over the limit grew the open chunk (or a thread's buffer) to its size, and chunk bodies
// grown by large records were kept as spares (up to 16, never reused): about 1 GiB after 16
// records of 24 MiB (a review). Bodies over twice their target size are freed instead.
TEST(WriterEdges, LargeRecordsDoNotPinTheirMemory) {
  TempDir dir;
  Writer w(dir.path / "large.rftrace", {.max_pending_chunks = 8});
  const uint64_t at_start = w.buffer_capacity_bytes();
  EXPECT_LT(at_start, 4u << 20);
  {
    RangeCounters over;
    over.values.assign(5u << 20, 1.0);  // 40 MiB encoded: over kMaxRecordBytes, dropped
    w.append(over);
    w.append_buffered(over);
    EXPECT_EQ(w.dropped_oversized(), 2u);
  }
  EXPECT_LT(w.buffer_capacity_bytes(), 8u << 20) << "the dropped records' memory is not kept";
  RangeCounters large;
  large.values.assign(3u << 20, 1.0);  // 24 MiB: written
  for (int i = 0; i < 4; ++i) {
    w.append(large);
    w.append_buffered(large);
    w.flush();
  }
  for (uint64_t i = 0; i < 20000; ++i) w.append(launch(i));  // spare bodies reused
  w.flush();
  EXPECT_LT(w.buffer_capacity_bytes(), 8u << 20) << "the written records' memory is not kept";
  w.finish();
}

}  // namespace
}  // namespace rf::trace
