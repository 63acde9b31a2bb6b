// libnvperf_host.so, the library behind CUPTI's profiler host API, loaded when first needed.
//
// libcupti dlopen()s "libnvperf_host.so" by name at its first profiler call, and a dlopen from
// libcupti (no RUNPATH) searches only LD_LIBRARY_PATH and the ld.so cache. rfprof loads it first,
// from its own search path (LD_LIBRARY_PATH, then the RUNPATH of the binary holding this code:
// librfinject.so, rfprof; then the ld.so cache), so libcupti finds it already loaded wherever CUDA
// is installed. It is not linked (DT_NEEDED): its static constructors take about 110 MB of memory
// and 40-160 ms at load (measured on a 2-core Xeon, docs/collector.md), which a timing-only session
// and the rfprof launcher never need.
#pragma once

namespace rf::collector {

/// Loads libnvperf_host.so once per process (thread-safe); later calls return at once, or throw
/// the first call's error again. Call it before any CUPTI profiler call (cuptiProfilerInitialize,
/// cuptiProfilerHost*). Throws HostApiError "rfprof: cannot load libnvperf_host.so (...): <dlerror>"
/// when it is not found or not loadable.
void load_host_library();

namespace detail {
/// dlopen(name, RTLD_NOW | RTLD_LOCAL) from this library's code, kept open for the process's
/// life. Returns the handle; throws HostApiError naming `name`, what it is for and dlerror().
void* open_host_library(const char* name);
}  // namespace detail

}  // namespace rf::collector
