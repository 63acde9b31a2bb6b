// An "application" for the end-to-end tests without a GPU (test_inject_fake.cpp): linked with the
// fake CUPTI as a shared library (libfakecupti.so, tests/collector/fake_cupti.h), whose CUPTI
// functions come before libcupti's in the process's symbol lookup, it does what cuInit does with
// CUDA_INJECTION64_PATH (dlopen the library, call InitializeInjection), then launches kernels:
//   fake_app                one context; an NVTX range "forward" around 2 x (gemm, relu);
//                           then "loss" outside it
//   fake_app windows        the same, inside cudaProfilerStart/Stop, plus a launch before it
//   fake_app nvtx-first     the same as fake_app, but the library's NVTX entry point is called
//                           first (InitializeInjectionNvtx2, as the NVTX loader does at the first
//                           NVTX call); prints "nvtx-init R" (its result) and "nvtx-forwarded N"
//                           (cuptiNvtxInitialize2 calls). With FAKE_NVTX_REFUSED=1 CUPTI refuses
//                           NVTX (CUPTI_ERROR_NOT_INITIALIZED).
//   fake_app fork-exec      the same as fake_app, then forks a child that execs fake_app (plain),
//                           as a launcher script or a spawned worker does; prints
//                           "child-status S" (the child's exit status) once it ended
// Each launch prints "launch NAME DRIVER_CORRELATION_ID" to stdout; the last line is
// "nvperf_host-loaded 0|1": whether CUPTI's profiler host library (libnvperf_host.so) is loaded.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fake_cupti.h"

namespace {

void run(CUcontext ctx, const char* name, unsigned grid) {
  const uint32_t id = rf::fake_cupti::launch({ctx, name, {grid, 1, 1}, {256, 1, 1}});
  std::printf("launch %s %u\n", name, id);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace rf::fake_cupti;
  const bool windows = argc > 1 && std::strcmp(argv[1], "windows") == 0;
  const bool nvtx_first = argc > 1 && std::strcmp(argv[1], "nvtx-first") == 0;
  const bool fork_exec = argc > 1 && std::strcmp(argv[1], "fork-exec") == 0;
  if (const char* refused = std::getenv("FAKE_NVTX_REFUSED"); refused && std::strcmp(refused, "1") == 0)
    fail("cuptiNvtxInitialize2", CUPTI_ERROR_NOT_INITIALIZED);
  if (const char* inject = std::getenv("CUDA_INJECTION64_PATH"); inject && *inject) {
    void* lib = ::dlopen(inject, RTLD_NOW | RTLD_LOCAL);
    auto init = lib ? reinterpret_cast<int (*)()>(::dlsym(lib, "InitializeInjection")) : nullptr;
    using NvtxInit = int (*)(const void* (*)(uint32_t));
    auto nvtx_init = lib ? reinterpret_cast<NvtxInit>(::dlsym(lib, "InitializeInjectionNvtx2")) : nullptr;
    if (!init || !nvtx_init) {
      std::fprintf(stderr, "fake_app: cannot load %s: %s\n", inject, ::dlerror());
      return 2;
    }
    if (nvtx_first) {
      // NVTX's loader hands over its export table getter; the fake CUPTI never calls it.
      const int r = nvtx_init([](uint32_t) -> const void* { return nullptr; });
      std::printf("nvtx-init %d\nnvtx-forwarded %llu\n", r,
                  static_cast<unsigned long long>(calls("cuptiNvtxInitialize2")));
    }
    init();  // cuInit's call: the session already started, or not at all, stays so
  }
  CUcontext ctx = create_context(1);
  if (windows) {
    run(ctx, "_Z6warmupv", 1);
    profiler_start(ctx);
  }
  nvtx_push("forward");
  for (int i = 0; i < 2; ++i) {
    run(ctx, "_Z4gemmPKfS0_Pf", 128);
    run(ctx, "_Z4reluPf", 64);
  }
  nvtx_pop();
  run(ctx, "_Z4lossPKfPf", 1);
  if (windows) profiler_stop(ctx);
  if (fork_exec) {
    std::fflush(stdout);  // or the child's copy of the buffer is printed twice
    const pid_t child = ::fork();
    if (child == 0) {
      char* const args[] = {argv[0], nullptr};
      ::execv("/proc/self/exe", args);
      ::_exit(127);
    }
    int status = -1;
    if (child > 0) ::waitpid(child, &status, 0);
    std::printf("child-status %d\n", child > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1);
  }
  std::printf("nvperf_host-loaded %d\n", ::dlopen("libnvperf_host.so", RTLD_NOW | RTLD_NOLOAD) != nullptr);
  std::fflush(stdout);
  return 0;
}
