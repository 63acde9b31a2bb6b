// rfbench: measures the ceilings of one GPU and writes them as an rfanalyze ceilings file
// (docs/rfbench.md). Empirical Roofline Toolkit style: best of N timed runs per ceiling.
#include <CLI/CLI.hpp>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "measure.h"

namespace {

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
}

/// ECMAScript regex matching exactly `s`.
std::string exact_pattern(const std::string& s) {
  std::string out = "^";
  for (char c : s) {
    if (std::string("\\^$.|?*+()[]{}").find(c) != std::string::npos) out += '\\';
    out += c;
  }
  return out + "$";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"rfbench: measure this GPU's bandwidth and compute ceilings; writes a ceilings JSON "
               "for rfanalyze --ceilings (docs/rfbench.md)"};
  rfbench::Options options;
  std::string output = "rfbench-ceilings.json";
  std::vector<std::string> only;
  app.add_option("-o,--output", output, "ceilings JSON to write")->capture_default_str();
  app.add_option("-d,--device", options.device, "CUDA device index")->capture_default_str();
  app.add_option("-r,--runs", options.runs, "timed runs per ceiling (best one kept)")
      ->capture_default_str()->check(CLI::Range(1, 1000));
  app.add_flag("--quick", options.quick, "small problems: a smoke test, not a measurement");
  app.add_option("--only", only, "measure only these: dram l2 fp64 fp32 fp16 tensor-fp64 tensor-tf32 "
                                 "tensor-fp16 tensor-bf16 tensor-int8")
      ->check(CLI::IsMember({"dram", "l2", "fp64", "fp32", "fp16", "tensor-fp64", "tensor-tf32",
                             "tensor-fp16", "tensor-bf16", "tensor-int8"}));
  CLI11_PARSE(app, argc, argv);
  auto wanted = [&](const std::string& k) { return only.empty() || std::find(only.begin(), only.end(), k) != only.end(); };

  try {
    const rfbench::DeviceIdentity dev = rfbench::open_device(options);
    std::cerr << "rfbench: " << dev.name << " (sm_" << dev.cc_major << dev.cc_minor << ", " << dev.sm_count
              << " SMs, L2 " << (dev.l2_bytes >> 20) << " MiB)\n";
    std::vector<rfbench::Measurement> ms;
    if (wanted("dram")) ms.push_back(rfbench::measure_dram(options, dev));
    if (wanted("l2")) ms.push_back(rfbench::measure_l2(options, dev));
    for (const char* p : {"fp64", "fp32", "fp16"})
      if (wanted(p)) ms.push_back(rfbench::measure_fma(options, dev, p));
    for (const char* p : {"fp64", "tf32", "fp16", "bf16", "int8"})
      if (wanted(std::string("tensor-") + p)) ms.push_back(rfbench::measure_gemm(options, p));

    nlohmann::ordered_json entry;
    entry["name"] = dev.name + " (measured)";
    entry["measured"] = true;
    entry["patterns"] = {exact_pattern(dev.name)};
    nlohmann::ordered_json measurements = nlohmann::ordered_json::array();
    for (const auto& m : ms) {
      entry[m.ceiling] = m.value;
      measurements.push_back({{"ceiling", m.ceiling}, {"value", m.value}, {"unit", m.unit},
                              {"method", m.method}, {"runs", m.runs}});
      std::cout << m.ceiling << " = " << m.value << " " << m.unit << "  (" << m.method << ")\n";
    }
    entry["citation"] = "measured by rfbench on " + today() + ", device " + std::to_string(options.device) +
                        ", best of " + std::to_string(options.runs) + " runs" + (options.quick ? " (--quick)" : "");
    nlohmann::ordered_json doc;
    doc["about"] = "Ceilings measured by rfbench (docs/rfbench.md); use with rfanalyze --ceilings FILE.";
    doc["devices"] = {entry};
    doc["measurements"] = measurements;
    std::ofstream out(output);
    out << doc.dump(2) << "\n";
    if (!out) {
      std::cerr << "rfbench: cannot write " << output << "\n";
      return 1;
    }
    std::cerr << "rfbench: wrote " << output << "\n";
  } catch (const rfbench::GpuError& e) {
    std::cerr << "rfbench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
