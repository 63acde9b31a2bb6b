// Loads librfinject.so the way the CUDA driver and the NVTX loader do (dlopen + dlsym) and calls
// an entry point. Run as a subprocess by test_inject_dlopen; links nothing of rfprof.
//   inject_dlopen_helper <librfinject.so> cuda   -> InitializeInjection() twice
//   inject_dlopen_helper <librfinject.so> nvtx   -> InitializeInjectionNvtx2(table) then InitializeInjection()
// Prints "<entry> returned <n>" lines on stdout; exit code 0 unless loading failed.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstring>

namespace {

const void* empty_export_table(uint32_t) { return nullptr; }

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stdout, "usage: %s <librfinject.so> cuda|nvtx\n", argv[0]);
    return 2;
  }
  void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stdout, "dlopen failed: %s\n", dlerror());
    return 3;
  }
  using CudaInit = int (*)();
  using NvtxInit = int (*)(const void* (*)(uint32_t));
  auto cuda = reinterpret_cast<CudaInit>(dlsym(lib, "InitializeInjection"));
  auto nvtx = reinterpret_cast<NvtxInit>(dlsym(lib, "InitializeInjectionNvtx2"));
  if (!cuda || !nvtx) {
    std::fprintf(stdout, "dlsym failed\n");
    return 4;
  }
  if (std::strcmp(argv[2], "nvtx") == 0) {
    std::fprintf(stdout, "InitializeInjectionNvtx2 returned %d\n", nvtx(empty_export_table));
    std::fprintf(stdout, "InitializeInjection returned %d\n", cuda());
  } else {
    std::fprintf(stdout, "InitializeInjection returned %d\n", cuda());
    std::fprintf(stdout, "InitializeInjection returned %d\n", cuda());
  }
  std::fflush(stdout);
  return 0;
}
