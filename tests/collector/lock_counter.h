// Records the mutexes a thread locks while armed: replaces pthread_mutex_lock and
// pthread_mutex_trylock in the executable that includes it (std::mutex, std::lock_guard and
// std::unique_lock of the code linked into it call these), forwarding to the C library's, found
// with dlsym(RTLD_NEXT). Include it in exactly one file of an executable. Records without
// allocating or locking: a fixed table per thread.
#pragma once

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rf::test {

using MutexFn = int (*)(pthread_mutex_t*);

/// The C library's `name` (pthread_mutex_lock or pthread_mutex_trylock), resolved once into
/// `slot` (constant-initialized: no guard, no lock).
inline MutexFn next_mutex_fn(std::atomic<MutexFn>& slot, const char* name) {
  MutexFn f = slot.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<MutexFn>(::dlsym(RTLD_NEXT, name));
    slot.store(f, std::memory_order_release);
  }
  return f;
}
inline std::atomic<MutexFn> g_next_lock{nullptr};
inline std::atomic<MutexFn> g_next_trylock{nullptr};

/// The mutexes one thread locked while armed, with how many times each (try_lock included).
struct LockTable {
  static constexpr size_t kSlots = 64;
  struct Slot {
    const void* mutex = nullptr;
    uint64_t locks = 0;
  };
  Slot slots[kSlots];
  size_t used = 0;
  uint64_t overflow = 0;  ///< locks of mutexes past the kSlots-th distinct one

  void add(const void* m) {
    for (size_t i = 0; i < used; ++i)
      if (slots[i].mutex == m) {
        ++slots[i].locks;
        return;
      }
    if (used == kSlots) {
      ++overflow;
      return;
    }
    slots[used++] = Slot{m, 1};
  }
  /// How many times this thread locked `m` (0: never).
  uint64_t locks_of(const void* m) const {
    for (size_t i = 0; i < used; ++i)
      if (slots[i].mutex == m) return slots[i].locks;
    return 0;
  }
  uint64_t total() const {
    uint64_t n = overflow;
    for (size_t i = 0; i < used; ++i) n += slots[i].locks;
    return n;
  }
};

/// While true, this thread's mutex locks are recorded in t_locks.
inline thread_local bool t_locks_armed = false;
inline thread_local LockTable t_locks;

/// The mutexes this thread locks while `f` runs.
template <typename F>
LockTable locks_during(F&& f) {
  t_locks = LockTable{};
  t_locks_armed = true;
  f();
  t_locks_armed = false;
  return t_locks;
}

}  // namespace rf::test

extern "C" int pthread_mutex_lock(pthread_mutex_t* m) {
  if (rf::test::t_locks_armed) rf::test::t_locks.add(m);
  return rf::test::next_mutex_fn(rf::test::g_next_lock, "pthread_mutex_lock")(m);
}
extern "C" int pthread_mutex_trylock(pthread_mutex_t* m) {
  if (rf::test::t_locks_armed) rf::test::t_locks.add(m);
  return rf::test::next_mutex_fn(rf::test::g_next_trylock, "pthread_mutex_trylock")(m);
}
