// `rfanalyze --import-ncu FILE.csv`: Nsight Compute's CSV (`ncu --csv --page raw`, one row per
// launch, or `ncu --csv` alone, whose details page has one row per launch and metric; with or
// without ==PROF== and application lines mixed in, base or auto units, thousands separators)
// turned into the launches rfanalyze reports on, so existing ncu logs get rfprof's roofline
// outputs.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <map>
#include <optional>
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

/// Fields of one CSV record (RFC 4180: quoted fields may hold commas, doubled quotes and
/// newlines; read_ncu_csv joins a record's lines). Throws NcuImportError naming `where` and the 1-based column
/// of an unterminated quote or of text after a closing quote.
std::vector<std::string> split_csv_record(std::string_view line, const std::string& where);

/// Value of one ncu metric cell in base units, scaled by the unit ("Kbyte" 1e3, "Mbyte" 1e6,
/// "Gbyte" 1e9, "Tbyte" 1e12; "usecond" 1e3 and "msecond" 1e6 ns, "second" 1e9 ns;
/// "Kinst"/"Minst"/"Ginst" likewise; "" and base units 1). The number is read as ncu writes it in
/// the C locale: "1,234,567.5" (',' between groups of three digits, '.' before the decimals),
/// "1.5e3", "inf", "nan". Returns nullopt for an empty cell or "n/a". Throws NcuImportError (naming
/// `where`) for text that is not such a number ("65,77", "27.595.520": another locale's) or a unit
/// it does not know.
std::optional<double> ncu_cell_value(const std::string& cell, const std::string& unit, const std::string& where);

/// Factor from ncu's unit `unit` to rfprof's base unit (bytes, ns, instructions, sectors, cycles):
/// "Mbyte" 1e6, "usecond" 1e3, "second" 1e9, "" and base units 1; nullopt for a unit it does not
/// know. ncu prints scaled units under its default `--print-units auto`.
std::optional<double> ncu_unit_scale(const std::string& unit);

/// Whether `cell` is a number as a locale other than C writes it, which ncu's C-locale CSV never
/// holds: a ',' after the last '.' that is not a thousands separator ("65,77", "367.084,80"), or
/// '.' between three or more groups of three digits ("27.595.520"). A single "156.448" cannot be
/// told from a C-locale decimal and is not one.
bool other_locale_number(std::string_view cell);

/// One ncu CSV read as launches: their rows (metrics evaluated with rfprof's formulas, nvtx "",
/// duration from gpu__time_duration.sum when present), metric names and values in base units.
struct NcuImport {
  /// The raw page's columns after "CC", as in the header; from the details page, the metric
  /// names of its rows in order of first appearance.
  std::vector<std::string> metric_names;
  std::vector<KernelRow> rows;                       ///< one per launch, in file order
  std::vector<std::vector<double>> values;           ///< per row, one per metric (NaN: no value)
  /// A device of a process's rows, by "Device" id: the name from the column
  /// device__attribute_display_name when the CSV has it ("" when not, e.g. a --metrics list
  /// without it), compute capability from "CC" ("9.0"). (ncu's device__attribute_chip is a
  /// number, e.g. 384 on an H100, not a chip name: not used.)
  /// A device, from its launches' "Device", "CC" and (raw page) device__attribute_* columns;
  /// 0: not in the file.
  struct Device {
    std::string name;
    uint32_t cc_major = 0, cc_minor = 0;
    uint32_t sm_count = 0;               ///< device__attribute_multiprocessor_count
    uint32_t core_clock_khz = 0;         ///< device__attribute_clock_rate (kHz)
    uint32_t memory_clock_khz = 0;       ///< device__attribute_memory_clock_rate (kHz)
    uint32_t memory_bus_width_bits = 0;  ///< device__attribute_global_memory_bus_width (bits)
    uint32_t l2_cache_bytes = 0;         ///< device__attribute_l2_cache_size (bytes)
  };
  /// One profiled process (ncu profiles every process of the command by default): "Process ID",
  /// "Process Name" and "Host Name" of its rows, the indexes of its rows in `rows`, its devices.
  struct Process {
    uint32_t pid = 0;
    std::string name, host;
    std::vector<size_t> rows;
    std::map<uint32_t, Device> devices;
  };
  std::vector<Process> processes;  ///< in order of their first row
  /// The first metric a formula uses that ncu printed in a scaled unit (ncu's default
  /// `--print-units auto`, e.g. dram__bytes_read.sum in "Mbyte"), and that unit; both empty when
  /// every such metric is in base units. Auto units keep ncu's two decimals ("14.68 Mbyte" for
  /// 14,683,392 bytes), so these values are that far off.
  std::string scaled_metric, scaled_unit;
  /// A rate from ncu's roofline sections (SpeedOfLight_*RooflineChart collect the SASS counts as
  /// "....sum.per_cycle_elapsed" and DRAM as "dram__bytes.sum.per_second") whose count the file
  /// lacks ("....sum", "dram__bytes_read.sum"): its launches have no FLOP or bytes. Empty when
  /// none, or when the counts are there too.
  std::string rate_metric;
  /// True when the file has metrics but no formula uses any of them (neither
  /// gpu__time_duration.sum, nor a FLOP count, nor dram__bytes_*: a CSV written with
  /// --print-metric-name label, or a --section page of display names) and rate_metric is empty:
  /// its launches have no duration, FLOP or bytes.
  bool no_used_metric = false;
};

/// Reads `path`, a raw or a details page. Throws NcuImportError (FILE:LINE:COLUMN: problem) for a
/// file without an ncu header (UTF-16 and a second header named as such), a metric column named
/// twice in the raw page's header, a record with the wrong number of fields, a record whose quote
/// stays open past 1 MiB (a quoted field may hold newlines: its lines are joined), an unquoted
/// line that reads as a record (the header's field count, a number as ID: ncu quotes every field;
/// other unquoted lines are the application's and skipped), a raw-page ID given twice, a
/// details-page launch whose rows are not together, a metric a formula uses that is not a number
/// in a known unit, a gpu__time_duration.sum that is negative, infinite or 2^53 ns or more, a
/// Block Size or Grid Size part above INT32_MAX, or any cell written in another locale than C
/// (other_locale_number: its values would be read wrongly).
NcuImport read_ncu_csv(const std::filesystem::path& path);

}  // namespace rf::analyzer
