// `rfanalyze --import-ncu FILE.csv`: Nsight Compute's raw CSV (`ncu --csv --page raw`, with or
// without ==PROF== and application lines mixed in, base or auto units, thousands separators) turned
// into the launches rfanalyze reports on, so existing ncu logs get rfprof's roofline outputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "rfprof/analyzer/rows.h"

namespace rf::analyzer {

/// Unparseable ncu CSV. what() is "FILE:LINE:COLUMN: problem" (1-based line and column).
class NcuImportError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Fields of one CSV record (RFC 4180: quoted fields may hold commas and doubled quotes; one
/// record per line, as ncu writes). Throws NcuImportError naming `where` and the 1-based column
/// of an unterminated quote or of text after a closing quote.
std::vector<std::string> split_csv_record(std::string_view line, const std::string& where);

/// Value of one ncu metric cell in base units: thousands separators removed, scaled by the unit
/// ("Kbyte" 1e3, "Mbyte" 1e6, "Gbyte" 1e9, "Tbyte" 1e12; "usecond" 1e3 and "msecond" 1e6 ns,
/// "second" 1e9 ns; "Kinst"/"Minst"/"Ginst" likewise; "" and base units 1). Returns nullopt for an
/// empty cell or "n/a". Throws NcuImportError (naming `where`) for text that is not a number or a
/// unit it does not know.
std::optional<double> ncu_cell_value(const std::string& cell, const std::string& unit, const std::string& where);

/// One ncu CSV read as launches: their rows (metrics evaluated with rfprof's formulas, nvtx "",
/// duration from gpu__time_duration.sum when present), metric names and values in base units.
struct NcuImport {
  std::vector<std::string> metric_names;             ///< columns after "CC", as in the header
  std::vector<KernelRow> rows;                       ///< one per launch, in file order
  std::vector<std::vector<double>> values;           ///< per row, one per metric (NaN: empty cell)
  uint32_t pid = 0;                                  ///< "Process ID" of the first row
  std::string process_name, host_name;
  /// The devices of the rows, by "Device" id: the name from the column
  /// device__attribute_display_name when the CSV has it ("" when not, e.g. a --metrics list
  /// without it), compute capability from "CC" ("9.0"). (ncu's device__attribute_chip is a
  /// number, e.g. 384 on an H100, not a chip name: not used.)
  struct Device {
    std::string name;
    uint32_t cc_major = 0, cc_minor = 0;
  };
  std::map<uint32_t, Device> devices;
};

/// Reads `path`. Throws NcuImportError for a file without an ncu raw header, a record with the
/// wrong number of fields, or an unparseable cell (FILE:LINE:COLUMN).
NcuImport read_ncu_csv(const std::filesystem::path& path);

}  // namespace rf::analyzer
