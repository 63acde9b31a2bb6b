// kernels.csv / ranges.csv / phases.csv rows (rfprof/analyzer/rows.h).
#include "rfprof/analyzer/rows.h"

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {
namespace {

std::string dims(const std::optional<std::array<int32_t, 3>>& d) {
  if (!d) return "";
  return std::to_string((*d)[0]) + "," + std::to_string((*d)[1]) + "," + std::to_string((*d)[2]);
}

template <typename T>
std::string opt_int(const std::optional<T>& v) {
  return v ? std::to_string(*v) : std::string();
}

}  // namespace

const std::vector<std::string>& kernels_csv_header() {
  static const std::vector<std::string> h = {
      "id", "pid", "device", "stream", "kernel", "grid", "block", "duration_ns", "fp64_flop",
      "fp32_flop", "fp16_flop", "dram_read_bytes", "dram_write_bytes", "arithmetic_intensity",
      "flop_per_s", "nvtx", "phase"};
  return h;
}

const std::vector<std::string>& counters_csv_header() {
  static const std::vector<std::string> h = {"id", "kernel", "metric", "value"};
  return h;
}

std::vector<std::string> aggregate_csv_header(const std::string& key_column) {
  return {key_column, "launches", "duration_ns", "fp64_flop", "fp32_flop", "fp16_flop",
          "dram_read_bytes", "dram_write_bytes", "arithmetic_intensity", "flop_per_s"};
}

std::optional<double> KernelRow::arithmetic_intensity() const {
  return rf::analyzer::arithmetic_intensity(metrics.total_flop(), metrics.dram_bytes());
}

std::optional<double> KernelRow::flop_per_s() const {
  return rf::analyzer::flop_per_s(metrics.total_flop(), duration_ns);
}

std::vector<std::string> KernelRow::csv_fields() const {
  return {std::to_string(id),
          std::to_string(pid),
          opt_int(device),
          opt_int(stream),
          kernel,
          dims(grid),
          dims(block),
          opt_int(duration_ns),
          format_optional(metrics.fp64_flop),
          format_optional(metrics.fp32_flop),
          format_optional(metrics.fp16_flop),
          format_optional(metrics.dram_read_bytes),
          format_optional(metrics.dram_write_bytes),
          format_optional(arithmetic_intensity()),
          format_optional(flop_per_s()),
          nvtx,
          phase};
}

void Aggregate::add(const KernelRow& row) {
  ++launches;
  if (row.duration_ns) {
    duration_ns += *row.duration_ns;
    ++timed_launches;
  }
  fp64_flop.add(row.metrics.fp64_flop);
  fp32_flop.add(row.metrics.fp32_flop);
  fp16_flop.add(row.metrics.fp16_flop);
  dram_read_bytes.add(row.metrics.dram_read_bytes);
  dram_write_bytes.add(row.metrics.dram_write_bytes);
  auto flop = row.metrics.total_flop();
  auto bytes = row.metrics.dram_bytes();
  if (flop && bytes) {
    ++counted_launches;
    ai_flop += *flop;
    ai_bytes += *bytes;
  }
  if (flop && row.duration_ns) {
    rate_flop += *flop;
    rate_ns += *row.duration_ns;
  }
}

std::optional<double> Aggregate::arithmetic_intensity() const {
  if (!counted_launches) return std::nullopt;
  return rf::analyzer::arithmetic_intensity(ai_flop, ai_bytes);
}

std::optional<double> Aggregate::flop_per_s() const {
  if (rate_ns == 0) return std::nullopt;
  return rf::analyzer::flop_per_s(rate_flop, rate_ns);
}

std::vector<std::string> Aggregate::csv_fields(const std::string& key) const {
  return {key,
          std::to_string(launches),
          timed_launches ? std::to_string(duration_ns) : std::string(),
          format_optional(fp64_flop.value()),
          format_optional(fp32_flop.value()),
          format_optional(fp16_flop.value()),
          format_optional(dram_read_bytes.value()),
          format_optional(dram_write_bytes.value()),
          format_optional(arithmetic_intensity()),
          format_optional(flop_per_s())};
}

std::string demangle(const std::string& mangled) {
  if (mangled.empty()) return mangled;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), std::free);
  return (status == 0 && out) ? std::string(out.get()) : mangled;
}

}  // namespace rf::analyzer
