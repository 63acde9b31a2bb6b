// rfanalyze's stdout summary and kernel-name folding (terminal_summary.h).
#include <gtest/gtest.h>

#include <limits>
#include <sstream>
#include <string>

#include "rfprof/analyzer/si.h"
#include "rfprof/analyzer/terminal_summary.h"

namespace rf::analyzer {
namespace {

TEST(FormatSi, PrefixesAndSignificantDigits) {
  EXPECT_EQ(format_si(6.7e13, "FLOP/s", 3), "67 TFLOP/s");
  EXPECT_EQ(format_si(3.352e12, "B/s", 4), "3.352 TB/s");
  EXPECT_EQ(format_si(1.979e15, "FLOP/s", 3), "1.98 PFLOP/s");
  EXPECT_EQ(format_si(999, "B", 3), "999 B");
  EXPECT_EQ(format_si(0.5, "s", 3), "0.5 s");
  EXPECT_EQ(format_si(2e21, "B", 3), "2e+21 B");  // E is the largest prefix: past it, an exponent
}

// Until 2026-11-29 the prefix was chosen before rounding (999.96 read "1000 FLOP/s", 999.5e9 with
// three digits "1e+03 GFLOP/s"), a negative value kept no prefix ("-5e+12"), 1e22 read
// "1e+04 EFLOP/s", and infinity and NaN were printed with a unit ("inf EFLOP/s", "nan FLOP/s").
TEST(FormatSi, RoundedFirstSignedAndNonFinite) {
  EXPECT_EQ(format_si(999.96, "FLOP/s", 4), "1 kFLOP/s");
  EXPECT_EQ(format_si(999950, "FLOP/s", 4), "1 MFLOP/s");
  EXPECT_EQ(format_si(999.5e9, "FLOP/s", 3), "1 TFLOP/s");
  EXPECT_EQ(format_si(999.4e9, "FLOP/s", 3), "999 GFLOP/s");
  EXPECT_EQ(format_si(-5e12, "FLOP/s", 4), "-5 TFLOP/s");
  EXPECT_EQ(format_si(-999.96, "B", 4), "-1 kB");
  EXPECT_EQ(format_si(1e22, "FLOP/s", 4), "1e+22 FLOP/s");
  EXPECT_EQ(format_si(999.96e18, "FLOP/s", 4), "1e+21 FLOP/s");
  EXPECT_EQ(format_si(0, "B", 4), "0 B");
  EXPECT_EQ(format_si(std::numeric_limits<double>::infinity(), "FLOP/s", 4), "-");
  EXPECT_EQ(format_si(-std::numeric_limits<double>::infinity(), "FLOP/s", 4), "-");
  EXPECT_EQ(format_si(std::numeric_limits<double>::quiet_NaN(), "FLOP/s", 4), "-");
}

TEST(FoldKernelName, ShortNamesAndNamesWithoutBracketsStayWhole) {
  EXPECT_EQ(fold_kernel_name("void gemm<float>(float*, int)"), "void gemm<float>(float*, int)");
  // cuDNN's xmma kernels differ near their end: never cut.
  const std::string xmma =
      "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_warpgroupsize1x1x1_"
      "g1_execute_segment_k_on_kernel__5x_cudnn";
  ASSERT_GT(xmma.size(), 120u);
  EXPECT_EQ(fold_kernel_name(xmma), xmma);
  // Unbalanced brackets (an operator<, a name cut short): left as it is.
  const std::string unbalanced = "void ns::op<(" + std::string(150, 'x');
  EXPECT_EQ(fold_kernel_name(unbalanced), unbalanced);
}

TEST(FoldKernelName, ParametersThenDeepTemplateArgumentsFoldUntilItFits) {
  const std::string add =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> "
      ">(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)";
  // Parameters folded, template arguments two levels deep kept: fits in 120.
  EXPECT_EQ(fold_kernel_name(add),
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, "
            "3ul> >(…)");
  // In 100 characters only the first level is left.
  EXPECT_EQ(fold_kernel_name(add, 100),
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<…>, std::array<…> >(…)");
  // One character less (widths count "…" as one): everything after the name is folded.
  EXPECT_EQ(fold_kernel_name(add, 99), "void at::native::vectorized_elementwise_kernel<…>(…)");
}

TEST(FoldKernelName, CastsAndAnonymousNamespacesStay) {
  const std::string nchw =
      "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>("
      "cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)";
  // "(cudnnKernelDataType_t)2" is a cast, not a parameter list: it tells this kernel from its
  // "(cudnnKernelDataType_t)0" sibling.
  EXPECT_EQ(fold_kernel_name(nchw),
            "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, "
            "(cudnnKernelDataType_t)2>(…)");
  const std::string pool =
      "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float, int>(float const*, long const*, "
      "int, int, int, int, int, int, int, int, int, int, int, int, int, int, float*)";
  EXPECT_EQ(fold_kernel_name(pool),
            "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float, int>(…)");
  // A lambda's parameters inside template arguments are a parameter list.
  const std::string lambda =
      "void at::native::elementwise_kernel<128, 4, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, "
      "float, float)::{lambda(float, float)#1}>(int, at::native::threshold_kernel_impl<float>(at::TensorIteratorBase&, "
      "float, float)::{lambda(float, float)#1})";
  EXPECT_EQ(fold_kernel_name(lambda),
            "void at::native::elementwise_kernel<128, 4, at::native::threshold_kernel_impl<…>(…)::{lambda(…)#1}>(…)");
}

// Folding goes one level at a time, keeps a cast, and never makes a name longer.
TEST(FoldKernelName, EdgesOfFolding) {
  // Exactly the width: whole.
  const std::string exact = "void k" + std::string(104, 'x') + "(int, int)";
  ASSERT_EQ(exact.size(), 120u);
  EXPECT_EQ(fold_kernel_name(exact), exact);
  EXPECT_EQ(fold_kernel_name(exact, 119), "void k" + std::string(104, 'x') + "(…)");
  // Folding "(x)" to "(…)" would add bytes: the name stays as it is.
  const std::string tiny = std::string(130, 'a') + "(x)";
  EXPECT_EQ(fold_kernel_name(tiny), tiny);
  // When one level of template arguments must go too, a cast among them stays a cast: the whole
  // argument list folds rather than "(…)2".
  const std::string nchw =
      "void cudnn::engines_precompiled::nchwToNhwcKernel<float, float, float, false, true, (cudnnKernelDataType_t)2>("
      "cudnn::engines_precompiled::nchw2nhwc_params_t<float>, float const*, float*)";
  EXPECT_EQ(fold_kernel_name(nchw, 100), "void cudnn::engines_precompiled::nchwToNhwcKernel<…>(…)");
  // A '(' after a name ending in '_' opens that function's parameters, not a cast.
  const std::string fn = "void k<f_(int, int, int), " + std::string(100, 'b') + ">(int)";
  EXPECT_EQ(fold_kernel_name(fn), "void k<f_(…), " + std::string(100, 'b') + ">(…)");
  // A stray '>' outside every bracket (an operator>) closes nothing.
  const std::string stray = "void f>g<A<B<" + std::string(120, 'c') + ">>>(int)";
  EXPECT_EQ(fold_kernel_name(stray), "void f>g<A<B<…>>>(…)");
  // Outside template arguments every '(' opens a parameter list, whatever comes before it: only
  // inside them can a '(' be a cast.
  const std::string spaced = "void k<int> (" + std::string(120, 'p') + ")";
  EXPECT_EQ(fold_kernel_name(spaced), "void k<int> (…)");
  // A list closed by the other kind of bracket keeps the name's own closing character.
  const std::string mixed = "void k(" + std::string(120, 'p') + ">";
  EXPECT_EQ(fold_kernel_name(mixed), "void k(…>");
}

TEST(FoldKernelName, AnArrowIsNotABracket) {
  // decltype(p->x) in template arguments: the '>' of "->" closes nothing. Before, folding
  // "decltype(...)" stopped at that '>' and printed "decltype(…>".
  const std::string a(90, 'a');
  const std::string arrow =
      "void k<decltype(std::declval<S*>()->x), " + a + ">(int, float, double, char, long, short, unsigned, bool)";
  EXPECT_EQ(fold_kernel_name(arrow, 120), "void k<decltype(…), " + a + ">(…)");
  EXPECT_EQ(fold_kernel_name(arrow, 140), "void k<decltype(std::declval<…>(…)->x), " + a + ">(…)");
}

nlohmann::ordered_json page_data() {
  using json = nlohmann::ordered_json;
  json d;
  d["traces"] = json::array({json::object(), json::object()});
  d["totals"] = {{"launches", 6},
                 {"duration_ns", 4'000'000},
                 {"flop_per_s", 2.5e12},
                 {"arithmetic_intensity", 12.5},
                 {"by_bound", {{"memory", {{"launches", 4}, {"duration_ns", 3'000'000}}},
                               {"compute", {{"launches", 1}, {"duration_ns", 500'000}}}}}};
  d["phases"] = json::array({{{"phase", "forward"}, {"launches", 4}, {"duration_ns", 3'000'000},
                              {"flop_per_s", 1e12}, {"arithmetic_intensity", 3.0}},
                             {{"phase", "backward"}, {"launches", 2}, {"duration_ns", 1'000'000},
                              {"flop_per_s", nullptr}, {"arithmetic_intensity", nullptr}}});
  // relu appears in two phases: summed into one kernel line (2.5 ms, ahead of gemm's 1 ms).
  d["points"] = json::array({{{"kernel", "gemm"}, {"launches", 1}, {"duration_ns", 1'000'000},
                              {"flop", 2e9}, {"dram_bytes", 1e8}, {"rate_flop", 2e9}, {"rate_ns", 1'000'000},
                              {"bound", "compute"}, {"roof_fraction", 0.5}},
                             {{"kernel", "relu"}, {"launches", 3}, {"duration_ns", 1'500'000},
                              {"flop", 1e6}, {"dram_bytes", 4e8}, {"rate_flop", 1e6}, {"rate_ns", 1'500'000},
                              {"bound", "memory"}, {"roof_fraction", 0.2}},
                             {{"kernel", "relu"}, {"launches", 1}, {"duration_ns", 1'000'000},
                              {"flop", nullptr}, {"dram_bytes", nullptr}, {"rate_flop", nullptr}, {"rate_ns", 0},
                              {"bound", nullptr},
                              {"roof_fraction", nullptr}},
                             {{"kernel", "copy"}, {"launches", 1}, {"duration_ns", 500'000},
                              {"flop", nullptr}, {"dram_bytes", 5e7}}});
  return d;
}

TEST(TerminalSummary, TotalsPhasesTopKernelsAndOutputs) {
  std::ostringstream out;
  print_terminal_summary(out, page_data(), "out/dir", 2);
  const std::string s = out.str();
  EXPECT_EQ(s.rfind("rfanalyze: 2 trace(s), 6 launches, 4.000 ms GPU time, 2.5 TFLOP/s, 12.5 FLOP/byte (DRAM); "
                    "75.0% of the GPU time in memory-bound kernels, 12.5% compute-bound\n",
                    0),
            0u)
      << s;
  EXPECT_NE(s.find("\n launches      GPU time            FLOP/s   FLOP/byte  phase\n"
                   "        4      3.000 ms         1 TFLOP/s           3  forward\n"
                   "        2      1.000 ms                 -           -  backward\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("top 2 kernels by GPU time\n"), std::string::npos) << s;
  // relu: 4 launches, 2.5 ms = 62.5% of the GPU time; as in report.html's table and kernels.csv,
  // FLOP/s over the launches that have FLOP (1e6 in 1.5 ms: 666.7 MFLOP/s, not 1e6 over all 2.5 ms,
  // 400 MFLOP/s, which the launch without counters diluted); FLOP/byte 1e6 / 4e8. Of its roof: the point that
  // has a fraction (0.2), weighted by its time; the other has none.
  EXPECT_NE(s.find("  time    GPU time  launches          FLOP/s  FLOP/byte    bound  of roof  kernel\n"),
            std::string::npos)
      << s;
  const size_t relu = s.find(" 62.5%    2.500 ms         4   666.7 MFLOP/s     0.0025   memory    20.0%  relu\n");
  const size_t gemm = s.find(" 25.0%    1.000 ms         1       2 TFLOP/s         20  compute    50.0%  gemm\n");
  EXPECT_NE(relu, std::string::npos) << s;
  EXPECT_NE(gemm, std::string::npos) << s;
  EXPECT_LT(relu, gemm);
  EXPECT_EQ(s.find("copy"), std::string::npos) << "only the top 2";
  EXPECT_NE(s.find("\noutputs in out/dir/: report.html (open it first), kernels.csv, ranges.csv, phases.csv, "
                   "roofline.svg, trace.json (ui.perfetto.dev), summary.json\n"),
            std::string::npos)
      << s;
}

// A timing trace has no launch with a bound (no counters): no "0.0% memory-bound" claim.
TEST(TerminalSummary, NoBoundSharesWithoutBoundLaunches) {
  nlohmann::ordered_json d = page_data();
  d["totals"]["by_bound"] = {{"memory", {{"launches", 0}, {"duration_ns", 0}}},
                             {"compute", {{"launches", 0}, {"duration_ns", 0}}},
                             {"unknown", {{"launches", 6}, {"duration_ns", 4'000'000}}}};
  std::ostringstream out;
  print_terminal_summary(out, d, "r");
  EXPECT_NE(out.str().find("12.5 FLOP/byte (DRAM)\n"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("memory-bound"), std::string::npos) << out.str();
  EXPECT_EQ(out.str().find("compute-bound"), std::string::npos) << out.str();
}

// The bound shares need a bound launch of either kind; a zero total prints no share; an empty
// phase list prints no phase table.
TEST(TerminalSummary, SharesAndTablesOnlyWhereTheyHaveData) {
  nlohmann::ordered_json d = page_data();
  d["totals"]["by_bound"] = {{"memory", {{"launches", 0}, {"duration_ns", 0}}},
                             {"compute", {{"launches", 2}, {"duration_ns", 1'000'000}}}};
  d["phases"] = nlohmann::ordered_json::array();
  std::ostringstream out;
  print_terminal_summary(out, d, "r");
  EXPECT_NE(out.str().find("; 0.0% of the GPU time in memory-bound kernels, 25.0% compute-bound\n"), std::string::npos)
      << out.str();
  EXPECT_EQ(out.str().find("phase\n"), std::string::npos) << out.str();

  d["totals"]["duration_ns"] = 0;
  std::ostringstream zero;
  print_terminal_summary(zero, d, "r");
  EXPECT_NE(zero.str().find("\n     -    2.500 ms         4"), std::string::npos) << zero.str();  // relu
  EXPECT_EQ(zero.str().find("inf"), std::string::npos) << zero.str();
  EXPECT_EQ(zero.str().find("bound kernels"), std::string::npos) << "no share of a zero total: " << zero.str();
  EXPECT_EQ(zero.str().find("nan"), std::string::npos) << zero.str();
}

// A kernel's line: its roof fraction weighted by GPU time, FLOP/s only with time, FLOP/byte only
// with DRAM bytes, the bound with the most time (a tie: the first in name order), its name folded;
// the heading counts the lines there are.
TEST(TerminalSummary, KernelLinesWeighFoldAndBreakTies) {
  using json = nlohmann::ordered_json;
  const std::string name = "void k<float>(" + std::string(120, 'p') + ")";
  json d;
  d["totals"] = {{"launches", 4}, {"duration_ns", 4'000'000}};
  // The third point's fraction is over 1 ms of its 2 ms (rate_ns: its launches with FLOP).
  d["points"] = json::array({{{"kernel", name}, {"launches", 1}, {"duration_ns", 1'000'000},
                              {"rate_ns", 1'000'000}, {"roof_fraction", 0.2}, {"bound", "memory"}},
                             {{"kernel", name}, {"launches", 1}, {"duration_ns", 1'000'000},
                              {"rate_ns", 1'000'000}, {"roof_fraction", 0.8}, {"bound", "compute"}},
                             {{"kernel", name}, {"launches", 2}, {"duration_ns", 2'000'000},
                              {"rate_ns", 1'000'000}, {"roof_fraction", 0.8}},
                             {{"kernel", "instant"}, {"launches", 1}, {"duration_ns", 0}, {"flop", 1e6},
                              {"dram_bytes", 1e3}, {"bound", "memory"}},
                             {{"kernel", "no DRAM"}, {"launches", 1}, {"duration_ns", 0}, {"flop", 1e6},
                              {"dram_bytes", 0}}});
  std::ostringstream out;
  print_terminal_summary(out, d, "r");
  const std::string s = out.str();
  // Weighted by rate_ns: (0.2 * 1 + 0.8 * 1 + 0.8 * 1) / 3 ms = 60 % (by GPU time it would be
  // 65 %); compute and memory 1 ms each: compute.
  EXPECT_NE(s.find("100.0%    4.000 ms         4               -          -  compute    60.0%  void k<float>(…)\n"),
            std::string::npos)
      << s;
  // A bound known only from launches of 0 ns is still that kernel's bound.
  EXPECT_NE(s.find("  0.0%    0.000 ms         1               -      1e+03   memory        -  instant\n"),
            std::string::npos)
      << s;
  // FLOP without DRAM bytes: no FLOP/byte, not "inf".
  EXPECT_NE(s.find("  0.0%    0.000 ms         1               -          -        -        -  no DRAM\n"),
            std::string::npos)
      << s;
  EXPECT_NE(s.find("\ntop 3 kernels by GPU time\n"), std::string::npos) << "fewer kernels than 20: " << s;
}

// The bound of a kernel's line is the one with the most GPU time, not the most points; kernels
// of equal GPU time keep their name order.
TEST(TerminalSummary, BoundByGpuTimeAndTiesInNameOrder) {
  using json = nlohmann::ordered_json;
  json d;
  d["totals"] = {{"launches", 5}, {"duration_ns", 6'000'000}};
  d["points"] = json::array({{{"kernel", "b"}, {"launches", 1}, {"duration_ns", 500'000}, {"bound", "memory"}},
                             {{"kernel", "b"}, {"launches", 1}, {"duration_ns", 500'000}, {"bound", "memory"}},
                             {{"kernel", "b"}, {"launches", 1}, {"duration_ns", 2'000'000}, {"bound", "compute"}},
                             {{"kernel", "a"}, {"launches", 1}, {"duration_ns", 3'000'000}, {"bound", "memory"}}});
  std::ostringstream out;
  print_terminal_summary(out, d, "r");
  const std::string s = out.str();
  const size_t a = s.find(" 50.0%    3.000 ms         1               -          -   memory        -  a\n");
  const size_t b = s.find(" 50.0%    3.000 ms         3               -          -  compute        -  b\n");
  EXPECT_NE(a, std::string::npos) << s;
  EXPECT_NE(b, std::string::npos) << s;
  EXPECT_LT(a, b) << s;
}

// Names come from the profiled application: an escape sequence must not reach the terminal.
TEST(TerminalSummary, NamesAreMadePrintable) {
  nlohmann::ordered_json d = page_data();
  d["points"][0]["kernel"] = "k\x1b[31mred\x07\x1f\x7f\xff";
  d["phases"][0]["phase"] = "fwd\x1b[2J";
  d["points"][1]["bound"] = "\xfe";  // relu: U+FFFD, three bytes, one column
  std::ostringstream out;
  print_terminal_summary(out, d, "r\x1b]0;x\x07");
  const std::string s = out.str();
  EXPECT_EQ(s.find('\x1b'), std::string::npos);
  EXPECT_EQ(s.find('\x07'), std::string::npos);
  EXPECT_EQ(s.find('\x7f'), std::string::npos);
  EXPECT_EQ(s.find('\x1f'), std::string::npos);
  EXPECT_NE(s.find("k?[31mred???\xEF\xBF\xBD\n"), std::string::npos) << s;  // U+FFFD for the bad byte
  EXPECT_NE(s.find("outputs in r?]0;x?/: "), std::string::npos) << s;  // the output folder too
  EXPECT_NE(s.find("fwd?[2J\n"), std::string::npos) << s;
  EXPECT_NE(s.find(" 0.0025        \xEF\xBF\xBD    20.0%  relu\n"), std::string::npos) << s;
}

// Rates have four significant digits; a phase without a name is "-".
TEST(TerminalSummary, FourSignificantDigitsAndUnnamedPhases) {
  nlohmann::ordered_json d = page_data();
  d["totals"]["flop_per_s"] = 1.23456e12;
  d["phases"][1]["phase"] = nullptr;
  std::ostringstream out;
  print_terminal_summary(out, d, "r");
  EXPECT_NE(out.str().find(" GPU time, 1.235 TFLOP/s, "), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("        2      1.000 ms                 -           -  -\n"), std::string::npos)
      << out.str();
}

// rfanalyze --skip / --outputs: the outputs line names only the files the run wrote.
TEST(TerminalSummary, SkippedOutputsAreNotListed) {
  std::ostringstream some;
  print_terminal_summary(some, page_data(), "d", 2, {"kernels.csv", "trace.json", "counters.csv"});
  EXPECT_NE(some.str().find("\noutputs in d/: report.html (open it first), ranges.csv, phases.csv, roofline.svg, "
                            "summary.json\n"),
            std::string::npos)
      << some.str();
  std::ostringstream first_skipped;
  print_terminal_summary(first_skipped, page_data(), "d", 2, {"report.html"});
  EXPECT_NE(first_skipped.str().find("\noutputs in d/: kernels.csv, ranges.csv,"), std::string::npos)
      << first_skipped.str();
  std::ostringstream none_listed;
  print_terminal_summary(none_listed, page_data(), "d", 2,
                         {"report.html", "kernels.csv", "ranges.csv", "phases.csv", "roofline.svg", "trace.json",
                          "summary.json"});
  EXPECT_EQ(none_listed.str().substr(none_listed.str().size() - 15), "\noutputs in d/\n") << none_listed.str();
}

// Until 2026-11-29 report.html's data gave a GPU time of 0 where no launch had a duration (summary.json:
// null), and the summary printed "0.000 ms"; now "-", for the totals and for a kernel of such points.
TEST(TerminalSummary, NoDurationIsADashNotZero) {
  nlohmann::ordered_json d = page_data();
  d["totals"]["duration_ns"] = nullptr;
  for (auto& p : d["points"]) p["duration_ns"] = nullptr;
  d["points"][0]["duration_ns"] = 2'000'000;  // gemm timed; relu and copy not
  std::ostringstream out;
  print_terminal_summary(out, d, "r", 3);
  const std::string s = out.str();
  EXPECT_NE(s.find(", 6 launches, - GPU time, "), std::string::npos) << s;
  auto line_of = [&s](const std::string& kernel) {  // the kernel table's line of `kernel`
    const size_t end = s.find("  " + kernel + "\n");
    if (end == std::string::npos) return std::string("no line");
    const size_t begin = s.rfind('\n', end) + 1;
    return s.substr(begin, end - begin);
  };
  // share and GPU time "-" (no total, no duration), 4 launches, FLOP/s over no time: "-".
  EXPECT_EQ(line_of("relu").rfind("     -           -         4", 0), 0u) << s;
  EXPECT_EQ(line_of("gemm").rfind("     -    2.000 ms         1", 0), 0u) << s;
  EXPECT_EQ(s.find("0.000 ms"), std::string::npos) << s;
}

TEST(TerminalSummary, MissingOrMistypedFieldsPrintADash) {
  std::ostringstream out;
  nlohmann::ordered_json d = {{"totals", {{"launches", "many"}}}, {"phases", 3}, {"points", {{{"kernel", 7}}}}};
  print_terminal_summary(out, d, "r");
  EXPECT_EQ(out.str().rfind("rfanalyze: 0 trace(s), - launches, - GPU time, - FLOP/s, - FLOP/byte (DRAM)\n", 0), 0u)
      << out.str();
  EXPECT_EQ(out.str().find("top "), std::string::npos) << out.str();
  std::ostringstream none;
  print_terminal_summary(none, nlohmann::ordered_json(), "r");
  EXPECT_NE(none.str().find("outputs in r/"), std::string::npos);
}

}  // namespace
}  // namespace rf::analyzer
