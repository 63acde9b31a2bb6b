// processes.csv rows (rfprof/analyzer/scaling.h).
#include "rfprof/analyzer/scaling.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <sstream>

#include "rfprof/analyzer/csv.h"

namespace rf::analyzer {

namespace {

std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::optional<uint64_t> positive(std::string_view s) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v == 0) return std::nullopt;
  return v;
}

/// The value of the last of `flags` in `command_line` ("--flag N", "--flag=N" for long flags,
/// "-bN" for a short one, as argparse reads them), as argparse keeps the last occurrence of an
/// option; nullopt when that value is not a positive integer. A flag that is the last word has no
/// value and changes nothing.
std::optional<uint64_t> flag_value(std::string_view command_line, std::initializer_list<std::string_view> flags) {
  const auto w = words(command_line);
  std::optional<uint64_t> value;
  for (size_t i = 0; i < w.size(); ++i)
    for (std::string_view f : flags) {
      if (w[i] == f && i + 1 < w.size()) value = positive(w[i + 1]);
      if (f.starts_with("--") && w[i].size() > f.size() && w[i].starts_with(f) && w[i][f.size()] == '=')
        value = positive(std::string_view(w[i]).substr(f.size() + 1));
      // argparse reads anything attached to a short option as its value: -b64, -b-1, -bx.
      if (f.size() == 2 && f[0] == '-' && f[1] != '-' && w[i].size() > 2 && w[i].starts_with(f))
        value = positive(std::string_view(w[i]).substr(2));
    }
  return value;
}

}  // namespace

std::optional<uint64_t> batch_size_of(std::string_view command_line) {
  return flag_value(command_line, {"--batch-size", "--batch_size", "--bs", "-b", "--batch", "--train-batch-size",
                                   "--train_batch_size"});
}

std::optional<uint64_t> iterations_of(std::string_view command_line) {
  return flag_value(command_line, {"--iterations", "--iters", "--steps", "--max-steps", "--max_steps",
                                   "--num-iterations", "--num_iterations", "--train-iters", "--train_iters"});
}

std::string trace_label(const std::string& trace_path, const std::optional<uint64_t>& batch_size) {
  return batch_size ? "batch " + std::to_string(*batch_size) : std::filesystem::path(trace_path).stem().string();
}

bool is_step_range_name(std::string_view name) {
  auto word_char = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::string_view stem : {"iteration", "step", "iter"}) {
    if (name.size() < stem.size()) continue;
    bool same = true;
    for (size_t i = 0; i < stem.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(name[i])) == stem[i];
    if (same && (name.size() == stem.size() || !word_char(name[stem.size()]))) return true;
  }
  return false;
}

StepRanges step_ranges(const NvtxIndex& nvtx) {
  StepRanges s;
  // Outermost step ranges only: "iteration 3/step" is one step, as scaling.csv counts it
  // (step_range_name: the path's first step component); each was counted, doubling throughput.
  // A step range lies inside another when one started before it on its thread ends no earlier;
  // two that overlap without nesting (start/end ranges) are two steps.
  uint64_t thread = 0, outer_end = 0;
  bool first = true;
  nvtx.for_each_range([&](const NvtxRange& r) {  // by thread, then start order
    if (first || r.thread_id != thread) {
      thread = r.thread_id;
      outer_end = 0;
      first = false;
    }
    if (r.end_ns == std::numeric_limits<uint64_t>::max() || !is_step_range_name(r.name)) return;
    if (outer_end != 0 && r.end_ns <= outer_end) return;  // inside an earlier step range
    outer_end = r.end_ns;
    ++s.count;
    s.wall_ns += r.end_ns - r.start_ns;
  });
  return s;
}

std::optional<double> ProcessRow::samples_per_s() const {
  if (!batch_size || steps.count == 0 || steps.wall_ns == 0) return std::nullopt;
  // In double: batch size times steps may exceed 2^64 (a hostile --batch-size).
  return static_cast<double>(*batch_size) * static_cast<double>(steps.count) * 1e9 / static_cast<double>(steps.wall_ns);
}

std::vector<std::string> processes_csv_header() {
  return {"trace", "pid", "hostname", "label", "batch_size", "steps", "step_wall_ns", "samples_per_s",
          "launches", "duration_ns", "total_flop", "dram_bytes", "arithmetic_intensity", "flop_per_s"};
}

std::vector<std::string> processes_csv_fields(const ProcessRow& r) {
  const Aggregate& a = r.totals;
  return {r.trace,
          std::to_string(r.pid),
          r.hostname,
          r.label,
          r.batch_size ? std::to_string(*r.batch_size) : "",
          std::to_string(r.steps.count),
          r.steps.count ? std::to_string(r.steps.wall_ns) : "",
          format_optional(r.samples_per_s()),
          std::to_string(a.launches),
          a.timed_launches ? std::to_string(a.duration_ns) : "",
          format_optional(a.total_flop.value()),
          format_optional(a.dram_bytes.value()),
          format_optional(a.arithmetic_intensity()),
          format_optional(a.flop_per_s())};
}

}  // namespace rf::analyzer
