// Helpers of the ncu import tests (test_ncu_import_pages.cpp, test_ncu_import_records.cpp).
#pragma once

#include <filesystem>
#include <fstream>
#include <string>

#include "rfprof/analyzer/ncu_import.h"

namespace rf::analyzer::testing {

/// Writes `text` to `p` as it is (binary: CRLF and byte order marks stay).
inline void write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

/// read_ncu_csv(`p`)'s NcuImportError message, or "no error".
inline std::string import_error_of(const std::filesystem::path& p) {
  try {
    read_ncu_csv(p);
  } catch (const NcuImportError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace rf::analyzer::testing
