// Kernel names in the analyzer: symbols the collector could not demangle are demangled again
// (LLVM's demangler), and each launch keeps its mangled symbol for --print-kernel-base mangled.
#include <cxxabi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "analyzer_samples.h"
#include "rfprof/analyzer/phases.h"
#include "rfprof/analyzer/rows.h"
#include "rfprof/analyzer/trace_pass.h"

namespace rf::analyzer {
namespace {

using testing::slurp;
using testing::TempDir;
using testing::TraceBuilder;

/// A cuDNN CUTLASS weight-gradient convolution kernel of a PyTorch ResNet-18 step on an H100
/// (tests/data/h100-2026-11-23/resnet18): libstdc++'s __cxa_demangle refuses it, ncu and LLVM
/// demangle it.
std::string cutlass_symbol() {
  std::string s = slurp(std::filesystem::path(RFPROF_ANALYZER_DATA) / "cutlass_conv_wgrad_symbol.txt");
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

constexpr const char* kCutlassPrefix =
    "void cutlass__5x_cudnn::Kernel<cutlass__5x_cudnn::conv::kernel::ImplicitGemmConvolution<";

TEST(Demangle, LlvmReadsWhatLibstdcxxRefuses) {
  const std::string sym = cutlass_symbol();
  ASSERT_EQ(sym.rfind("_ZN17cutlass__5x_cudnn6Kernel", 0), 0u);
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> gnu(abi::__cxa_demangle(sym.c_str(), nullptr, nullptr, &status), std::free);
  EXPECT_NE(status, 0) << "libstdc++ demangles it now: the LLVM fallback may no longer be needed";
  if (!has_llvm_demangler()) GTEST_SKIP() << "built without LLVM's demangler (llvm-14-dev)";
  const std::string d = demangle(sym);
  EXPECT_EQ(d.rfind(kCutlassPrefix, 0), 0u) << d;
  EXPECT_TRUE(d.ends_with(">::Params)")) << d;
  // What libstdc++ reads stays libstdc++'s spelling (the collector's), not LLVM's ("2ul>>").
  EXPECT_EQ(demangle("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEEviT0_T1_"),
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
            "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)");
  // A lambda is where the two differ: libstdc++ "{lambda(int)#1}", LLVM "'lambda'(int)".
  EXPECT_EQ(demangle("_Z6kernelIZ4mainEUliE_EvT_"), "void kernel<main::{lambda(int)#1}>(main::{lambda(int)#1})");
  EXPECT_EQ(demangle("sm90_xmma_gemm_kernel"), "sm90_xmma_gemm_kernel");  // not C++
  EXPECT_EQ(demangle("f"), "f");  // an extern "C" kernel named f, not the type encoding of float
  EXPECT_EQ(demangle("_Zx!"), "_Zx!");                                    // looks mangled, is not
  // A trace is hostile: a symbol nested deeper than LLVM's demangler has stack for (100,000
  // pointer levels overflow 8 MiB) is refused by both and kept as it is, without a crash.
  const std::string deep = "_Z1f" + std::string(100000, 'P') + "i";
  EXPECT_EQ(demangle(deep), deep);
  const std::string longest = "_Z1f" + std::string(kMaxLlvmDemangled - 5, 'P') + "i";
  ASSERT_EQ(longest.size(), kMaxLlvmDemangled);
  EXPECT_EQ(demangle(longest).rfind("f(int" + std::string(kMaxLlvmDemangled - 5, '*') + ")", 0), 0u);
}

/// A symbol whose printed name doubles with each step: f(A*, void (*)(A*, A*), ...), each step a
/// function pointer taking the previous type twice through substitutions (S<n>_).
std::string doubling_symbol(int steps) {
  auto seq = [](int n) {  // substitution n: S_, S0_, S1_, ..., in base 36
    if (n == 0) return std::string("S_");
    std::string s;
    for (--n;; n /= 36) {
      s.insert(s.begin(), "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[n % 36]);
      if (n < 36) break;
    }
    return "S" + s + "_";
  };
  std::string s = "_Z1fP1A";  // substitutions: 0 = A, 1 = A*
  for (int i = 0, last = 1, next = 2; i < steps; ++i, last = next + 1, next += 2)
    s += "PFv" + seq(last) + seq(last) + "E";
  return s;
}

// Both demanglers expand back-references without limit: a trace is hostile input, so an
// expanding symbol is demangled in a child that may print 256 KiB at most (22 steps: about 40 MB).
TEST(Demangle, AnExpandingSymbolIsCutOffNotPrinted) {
  const std::string small = doubling_symbol(3);
  const std::string d = demangle(small);
  EXPECT_EQ(d.rfind("f(A*, void (*)(A*, A*)", 0), 0u) << d;
  const std::string huge = doubling_symbol(22);
  ASSERT_LT(huge.size(), 300u);
  EXPECT_EQ(demangle(huge), huge);
}

/// f<A>(A, ..., A) with a template argument of `name_bytes` letters printed `params` times, through
/// the template parameter T_ (or, with `second`, f<int, A> through T0_): the printed name grows
/// with name_bytes x params from a symbol of name_bytes + 2 x params bytes, without substitutions.
std::string template_parameter_symbol(size_t name_bytes, size_t params, bool second = false) {
  std::string ref = second ? "T0_" : "T_";
  std::string s = std::string("_Z1fI") + (second ? "i" : "") + std::to_string(name_bytes) + std::string(name_bytes, 'a') + "Ev";
  for (size_t i = 0; i < params; ++i) s += ref;
  return s;
}

// Template parameters expand too: a name printed past kMaxDemangledBytes (256 KiB) is cut off and
// the symbol kept; one just below it comes back whole from the child, over many reads. Over 1024
// bytes, libstdc++'s demangler refuses these symbols and LLVM's reads them.
TEST(Demangle, TemplateParameterExpansionIsBoundedToo) {
  if (!has_llvm_demangler()) GTEST_SKIP() << "built without LLVM's demangler (llvm-14-dev)";
  for (bool second : {false, true}) {
    SCOPED_TRACE(second ? "T0_" : "T_");
    const std::string below = template_parameter_symbol(1000, 200, second);  // 200 KB printed
    const std::string d = demangle(below);
    EXPECT_EQ(d.size(), std::string("void f<>()").size() + (second ? 5 : 0) + 201 * 1000 + 199 * 2) << d.substr(0, 80);
    EXPECT_EQ(d.rfind(std::string(second ? "void f<int, " : "void f<") + std::string(1000, 'a') + ">(", 0), 0u)
        << d.substr(0, 80);
    const std::string above = template_parameter_symbol(1000, 300, second);  // 300 KB printed
    EXPECT_EQ(demangle(above), above);
  }
  // A name of exactly 256 KiB is still whole: 10 + 106 x 2471 + 104 x 2 = 262,144 bytes.
  const std::string exact = template_parameter_symbol(2471, 105);
  EXPECT_EQ(demangle(exact).size(), size_t{256} << 10);
}

/// f(a, b, ..., Z, Z, ...): `before` one-letter classes, then a class Z of `name_bytes` letters, then
/// `params` more parameters that refer to Z by its substitution (S_, S0_ ... S9_, SA_ ...: with
/// before 10, S9_; with 11, SA_), the only back-references in the symbol.
std::string substitution_symbol(size_t before, size_t name_bytes, size_t params) {
  std::string s = "_Z1f";
  for (size_t i = 0; i < before; ++i) s += std::string("1") + static_cast<char>('a' + i);
  s += std::to_string(name_bytes) + std::string(name_bytes, 'z');
  const std::string ref =
      before == 0 ? "S_" : std::string("S") + "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"[before - 1] + "_";
  for (size_t i = 0; i < params; ++i) s += ref;
  return s;
}

// Every substitution is seen as one that expands, up to the last digit and from the first letter
// of its base-36 number: S9_ and SA_ printed 300 times past kMaxDemangledBytes are cut off too.
TEST(Demangle, SubstitutionsNumberedWithNineOrALetterAreBoundedToo) {
  if (!has_llvm_demangler()) GTEST_SKIP() << "built without LLVM's demangler (llvm-14-dev)";
  for (size_t before : {10u, 11u}) {
    SCOPED_TRACE(before);
    const std::string small = substitution_symbol(before, 3, 2);
    EXPECT_EQ(demangle(small), std::string("f(a, b, c, d, e, f, g, h, i, j, ") + (before == 11 ? "k, " : "") +
                                   "zzz, zzz, zzz)");
    const std::string above = substitution_symbol(before, 1000, 300);  // 300 KB printed
    EXPECT_EQ(demangle(above), above);
  }
}

TEST(Demangle, RefusedMeansACppSymbolRecordedAsItselfOrNothing) {
  EXPECT_TRUE(demangle_refused("_Z3fooi", "_Z3fooi"));
  EXPECT_TRUE(demangle_refused("", "_Z3fooi"));
  EXPECT_FALSE(demangle_refused("foo(int)", "_Z3fooi"));
  EXPECT_FALSE(demangle_refused("vectorAdd", "vectorAdd"));  // extern "C": its name is its name
  EXPECT_FALSE(demangle_refused("", ""));
}

// The collector records a symbol __cxa_demangle refuses as its own demangled name; the analyzer
// demangles it again, once per symbol, and keeps the symbol beside the name.
TEST(Demangle, RefusedNamesInATraceAreDemangledWhenRead) {
  if (!has_llvm_demangler()) GTEST_SKIP() << "built without LLVM's demangler (llvm-14-dev)";
  TempDir dir;
  const std::string sym = cutlass_symbol();
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(1, trace::CollectionMode::kTiming);
    for (uint32_t i = 1; i <= 3; ++i) {
      t.launch(i, 0, 100 * i, 100 * i + 10);
      t.kernel(i, 1000 * i, 1000 * i + 500, sym, 0, sym);  // as the collector writes it
    }
    t.launch(4, 0, 500, 510);
    t.kernel(4, 5000, 5100);  // a name libstdc++ read: kept as recorded
    t.finish();
  }
  const TraceContext ctx = read_context(dir.path / "t.rftrace");
  std::vector<std::pair<std::string, std::string>> seen;  // (kernel, mangled)
  stream_launches(ctx, PhaseMap::defaults(),
                  [&](const LaunchOutput& l) { seen.emplace_back(l.row.kernel, std::string(l.row.mangled)); });
  ASSERT_EQ(seen.size(), 4u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(seen[i].first.rfind(kCutlassPrefix, 0), 0u) << seen[i].first;
    EXPECT_EQ(seen[i].second, sym);
  }
  EXPECT_EQ(seen[3].first, "ffma_loop(float*, int)");
  EXPECT_EQ(seen[3].second, "_Z9ffma_loopPfi");
}

}  // namespace
}  // namespace rf::analyzer
