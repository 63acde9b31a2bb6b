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

namespace per_thread_detail {

/// A thread's cache of the PerThread<T> instances of one T it used last: instance id -> its T.
/// Several ways, so that two instances of one T used in turn (two LaunchFilters' name caches at
/// every launch) do not evict each other. Trivial: a thread_local without an initialization guard.
struct Cache {
  static constexpr int kWays = 4;
  struct Way {
    uint64_t instance = 0;
    void* value = nullptr;
  };
  Way ways[kWays];
};

/// What a thread hands back when it exits: its local() entries (to each PerThread still alive,
/// which gives them to later threads) and its caches, emptied first so that a call later in its
/// exit (another thread_local's destructor) finds none of the entries it handed back.
class ThreadExit {
 public:
  using Release = void (*)(void* core, void* entry);
  ThreadExit() = default;
  ThreadExit(const ThreadExit&) = delete;
  ThreadExit& operator=(const ThreadExit&) = delete;
  ~ThreadExit() {
    exited() = true;
    for (Cache* c : caches_) *c = Cache{};
    for (Held& h : held_)
      if (std::shared_ptr<void> core = h.core.lock()) h.release(core.get(), h.entry);
  }
  /// Remembers a cache of the thread, to empty at its exit. May throw std::bad_alloc.
  void watch(Cache* cache) {
    for (Cache* c : caches_)
      if (c == cache) return;
    caches_.push_back(cache);
  }
  /// Remembers `entry` of `core`, handed back at the thread's exit by `release(core, entry)`,
  /// and forgets the entries of PerThreads destroyed since (a long-lived thread that uses many
  /// in turn keeps no record of them). May throw std::bad_alloc.
  void hold(std::weak_ptr<void> core, Release release, void* entry) {
    std::erase_if(held_, [](const Held& h) { return h.core.expired(); });
    held_.push_back(Held{std::move(core), release, entry});
  }
  /// True once the calling thread's ThreadExit ran (trivial: safe to read during the exit).
  static bool& exited() noexcept {
    static thread_local bool e = false;
    return e;
  }
  /// The calling thread's (constructed on first use; not after exited()).
  static ThreadExit& of_this_thread() {
    static thread_local ThreadExit t;
    return t;
  }

 private:
  struct Held {
    std::weak_ptr<void> core;
    Release release;
    void* entry;
  };
  std::vector<Held> held_;
  std::vector<Cache*> caches_;
};

}  // namespace per_thread_detail

/// One default-constructed T per thread (local()) or per caller-given key (of_key(): an id the
/// caller uses for a thread). The first call of a thread takes the registry lock and finds or
/// allocates its T; later calls of that thread read a thread-local cache: no lock, no allocation.
/// A thread's local() T is handed back when the thread exits and given, as it is, to the next
/// thread whose first call finds no T of its own: memory is bounded by the threads alive at once
/// (plus the threads that used it for the first time during their own exit, after the hand-back).
/// A T reached through local() must therefore be fine for any later thread (a cache, a buffer);
/// per-thread state learns that it changed hands from local(bool*). A key's T (of_key()) lives as
/// long as the PerThread. T is never moved, so it may hold a mutex or atomics. Thread-safe; what
/// each T needs beyond that (its own lock, atomics) is the T's business.
template <typename T>
class PerThread {
 public:
  PerThread() : instance_(g_per_thread_instances.fetch_add(1, std::memory_order_relaxed)) {}
  PerThread(const PerThread&) = delete;
  PerThread& operator=(const PerThread&) = delete;

  /// The calling thread's T. May throw std::bad_alloc on the thread's first call only.
  T& local() {
    bool inherited = false;
    return local(&inherited);
  }
  /// The same; `*inherited` is set true when this call gave the thread a T that a thread that
  /// exited had (as it left it), false otherwise.
  T& local(bool* inherited) {
    *inherited = false;
    thread_local per_thread_detail::Cache cache;
    for (const auto& way : cache.ways)
      if (way.instance == instance_) return *static_cast<T*>(way.value);
    if (per_thread_detail::ThreadExit::exited())  // its caches were emptied: not cached, not handed back
      return find_or_add(Key{std::this_thread::get_id(), 0}, nullptr)->value;
    // Before the registry lock (these may allocate): what the thread hands back at its exit.
    per_thread_detail::ThreadExit& exit = per_thread_detail::ThreadExit::of_this_thread();
    exit.watch(&cache);
    Entry* e = find_or_add(Key{std::this_thread::get_id(), 0}, inherited);
    if (!e->held) {
      exit.hold(std::weak_ptr<void>(core_), &release, e);  // may throw: e stays this thread's, uncached
      e->held = true;
    }
    for (int i = per_thread_detail::Cache::kWays - 1; i > 0; --i) cache.ways[i] = cache.ways[i - 1];
    cache.ways[0] = {instance_, &e->value};
    return e->value;
  }

  /// The T of `key` (the caller's id for a thread). Without a lock when the calling thread asked
  /// for the same key last time. May throw std::bad_alloc when the key is new.
  T& of_key(uint64_t key) {
    thread_local KeyCache cache;
    if (cache.instance == instance_ && cache.key == key) return *cache.value;
    T& value = find_or_add(Key{std::thread::id(), key}, nullptr)->value;
    cache = {instance_, key, &value};
    return value;
  }

  /// Calls `f(T&)` for every T whose thread's first call has returned, in the order they were
  /// added, without the registry lock (which local() and of_key() take on a thread's first call):
  /// a caller never waits on a thread stopped inside its first call, as the session's finish
  /// after a signal must not (the handler holds the interrupted thread). A T added meanwhile may
  /// be missed; its thread had not used it yet. Ts handed back by exited threads are walked too
  /// (their contents are still there). The T's own synchronization is the caller's.
  template <typename F>
  void for_each(F&& f) {
    for (Entry* e = core_->first.load(std::memory_order_acquire); e; e = e->next.load(std::memory_order_acquire))
      f(e->value);
  }

  /// Ts allocated so far (held by threads, handed back, or keys'): for tests and diagnostics.
  size_t size() const {
    std::lock_guard lock(core_->mutex);
    return core_->entries.size();
  }

 private:
  struct Key {
    std::thread::id thread;  // local()
    uint64_t key = 0;        // of_key()
    bool operator==(const Key&) const = default;
  };
  struct Entry {
    explicit Entry(Key k) : key(k) {}
    Key key;            // (Core::mutex)
    bool free = false;  // handed back by its exited thread, for the next one (Core::mutex)
    bool held = false;  // its thread's ThreadExit will hand it back (only that thread reads it)
    T value{};
    std::atomic<Entry*> next{nullptr};  // the entry added after this one (for_each)
  };
  /// The registry, shared with the ThreadExits of the threads holding its entries: they hand
  /// their entries back only while it lives.
  struct Core {
    std::mutex mutex;
    std::vector<std::unique_ptr<Entry>> entries;  // (mutex)
    std::atomic<Entry*> first{nullptr};           // the first entry added; each links to the next
  };
  struct KeyCache {
    uint64_t instance = 0;
    uint64_t key = 0;
    T* value = nullptr;
  };

  /// `key`'s entry, else (local(): `inherited` given) one handed back, else a new one.
  Entry* find_or_add(Key key, bool* inherited) {
    Core& c = *core_;
    std::lock_guard lock(c.mutex);
    Entry* spare = nullptr;
    for (auto& e : c.entries) {
      if (!e->free && e->key == key) return e.get();
      if (e->free && !spare) spare = e.get();
    }
    if (spare && inherited) {
      spare->free = false;
      spare->held = false;
      spare->key = key;
      *inherited = true;
      return spare;
    }
    c.entries.push_back(std::make_unique<Entry>(key));
    Entry* added = c.entries.back().get();
    // Published whole, its T constructed, at the end of the list for_each walks.
    (c.entries.size() == 1 ? c.first : c.entries[c.entries.size() - 2]->next).store(added, std::memory_order_release);
    return added;
  }

  /// A thread's ThreadExit: its entry `entry` of `core` is free for the next thread.
  static void release(void* core, void* entry) {
    auto* c = static_cast<Core*>(core);
    auto* e = static_cast<Entry*>(entry);
    std::lock_guard lock(c->mutex);
    e->key = Key{};
    e->free = true;
  }

  const uint64_t instance_;
  const std::shared_ptr<Core> core_ = std::make_shared<Core>();
};

}  // namespace rf::trace
