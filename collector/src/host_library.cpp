// Loading libnvperf_host.so when CUPTI's profiler is first used (host_library.h).
#include "host_library.h"

#include <dlfcn.h>

#include <exception>
#include <string>

#include "rfprof/collector/host_metrics.h"

namespace rf::collector {

namespace detail {

void* open_host_library(const char* name) {
  // The caller of dlopen is this code, so its binary's RUNPATH is searched (dlopen(3)).
  void* handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
  if (handle) return handle;
  const char* why = ::dlerror();
  throw HostApiError(std::string("rfprof: cannot load ") + name +
                     " (CUPTI's profiler host API, needed for counters): " + (why ? why : "unknown error") +
                     "; put the CUDA library folder (e.g. /usr/local/cuda/lib64) in LD_LIBRARY_PATH");
}

}  // namespace detail

void load_host_library() {
  // Never closed: libcupti holds pointers into it for the process's life.
  static const std::exception_ptr failure = []() -> std::exception_ptr {
    try {
      (void)detail::open_host_library("libnvperf_host.so");
      return nullptr;
    } catch (...) {
      return std::current_exception();
    }
  }();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace rf::collector
