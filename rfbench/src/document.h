// The ceilings JSON rfbench writes (docs/rfbench.md; schema docs/ceilings.md), built without CUDA
// so that a CPU test can feed it to rfanalyze's parser (tests/rfbench/test_rfbench_amounts.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "measure.h"

namespace rfbench {

/// A ceiling not measured because the GPU lacks the hardware, and why.
struct Skipped {
  std::string ceiling;  ///< e.g. "tensor_fp64_flop_per_s"
  std::string reason;   ///< e.g. "sm_86 has no FP64 tensor cores (...)"
};

/// ECMAScript regex matching exactly `s`.
std::string exact_pattern(const std::string& s);

/// {"about", "devices": [one entry "<name> (measured)" with "measured": true, its exact-name
/// pattern, every measured ceiling, "l2_bytes" and a citation], "measurements": [each with its
/// method and runs], "skipped": [{"ceiling", "reason"}...]}. `date` is YYYY-MM-DD.
nlohmann::ordered_json ceilings_document(const DeviceIdentity& device, const std::vector<Measurement>& measurements,
                                         const std::vector<Skipped>& skipped, const Options& options,
                                         const std::string& date);

}  // namespace rfbench
