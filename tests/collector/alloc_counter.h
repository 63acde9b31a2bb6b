// Counts the allocations a thread makes while armed: replaces the global operator new and delete
// of the executable that includes it, so include it in exactly one file of an executable (the
// test). Only operator new is seen, not malloc called directly. To find where an allocation comes
// from: RFPROF_TEST_TRAP_ALLOCATION=1 gdb -batch -ex run -ex bt <test binary>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace rf::test {

/// While true, this thread's allocations are counted in t_allocations, except those of at least
/// kWriterBufferBytes, counted in t_buffer_allocations: a writer's thread buffer (64 KiB + 4 KiB),
/// which a launching thread allocates when it hands a full one over while the flush thread is
/// behind and no written buffer is left to reuse (docs/collector.md, "Launch path"). That depends
/// on how the scheduler treats the flush thread (a loaded CI machine), not on the launch path.
inline thread_local bool t_armed = false;
inline thread_local uint64_t t_allocations = 0;
inline thread_local uint64_t t_buffer_allocations = 0;
inline constexpr std::size_t kWriterBufferBytes = 64u << 10;
/// While armed: the allocation with this 0-based number (counted in t_allocations) throws
/// std::bad_alloc instead; -1: none does.
inline thread_local int64_t t_fail_at = -1;

/// The allocations this thread makes while `f` runs.
template <typename F>
uint64_t allocations_during(F&& f) {
  t_allocations = 0;
  t_buffer_allocations = 0;
  t_armed = true;
  f();
  t_armed = false;
  return t_allocations;
}

/// operator new's body: counts when armed, then allocates `n` bytes aligned to `align` (0: the
/// default). Throws std::bad_alloc.
inline void* counted_allocation(std::size_t n, std::size_t align) {
  if (t_armed && n >= kWriterBufferBytes) {
    ++t_buffer_allocations;
  } else if (t_armed) {
    const bool fail = t_fail_at >= 0 && t_allocations == static_cast<uint64_t>(t_fail_at);
    ++t_allocations;
    if (fail) throw std::bad_alloc();
    if (std::getenv("RFPROF_TEST_TRAP_ALLOCATION")) __builtin_trap();  // to see it in gdb
  }
  if (n == 0) n = 1;
  void* p = align > alignof(std::max_align_t) ? std::aligned_alloc(align, (n + align - 1) / align * align)
                                               : std::malloc(n);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace rf::test

void* operator new(std::size_t n) { return rf::test::counted_allocation(n, 0); }
void* operator new[](std::size_t n) { return rf::test::counted_allocation(n, 0); }
void* operator new(std::size_t n, std::align_val_t a) { return rf::test::counted_allocation(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return rf::test::counted_allocation(n, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
