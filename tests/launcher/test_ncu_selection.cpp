// Which launches ncu's pages print, and in what order (ncu_csv.h): launch order from a trace's
// completion order, the launch-order window, --kernel-id, --filter-mode,
// --launch-skip-before-match, --devices, and -k under each --kernel-name-base.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "../analyzer/analyzer_samples.h"
#include "rfprof/analyzer/ncu_csv.h"

namespace rf::analyzer {
namespace {

using testing::TempDir;
using testing::TraceBuilder;

// ncu numbers launches in launch order. A trace holds them in the order their records completed:
// a second thread's batched records arrive late (PyTorch's autograd thread, tests/recorded). The
// pages print them by correlation id, and -s/-c count in that order.
TEST(NcuCsv, LaunchesArePrintedInLaunchOrder) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);
    for (uint32_t corr : {1u, 5u, 6u, 2u, 3u, 4u}) {  // 2, 3 and 4 reach the file after 5 and 6
      t.launch(corr, 0, 100 * corr, 100 * corr + 10);
      t.kernel(corr, 1000 * corr, 1000 * corr + 500, "k" + std::to_string(corr) + "(int)");
    }
    t.finish();
  }
  auto names = [&](const NcuFilter& f) {
    std::ostringstream out;
    write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", f);
    std::string s = out.str(), seen;
    for (size_t at = s.find("\"k"); at != std::string::npos; at = s.find("\"k", at + 1)) seen += s.substr(at + 2, 1);
    return seen;
  };
  EXPECT_EQ(names({}), "123456");
  NcuFilter f;
  f.launch_skip = 1;
  f.launch_count = 2;
  EXPECT_EQ(names(f), "23");
}

// ncu's --kernel-id, --filter-mode, --launch-skip-before-match and --devices on an existing trace
// (rfprof -i): counted as the collector counts them (collector::LaunchSelection).
TEST(NcuCsv, KernelIdFilterModeSkipBeforeMatchAndDevices) {
  TempDir dir;
  struct L {
    const char* kernel;
    int32_t grid;
    uint32_t device, stream, shared;
  };
  // Launch n (1..8) is printed as "void foo<n>(int)" or "void bar<n>(int)"; the symbol is the kernel's.
  const std::vector<L> launches = {{"foo", 1, 0, 7, 0}, {"bar", 1, 0, 7, 0}, {"foo", 2, 1, 7, 0},
                                   {"foo", 1, 0, 7, 1024}, {"foo", 1, 0, 7, 0}, {"foo", 2, 1, 9, 0},
                                   {"bar", 1, 1, 7, 0}, {"foo", 1, 0, 7, 0}};
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);
    for (uint32_t n = 1; n <= launches.size(); ++n) {
      const L& l = launches[n - 1];
      t.launch(n, 0, 100 * n, 100 * n + 10);
      trace::KernelActivity k;
      k.correlation_id = n;
      k.device_id = l.device;
      k.context_id = 1;
      k.stream_id = l.stream;
      k.start_ns = 1000 * n;
      k.end_ns = 1000 * n + 500;
      k.grid[0] = l.grid, k.grid[1] = 1, k.grid[2] = 1;
      k.block[0] = 128, k.block[1] = 1, k.block[2] = 1;
      k.dynamic_shared_bytes = l.shared;
      t.kernel(k, "void " + std::string(l.kernel) + "<" + std::to_string(n) + ">(int)",
               std::string("_Z3") + l.kernel);
    }
    t.finish();
  }
  auto printed = [&](const NcuFilter& f) {
    std::ostringstream out;
    write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", f);
    const std::string s = out.str();
    std::vector<int> seen;
    for (size_t at = s.find("\"void "); at != std::string::npos; at = s.find("\"void ", at + 1))
      seen.push_back(std::stoi(s.substr(s.find('<', at) + 1)));
    return seen;
  };
  EXPECT_EQ(printed({}), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  NcuFilter f;
  f.kernel_id = "::foo:2";  // the second launch of foo
  EXPECT_EQ(printed(f), (std::vector<int>{3}));
  f.kernel_id = ":::2";  // the second launch of each kernel
  EXPECT_EQ(printed(f), (std::vector<int>{3, 7}));
  f.kernel_id = ":9::";  // every launch on stream 9
  EXPECT_EQ(printed(f), (std::vector<int>{6}));
  f.kernel_id = "::regex:foo:";
  f.filter_mode = collector::FilterMode::kPerLaunchConfig;
  f.launch_count = 1;  // each launch configuration of foo once (the stream is not part of it)
  EXPECT_EQ(printed(f), (std::vector<int>{1, 3, 4}));
  NcuFilter per_gpu;
  per_gpu.filter_mode = collector::FilterMode::kPerGpu;
  per_gpu.launch_skip = 1;
  per_gpu.launch_count = 1;  // the second launch on each device
  EXPECT_EQ(printed(per_gpu), (std::vector<int>{2, 6}));
  NcuFilter before;
  before.launch_skip_before_match = 5;
  before.launch_count = 2;
  EXPECT_EQ(printed(before), (std::vector<int>{6, 7}));
  NcuFilter device;
  device.devices = {1};
  EXPECT_EQ(printed(device), (std::vector<int>{3, 6, 7}));
  NcuFilter both;  // -k and the kernel id: both must select; invocations count every kernel's own
  both.kernel_name = "bar";
  both.kernel_id = ":::1";
  EXPECT_EQ(printed(both), (std::vector<int>{2}));
  // -k regex: under --kernel-name-base function (the default) is searched in the function name,
  // without return type, templates and parameters, as the collector searches it: "int" is in
  // every demangled name here and in no function name; ^bar$ names bar.
  NcuFilter re;
  re.kernel_name = "regex:^bar$";
  EXPECT_EQ(printed(re), (std::vector<int>{2, 7}));
  re.kernel_name = "regex:int";
  EXPECT_EQ(printed(re), (std::vector<int>{}));
  re.kernel_name_base = "demangled";
  EXPECT_EQ(printed(re), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8}));
  NcuFilter id_re;
  id_re.kernel_id = "::regex:^foo$:3";
  EXPECT_EQ(printed(id_re), (std::vector<int>{4}));
  NcuFilter bad;
  bad.kernel_id = "foo";
  std::ostringstream none;
  EXPECT_THROW(write_ncu_csv(none, {dir.path / "t.rftrace"}, "raw", bad), collector::FilterError);
  EXPECT_EQ(none.str(), "");
}

// A trace's names have no length limit: the launch-order window also has a byte budget (64 MiB),
// past which the earliest launch is printed, so 80 launches with 1 MiB names, in reverse order,
// are all printed, the first ones as they arrive.
TEST(NcuCsv, TheLaunchOrderWindowHasAByteBudget) {
  TempDir dir;
  constexpr uint32_t kLaunches = 80;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);
    for (uint32_t corr = kLaunches; corr >= 1; --corr) {
      t.launch(corr, 0, 100 * corr, 100 * corr + 10);
      t.kernel(corr, 1000 * corr, 1000 * corr + 500, std::to_string(corr) + std::string(1 << 20, 'k'));
    }
    t.finish();
  }
  std::ostringstream out;
  EXPECT_EQ(write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", {}), kLaunches);
  // The kernel names' numbers in printed order: once the budget is spent each arrival (lower than
  // every launch held) is printed as it comes, and the launches held are printed at the end.
  std::vector<uint32_t> order;
  const std::string& s = out.str();
  for (size_t line = s.find('\n', s.find('\n') + 1); line != std::string::npos && line + 1 < s.size();
       line = s.find('\n', line + 1)) {
    size_t at = line + 1;
    for (int field = 0; field < 4; ++field) at = s.find("\",\"", at) + 3;
    order.push_back(static_cast<uint32_t>(std::stoul(s.substr(at, 3))));
  }
  ASSERT_EQ(order.size(), kLaunches);
  EXPECT_LT(order[1], order[0]);
  EXPECT_EQ(order.back(), kLaunches);
}

// ncu's --print-kernel-base spells "Kernel Name" as the demangled name (default), the bare function
// name or the symbol; --kernel-name-base decides what an exact -k compares, on the same trace.
TEST(NcuCsv, KernelNameBasesForPrintingAndForMinusK) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);
    t.launch(1, 0, 100, 1000);
    t.kernel(1, 2000, 3000, "void at::native::(anonymous namespace)::fill<4>(float*, int)", 0,
             "_ZN2at6native12_GLOBAL__N_14fillILi4EEEvPfi");
    t.launch(2, 0, 100, 4000);
    t.kernel(2, 5000, 6000, "memset_kernel", 0, "memset_kernel");
    t.finish();
  }
  auto kernel_names = [&](const NcuFilter& f) {
    std::ostringstream out;
    write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", f);
    std::vector<std::string> names;
    std::istringstream in(out.str());
    std::string line;
    for (int n = 0; std::getline(in, line); ++n) {
      if (n < 2) continue;  // header, units
      // "ID","Process ID","Process Name","Host Name","Kernel Name",...
      size_t at = 0;
      for (int field = 0; field < 4; ++field) at = line.find("\",\"", at) + 3;
      names.push_back(line.substr(at, line.find("\",\"", at) - at));
    }
    return names;
  };
  NcuFilter f;
  EXPECT_EQ(kernel_names(f), (std::vector<std::string>{"void at::native::(anonymous namespace)::fill<4>(float*, int)",
                                                       "memset_kernel"}));
  f.print_kernel_base = "function";
  EXPECT_EQ(kernel_names(f), (std::vector<std::string>{"fill", "memset_kernel"}));
  f.print_kernel_base = "mangled";
  EXPECT_EQ(kernel_names(f),
            (std::vector<std::string>{"_ZN2at6native12_GLOBAL__N_14fillILi4EEEvPfi", "memset_kernel"}));

  // -k under each --kernel-name-base (printed names stay mangled: the two settings are independent).
  f.kernel_name = "fill";
  EXPECT_EQ(kernel_names(f).size(), 1u);  // function (default): with or without namespaces
  f.kernel_name = "at::native::(anonymous namespace)::fill";
  EXPECT_EQ(kernel_names(f).size(), 1u);
  f.kernel_name_base = "demangled";
  EXPECT_TRUE(kernel_names(f).empty());  // demangled: the whole name only
  f.kernel_name = "void at::native::(anonymous namespace)::fill<4>(float*, int)";
  EXPECT_EQ(kernel_names(f).size(), 1u);
  f.kernel_name_base = "mangled";
  EXPECT_TRUE(kernel_names(f).empty());
  f.kernel_name = "_ZN2at6native12_GLOBAL__N_14fillILi4EEEvPfi";
  EXPECT_EQ(kernel_names(f), (std::vector<std::string>{"_ZN2at6native12_GLOBAL__N_14fillILi4EEEvPfi"}));
  // A regex is searched in the symbol with base mangled (as the collector), else the demangled name.
  f.kernel_name = "regex:^_ZN2at";
  EXPECT_EQ(kernel_names(f).size(), 1u);
  f.kernel_name_base = "demangled";
  EXPECT_TRUE(kernel_names(f).empty());
  // Base function also takes the symbol itself: the collector compares a symbol libstdc++ cannot
  // demangle as it is, and the analyzer's LLVM fallback must not make it stop matching.
  f.kernel_name_base = "function";
  f.kernel_name = "_ZN2at6native12_GLOBAL__N_14fillILi4EEEvPfi";
  EXPECT_EQ(kernel_names(f).size(), 1u);
}

// A kernel without a symbol (its record had none) is searched by its name under base mangled.
TEST(NcuCsv, ARegexUnderBaseMangledSearchesTheNameOfAKernelWithoutSymbol) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(4242, trace::CollectionMode::kTiming);
    t.kernel(1, 2000, 3000, "c_kernel", 0, "");  // no launch record either (its call carries a symbol)
    t.finish();
  }
  NcuFilter f;
  f.kernel_name_base = "mangled";
  f.kernel_name = "regex:^c_kern";
  std::ostringstream out;
  EXPECT_EQ(write_ncu_csv(out, {dir.path / "t.rftrace"}, "raw", f), 1u) << out.str();
  EXPECT_NE(out.str().find("\"c_kernel\""), std::string::npos) << out.str();
}

}  // namespace
}  // namespace rf::analyzer
