// libFuzzer target: the trace reader on arbitrary bytes. Every input must end in records or a
// typed TraceError: never a crash, a sanitizer report, a hang or an unbounded allocation.
// Built by scripts/run-tests with clang (-DRFPROF_FUZZ=ON), run for a bounded time in CI.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "rfprof/trace/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("rfprof-fuzz-trace-" + std::to_string(::getpid()) + ".rftrace")).string();
  static const struct Cleanup {  // removed when libFuzzer exits (-max_total_time, -runs)
    ~Cleanup() { std::remove(path.c_str()); }
  } cleanup;
  if (FILE* f = std::fopen(path.c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  } else {
    return 0;
  }
  try {
    rf::trace::Reader reader(path);
    rf::trace::Record record;
    size_t n = 0;
    while (reader.next(record)) {
      // Resolve strings as the analyzer does (the reader has checked every id is defined).
      if (auto* k = std::get_if<rf::trace::KernelActivity>(&record)) (void)reader.string(k->demangled_name);
      ++n;
    }
    (void)reader.truncated_at();
  } catch (const rf::trace::TraceError&) {
    // the typed error is the expected outcome for hostile bytes
  }
  return 0;
}
