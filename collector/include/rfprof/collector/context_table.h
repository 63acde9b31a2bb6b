// One object per CUDA context, set up once, with the table's lock never held across the setup.
// The session's per-context Range Profiler objects are set up with CUPTI calls
// (cuptiProfilerInitialize alone took 2.4 s on an H100, validation/h100-2026-11-23), and CUPTI may
// run rfprof's callbacks meanwhile: on this thread (a resource callback), or on its activity thread,
// which can hold CUPTI's own locks while it waits for rfprof's. Holding one lock across the setup
// would make any callback that looks the table up wait for the setup, and the setup may be
// waiting for that callback (an ABBA deadlock in the profiled application). Here a setup runs
// with no lock held; other threads asking for that context wait for its result, others' lookups
// never wait, and the thread running a setup gets nullptr if it asks again from inside it.
// Pure logic, thread-safe; the key is the context handle (CUcontext), never dereferenced.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace rf::collector {

/// Objects of type T (Session: ContextProfiler) by context handle; see the comment above.
template <class T>
class ContextTable {
 public:
  using Ptr = std::shared_ptr<T>;
  using Key = const void*;

  /// The object of `key`: the one set up before; nullptr if its setup failed (returned nullptr or
  /// threw) or refuse(key) was called, until erase(key); otherwise the result of `setup()`, a
  /// callable returning Ptr (nullptr: failed), run once per key on this thread with no lock held.
  /// A thread asking while another sets `key` up waits for that result; the thread running the
  /// setup gets nullptr at once if it asks again from inside it. If erase(key) is called while
  /// `key` is set up, the result is dropped (destroyed here) and nullptr returned. Rethrows what
  /// `setup` throws (the key is then refused).
  template <class Setup>
  Ptr get_or_setup(Key key, Setup&& setup) {
    uint64_t ticket = 0;
    {
      std::unique_lock lock(mutex_);
      for (;;) {
        if (auto it = ready_.find(key); it != ready_.end()) return it->second;
        if (refused_.count(key)) return nullptr;
        auto p = pending_.find(key);
        if (p == pending_.end()) break;
        if (p->second.thread == std::this_thread::get_id()) return nullptr;  // from inside its setup
        cv_.wait(lock);
      }
      ticket = ++last_ticket_;
      pending_.emplace(key, Pending{std::this_thread::get_id(), ticket});
    }
    Ptr result;
    try {
      result = std::forward<Setup>(setup)();
    } catch (...) {
      (void)finish(key, ticket, nullptr);
      throw;
    }
    return finish(key, ticket, std::move(result));
  }

  /// The object of `key` if it is set up, else nullptr (never waits, never sets up).
  Ptr find(Key key) const {
    std::lock_guard lock(mutex_);
    auto it = ready_.find(key);
    return it == ready_.end() ? nullptr : it->second;
  }

  /// Forgets `key` entirely (the context is destroyed; its handle may be reused): returns its
  /// object (nullptr if none); a setup still running for it has its result dropped.
  Ptr erase(Key key) { return forget(key, /*refuse=*/false); }

  /// From now on get_or_setup(key) returns nullptr without a setup (counters failed on the
  /// context); returns the object it held (nullptr if none), for the caller to release.
  Ptr refuse(Key key) { return forget(key, /*refuse=*/true); }

  /// Every object set up and not erased or refused, in no particular order.
  std::vector<Ptr> all() const {
    std::lock_guard lock(mutex_);
    std::vector<Ptr> out;
    out.reserve(ready_.size());
    for (const auto& [key, ptr] : ready_) out.push_back(ptr);
    return out;
  }

 private:
  struct Pending {
    std::thread::id thread;
    uint64_t ticket;  // tells this setup from a later one of the same key after an erase
  };

  /// erase() (`refuse` false) or refuse(): drops the object and any setup in flight, then
  /// forgets or remembers the refusal, and wakes the waiters.
  Ptr forget(Key key, bool refuse) {
    Ptr out;
    {
      std::lock_guard lock(mutex_);
      if (auto it = ready_.find(key); it != ready_.end()) {
        out = std::move(it->second);
        ready_.erase(it);
      }
      pending_.erase(key);
      if (refuse)
        refused_.insert(key);
      else
        refused_.erase(key);
    }
    cv_.notify_all();
    return out;
  }

  /// Wakes the waiters on every path out of finish(), a failed allocation included.
  struct NotifyAll {
    std::condition_variable& cv;
    ~NotifyAll() { cv.notify_all(); }
  };

  Ptr finish(Key key, uint64_t ticket, Ptr result) noexcept {
    NotifyAll notify{cv_};
    Ptr dropped;  // destroyed after the lock is released
    std::lock_guard lock(mutex_);
    auto p = pending_.find(key);
    if (p == pending_.end() || p->second.ticket != ticket) {
      dropped = std::move(result);  // erased (or refused) while it was set up
      return nullptr;
    }
    try {  // inserted before the pending entry goes, so the key is never neither
      if (result)
        ready_[key] = result;
      else
        refused_.insert(key);
    } catch (...) {  // no memory for the entry: the context goes without (waiters get nullptr)
      dropped = std::move(result);
      ready_.erase(key);
      pending_.erase(p);
      return nullptr;
    }
    pending_.erase(p);
    return result;
  }

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::unordered_map<Key, Ptr> ready_;
  std::unordered_set<Key> refused_;
  std::unordered_map<Key, Pending> pending_;
  uint64_t last_ticket_ = 0;
};

}  // namespace rf::collector
