// libFuzzer target: rfanalyze --import-ncu's CSV reader on arbitrary text. Every input must end
// in launches or a typed NcuImportError naming line and column.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>

#include "rfprof/analyzer/ncu_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path =
      (std::filesystem::temp_directory_path() / ("rfprof-fuzz-ncu-" + std::to_string(::getpid()) + ".csv")).string();
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
    rf::analyzer::NcuImport imp = rf::analyzer::read_ncu_csv(path);
    (void)imp.rows.size();
  } catch (const rf::analyzer::NcuImportError&) {
  }
  return 0;
}
