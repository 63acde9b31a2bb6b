// A consumer thread fed in batches: rfanalyze serializes trace.json (ChromeTrace::add_launch, the
// costliest output per launch) on it while the main thread writes the CSV outputs.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

namespace rf::analyzer {

/// Calls `consume` for every item given to add(), in the order given, on one thread of its own.
/// Items are copied into batches of `batch_items`; at most `batches` batches exist (one filling,
/// the others queued or being consumed), so memory is bounded by batches x batch_items items and
/// add() waits while they are all in use. When no thread can be started (std::system_error), or
/// `threaded` is false, add() calls `consume` itself.
///
/// An exception thrown by `consume` is kept: the items after it are dropped, and drain() rethrows
/// it. The destructor stops the thread after the batch it is consuming and drops the rest (a
/// caller that keeps the output calls drain() first). add() and drain() are for one thread.
template <typename Item>
class BatchThread {
 public:
  explicit BatchThread(std::function<void(const Item&)> consume, size_t batch_items = 1024, size_t batches = 3,
                       bool threaded = true)
      : consume_(std::move(consume)), batch_items_(std::max<size_t>(batch_items, 1)) {
    for (size_t i = 1; i < std::max<size_t>(batches, 2); ++i) free_.emplace_back();
    if (!threaded) return;  // tests: the inline mode, as when no thread can be started
    try {
      worker_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      // No thread: add() consumes inline.
    }
  }
  ~BatchThread() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    if (worker_.joinable()) worker_.join();
  }
  BatchThread(const BatchThread&) = delete;
  BatchThread& operator=(const BatchThread&) = delete;

  /// Copies `item` into the batch being filled (assignment, reusing the memory of the item that
  /// was there); hands the batch to the thread when full, waiting for a free one if needed.
  void add(const Item& item) {
    add_by([&](Item& slot) { slot = item; });
  }
  /// add() with the batch's slot filled by `assign(Item&)` (e.g. a copy without the fields the
  /// consumer must not see, such as views into memory the caller reuses). Inline mode: `assign`
  /// fills a fresh Item, then consumed; an exception from `consume` comes out of here.
  template <typename Assign>
  void add_by(Assign&& assign) {
    if (!worker_.joinable()) {
      Item item{};
      assign(item);
      consume_(item);
      return;
    }
    if (filling_.size == filling_.items.size()) filling_.items.emplace_back();
    assign(filling_.items[filling_.size]);
    if (++filling_.size == batch_items_) submit();
  }

  /// Returns once every item added so far has been consumed; rethrows the exception `consume`
  /// threw, if any (then the items after it were dropped).
  void drain() {
    if (!worker_.joinable()) return;
    if (filling_.size > 0) submit();
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return queue_.empty() && !busy_; });
    if (error_) std::rethrow_exception(error_);
  }

  /// Whether the items are consumed on a thread of their own (false: inline, by add()).
  bool threaded() const noexcept { return worker_.joinable(); }

 private:
  struct Batch {
    std::vector<Item> items;  // items[0, size) are this batch's; the rest keep memory for reuse
    size_t size = 0;
  };

  void submit() {
    std::unique_lock lock(mutex_);
    queue_.push_back(std::move(filling_));
    ready_.notify_one();
    done_.wait(lock, [&] { return !free_.empty(); });
    filling_ = std::move(free_.back());
    free_.pop_back();
    filling_.size = 0;
  }

  void run() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      Batch batch = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
      const bool failed = error_ != nullptr;
      lock.unlock();
      std::exception_ptr error;
      if (!failed) {
        try {
          for (size_t i = 0; i < batch.size; ++i) consume_(batch.items[i]);
        } catch (...) {
          error = std::current_exception();
        }
      }
      lock.lock();
      if (error) error_ = error;
      busy_ = false;
      free_.push_back(std::move(batch));
      done_.notify_all();
    }
  }

  std::function<void(const Item&)> consume_;
  size_t batch_items_;
  Batch filling_;  // the main thread's, never shared
  std::mutex mutex_;
  std::condition_variable ready_;  // a batch queued, or stop_
  std::condition_variable done_;   // a batch consumed (free_ gained one, maybe queue_ empty)
  std::deque<Batch> queue_;
  std::vector<Batch> free_;
  std::exception_ptr error_;
  bool busy_ = false;
  bool stop_ = false;
  std::thread worker_;  // last: started once everything it uses exists
};

}  // namespace rf::analyzer
