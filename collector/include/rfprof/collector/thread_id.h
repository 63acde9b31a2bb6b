// The calling thread's system thread id, as the trace records it (LaunchApi::thread_id, NVTX
// ranges): gettid(2), cached per thread.
#pragma once

#include <cstdint>

namespace rf::collector {

/// The calling thread's system thread id (gettid), the id `ps -L` and Nsight Systems show.
/// Cached in a thread_local: a read instead of a system call on every launch (85 ns measured on
/// the 2-core CI VM, against 126 ns for the rest of the timing-mode launch path;
/// bench_launch_path BM_ThreadId*). After fork() the child's threads read it again: the forking
/// thread's cache holds the parent's id (a pthread_atfork child handler, registered on the first
/// call, invalidates every cache). Never fails.
uint64_t current_thread_id() noexcept;

}  // namespace rf::collector
