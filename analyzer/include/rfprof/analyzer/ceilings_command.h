// `rfanalyze ceilings`: one chip's ceilings and rooflines alone, before anything is measured.
#pragma once

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>

namespace rf::analyzer {

/// Inputs of `rfanalyze ceilings`.
struct CeilingsOptions {
  std::optional<std::string> device;                ///< --device NAME: the entry to show
  bool list = false;                                ///< --list: the entry names
  std::optional<std::filesystem::path> ceilings;    ///< --ceilings FILE: user entries first
  std::filesystem::path output_dir = ".";           ///< where roofline-<entry>.svg goes
};

/// --list: prints "NAME  (chip CHIP, SOURCE)" per entry, user file first. --device NAME: prints a
/// table of every ceiling of the entry (value, unit, ridge point against DRAM in FLOP/byte,
/// source) to `out` and writes OUTPUT_DIR/roofline-<name>.svg (spaces and slashes in the name
/// become '-') with the entry's roofs alone. Messages go to `err` prefixed "rfanalyze: ".
/// Returns kExitOk, kExitBadInput (no --device or --list, unknown entry, bad ceilings file) or
/// kExitOutputError (the SVG cannot be written). Never throws for bad input.
int run_ceilings(const CeilingsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace rf::analyzer
