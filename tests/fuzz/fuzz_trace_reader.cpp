// libFuzzer target: the trace reader on arbitrary bytes, read twice: every record decoded, and as
// rfanalyze's first pass reads it (next_raw, peek_end_ns, decode of the rest). Every input must
// end in records or a typed TraceError: never a crash, a sanitizer report, a hang or an unbounded
// allocation.
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
  try {  // as rfanalyze's first pass: launch and kernel records peeked at, counters skipped
    rf::trace::Reader reader(path);
    rf::trace::RawRecord raw;
    rf::trace::Record record;
    while (reader.next_raw(raw)) {
      if (rf::trace::peek_end_ns(raw)) continue;
      if (raw.type == static_cast<uint16_t>(rf::trace::RecordType::kCounters)) continue;
      if (reader.decode(raw, record))
        if (auto* n = std::get_if<rf::trace::NvtxEvent>(&record)) (void)reader.string(n->name);
    }
  } catch (const rf::trace::TraceError&) {
  }
  return 0;
}
