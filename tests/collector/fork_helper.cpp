// Helper process of test_fork: a process writing a trace like the session does, forking 8
// children (PyTorch DataLoader workers, num_workers=8) while its threads write.
//   fork_helper TRACE
// The trace goes through the real trace::Writer (never destroyed, as the session's) with the
// collector's fork handling (trace_owner.h): the exit handler and the pthread_atfork child handler
// registered by install_exit_and_fork_handlers, records written only while the owner runs (as the
// CUPTI callbacks do), the trace finished by the exit handler of the owning process. 4 threads
// append LaunchApi records (thread_id = thread, launch_index = sequence) and intern names, a
// flush thread flushes; the main thread forks each child once a tenth more records are written, so
// forks land while other threads are inside the writer (holding its lock most of the time). Each
// child tries to write (thread_id 1000 + child) and exits: even children with exit() (atexit
// handlers run), odd ones with _exit(). The helper waits for every child at most 30 s, kills and
// reports a hung one (exit status 3), then returns from main: exit() finishes the trace.
// Prints "children 8 exited" on success.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "rfprof/collector/trace_owner.h"
#include "rfprof/trace/writer.h"

namespace {

constexpr int kThreads = 4;
constexpr uint64_t kPerThread = 4000;
constexpr int kChildren = 8;

rf::collector::TraceOwner g_owner;
rf::trace::Writer* g_writer = nullptr;  // never deleted, as the session's writer
std::atomic<uint64_t> g_appended{0};

/// A record from a CUPTI callback or buffer: written only while the session runs (session.cpp).
void write_launch(uint64_t thread, uint64_t seq) {
  if (!g_owner.running()) return;
  rf::trace::LaunchApi l;
  l.thread_id = thread;
  l.launch_index = seq;
  l.correlation_id = static_cast<uint32_t>(thread * kPerThread + seq + 1);
  l.kernel_name = g_writer->intern("kernel_" + std::to_string(seq % 13));
  g_writer->append(l);
}

/// The session's exit handler: only the owning process finishes the trace, once.
void at_exit() {
  if (!g_owner.begin_finish()) return;
  try {
    g_writer->finish();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "finish failed: %s\n", e.what());
  }
  g_owner.set_finished();
}

/// The session's pthread_atfork child handler.
void in_child() { g_owner.disable_in_child(); }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  g_writer = new rf::trace::Writer(argv[1], {.chunk_bytes = 4096, .force_overwrite = true});
  g_owner.set_running();
  if (!rf::collector::install_exit_and_fork_handlers(at_exit, in_child)) return 2;

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([t] {
      for (uint64_t s = 0; s < kPerThread; ++s) {
        write_launch(static_cast<uint64_t>(t), s);
        g_appended.fetch_add(1);
      }
    });
  std::atomic<bool> stop{false};
  std::thread flusher([&] {
    while (!stop.load()) g_writer->flush();
  });

  std::vector<pid_t> children;
  for (int c = 0; c < kChildren; ++c) {
    const uint64_t until = (c + 1) * kThreads * kPerThread / (kChildren + 2);
    while (g_appended.load() < until) std::this_thread::yield();
    const pid_t pid = ::fork();
    if (pid < 0) return 4;
    if (pid == 0) {  // a DataLoader worker: its callbacks and exit must not touch the trace
      for (uint64_t s = 0; s < 100; ++s) write_launch(1000 + static_cast<uint64_t>(c), s);
      if (c % 2 == 0) std::exit(0);  // atexit handlers run: at_exit() must refuse
      ::_exit(0);
    }
    children.push_back(pid);
  }

  int hung = 0, failed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  for (pid_t pid : children) {
    int status = 0;
    pid_t r = 0;
    while ((r = ::waitpid(pid, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
      ::usleep(1000);
    if (r == 0) {  // still running after the deadline: hung (a lock inherited from the parent?)
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      ++hung;
    } else if (r != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ++failed;
    }
  }
  for (auto& th : threads) th.join();
  stop = true;
  flusher.join();
  if (hung || failed) {
    std::printf("children: %d hung, %d failed\n", hung, failed);
    return 3;
  }
  std::printf("children %d exited\n", kChildren);
  return 0;  // exit(): at_exit() finishes the trace
}
