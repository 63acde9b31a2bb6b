// rfbench: measures the ceilings of one GPU and writes them as an rfanalyze ceilings file
// (docs/rfbench.md). Empirical Roofline Toolkit style: best of N timed runs per ceiling.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "amounts.h"
#include "document.h"
#include "measure.h"

namespace {

std::string today() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&t));
  return buf;
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
              << " SMs, " << dev.max_threads_per_sm << " threads per SM, L2 " << (dev.l2_bytes >> 20) << " MiB)\n";
    rfbench::check_kernel_image(dev);
    std::vector<rfbench::Measurement> ms;
    std::vector<rfbench::Skipped> skipped;
    if (wanted("dram")) ms.push_back(rfbench::measure_dram(options, dev));
    if (wanted("l2")) ms.push_back(rfbench::measure_l2(options, dev));
    for (const char* p : {"fp64", "fp32", "fp16"})
      if (wanted(p)) ms.push_back(rfbench::measure_fma(options, dev, p));
    for (const char* p : {"fp64", "tf32", "fp16", "bf16", "int8"}) {
      if (!wanted(std::string("tensor-") + p)) continue;
      // A precision the GPU has no tensor cores for is skipped: cuBLAS would run CUDA-core code,
      // which is no tensor roof.
      if (std::string why = rfbench::tensor_unsupported(p, dev.cc_major, dev.cc_minor); !why.empty()) {
        skipped.push_back({rfbench::tensor_ceiling_key(p), why});
        std::cerr << "rfbench: tensor-" << p << " skipped: " << why << "\n";
        continue;
      }
      ms.push_back(rfbench::measure_gemm(options, dev, p));
    }

    for (const auto& m : ms) std::cout << m.ceiling << " = " << m.value << " " << m.unit << "  (" << m.method << ")\n";
    std::cout << "l2_bytes = " << dev.l2_bytes << " bytes  (cudaDeviceProp::l2CacheSize)\n";
    for (const auto& s : skipped) std::cout << s.ceiling << " not measured: " << s.reason << "\n";
    const nlohmann::ordered_json doc = rfbench::ceilings_document(dev, ms, skipped, options, today());
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
  } catch (const std::exception& e) {  // e.g. std::bad_alloc: still one "rfbench:" line
    std::cerr << "rfbench: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
