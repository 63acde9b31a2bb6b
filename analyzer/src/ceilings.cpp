// Ceilings database (datasheet, user file) and per-device resolution (rfprof/analyzer/ceilings.h).
#include "rfprof/analyzer/ceilings.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "rfprof/analyzer/devices_json.h"
#include "rfprof/collector/edit_distance.h"
#include "rfprof/collector/regex_subject.h"

namespace rf::analyzer {
namespace {

using nlohmann::json;

/// Plausible values for one device: a rate (FLOP/s, bytes/s) from 1 MFLOP/s to 100 EFLOP/s, an L2
/// size from 1 KB to 1 TB. Outside them the value is a typo or corrupt, and a roofline of it
/// would span hundreds of decades.
constexpr double kMinRate = 1e6, kMaxRate = 1e20, kMinSize = 1e3, kMaxSize = 1e12;

std::optional<double> number_field(const json& e, const char* key, const std::string& where,
                                   double min = kMinRate, double max = kMaxRate) {
  if (!e.contains(key) || e[key].is_null()) return std::nullopt;
  if (!e[key].is_number()) throw CeilingsError(where + ": \"" + key + "\" must be a number or null");
  double v = e[key].get<double>();
  if (!(v > 0.0)) throw CeilingsError(where + ": \"" + key + "\" must be positive");
  if (!(v >= min && v <= max)) {
    std::ostringstream msg;
    msg << where << ": \"" << key << "\" = " << v << " is outside the plausible range " << min << " to " << max
        << (max == kMaxRate ? " (FLOP/s or bytes/s of one device)" : " (bytes)");
    throw CeilingsError(msg.str());
  }
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

/// The keys of a ceilings entry (analyzer/data/devices.json's schema, and rfbench's "measured").
const std::vector<std::string>& entry_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> k = {"name", "chip", "patterns", "citation", "measured", "fp64_flop_per_s",
                                  "fp32_flop_per_s", "fp16_flop_per_s", "dram_bytes_per_s", "l2_bytes_per_s", "l2_bytes"};
    for (const char* t : kTensorCeilingKeys) k.emplace_back(t);
    return k;
  }();
  return keys;
}

bool known_entry_key(const std::string& key) {
  const auto& keys = entry_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

/// The schema key nearest `key` in edit distance (Levenshtein), for the message naming a typo.
std::string closest_entry_key(const std::string& key) {
  const std::string k = key.substr(0, 200);  // a hostile key costs no more than this
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& candidate : entry_keys()) {
    const size_t distance = collector::edit_distance(k, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  return best;
}

}  // namespace

const CeilingDb& CeilingDb::builtin() {
  static const CeilingDb db = parse(generated::kDevicesJson, "built-in analyzer/data/devices.json");
  return db;
}

CeilingDb CeilingDb::parse(std::string_view json_text, const std::string& origin) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {
    throw CeilingsError(origin + ": not valid JSON: " + e.what());
  }
  if (!doc.is_object() || !doc.contains("devices") || !doc["devices"].is_array())
    throw CeilingsError(origin + ": expected {\"devices\": [...]} (schema: analyzer/data/devices.json)");
  CeilingDb db;
  const json& list = doc["devices"];
  for (size_t i = 0; i < list.size(); ++i) {
    const json& e = list[i];
    std::string where = origin + ": devices[" + std::to_string(i) + "]";
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      throw CeilingsError(where + ": expected an object with a string \"name\"");
    CeilingEntry c;
    c.name = e["name"].get<std::string>();
    where += " (\"" + c.name + "\")";
    if (e.contains("chip") && !e["chip"].is_null()) {
      if (!e["chip"].is_string()) throw CeilingsError(where + ": \"chip\" must be a string");
      c.chip = e["chip"].get<std::string>();
    }
    if (e.contains("patterns")) {
      if (!e["patterns"].is_array()) throw CeilingsError(where + ": \"patterns\" must be a list of strings");
      for (const auto& p : e["patterns"]) {
        if (!p.is_string()) throw CeilingsError(where + ": \"patterns\" must be a list of strings");
        c.patterns.push_back(p.get<std::string>());
      }
    }
    // A key the schema does not have is a mistake, not a comment: "fp32_flops_per_s" or
    // "tensor_int8_flop_per_s" left the datasheet's value in place without a word.
    for (const auto& [key, value] : e.items())
      if (!known_entry_key(key))
        throw CeilingsError(where + ": \"" + key + "\" is not a ceilings key (closest: \"" + closest_entry_key(key) +
                            "\"; schema: analyzer/data/devices.json)");
    c.fp64_flop_per_s = number_field(e, "fp64_flop_per_s", where);
    c.fp32_flop_per_s = number_field(e, "fp32_flop_per_s", where);
    c.fp16_flop_per_s = number_field(e, "fp16_flop_per_s", where);
    for (size_t p = 0; p < kTensorPrecisions; ++p)
      c.tensor_flop_per_s[p] = number_field(e, kTensorCeilingKeys[p], where);
    c.dram_bytes_per_s = number_field(e, "dram_bytes_per_s", where);
    c.l2_bytes_per_s = number_field(e, "l2_bytes_per_s", where);
    c.l2_bytes = number_field(e, "l2_bytes", where, kMinSize, kMaxSize);
    if (e.contains("citation") && !e["citation"].is_null()) {
      if (!e["citation"].is_string()) throw CeilingsError(where + ": \"citation\" must be a string");
      c.citation = e["citation"].get<std::string>();
    }
    if (e.contains("measured")) {
      if (!e["measured"].is_boolean()) throw CeilingsError(where + ": \"measured\" must be true or false");
      c.measured = e["measured"].get<bool>();
    }
    std::vector<std::regex> compiled;
    for (const auto& p : c.patterns) {
      try {
        compiled.emplace_back(p, std::regex::ECMAScript | std::regex::icase);
      } catch (const std::regex_error& err) {
        throw CeilingsError(where + ": pattern \"" + p + "\" is not a valid regex: " + err.what());
      }
    }
    db.entries_.push_back(std::move(c));
    db.compiled_.push_back(std::move(compiled));
  }
  return db;
}

CeilingDb CeilingDb::from_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw CeilingsError("ceilings file " + path.string() + ": is a directory (expected a JSON file)");
  std::ifstream in(path);
  if (!in) throw CeilingsError("ceilings file " + path.string() + ": cannot be opened");
  std::ostringstream text;
  text << in.rdbuf();
  return parse(text.str(), "ceilings file " + path.string());
}

const CeilingEntry* CeilingDb::match(std::string_view device_name, std::string_view chip) const {
  // The name comes from the trace: searched in its first bytes only (collector/regex_subject.h).
  const std::string name(collector::regex_subject(device_name));
  for (size_t i = 0; i < entries_.size(); ++i) {
    const CeilingEntry& e = entries_[i];
    if (!e.chip.empty() && !chip.empty() && lower(e.chip) != lower(chip)) continue;
    for (const auto& re : compiled_[i])
      if (std::regex_search(name, re)) return &e;
  }
  return nullptr;
}

const CeilingEntry* CeilingDb::find(std::string_view entry_name) const {
  for (const auto& e : entries_)
    if (lower(e.name) == lower(entry_name)) return &e;
  return nullptr;
}

void validate_forced_device(const CeilingSources& sources) {
  if (!sources.forced) return;
  if ((sources.user && sources.user->find(*sources.forced)) ||
      (sources.datasheet && sources.datasheet->find(*sources.forced)))
    return;
  std::string known;
  for (const CeilingDb* db : {sources.user, sources.datasheet}) {
    if (!db) continue;
    for (const auto& e : db->entries()) known += (known.empty() ? "" : ", ") + ("\"" + e.name + "\"");
  }
  throw CeilingsError("--device \"" + *sources.forced + "\": no such ceilings entry; known entries: " +
                      known);
}

DeviceCeilings resolve_ceilings(std::string_view device_name, std::string_view chip,
                                uint64_t reported_bandwidth_kbps, const CeilingSources& sources) {
  const CeilingEntry* user = nullptr;
  const CeilingEntry* sheet = nullptr;
  if (sources.forced) {
    if (sources.user) user = sources.user->find(*sources.forced);
    if (sources.datasheet) sheet = sources.datasheet->find(*sources.forced);
    // A user entry named for its GPU ("NVIDIA H100 80GB HBM3 (measured)", as rfbench names it)
    // takes the values it lacks from the datasheet entry that GPU matches, as a trace of that GPU
    // does; --device with rfbench's name gave only the measured values.
    if (user && !sheet && sources.datasheet) sheet = sources.datasheet->match(user->name, user->chip);
  } else {
    if (sources.user) user = sources.user->match(device_name, chip);
    if (sources.datasheet) sheet = sources.datasheet->match(device_name, chip);
  }
  DeviceCeilings out;
  if (user) out.user_entry = user->name;
  if (sheet) out.datasheet_entry = sheet->name;
  // Per value: the user entry's, else the datasheet's. A measured user value keeps the datasheet
  // value next to it for the 80-100 % check.
  auto pick = [&](const std::optional<double>& user_value, const std::optional<double>& sheet_value) {
    Ceiling c;
    if (user && user_value) {
      c.value = user_value;
      c.measured = user->measured;
      c.source = user->measured ? "measured: " + sources.user_path + " (" + user->citation + ")"
                                : "user file: " + sources.user_path;
      if (c.measured && sheet) c.datasheet = sheet_value;
    } else if (sheet && sheet_value) {
      c.value = sheet_value;
      c.source = "datasheet: " + sheet->name + " (" + sheet->citation + ")";
    }
    return c;
  };
  auto field = [&](std::optional<double> CeilingEntry::*f) {
    return pick(user ? user->*f : std::nullopt, sheet ? sheet->*f : std::nullopt);
  };
  out.fp64 = field(&CeilingEntry::fp64_flop_per_s);
  out.fp32 = field(&CeilingEntry::fp32_flop_per_s);
  out.fp16 = field(&CeilingEntry::fp16_flop_per_s);
  for (size_t p = 0; p < kTensorPrecisions; ++p)
    out.tensor[p] = pick(user ? user->tensor_flop_per_s[p] : std::nullopt,
                         sheet ? sheet->tensor_flop_per_s[p] : std::nullopt);
  out.dram = field(&CeilingEntry::dram_bytes_per_s);
  out.l2_bandwidth = field(&CeilingEntry::l2_bytes_per_s);
  out.l2_bytes = field(&CeilingEntry::l2_bytes);
  if (!out.dram.value && reported_bandwidth_kbps != 0) {
    out.dram.value = static_cast<double>(reported_bandwidth_kbps) * 1000.0;
    out.dram.source = "device: CUPTI globalMemoryBandwidth";
  }
  return out;
}

}  // namespace rf::analyzer
