// kernels.csv / ranges.csv / phases.csv rows (rfprof/analyzer/rows.h).
#include "rfprof/analyzer/rows.h"

#include <cstdlib>
#include <limits>
#include <memory>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {

namespace {

/// a + b, or UINT64_MAX where it would wrap: GPU time sums (ns) of traces or imports whose
/// durations add up past 584 years stay the largest value instead of becoming small.
uint64_t saturating_add(uint64_t a, uint64_t b) {
  uint64_t sum = 0;
  return __builtin_add_overflow(a, b, &sum) ? std::numeric_limits<uint64_t>::max() : sum;
}

/// The tensor and cache-level column names, in order: tensor_<p>_flop (tensor_int8_ops) dense,
/// then tensor_<p>_sparse_flop (tensor_int8_sparse_ops), then l2_bytes, l1_bytes.
std::vector<std::string> level_columns() {
  std::vector<std::string> out;
  for (const char* sparse : {"", "_sparse"})
    for (size_t p = 0; p < kTensorPrecisions; ++p)
      out.push_back("tensor_" + std::string(kTensorPrecisionNames[p]) + sparse +
                    (p == kTensorInt8 ? "_ops" : "_flop"));
  out.push_back("l2_bytes");
  out.push_back("l1_bytes");
  return out;
}

std::vector<std::string> with_levels(std::vector<std::string> head, std::vector<std::string> tail) {
  auto levels = level_columns();
  head.insert(head.end(), levels.begin(), levels.end());
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

}  // namespace

const std::vector<std::string>& kernels_csv_header() {
  static const std::vector<std::string> h = with_levels(
      {"id", "pid", "device", "stream", "kernel", "grid", "block", "duration_ns", "fp64_flop",
       "fp32_flop", "fp16_flop", "dram_read_bytes", "dram_write_bytes"},
      {"arithmetic_intensity", "l2_arithmetic_intensity", "l1_arithmetic_intensity", "flop_per_s",
       "nvtx", "phase", "bound", "attainable_flop_per_s", "roof_fraction",
       // appended on 2026-11-30, last, so that readers taking columns by position keep working
       "tensor_pipe_inst"});
  return h;
}

const std::vector<std::string>& counters_csv_header() {
  static const std::vector<std::string> h = {"id", "kernel", "metric", "value", "pid", "window"};
  return h;
}

std::vector<std::string> aggregate_csv_header(const std::string& key_column) {
  return with_levels({key_column, "launches", "duration_ns", "fp64_flop", "fp32_flop", "fp16_flop",
                      "dram_read_bytes", "dram_write_bytes"},
                     {"arithmetic_intensity", "l2_arithmetic_intensity", "l1_arithmetic_intensity",
                      "flop_per_s"});
}

std::vector<std::string> range_csv_header(const std::string& key_column) {
  auto h = aggregate_csv_header(key_column);
  h.push_back("peak_memory_bytes");
  h.push_back("memory_bound_ns");
  h.push_back("compute_bound_ns");
  return h;
}

std::optional<double> KernelRow::arithmetic_intensity() const {
  return rf::analyzer::arithmetic_intensity(metrics.total_flop(), metrics.dram_bytes());
}

std::optional<double> KernelRow::flop_per_s() const {
  return rf::analyzer::flop_per_s(metrics.total_flop(), duration_ns);
}

std::vector<std::string> KernelRow::csv_fields(const RoofCheck* roof) const {
  std::vector<std::string> f;
  csv_fields(roof, f);
  return f;
}

void KernelRow::csv_fields(const RoofCheck* roof, std::vector<std::string>& f) const {
  size_t n = 0;
  auto next = [&]() -> std::string& {  // the next field, emptied
    if (n == f.size()) f.emplace_back();
    std::string& s = f[n++];
    s.clear();
    return s;
  };
  auto text = [&](std::string_view v) { next().append(v); };
  auto integer = [&](const auto& v) {  // an optional or plain integer
    std::string& s = next();
    if constexpr (requires { v.has_value(); }) {
      if (v) s.append(std::to_string(*v));
    } else {
      s.append(std::to_string(v));
    }
  };
  auto number = [&](const std::optional<double>& v) {
    std::string& s = next();
    if (v) append_number(s, *v);
  };
  auto dims = [&](const std::optional<std::array<int32_t, 3>>& d) {
    std::string& s = next();
    if (d) s.append(std::to_string((*d)[0])).append(",").append(std::to_string((*d)[1])).append(",").append(std::to_string((*d)[2]));
  };
  integer(id);
  integer(pid);
  integer(device);
  integer(stream);
  text(kernel);
  dims(grid);
  dims(block);
  integer(duration_ns);
  for (const auto* v : {&metrics.fp64_flop, &metrics.fp32_flop, &metrics.fp16_flop, &metrics.dram_read_bytes,
                        &metrics.dram_write_bytes})
    number(*v);
  for (const auto* terms : {&metrics.tensor_dense, &metrics.tensor_sparse})
    for (const auto& t : *terms) number(t);
  number(metrics.l2_bytes);
  number(metrics.l1_bytes);
  const auto flop = metrics.total_flop();
  for (auto v : {arithmetic_intensity(), rf::analyzer::arithmetic_intensity(flop, metrics.l2_bytes),
                 rf::analyzer::arithmetic_intensity(flop, metrics.l1_bytes), flop_per_s()})
    number(v);
  text(nvtx);
  text(phase);
  text(roof ? roof->bound() : "");
  number(roof ? roof->attainable_flop_per_s : std::nullopt);
  number(roof ? roof->roof_fraction() : std::nullopt);
  number(metrics.tensor_pipe_inst);
  f.resize(n);
}

void Aggregate::add(const KernelRow& row, const LaunchTotals& totals) {
  ++launches;
  if (row.duration_ns) {
    duration_ns = saturating_add(duration_ns, *row.duration_ns);
    ++timed_launches;
  }
  fp64_flop.add(row.metrics.fp64_flop);
  fp32_flop.add(row.metrics.fp32_flop);
  fp16_flop.add(row.metrics.fp16_flop);
  dram_read_bytes.add(row.metrics.dram_read_bytes);
  dram_write_bytes.add(row.metrics.dram_write_bytes);
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    tensor_dense[p].add(row.metrics.tensor_dense[p]);
    tensor_sparse[p].add(row.metrics.tensor_sparse[p]);
  }
  l2_bytes.add(row.metrics.l2_bytes);
  l1_bytes.add(row.metrics.l1_bytes);
  const auto& flop = totals.flop;
  const auto& bytes = totals.dram_bytes;
  total_flop.add(flop);
  dram_bytes.add(bytes);
  if (flop && row.metrics.l2_bytes) {
    l2_ai_flop += *flop;
    l2_ai_bytes += *row.metrics.l2_bytes;
    ++l2_counted;
  }
  if (flop && row.metrics.l1_bytes) {
    l1_ai_flop += *flop;
    l1_ai_bytes += *row.metrics.l1_bytes;
    ++l1_counted;
  }
  if (flop && bytes) {
    ++counted_launches;
    ai_flop += *flop;
    ai_bytes += *bytes;
  }
  if (flop && row.duration_ns && *row.duration_ns > 0) {  // as flop_per_s of one launch (flops.h)
    rate_flop += *flop;
    rate_ns = saturating_add(rate_ns, *row.duration_ns);
  }
}

void Aggregate::merge(const Aggregate& o) {
  launches += o.launches;
  duration_ns = saturating_add(duration_ns, o.duration_ns);
  timed_launches += o.timed_launches;
  fp64_flop.merge(o.fp64_flop);
  fp32_flop.merge(o.fp32_flop);
  fp16_flop.merge(o.fp16_flop);
  dram_read_bytes.merge(o.dram_read_bytes);
  dram_write_bytes.merge(o.dram_write_bytes);
  for (size_t p = 0; p < kTensorPrecisions; ++p) {
    tensor_dense[p].merge(o.tensor_dense[p]);
    tensor_sparse[p].merge(o.tensor_sparse[p]);
  }
  l2_bytes.merge(o.l2_bytes);
  l1_bytes.merge(o.l1_bytes);
  total_flop.merge(o.total_flop);
  dram_bytes.merge(o.dram_bytes);
  counted_launches += o.counted_launches;
  l2_counted += o.l2_counted;
  l1_counted += o.l1_counted;
  l2_ai_flop += o.l2_ai_flop;
  l2_ai_bytes += o.l2_ai_bytes;
  l1_ai_flop += o.l1_ai_flop;
  l1_ai_bytes += o.l1_ai_bytes;
  ai_flop += o.ai_flop;
  ai_bytes += o.ai_bytes;
  rate_flop += o.rate_flop;
  rate_ns = saturating_add(rate_ns, o.rate_ns);
  memory_bound_ns += o.memory_bound_ns;
  compute_bound_ns += o.compute_bound_ns;
}

std::optional<double> Aggregate::arithmetic_intensity() const {
  if (!counted_launches) return std::nullopt;
  return rf::analyzer::arithmetic_intensity(ai_flop, ai_bytes);
}

std::optional<double> Aggregate::flop_per_s() const {
  if (rate_ns == 0) return std::nullopt;
  return rf::analyzer::flop_per_s(rate_flop, rate_ns);
}

std::optional<double> Aggregate::l2_arithmetic_intensity() const {
  if (!l2_counted) return std::nullopt;
  return rf::analyzer::arithmetic_intensity(l2_ai_flop, l2_ai_bytes);
}

std::optional<double> Aggregate::l1_arithmetic_intensity() const {
  if (!l1_counted) return std::nullopt;
  return rf::analyzer::arithmetic_intensity(l1_ai_flop, l1_ai_bytes);
}

std::vector<std::string> Aggregate::csv_fields(const std::string& key) const {
  std::vector<std::string> f = {key,
          std::to_string(launches),
          timed_launches ? std::to_string(duration_ns) : std::string(),
          format_optional(fp64_flop.value()),
          format_optional(fp32_flop.value()),
          format_optional(fp16_flop.value()),
          format_optional(dram_read_bytes.value()),
          format_optional(dram_write_bytes.value())};
  for (const auto* terms : {&tensor_dense, &tensor_sparse})
    for (const auto& t : *terms) f.push_back(format_optional(t.value()));
  f.push_back(format_optional(l2_bytes.value()));
  f.push_back(format_optional(l1_bytes.value()));
  for (auto v : {arithmetic_intensity(), l2_arithmetic_intensity(), l1_arithmetic_intensity(), flop_per_s()})
    f.push_back(format_optional(v));
  return f;
}

}  // namespace rf::analyzer
