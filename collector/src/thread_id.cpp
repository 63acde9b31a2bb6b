// Cached system thread ids (rfprof/collector/thread_id.h).
#include "rfprof/collector/thread_id.h"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

namespace rf::collector {
namespace {

/// Bumped in every fork() child: caches from before the fork are stale there.
std::atomic<uint32_t> g_generation{1};

void on_fork_child() noexcept { g_generation.fetch_add(1, std::memory_order_relaxed); }

struct Cached {
  uint64_t tid = 0;
  uint32_t generation = 0;  // 0: never read (g_generation starts at 1)
};
thread_local Cached t_cached;

}  // namespace

uint64_t current_thread_id() noexcept {
  static const bool registered = [] {
    (void)::pthread_atfork(nullptr, nullptr, on_fork_child);  // ENOMEM: ids stay cached (rare)
    return true;
  }();
  (void)registered;
  const uint32_t generation = g_generation.load(std::memory_order_relaxed);
  if (t_cached.generation != generation) {
    t_cached.tid = static_cast<uint64_t>(::syscall(SYS_gettid));
    t_cached.generation = generation;
  }
  return t_cached.tid;
}

}  // namespace rf::collector
