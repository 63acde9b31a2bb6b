// One object per thread, found without a lock after the thread's first use: the building block of
// rfprof's launch path (writer buffers, kernel-record decision rings, filter caches), so that
// launching threads share no lock (docs/collector.md, "The launch path shares no lock").
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace rf::trace {

/// Unique id of a PerThread instance (the key of the thread-local caches).
inline std::atomic<uint64_t> g_per_thread_instances{1};

/// One default-constructed T per thread (local()) or per caller-given key (of_key(): an id the
/// caller uses for its thread, such as gettid()). The first call of a thread takes the registry
/// lock and allocates one T; later calls of that thread read a thread-local cache: no lock, no
/// allocation. The Ts live as long as the PerThread; a later thread with the same std::thread::id
/// (or key) gets the same T back, so memory is bounded by the threads alive at once plus those
/// that ended with a reused id. T is never moved, so it may hold a mutex or atomics. Thread-safe;
/// what each T needs beyond that (its own lock, atomics) is the T's business.
template <typename T>
class PerThread {
 public:
  PerThread() : instance_(g_per_thread_instances.fetch_add(1, std::memory_order_relaxed)) {}
  PerThread(const PerThread&) = delete;
  PerThread& operator=(const PerThread&) = delete;

  /// The calling thread's T. May throw std::bad_alloc on the thread's first call only.
  T& local() {
    thread_local Cache cache;
    if (cache.instance == instance_) return *cache.value;
    T& value = find_or_add(Key{std::this_thread::get_id(), 0});
    cache = {instance_, &value};
    return value;
  }

  /// The T of `key` (the caller's id for its thread). Without a lock when the calling thread asked
  /// for the same key last time. May throw std::bad_alloc when the key is new.
  T& of_key(uint64_t key) {
    thread_local KeyCache cache;
    if (cache.instance == instance_ && cache.key == key) return *cache.value;
    T& value = find_or_add(Key{std::thread::id(), key});
    cache = {instance_, key, &value};
    return value;
  }

  /// Calls `f(T&)` for every T whose thread's first call has returned, in the order they were
  /// added, without the registry lock (which local() and of_key() take on a thread's first call):
  /// a caller never waits on a thread stopped inside its first call, as the session's finish
  /// after a signal must not (the handler holds the interrupted thread). A T added meanwhile may
  /// be missed; its thread had not used it yet. The T's own synchronization is the caller's.
  template <typename F>
  void for_each(F&& f) {
    for (Entry* e = first_.load(std::memory_order_acquire); e; e = e->next.load(std::memory_order_acquire))
      f(e->value);
  }

 private:
  struct Key {
    std::thread::id thread;  // local()
    uint64_t key = 0;        // of_key()
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    explicit Entry(Key k) : key(k) {}
    Key key;
    T value{};
    std::atomic<Entry*> next{nullptr};  // the entry added after this one (for_each)
  };
  struct Cache {
    uint64_t instance = 0;
    T* value = nullptr;
  };
  struct KeyCache {
    uint64_t instance = 0;
    uint64_t key = 0;
    T* value = nullptr;
  };

  T& find_or_add(Key key) {
    std::lock_guard lock(mutex_);
    for (auto& e : entries_)
      if (e->key == key) return e->value;
    entries_.push_back(std::make_unique<Entry>(key));
    Entry* added = entries_.back().get();
    // Published whole, its T constructed, at the end of the list for_each walks.
    (entries_.size() == 1 ? first_ : entries_[entries_.size() - 2]->next).store(added, std::memory_order_release);
    return added->value;
  }

  const uint64_t instance_;
  std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::atomic<Entry*> first_{nullptr};  // the first entry added; each links to the next
};

}  // namespace rf::trace
