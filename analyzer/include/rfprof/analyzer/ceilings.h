// Roofline ceilings of a device: peak FLOP/s per precision and DRAM bandwidth, with their source.
// The datasheet database is analyzer/data/devices.json, compiled into rfanalyze at build time
// (CMake reads it into a generated header), so the executable needs no data file at run time.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <regex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "rfprof/analyzer/flops.h"

namespace rf::analyzer {

/// JSON keys of the dense tensor-core peaks, in kTensorPrecisionNames order (FLOP/s; INT8 OP/s).
inline constexpr std::array<const char*, kTensorPrecisions> kTensorCeilingKeys = {
    "tensor_fp64_flop_per_s", "tensor_tf32_flop_per_s", "tensor_fp16_flop_per_s",
    "tensor_bf16_flop_per_s", "tensor_fp8_flop_per_s",  "tensor_int8_op_per_s"};

/// A ceilings file or database that cannot be used. what() names the file, entry and problem.
class CeilingsError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// One device of a ceilings database (schema: analyzer/data/devices.json).
struct CeilingEntry {
  std::string name;                         ///< e.g. "H100 SXM5"
  std::string chip;                         ///< e.g. "GH100"; "" matches any chip
  std::vector<std::string> patterns;        ///< regexes searched in DeviceInfo's name (icase)
  std::optional<double> fp64_flop_per_s;    ///< FLOP/s, non-tensor
  std::optional<double> fp32_flop_per_s;    ///< FLOP/s, non-tensor
  std::optional<double> fp16_flop_per_s;    ///< FLOP/s, non-tensor
  /// Dense tensor-core peaks per precision (kTensorPrecisionNames order): FLOP/s, INT8 OP/s.
  std::array<std::optional<double>, kTensorPrecisions> tensor_flop_per_s;
  std::optional<double> dram_bytes_per_s;   ///< bytes/s
  std::optional<double> l2_bytes_per_s;     ///< L2 bandwidth, bytes/s (measured by rfbench)
  std::optional<double> l2_bytes;           ///< bytes
  std::string citation;                     ///< datasheet title and URL, or how it was measured
  bool measured = false;                    ///< "measured": true (rfbench): values are measured
};

/// An ordered list of CeilingEntry; the first entry that matches a device wins.
class CeilingDb {
 public:
  /// The datasheet database compiled into rfanalyze (analyzer/data/devices.json).
  static const CeilingDb& builtin();
  /// Parses JSON text `{"devices": [entry...]}`. `origin` names the text in errors. Throws
  /// CeilingsError for invalid JSON, a wrong shape, a negative or non-numeric value, a bad regex.
  static CeilingDb parse(std::string_view json_text, const std::string& origin);
  /// Reads and parses a file. Throws CeilingsError naming `path`.
  static CeilingDb from_file(const std::filesystem::path& path);

  /// The first entry whose chip agrees with `chip` (when both are non-empty) and one of whose
  /// patterns is found in `device_name`; nullptr when none.
  const CeilingEntry* match(std::string_view device_name, std::string_view chip) const;
  /// The entry named `entry_name` (case-insensitive); nullptr when none.
  const CeilingEntry* find(std::string_view entry_name) const;
  const std::vector<CeilingEntry>& entries() const noexcept { return entries_; }

 private:
  std::vector<CeilingEntry> entries_;
  std::vector<std::vector<std::regex>> compiled_;
};

/// One ceiling value and where it came from: "datasheet: <entry> (<citation>)", "user file: PATH",
/// "measured: PATH (<citation>)" for a user entry marked measured, or "device: CUPTI
/// globalMemoryBandwidth" (DRAM only, when no entry gives it).
struct Ceiling {
  std::optional<double> value;
  std::string source;
  bool measured = false;               ///< from a user entry marked measured
  std::optional<double> datasheet;     ///< the datasheet's value, when `value` is measured
  /// value / datasheet for a measured value with a datasheet value; a measured ceiling outside
  /// 0.8..1.0 of its datasheet value is reported (summary.json "ceiling_checks").
  std::optional<double> ratio_to_datasheet() const {
    if (!measured || !value || !datasheet) return std::nullopt;
    return *value / *datasheet;
  }
};

/// The ceilings used for one device.
struct DeviceCeilings {
  std::string datasheet_entry;  ///< name of the matched datasheet entry ("" when none)
  std::string user_entry;       ///< name of the matched user-file entry ("" when none)
  Ceiling fp64;                 ///< FLOP/s
  Ceiling fp32;                 ///< FLOP/s
  Ceiling fp16;                 ///< FLOP/s
  /// Dense tensor-core peaks (kTensorPrecisionNames order): FLOP/s, INT8 OP/s. A sparse tensor
  /// term's peak is twice its dense one (2:4 sparsity, as NVIDIA states sparse peaks).
  std::array<Ceiling, kTensorPrecisions> tensor;
  Ceiling dram;                 ///< bytes/s
  Ceiling l2_bandwidth;         ///< bytes/s
  Ceiling l2_bytes;             ///< bytes
};

/// How to pick ceilings for the devices of a run.
struct CeilingSources {
  const CeilingDb* datasheet = nullptr;  ///< usually &CeilingDb::builtin()
  const CeilingDb* user = nullptr;       ///< --ceilings FILE, or nullptr
  std::string user_path;                 ///< FILE, for the source strings
  std::optional<std::string> forced;     ///< --device NAME: use this entry for every device
};

/// Checks that `sources.forced`, if set, names an entry of the user file or the datasheet.
/// Throws CeilingsError listing the known entry names otherwise.
void validate_forced_device(const CeilingSources& sources);

/// Ceilings of a device named `device_name` with chip `chip`: per value, the user file's entry
/// first, then the datasheet's; with `forced`, the entries of that name instead of matching.
/// `reported_bandwidth_kbps` (DeviceInfo::global_memory_bandwidth_kbps, KB/s = 1000 bytes/s) is
/// the DRAM ceiling of last resort (0: none).
DeviceCeilings resolve_ceilings(std::string_view device_name, std::string_view chip,
                                uint64_t reported_bandwidth_kbps, const CeilingSources& sources);

}  // namespace rf::analyzer
