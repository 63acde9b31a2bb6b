// fork() while tracing (issue 6: PyTorch DataLoader workers, num_workers=8): a helper process
// (fork_helper.cpp) writes a trace through the real writer with the collector's fork handling
// (trace_owner.h) and forks 8 children while its threads write. The children neither corrupt
// nor duplicate the parent's trace, and none hangs at exit; the parent's trace is complete.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rfprof/collector/trace_owner.h"
#include "rfprof/trace/reader.h"

namespace {

namespace fs = std::filesystem;
using namespace rf::trace;

constexpr uint64_t kThreads = 4, kPerThread = 4000;  // as in fork_helper.cpp

/// Runs the helper; returns its wait status, or -1 if it had to be killed (hung) after `limit`.
int run_helper(const fs::path& trace, std::string* out, std::chrono::seconds limit) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) return -2;
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(pipe_fds[1], 1);
    ::close(pipe_fds[0]);
    ::execl(RFPROF_FORK_HELPER, RFPROF_FORK_HELPER, trace.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  int status = 0;
  pid_t r = 0;
  while ((r = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  if (r == 0) {  // hang detection only: the helper is given far more time than it needs
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    status = -1;
  }
  char buf[256];
  ssize_t n;
  while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0) out->append(buf, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  return status;
}

TEST(Fork, EightWorkersForkedWhileWritingLeaveTheParentsTraceWholeAndNeverHang) {
  std::string tmpl = (fs::temp_directory_path() / "rffork-XXXXXX").string();
  const fs::path dir = ::mkdtemp(tmpl.data());
  const fs::path trace = dir / "parent.rftrace";
  for (int run = 0; run < 3; ++run) {  // forks land at different points of the writers' work
    fs::remove(trace);
    std::string out;
    const int status = run_helper(trace, &out, std::chrono::seconds(120));
    ASSERT_NE(status, -1) << "the helper hung (a child blocked at exit?): " << out;
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << ": " << out;
    EXPECT_EQ(out, "children 8 exited\n");
    ASSERT_TRUE(fs::exists(trace)) << "the parent did not finish its trace";
    EXPECT_FALSE(fs::exists(trace.string() + ".part"));

    Reader r(trace);
    Record rec;
    std::vector<int64_t> last(kThreads, -1);
    std::set<std::pair<uint64_t, uint64_t>> seen;
    uint64_t records = 0, ends = 0;
    while (r.next(rec)) {
      if (auto* e = std::get_if<TraceEnd>(&rec)) {
        ++ends;
        EXPECT_EQ(e->records_written, records);  // nothing was written behind the parent's back
        continue;
      }
      ++records;
      auto* l = std::get_if<LaunchApi>(&rec);
      if (!l) continue;
      ASSERT_LT(l->thread_id, kThreads) << "a child's record is in the parent's trace";
      EXPECT_TRUE(seen.emplace(l->thread_id, l->launch_index).second) << "duplicated record";
      EXPECT_EQ(static_cast<int64_t>(l->launch_index), last[l->thread_id] + 1) << "lost or reordered";
      last[l->thread_id] = static_cast<int64_t>(l->launch_index);
      EXPECT_EQ(l->correlation_id, l->thread_id * kPerThread + l->launch_index + 1);
      EXPECT_EQ(r.string(l->kernel_name), "kernel_" + std::to_string(l->launch_index % 13));
    }
    EXPECT_FALSE(r.truncated());
    EXPECT_EQ(ends, 1u);
    EXPECT_EQ(seen.size(), kThreads * kPerThread);
  }
  fs::remove_all(dir);
}

TEST(TraceOwner, OnlyTheOwningProcessFinishesAndOnlyOnce) {
  rf::collector::TraceOwner owner;
  EXPECT_FALSE(owner.begin_finish());  // not started
  owner.set_running();
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Without the atfork handler (a raw clone): the pid check still refuses.
    ::_exit(owner.begin_finish() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child may not finish the trace";
  EXPECT_TRUE(owner.begin_finish());
  EXPECT_FALSE(owner.begin_finish());
  owner.set_finished();
  EXPECT_EQ(owner.state(), rf::collector::TraceOwner::State::kFinished);
}

TEST(TraceOwner, DisabledInTheChildTouchesNothing) {
  rf::collector::TraceOwner owner;
  owner.set_running();
  owner.disable_in_child();
  EXPECT_FALSE(owner.running());
  EXPECT_FALSE(owner.begin_finish());
  EXPECT_EQ(owner.state(), rf::collector::TraceOwner::State::kDisabled);
}

}  // namespace
