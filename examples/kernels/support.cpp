// Host-side helpers of the example programs (support.h).
#include "support.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

namespace rf::examples {
namespace {

nlohmann::json optional_bytes(const std::optional<uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

std::string expected_json(std::string_view example, const std::vector<ExpectedKernel>& kernels) {
  nlohmann::json doc;
  doc["example"] = example;
  doc["kernels"] = nlohmann::json::array();
  for (const auto& k : kernels) {
    const std::string p = "smsp__sass_thread_inst_executed_op_";
    nlohmann::json metrics = {
        {p + "fadd_pred_on.sum", k.fadd}, {p + "fmul_pred_on.sum", k.fmul},
        {p + "ffma_pred_on.sum", k.ffma}, {p + "hadd_pred_on.sum", k.hadd},
        {p + "hmul_pred_on.sum", k.hmul}, {p + "hfma_pred_on.sum", k.hfma},
        {p + "dadd_pred_on.sum", k.dadd}, {p + "dmul_pred_on.sum", k.dmul},
        {p + "dfma_pred_on.sum", k.dfma}};
    doc["kernels"].push_back({{"kernel", k.kernel},
                              {"launches", k.launches},
                              {"grid", k.grid},
                              {"block", k.block},
                              {"metrics", metrics},
                              {"fp32_flop", k.fp32_flop},
                              {"fp64_flop", k.fp64_flop},
                              {"fp16_flop", k.fp16_flop},
                              {"dram_read_bytes", optional_bytes(k.dram_read_bytes)},
                              {"dram_write_bytes", optional_bytes(k.dram_write_bytes)},
                              {"dram_rel_tolerance", k.dram_rel_tolerance}});
  }
  return doc.dump();
}

void print_expected(std::string_view example, const std::vector<ExpectedKernel>& kernels) {
  std::cout << "RFPROF_EXPECTED " << expected_json(example, kernels) << std::endl;
}

std::optional<int> parse_args(int argc, char** argv, std::string_view description,
                              const std::vector<SizeOption>& options, bool& expected_only) {
  CLI::App app{std::string(description)};
  for (const auto& o : options) {
    const int64_t multiple = o.multiple_of;
    auto* opt = app.add_option(o.name, *o.value, o.help)->capture_default_str();
    opt->check(CLI::Range(o.min, o.max));
    if (multiple > 1)
      opt->check(CLI::Validator(
          [multiple](std::string& s) {
            return std::stoll(s) % multiple == 0
                       ? std::string()
                       : "expected a multiple of " + std::to_string(multiple) + ", got " + s;
          },
          "multiple of " + std::to_string(multiple)));
  }
  app.add_flag("--expected-only", expected_only,
               "print the RFPROF_EXPECTED line for these sizes and exit without using the GPU");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  return std::nullopt;
}

int fail(std::string_view example, std::string_view message) {
  std::cerr << example << ": " << message << std::endl;
  return 1;
}

}  // namespace rf::examples
