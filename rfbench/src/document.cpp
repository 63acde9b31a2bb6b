// The ceilings JSON of rfbench (document.h).
#include "document.h"

namespace rfbench {

std::string exact_pattern(const std::string& s) {
  std::string out = "^";
  for (char c : s) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out + "$";
}

nlohmann::ordered_json ceilings_document(const DeviceIdentity& device, const std::vector<Measurement>& measurements,
                                         const std::vector<Skipped>& skipped, const Options& options,
                                         const std::string& date) {
  nlohmann::ordered_json entry;
  entry["name"] = device.name + " (measured)";
  entry["measured"] = true;
  entry["patterns"] = {exact_pattern(device.name)};
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& m : measurements) {
    entry[m.ceiling] = m.value;
    list.push_back({{"ceiling", m.ceiling}, {"value", m.value}, {"unit", m.unit}, {"method", m.method}, {"runs", m.runs}});
  }
  if (device.l2_bytes > 0) entry["l2_bytes"] = device.l2_bytes;  // cudaDeviceProp::l2CacheSize
  entry["citation"] = "measured by rfbench on " + date + ", device " + std::to_string(options.device) + " (sm_" +
                      std::to_string(device.cc_major) + std::to_string(device.cc_minor) + "), best of " +
                      std::to_string(options.runs) + " runs" + (options.quick ? " (--quick)" : "") +
                      "; l2_bytes: cudaDeviceProp::l2CacheSize";
  nlohmann::ordered_json skips = nlohmann::ordered_json::array();
  for (const auto& s : skipped) skips.push_back({{"ceiling", s.ceiling}, {"reason", s.reason}});
  nlohmann::ordered_json doc;
  doc["about"] = "Ceilings measured by rfbench (docs/rfbench.md); use with rfanalyze --ceilings FILE.";
  doc["devices"] = nlohmann::ordered_json::array({entry});
  doc["measurements"] = list;
  doc["skipped"] = skips;
  return doc;
}

}  // namespace rfbench
