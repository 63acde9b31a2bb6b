// CUPTI activity buffers with a bound on the memory they hold. CUPTI asks for a buffer whenever a
// thread's fills (per-thread buffers by default) and gives it back once every record in it is
// complete; if the buffers come back slower than they fill (a slow disk under the writer, a hung
// kernel holding a buffer open), the requests would grow the application's memory without limit.
// Past `max_buffers` outstanding, take() returns nullptr: CUPTI then drops records and counts
// them (cuptiActivityGetNumDroppedRecords), which the trace reports as a CollectorError. Pure
// logic, thread-safe, lock-free.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace rf::collector {

/// The bounded pool CUPTI's buffer-request callback takes from and its buffer-complete callback
/// gives back to (see the file comment). Thread-safe, lock-free.
class ActivityBuffers {
 public:
  /// `buffer_bytes` per buffer (a multiple of 8, CUPTI's alignment), at most `max_buffers`
  /// outstanding (memory bound: buffer_bytes x max_buffers).
  ActivityBuffers(size_t buffer_bytes, size_t max_buffers) noexcept
      : buffer_bytes_(buffer_bytes), max_buffers_(max_buffers) {}

  /// A buffer of buffer_bytes() bytes, 8-byte aligned, or nullptr when max_buffers are
  /// outstanding or the allocation failed (refused() counts both).
  uint8_t* take() noexcept;
  /// Frees a buffer take() returned (nullptr: nothing).
  void give_back(uint8_t* buffer) noexcept;

  /// Size of every buffer (bytes).
  size_t buffer_bytes() const noexcept { return buffer_bytes_; }
  /// Buffers taken and not given back.
  size_t outstanding() const noexcept { return outstanding_.load(std::memory_order_relaxed); }
  /// Requests answered with nullptr so far.
  uint64_t refused() const noexcept { return refused_.load(std::memory_order_relaxed); }

 private:
  size_t buffer_bytes_;
  size_t max_buffers_;
  std::atomic<size_t> outstanding_{0};
  std::atomic<uint64_t> refused_{0};
};

}  // namespace rf::collector
