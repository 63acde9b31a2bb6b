// current_thread_id (thread_id.h): gettid per thread, cached, and right again in a fork() child.
#include "rfprof/collector/thread_id.h"

#include <gtest/gtest.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

namespace rf::collector {
namespace {

uint64_t gettid_now() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

TEST(CurrentThreadId, IsEachThreadsOwnSystemId) {
  const uint64_t main_id = current_thread_id();
  EXPECT_EQ(main_id, gettid_now());
  EXPECT_EQ(current_thread_id(), main_id);  // cached: the same again
  uint64_t other = 0, other_gettid = 0;
  std::thread t([&] {
    other = current_thread_id();
    other_gettid = gettid_now();
  });
  t.join();
  EXPECT_EQ(other, other_gettid);
  EXPECT_NE(other, main_id);
}

// The forking thread's cache holds the parent's id; a child that launched kernels with it would
// attribute them to a thread of another process.
TEST(CurrentThreadId, AForkChildReadsItsOwnId) {
  const uint64_t parent = current_thread_id();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    const uint64_t child = current_thread_id();
    ::_exit(child == gettid_now() && child != parent ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's id was the parent's";
  EXPECT_EQ(current_thread_id(), parent);  // the parent keeps its cache
}

}  // namespace
}  // namespace rf::collector
