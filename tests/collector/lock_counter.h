// Records the mutexes and rwlocks a thread locks while armed: replaces pthread_mutex_lock,
// _trylock, _timedlock, _clocklock and pthread_rwlock_rdlock, _wrlock, _tryrdlock, _trywrlock in
// the executable that includes it (what std::mutex, std::timed_mutex and std::shared_mutex of the
// code linked into it call), forwarding to the C library's, found with dlsym(RTLD_NEXT). Include it
// in exactly one file of an executable, never under a sanitizer (it would replace the sanitizer's
// own interceptors). Records without allocating or locking: a fixed table per thread.
#pragma once

#include <dlfcn.h>
#include <pthread.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace rf::test {

/// The C library's function `name`, of type F, resolved once into `slot` (constant-initialized:
/// no guard, no lock). Aborts with a message when the C library has none.
template <typename F>
F next_fn(std::atomic<F>& slot, const char* name) {
  F f = slot.load(std::memory_order_acquire);
  if (!f) {
    f = reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
    if (!f) {
      std::fprintf(stderr, "lock_counter.h: dlsym(RTLD_NEXT, %s) found nothing\n", name);
      std::abort();
    }
    slot.store(f, std::memory_order_release);
  }
  return f;
}

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

// Each replacement records the lock (when armed) and calls the C library's own. Mutexes
// (std::mutex, std::timed_mutex, std::recursive_mutex: lock, try_lock, try_lock_for/until) and
// rwlocks (std::shared_mutex); not spinlocks, and not the re-locking inside pthread_cond_wait.
#define RF_LOCK_COUNTER_REPLACE(name, ret, params, args, object)               \
  extern "C" ret name params {                                                \
    using Fn = ret(*) params;                                                 \
    static std::atomic<Fn> next{nullptr};                                     \
    if (rf::test::t_locks_armed) rf::test::t_locks.add(object);               \
    return rf::test::next_fn(next, #name) args;                               \
  }

RF_LOCK_COUNTER_REPLACE(pthread_mutex_lock, int, (pthread_mutex_t * m), (m), m)
RF_LOCK_COUNTER_REPLACE(pthread_mutex_trylock, int, (pthread_mutex_t * m), (m), m)
RF_LOCK_COUNTER_REPLACE(pthread_mutex_timedlock, int, (pthread_mutex_t * m, const struct timespec* t), (m, t), m)
RF_LOCK_COUNTER_REPLACE(pthread_mutex_clocklock, int, (pthread_mutex_t * m, clockid_t c, const struct timespec* t),
                        (m, c, t), m)
RF_LOCK_COUNTER_REPLACE(pthread_rwlock_rdlock, int, (pthread_rwlock_t * l), (l), l)
RF_LOCK_COUNTER_REPLACE(pthread_rwlock_wrlock, int, (pthread_rwlock_t * l), (l), l)
RF_LOCK_COUNTER_REPLACE(pthread_rwlock_tryrdlock, int, (pthread_rwlock_t * l), (l), l)
RF_LOCK_COUNTER_REPLACE(pthread_rwlock_trywrlock, int, (pthread_rwlock_t * l), (l), l)

#undef RF_LOCK_COUNTER_REPLACE
