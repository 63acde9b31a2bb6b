// ncu's --kernel-id, --filter-mode and --launch-skip-before-match (launch_selection.h): the
// kernel id's syntax, which launches each option selects, and counting from many threads.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "rfprof/collector/launch_selection.h"

namespace rf::collector {
namespace {

TEST(KernelId, FourFieldsTheNameMayHoldColons) {
  KernelId id = KernelId::parse("::foo:2");
  EXPECT_EQ(id.context, "");
  EXPECT_EQ(id.stream, "");
  EXPECT_EQ(id.kernel_name, "foo");
  EXPECT_EQ(id.invocation, "2");
  id = KernelId::parse("1:7:regex:at::native::.*:");
  EXPECT_EQ(id.context, "1");
  EXPECT_EQ(id.stream, "7");
  EXPECT_EQ(id.kernel_name, "regex:at::native::.*");
  EXPECT_EQ(id.invocation, "");
  id = KernelId::parse(":::");
  EXPECT_EQ(id.kernel_name, "");
  // Invocations past 1000 can be named by an expression too.
  EXPECT_EQ(KernelId::parse("::k:1[0-9]{4}").invocation, "1[0-9]{4}");
  EXPECT_EQ(KernelId::parse("::k:12345678").invocation, "12345678");
}

TEST(KernelId, RefusesWhatNcuWouldNotRead) {
  for (const char* bad : {"", "foo", "::foo", ":foo:2", "::regex::1", "::regex:(:1", "(::foo:1", ":[:foo:1", "::foo:(2",
                          "::foo:0", "::ns::foo", "::foo:-1", "::foo:00"}) {
    try {
      (void)KernelId::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const FilterError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--kernel-id ") + bad), std::string::npos) << e.what();
    }
  }
}

// A context or stream that can be no CUPTI id (a negative number, a space, "00") selected no
// launch and said nothing; refused now as an invocation that matches no number is. Ids from 0,
// regular expressions on them and empty fields stay accepted.
TEST(KernelId, AContextOrStreamThatMatchesNoIdIsRefused) {
  for (const char* bad : {"-1::foo:", ":-7:foo:", "1 ::foo:", "x::foo:", "::foo: 1"}) {
    try {
      (void)KernelId::parse(bad);
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const FilterError& e) {
      EXPECT_NE(std::string(e.what()).find("matches no"), std::string::npos) << e.what();
    }
  }
  // Regular expressions whose numbers all start with another digit than 1 (a review: the stream
  // 2[0-9]{3} was refused, as was the invocation 5[0-9]{3}).
  for (const char* good : {"0::foo:", ":00:foo:", "1|5:2:foo:7", "1.*:[0-9]+:foo:", ":::", ":2[0-9]{3}::1",
                           "::foo:5[0-9]{3}", "9[0-9]{17}:::"})
    EXPECT_NO_THROW((void)KernelId::parse(good)) << good;
  try {
    (void)KernelId::parse(":-7:foo:");
  } catch (const FilterError& e) {
    EXPECT_NE(std::string(e.what()).find("the stream '-7' matches no stream id"), std::string::npos) << e.what();
  }
}

TEST(FilterMode, NcuSpellings) {
  EXPECT_EQ(parse_filter_mode("global"), FilterMode::kGlobal);
  EXPECT_EQ(parse_filter_mode("per-gpu"), FilterMode::kPerGpu);
  EXPECT_EQ(parse_filter_mode("per-launch-config"), FilterMode::kPerLaunchConfig);
  EXPECT_FALSE(parse_filter_mode("per_gpu").has_value());
  EXPECT_FALSE(parse_filter_mode("").has_value());
  for (FilterMode m : {FilterMode::kGlobal, FilterMode::kPerGpu, FilterMode::kPerLaunchConfig})
    EXPECT_EQ(parse_filter_mode(filter_mode_name(m)), m);
}

CountedLaunch launch(std::string_view kernel, uint32_t device = 0, int32_t grid_x = 1, uint32_t shared = 0) {
  CountedLaunch l;
  l.kernel = kernel;
  l.device = device;
  l.grid = {grid_x, 1, 1};
  l.block = {128, 1, 1};
  l.shared_bytes = shared;
  l.context_id = 1;
  l.stream_id = 7;
  return l;
}

/// The indices of `launches` that `s` admits, all filtered in.
std::vector<int> admitted(LaunchSelection& s, const std::vector<CountedLaunch>& launches) {
  std::vector<int> out;
  for (size_t i = 0; i < launches.size(); ++i)
    if (s.admit(launches[i], true)) out.push_back(static_cast<int>(i));
  return out;
}

TEST(LaunchSelection, InvocationCountsLaunchesOfTheSameKernel) {
  LaunchSelectionOptions o;
  o.kernel_id = KernelId::parse(":::2");  // the second launch of every kernel
  LaunchSelection s(o);
  const auto got = admitted(s, {launch("a"), launch("b"), launch("a"), launch("a"), launch("b"), launch("c")});
  EXPECT_EQ(got, (std::vector<int>{2, 4}));
}

TEST(LaunchSelection, InvocationIsARegularExpressionOnTheWholeNumber) {
  LaunchSelectionOptions o;
  o.kernel_id = KernelId::parse(":::.*5|3");  // ncu's example: the third, and those ending in 5
  LaunchSelection s(o);
  std::vector<CountedLaunch> l(26, launch("k"));
  EXPECT_EQ(admitted(s, l), (std::vector<int>{2, 4, 14, 24}));  // invocations 3, 5, 15, 25
}

TEST(LaunchSelection, ContextAndStreamMatchTheWholeId) {
  LaunchSelectionOptions o;
  o.kernel_id = KernelId::parse("1|5:2::");
  LaunchSelection s(o);
  auto with = [](uint32_t ctx, uint32_t stream) {
    CountedLaunch l = launch("k");
    l.context_id = ctx;
    l.stream_id = stream;
    return l;
  };
  EXPECT_EQ(admitted(s, {with(1, 2), with(5, 2), with(15, 2), with(1, 22), with(3, 2)}), (std::vector<int>{0, 1}));
  EXPECT_TRUE(s.needs_stream_id());
  LaunchSelectionOptions none;
  none.kernel_id = KernelId::parse("::k:");
  EXPECT_FALSE(LaunchSelection(none).needs_stream_id());
  // A context without a stream needs no stream id; a stream without a context does.
  LaunchSelectionOptions context_only, stream_only;
  context_only.kernel_id = KernelId::parse("1::k:");
  stream_only.kernel_id = KernelId::parse(":2:k:");
  EXPECT_FALSE(LaunchSelection(context_only).needs_stream_id());
  EXPECT_TRUE(LaunchSelection(stream_only).needs_stream_id());
}

// ncu's example 1|5:2::7, "the seventh launch from context 1 on stream 2, and from context 5 on
// stream 2": a given CONTEXT or STREAM counts invocations per id, an empty one across all ids.
TEST(LaunchSelection, InvocationsAreCountedPerContextAndStreamTheIdNames) {
  auto on = [](uint32_t ctx, uint32_t stream) {
    CountedLaunch l = launch("k");
    l.context_id = ctx;
    l.stream_id = stream;
    return l;
  };
  const std::vector<CountedLaunch> launches = {on(1, 2), on(5, 2), on(1, 2), on(5, 3), on(5, 2), on(1, 3)};
  LaunchSelectionOptions per_context;
  per_context.kernel_id = KernelId::parse("1|5:::2");
  LaunchSelection a(per_context);
  EXPECT_EQ(admitted(a, launches), (std::vector<int>{2, 3}));  // the second in context 1, in context 5
  LaunchSelectionOptions any_context;
  any_context.kernel_id = KernelId::parse(":2::2");
  LaunchSelection b(any_context);
  EXPECT_EQ(admitted(b, launches), (std::vector<int>{1}));  // the second on stream 2, any context
  LaunchSelectionOptions per_stream;
  per_stream.kernel_id = KernelId::parse(":2|3::2");
  LaunchSelection d(per_stream);
  EXPECT_EQ(admitted(d, launches), (std::vector<int>{1, 5}));  // the second on stream 2, on stream 3
  LaunchSelectionOptions neither;
  neither.kernel_id = KernelId::parse(":::2");
  LaunchSelection c(neither);
  EXPECT_EQ(admitted(c, launches), (std::vector<int>{1}));
}

TEST(LaunchSelection, TheCallersNameMatchIsHonoured) {
  LaunchSelectionOptions o;
  o.kernel_id = KernelId::parse("::foo:2");
  LaunchSelection s(o);
  CountedLaunch foo = launch("_Z3foov"), other = launch("_Z3barv");
  other.kernel_id_name_matches = false;
  // Launches of other kernels neither match nor count as invocations of foo.
  EXPECT_FALSE(s.admit(foo, true));
  EXPECT_FALSE(s.admit(other, true));
  EXPECT_TRUE(s.admit(foo, true));
  EXPECT_FALSE(s.admit(foo, true));
}

TEST(LaunchSelection, SkipBeforeMatchCountsEveryLaunchFilteredOrNot) {
  LaunchSelectionOptions o;
  o.skip_before_match = 3;
  o.launch_count = 2;
  LaunchSelection s(o);
  EXPECT_FALSE(s.admit(launch("a"), true));
  EXPECT_FALSE(s.admit(launch("b"), false));  // refused by -k, still one of the three
  EXPECT_FALSE(s.admit(launch("a"), true));
  EXPECT_FALSE(s.admit(launch("b"), false));
  EXPECT_TRUE(s.admit(launch("a"), true));
  EXPECT_TRUE(s.admit(launch("a"), true));
  EXPECT_FALSE(s.admit(launch("a"), true));  // -c 2 reached
}

TEST(LaunchSelection, PerGpuCountsSkipAndCountOnEachDevice) {
  LaunchSelectionOptions o;
  o.mode = FilterMode::kPerGpu;
  o.launch_skip = 1;
  o.launch_count = 1;  // ncu's example: the second launch on each GPU
  LaunchSelection s(o);
  EXPECT_TRUE(s.needs_device());
  const auto got = admitted(s, {launch("a", 0), launch("a", 1), launch("b", 1), launch("c", 0), launch("d", 0),
                                launch("e", 2), launch("f", 1)});
  EXPECT_EQ(got, (std::vector<int>{2, 3}));
}

TEST(LaunchSelection, PerLaunchConfigSeparatesKernelGridBlockAndSharedMemory) {
  LaunchSelectionOptions o;
  o.mode = FilterMode::kPerLaunchConfig;
  o.launch_count = 1;  // each kernel in each configuration once
  LaunchSelection s(o);
  CountedLaunch wide_block = launch("a");
  wide_block.block = {256, 1, 1};
  const auto got = admitted(s, {launch("a"), launch("a"), launch("a", 0, 2), launch("b"), launch("a", 0, 1, 1024),
                                wide_block, launch("a", 0, 2), wide_block, launch("a", 3)});
  // The device is not part of the configuration: launch("a", 3) is launch 0's configuration.
  EXPECT_EQ(got, (std::vector<int>{0, 2, 3, 4, 5}));
}

TEST(LaunchSelection, GlobalSkipAndCountAsLaunchLog) {
  LaunchSelectionOptions o;
  o.kernel_id = KernelId::parse("::regex:^a:");
  o.launch_skip = 1;
  o.launch_count = 2;
  LaunchSelection s(o);
  std::vector<CountedLaunch> l(6, launch("a"));
  l[1].kernel_id_name_matches = false;
  EXPECT_EQ(admitted(s, l), (std::vector<int>{2, 3}));
}

TEST(LaunchSelection, ThreadsCountEachKeyExactlyOnce) {
  LaunchSelectionOptions o;
  o.mode = FilterMode::kPerLaunchConfig;
  o.launch_skip = 100;
  o.launch_count = 50;
  LaunchSelection s(o);
  constexpr int kThreads = 8, kPerThread = 2000, kConfigs = 4;
  std::atomic<int> admitted_total{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i)
        if (s.admit(launch("k", 0, 1 + (i + t) % kConfigs), true)) ++admitted_total;
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(admitted_total.load(), kConfigs * 50);  // each configuration: launches 100..149
}

}  // namespace
}  // namespace rf::collector
