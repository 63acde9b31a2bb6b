// `rfanalyze ceilings` (rfprof/analyzer/ceilings_command.h).
#include "rfprof/analyzer/ceilings_command.h"

#include <algorithm>
#include <cstdio>
#include <vector>
#include <fstream>

#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/ceilings.h"
#include "rfprof/analyzer/roofline_charts.h"

namespace rf::analyzer {
namespace {

std::string slug(const std::string& name) {
  std::string out;
  for (char c : name) out += (c == ' ' || c == '/' || c == '\\') ? '-' : c;
  return out;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

}  // namespace

int run_ceilings(const CeilingsOptions& options, std::ostream& out, std::ostream& err) {
  CeilingDb user_db;
  CeilingSources sources;
  sources.datasheet = &CeilingDb::builtin();
  try {
    if (options.ceilings) {
      user_db = CeilingDb::from_file(*options.ceilings);
      sources.user = &user_db;
      sources.user_path = options.ceilings->string();
    }
    if (options.list) {
      for (const CeilingDb* db : {sources.user, sources.datasheet}) {
        if (!db) continue;
        for (const auto& e : db->entries())
          out << e.name << "  (chip " << (e.chip.empty() ? "any" : e.chip) << ", "
              << (db == sources.user ? "user file " + sources.user_path : std::string("datasheet")) << ")\n";
      }
      if (!options.device) return kExitOk;
    }
    if (!options.device) {
      err << "rfanalyze: ceilings: expected --device NAME or --list\n";
      return kExitBadInput;
    }
    sources.forced = options.device;
    validate_forced_device(sources);
  } catch (const CeilingsError& e) {
    err << "rfanalyze: " << e.what() << "\n";
    return kExitBadInput;
  }

  const DeviceCeilings c = resolve_ceilings("", "", 0, sources);
  const std::string name = !c.user_entry.empty() ? c.user_entry : c.datasheet_entry;
  out << "ceilings of " << name << "\n";
  out << "ceiling,value,unit,ridge_flop_per_byte,source\n";
  std::vector<std::string> citations;  // full sources, each once, after the table
  auto row = [&](const std::string& key, const Ceiling& v, const char* unit, bool compute) {
    if (!v.value) return;
    std::string ridge = compute && c.dram.value ? fmt(*v.value / *c.dram.value) : "";
    const size_t paren = v.source.find(" (");
    out << key << "," << fmt(*v.value) << "," << unit << "," << ridge << ",\"" << v.source.substr(0, paren) << "\"\n";
    if (std::find(citations.begin(), citations.end(), v.source) == citations.end()) citations.push_back(v.source);
  };
  row("fp64", c.fp64, "FLOP/s", true);
  row("fp32", c.fp32, "FLOP/s", true);
  row("fp16", c.fp16, "FLOP/s", true);
  for (size_t p = 0; p < kTensorPrecisions; ++p)
    row("tensor_" + std::string(kTensorPrecisionNames[p]), c.tensor[p], p == kTensorInt8 ? "OP/s" : "FLOP/s", true);
  row("dram", c.dram, "bytes/s", false);
  row("l2_bandwidth", c.l2_bandwidth, "bytes/s", false);
  row("l2_size", c.l2_bytes, "bytes", false);
  for (const auto& source : citations) out << "source: " << source << "\n";

  RooflineChart chart;
  chart.title = name + (c.user_entry.empty() ? ": datasheet rooflines" : ": rooflines");
  chart.dram_bytes_per_s = c.dram.value;
  chart.roofs = roofs_of(c);
  const auto path = options.output_dir / ("roofline-" + slug(name) + ".svg");
  std::error_code ec;
  std::filesystem::create_directories(options.output_dir, ec);
  std::ofstream svg(path, std::ios::binary | std::ios::trunc);
  svg << render_roofline_svg({chart});
  svg.close();
  if (!svg) {
    err << "rfanalyze: cannot write " << path.string() << "\n";
    return kExitOutputError;
  }
  out << "wrote " << path.string() << "\n";
  return kExitOk;
}

}  // namespace rf::analyzer
