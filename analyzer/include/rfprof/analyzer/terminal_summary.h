// What rfanalyze prints on stdout once its outputs are written, as `nsys profile --stats` prints
// its tables: the run's totals, one line per phase, the top kernels by GPU time, and where the
// outputs are. Long kernel names are folded for the terminal and for report.html's tables.
#pragma once

#include <cstddef>
#include <filesystem>
#include <ostream>
#include <set>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace rf::analyzer {

/// `name` (a demangled kernel name) when it has at most `max_chars` characters; otherwise folded
/// to fit: the outermost parameter list becomes "(…)", and template arguments nested deeper than
/// the deepest level that still fits (2, then 1, then 0) become "<…>":
/// "void at::native::kernel<4, at::native::Functor<…>>(…)". "(anonymous namespace)" is kept
/// whole. A name without brackets (extern "C", cuDNN's sm90_xmma_… kernels, which differ near
/// their end) or with unbalanced ones (operator<) is returned as it is. Never throws but bad_alloc.
std::string fold_kernel_name(std::string_view name, size_t max_chars = 120);

/// The warning line (ending in "\n") for summary.json's uncounted_tensor_work `entry`
/// (Report::uncounted_tensor_work_json): "rfanalyze: warning: N launch(es) (S% of the GPU time) ran
/// tensor-core instructions that the collected metrics do not count as FLOP (e.g. KERNEL): their
/// FLOP/s and roofline points leave tensor-core work out; collect with rfprof --set roofline-tensor
/// to count it". The share is left out when null; KERNEL is the first listed name, folded
/// (fold_kernel_name) and printable. "" when `entry` is null or not an object. rfanalyze prints it
/// on stderr, also with -q, as it does the above-roof warning. Never throws but bad_alloc.
std::string uncounted_tensor_work_line(const nlohmann::ordered_json& entry);

/// Writes the summary of one analysis to `out` from ReportPage::data() (html_report.h):
///   "rfanalyze: T trace(s), N launches, X ms GPU time, F FLOP/s, A FLOP/byte (DRAM); M% of the GPU
///   time in memory-bound kernels, C% compute-bound"
/// then a table of phases (launches, GPU time, FLOP/s, FLOP/byte), the `top` kernels by GPU time
/// summed over phases, ranges and devices (share of GPU time, GPU time, launches, FLOP/s,
/// FLOP/byte, the bound with the most GPU time, achieved / attainable FLOP/s of the points
/// weighted by the GPU time each is over (`rate_ns`) as "of roof", name folded to 120 characters), and the output files
/// under `output_dir` (report.html, kernels.csv, ranges.csv, phases.csv, roofline.svg, trace.json,
/// summary.json, less those in `skipped`; "outputs in DIR/" alone when that leaves none). Units:
/// time in ms, FLOP/s with an SI prefix. Names are printed as valid UTF-8 with control
/// characters as '?' (a hostile name cannot send escape sequences to the terminal). The bound
/// shares are left out when no launch has a bound (a timing trace). Missing fields print as "-".
/// Never throws for missing or mistyped fields.
void print_terminal_summary(std::ostream& out, const nlohmann::ordered_json& data,
                            const std::filesystem::path& output_dir, size_t top = 10,
                            const std::set<std::string>& skipped = {});

}  // namespace rf::analyzer
