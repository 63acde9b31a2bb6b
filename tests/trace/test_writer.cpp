// Writer behaviour: no silent overwrite, .part until finished, a killed writer leaves a readable
// prefix, concurrent appends are neither lost nor torn.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "rfprof/trace/reader.h"
#include "trace_samples.h"

namespace rf::trace {
namespace {

using testing::TempDir;

TEST(TraceWriter, RefusesToOverwriteWithoutForce) {
  TempDir dir;
  auto p = dir.path / "t.rftrace";
  { Writer w(p); }
  ASSERT_TRUE(std::filesystem::exists(p));
  EXPECT_THROW(Writer w(p), WriteError);
  EXPECT_NO_THROW(Writer w(p, {.force_overwrite = true}));
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

TEST(TraceWriter, ConcurrentAppendsAreAllReadBackInOrderPerThread) {
  TempDir dir;
  auto p = dir.path / "c.rftrace";
  constexpr int kThreads = 8, kPerThread = 5000;
  {
    Writer w(p, {.chunk_bytes = 4096});
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          LaunchApi l;
          l.thread_id = static_cast<uint64_t>(t);
          l.launch_index = static_cast<uint64_t>(i);
          l.kernel_name = w.intern("k" + std::to_string(i % 7));
          w.append(l);
        }
      });
    for (auto& th : threads) th.join();
    w.finish();
  }
  Reader r(p);
  Record rec;
  std::vector<int64_t> last(kThreads, -1);
  int total = 0;
  while (r.next(rec)) {
    if (auto* l = std::get_if<LaunchApi>(&rec)) {
      ASSERT_LT(l->thread_id, static_cast<uint64_t>(kThreads));
      EXPECT_EQ(static_cast<int64_t>(l->launch_index), last[l->thread_id] + 1);
      last[l->thread_id] = static_cast<int64_t>(l->launch_index);
      EXPECT_EQ(r.string(l->kernel_name), "k" + std::to_string(l->launch_index % 7));
      ++total;
    }
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_EQ(total, kThreads * kPerThread);
}

}  // namespace
}  // namespace rf::trace
