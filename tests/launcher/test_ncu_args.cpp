// rfprof's ncu flags -> the configuration librfinject receives (ncu_args.h), without a GPU.
#include "rfprof/launcher/ncu_args.h"

#include <gtest/gtest.h>

#include <set>

#include "launcher_test_util.h"

namespace rf::launcher {
namespace {

Plan parse(std::vector<std::string> args) { return parse_args(args); }

using test_util::error_of;
using test_util::has;

TEST(NcuArgs, CommandAndDefaults) {
  Plan p = parse({"python", "main.py", "--lr", "0.1", "-o", "x"});
  EXPECT_EQ(p.command, (std::vector<std::string>{"python", "main.py", "--lr", "0.1", "-o", "x"}));
  EXPECT_EQ(p.env.at("RFPROF_OUTPUT"), "rfprof_%p.rftrace");
  EXPECT_EQ(p.env.at("RFPROF_TARGET_PROCESSES"), "all");  // ncu's default
  EXPECT_FALSE(p.env.count("RFPROF_METRICS"));
  EXPECT_FALSE(p.csv);
  EXPECT_EQ(p.page, "details");
}

// ncu's launch and device attributes given with --metrics (launch__grid_size, ...): rfprof prints
// them from the kernel records, so they are not counters to collect.
TEST(NcuArgs, LaunchAttributesInMetricsCollectNoCounters) {
  Plan p = parse({"--metrics", "launch__grid_size", "--metrics", "launch__registers_per_thread", "app"});
  EXPECT_EQ(p.env.at("RFPROF_METRIC_SET"), "timing");
  EXPECT_EQ(p.env.count("RFPROF_METRICS"), 0u);
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("no counters collected"), std::string::npos) << p.notes[0];
  Plan i = parse({"-i", "t.rftrace", "--csv", "--metrics", "launch__grid_size,device__attribute_display_name"});
  EXPECT_EQ(i.print_metrics, (std::vector<std::string>{"launch__grid_size", "device__attribute_display_name"}));
  const std::string e = error_of({"--metrics", "launch__waves_per_multiprocessor", "app"});
  EXPECT_EQ(e.rfind("rfprof: --metrics launch__waves_per_multiprocessor: one of ncu's launch or device attributes "
                    "that rfprof does not print", 0), 0u) << e;
  EXPECT_NE(e.find("launch__grid_size"), std::string::npos) << e;  // what it prints instead
  EXPECT_TRUE(parse({"--quiet", "--metrics", "launch__grid_size", "app"}).notes.empty());
  EXPECT_NE(error_of({"--metrics", "device__attribute_ecc_enabled", "app"}).find("does not print"), std::string::npos);
}

TEST(NcuArgsHostApi, LaunchAttributesBesideCountersAreNotCollected) {
  Plan p = parse({"--metrics", "launch__grid_size,dram__bytes_read.sum,launch__block_size", "app"});
  EXPECT_EQ(p.env.at("RFPROF_METRICS"), "dram__bytes_read.sum");
  EXPECT_EQ(p.env.count("RFPROF_METRIC_SET"), 0u);
  EXPECT_EQ(p.print_attributes, (std::vector<std::string>{"launch__grid_size", "launch__block_size"}));  // printed
}

// *HostApi suites call CUPTI's profiler host API (--metrics is checked with it): not under the
// sanitizers, whose runtime refuses its RTLD_DEEPBIND dlopen (scripts/run-tests).
TEST(NcuArgsHostApi, ClusterScriptFlags) {
  Plan p = parse({"--metrics", "dram__bytes_read.sum,gpu__time_duration.sum", "--csv", "--page", "raw",
                  "--log-file", "x.csv", "--profile-from-start", "off", "--target-processes", "application-only",
                  "-o", "run_%q{SLURM_PROCID}", "-f", "python", "main.py"});
  EXPECT_EQ(p.env.at("RFPROF_METRICS"), "dram__bytes_read.sum,gpu__time_duration.sum");
  EXPECT_TRUE(p.csv);
  EXPECT_EQ(p.page, "raw");
  EXPECT_EQ(p.log_file, "x.csv");
  EXPECT_EQ(p.env.at("RFPROF_PROFILE_FROM_START"), "off");
  EXPECT_EQ(p.env.at("RFPROF_TARGET_PROCESSES"), "application-only");
  EXPECT_EQ(p.env.at("RFPROF_OUTPUT"), "run_%q{SLURM_PROCID}.rftrace");
  EXPECT_EQ(p.env.at("RFPROF_FORCE_OVERWRITE"), "1");
  EXPECT_EQ(p.command, (std::vector<std::string>{"python", "main.py"}));
}

TEST(NcuArgs, UniquePrefixesOfLongOptionsAsInNcu) {
  Plan p = parse({"--target-process", "all", "--profile-from", "no", "--disable-profiler", "--export=out.rftrace",
                  "./app"});
  EXPECT_EQ(p.env.at("RFPROF_TARGET_PROCESSES"), "all");
  EXPECT_EQ(p.env.at("RFPROF_PROFILE_FROM_START"), "off");
  EXPECT_EQ(p.env.at("RFPROF_DISABLE_PROFILER_START_STOP"), "1");
  EXPECT_EQ(p.env.at("RFPROF_OUTPUT"), "out.rftrace");
  EXPECT_NE(error_of({"--pr", "on", "./app"}).find("ambiguous"), std::string::npos);  // profile-..., print-...
  // A value after '=' is the whole rest of the word, '=' included; a switch takes no value; a
  // bare "--" ends rfprof's options.
  EXPECT_EQ(parse({"--kernel-name=regex:a=b", "./app"}).env.at("RFPROF_KERNEL_NAME"), "regex:a=b");
  EXPECT_EQ(parse({"--verbose", "./app", "x"}).command, (std::vector<std::string>{"./app", "x"}));
  EXPECT_EQ(parse({"--quiet", "--", "./app", "-o", "y"}).command, (std::vector<std::string>{"./app", "-o", "y"}));
}

TEST(NcuArgs, CallStackAndMemoryUsage) {
  Plan none = parse({"./app"});
  EXPECT_FALSE(none.env.count("RFPROF_CALLSTACKS"));
  EXPECT_FALSE(none.env.count("RFPROF_MEMORY"));
  Plan p = parse({"--call-stack", "--call-stack-type", "native", "--cuda-memory-usage", "true", "./app", "--call-stack"});
  EXPECT_EQ(p.env.at("RFPROF_CALLSTACKS"), "1");
  EXPECT_EQ(p.env.at("RFPROF_MEMORY"), "1");
  EXPECT_EQ(p.command, (std::vector<std::string>{"./app", "--call-stack"}));  // the app's own flag
  EXPECT_EQ(parse({"--cuda-memory-usage", "false", "./app"}).env.at("RFPROF_MEMORY"), "0");  // given: decides
  EXPECT_EQ(parse({"--cuda-memory-usage", "TRUE", "./app"}).env.at("RFPROF_MEMORY"), "1");  // any case
  EXPECT_EQ(parse({"--call-stack", "--call-stack-type", "NATIVE", "./app"}).env.at("RFPROF_CALLSTACKS"), "1");
  EXPECT_NE(error_of({"--call-stack-type", "python", "./app"}).find("only native call stacks"), std::string::npos);
  EXPECT_NE(error_of({"--call-stack-type", "python", "--call-stack-type", "native", "./app"}).find("only native"),
            std::string::npos);  // each one given, not the last only
  EXPECT_NE(error_of({"--cuda-memory-usage", "maybe", "./app"}).find("expected true or false"), std::string::npos);
}

TEST(NcuArgs, ProfileFromStartSpellings) {
  for (auto [v, want] : std::vector<std::pair<std::string, std::string>>{
           {"on", "on"}, {"yes", "on"}, {"1", "on"}, {"True", "on"}, {"off", "off"}, {"no", "off"}, {"0", "off"},
           {"false", "off"}})
    EXPECT_EQ(parse({"--profile-from-start", v, "a"}).env.at("RFPROF_PROFILE_FROM_START"), want) << v;
  EXPECT_NE(error_of({"--profile-from-start", "maybe", "a"}).find("--profile-from-start maybe: expected one of on, "
                                                                 "off, yes, no, true, false, 1, 0"),
            std::string::npos);
}

// ncu's switches take on/off, yes/no, true/false and 1/0 (its documentation lists on/off and
// yes/no, its --help --check-exit-code 1): every spelling rfprof accepts for one, it accepts in all.
TEST(NcuArgs, SwitchesTakeEverySpellingOfYesAndNo) {
  const std::vector<std::string> yes = {"on", "yes", "true", "1", "ON", "Yes"}, no = {"off", "no", "false", "0", "OFF"};
  for (const std::string flag : {"--check-exit-code", "--import-sass", "--apply-rules", "--config-file", "--rename-kernels"})
    for (const auto& v : yes) {
      EXPECT_NO_THROW(parse({flag, v, "app"})) << flag << " " << v;
      for (const auto& n : no) EXPECT_NO_THROW(parse({flag, n, "app"})) << flag << " " << n;
    }
  for (const std::string flag : {"--import-source", "--kill"}) {  // only "no" is what rfprof does
    for (const auto& n : no) EXPECT_NO_THROW(parse({flag, n, "app"})) << flag << " " << n;
    for (const auto& v : yes) EXPECT_TRUE(has(error_of({flag, v, "app"}), flag + " " + v + " is not supported")) << v;
  }
  EXPECT_TRUE(has(error_of({"--apply-rules", "maybe", "app"}), "expected yes or no (or on/off, true/false, 1/0"));
  EXPECT_EQ(boolean_spelling("TRUE"), "yes");
  EXPECT_EQ(boolean_spelling("0"), "no");
  EXPECT_EQ(boolean_spelling("Maybe"), "maybe");
  EXPECT_FALSE(is_boolean_flag("cache-control"));
}

TEST(NcuArgs, SetsAndSections) {
  EXPECT_EQ(parse({"--set", "roofline", "a"}).env.at("RFPROF_METRIC_SET"), "hierarchical");  // ncu's meaning
  EXPECT_EQ(parse({"--set", "hierarchical", "a"}).env.at("RFPROF_METRIC_SET"), "hierarchical");
  EXPECT_EQ(parse({"--set", "timing", "a"}).env.at("RFPROF_METRIC_SET"), "timing");
  EXPECT_EQ(parse({"--set", "roofline-tensor", "a"}).env.at("RFPROF_METRIC_SET"), "roofline-tensor");
  EXPECT_EQ(parse({"--section", "SpeedOfLight_RooflineChart", "a"}).env.at("RFPROF_METRIC_SET"), "roofline");
  EXPECT_EQ(parse({"--section", "SpeedOfLight_HierarchicalTensorRooflineChart", "a"}).env.at("RFPROF_METRIC_SET"),
            "roofline-tensor");
  // Names in any case, as ncu takes them; the set as rfprof names it, an error naming the value
  // as typed.
  EXPECT_EQ(parse({"--set", "TIMING", "a"}).env.at("RFPROF_METRIC_SET"), "timing");
  EXPECT_EQ(parse({"--set", "Roofline-Tensor", "a"}).env.at("RFPROF_METRIC_SET"), "roofline-tensor");
  EXPECT_NE(error_of({"--set", "FULL", "a"}).find("--set FULL: "), std::string::npos);
  // --section also takes rfprof's set names, "roofline" there meaning rfprof's, not ncu's set; of
  // several sections, the largest set they need.
  EXPECT_EQ(parse({"--section", "roofline", "a"}).env.at("RFPROF_METRIC_SET"), "roofline");
  EXPECT_EQ(parse({"--section", "timing", "a"}).env.at("RFPROF_METRIC_SET"), "timing");
  EXPECT_EQ(parse({"--section", "timing", "--section", "SpeedOfLight_RooflineChart", "a"}).env.at("RFPROF_METRIC_SET"),
            "roofline");
  EXPECT_NE(error_of({"--set", "full", "a"}).find("--set full"), std::string::npos);
  EXPECT_NE(error_of({"--section", "MemoryWorkloadAnalysis", "a"}).find("not a roofline section"), std::string::npos);
  // ncu's --section regex:EXPR: the roofline sections whose identifier it matches, named in a note.
  const Plan all = parse({"--section", "regex:.*", "a"});
  EXPECT_EQ(all.env.at("RFPROF_METRIC_SET"), "hierarchical");  // the largest set they need
  ASSERT_EQ(all.notes.size(), 1u);
  EXPECT_TRUE(has(all.notes[0], "--section regex:.*: the roofline sections it matches, "
                                "SpeedOfLight_HierarchicalDoubleRooflineChart, ")) << all.notes[0];
  EXPECT_EQ(parse({"--section", "regex:^SpeedOfLight_RooflineChart$", "a"}).env.at("RFPROF_METRIC_SET"), "roofline");
  EXPECT_EQ(parse({"--section", "regex:Tensor", "a"}).env.at("RFPROF_METRIC_SET"), "roofline-tensor");
  EXPECT_TRUE(parse({"--section", "regex:.*", "--quiet", "a"}).notes.empty());
  EXPECT_TRUE(has(error_of({"--section", "regex:Occupancy", "a"}),
                  "--section regex:Occupancy: matches none of the roofline sections rfprof honours"));
  EXPECT_TRUE(has(error_of({"--section", "regex:(", "a"}), "--section regex:(: not a valid regular expression"));
  EXPECT_TRUE(has(error_of({"--set", "timing", "--metrics", "sm__cycles_elapsed.avg", "a"}),
                  "--metrics with --set timing: the timing set collects no counters"));
  // Launch attributes come from the kernel records: they go with the timing set, as alone.
  const Plan attributes = parse({"--set", "timing", "--metrics", "launch__grid_size", "a"});
  EXPECT_EQ(attributes.env.at("RFPROF_METRIC_SET"), "timing");
  EXPECT_EQ(attributes.env.count("RFPROF_METRICS"), 0u);
  EXPECT_EQ(attributes.print_attributes, std::vector<std::string>{"launch__grid_size"});
}

// With --set or --section, --metrics are collected besides the set's, as ncu collects both
// (librfinject adds them to the set it plans). *HostApi: the names are checked with CUPTI's host
// API, whose RTLD_DEEPBIND dlopen the sanitizer build refuses (scripts/run-tests).
TEST(NcuArgsHostApi, MetricsBesideASectionAreCollectedToo) {
  const Plan both = parse({"--section", "SpeedOfLight_RooflineChart", "--metrics", "sm__cycles_elapsed.avg", "a"});
  EXPECT_EQ(both.env.at("RFPROF_METRIC_SET"), "roofline");
  EXPECT_EQ(both.env.at("RFPROF_METRICS"), "sm__cycles_elapsed.avg");
}

TEST(NcuArgs, KernelFiltersAndReplayMode) {
  Plan p = parse({"-k", "regex:gemm.*", "-s", "5", "-c", "10", "--replay-mode", "kernel", "a"});
  EXPECT_EQ(p.kernel_name, "regex:gemm.*");
  EXPECT_EQ(p.launch_skip, 5u);
  EXPECT_EQ(p.launch_count, 10u);
  // The collector applies them (RFPROF_* variables, inject/config.cpp).
  EXPECT_EQ(p.env.at("RFPROF_KERNEL_NAME"), "regex:gemm.*");
  EXPECT_EQ(p.env.at("RFPROF_LAUNCH_SKIP"), "5");
  EXPECT_EQ(p.env.at("RFPROF_LAUNCH_COUNT"), "10");
  EXPECT_FALSE(p.env.count("RFPROF_KERNEL_NAME_BASE"));
  EXPECT_FALSE(parse({"a"}).env.count("RFPROF_LAUNCH_SKIP"));
  EXPECT_EQ(parse({"--kernel-name-base", "mangled", "-k", "_Z5scalePfffi", "a"}).env.at("RFPROF_KERNEL_NAME_BASE"),
            "mangled");
  EXPECT_NE(error_of({"--kernel-name-base", "short", "a"}), "");
  // --kernel-name in full, and abbreviated: -k, not --kernel-name-base, which it begins too.
  for (const char* flag : {"--kernel-name", "--kernel-n"}) {
    const Plan named = parse({flag, "gemm", "a"});
    EXPECT_EQ(named.kernel_name, "gemm") << flag;
    EXPECT_EQ(named.kernel_name_base, "function") << flag;
  }
  EXPECT_NE(error_of({"--replay-mode", "application", "a"}).find("--replay-mode step"), std::string::npos);
  EXPECT_EQ(p.env.at("RFPROF_REPLAY"), "kernel");  // given: decides over an inherited RFPROF_REPLAY
  EXPECT_FALSE(parse({"a"}).env.count("RFPROF_REPLAY"));
  EXPECT_NE(error_of({"-k", "regex:(", "a"}).find("not a valid regular expression"), std::string::npos);
  EXPECT_NE(error_of({"-c", "0", "a"}), "");
  // --devices: the collector skips the launches of other devices (device_filter.h).
  EXPECT_EQ(parse({"--devices", "0,2", "a"}).env.at("RFPROF_DEVICES"), "0,2");
  EXPECT_EQ(parse({"--dev", "1", "a"}).env.at("RFPROF_DEVICES"), "1");  // ncu's unique prefixes
  EXPECT_FALSE(p.env.count("RFPROF_DEVICES"));
  // With -i the list selects the printed rows (analyzer::NcuFilter::devices).
  EXPECT_EQ(parse({"-i", "x.rftrace", "--devices", "0,3"}).devices, (std::vector<uint32_t>{0, 3}));
  EXPECT_NE(error_of({"-i", "x.rftrace", "--devices", "gpu1"}).find("--devices gpu1: expected CUDA device ordinals"),
            std::string::npos);
}

TEST(NcuArgs, KernelIdFilterModeAndSkipBeforeMatch) {
  Plan p = parse({"--kernel-id", "::regex:at::native::.*gemm:2", "--filter-mode", "per-launch-config",
                  "--launch-skip-before-match", "10", "python", "main.py"});
  EXPECT_EQ(p.env.at("RFPROF_KERNEL_ID"), "::regex:at::native::.*gemm:2");
  EXPECT_EQ(p.env.at("RFPROF_FILTER_MODE"), "per-launch-config");
  EXPECT_EQ(p.env.at("RFPROF_LAUNCH_SKIP_BEFORE_MATCH"), "10");
  EXPECT_EQ(p.kernel_id, std::optional<std::string>("::regex:at::native::.*gemm:2"));
  EXPECT_EQ(p.launch_skip_before_match, 10u);  // what -i applies to the launches it prints
  // ncu's defaults, not given, pass nothing to the collector; given, they are passed (an inherited
  // RFPROF_* must not decide over them).
  Plan d = parse({"--filter-mode", "global", "--launch-skip-before-match", "0", "a"});
  EXPECT_EQ(d.env.at("RFPROF_FILTER_MODE"), "global");
  EXPECT_EQ(d.env.at("RFPROF_LAUNCH_SKIP_BEFORE_MATCH"), "0");
  EXPECT_FALSE(d.env.count("RFPROF_KERNEL_ID"));
  EXPECT_FALSE(parse({"a"}).env.count("RFPROF_FILTER_MODE"));
  EXPECT_FALSE(parse({"a"}).env.count("RFPROF_LAUNCH_SKIP_BEFORE_MATCH"));
  EXPECT_EQ(parse({"--filter-mode", "per-gpu", "-i", "x.rftrace"}).filter_mode, "per-gpu");
  // Refused before the run, naming the flag and what was expected.
  EXPECT_NE(error_of({"--kernel-id", "foo:2", "a"}).find("--kernel-id foo:2: expected CONTEXT:STREAM:[regex:]NAME:INVOCATION"),
            std::string::npos);
  EXPECT_NE(error_of({"--kernel-id", "::foo:(", "a"}).find("the invocation '(' is not a valid regular expression"),
            std::string::npos);
  EXPECT_NE(error_of({"--kernel-id", "", "a"}).find("--kernel-id: expected CONTEXT:STREAM"), std::string::npos);
  EXPECT_NE(error_of({"--kernel-id", "::ns::foo", "a"}).find("the invocation 'foo' matches no launch number"),
            std::string::npos);
  EXPECT_NE(error_of({"--filter-mode", "per-kernel", "a"}).find("--filter-mode"), std::string::npos);
  EXPECT_NE(error_of({"--launch-skip-before-match", "-1", "a"}).find("expected a whole number of launches below 2^64, got -1"),
            std::string::npos);
  // An empty count is no number (CLI11 alone would read it as 0).
  EXPECT_NE(error_of({"-s", "", "a"}).find("expected a whole number of launches below 2^64, got"), std::string::npos);
}

TEST(NcuArgs, ReplayAcrossSteps) {
  Plan p = parse({"--replay-mode", "step", "--replay-groups", "2", "python", "main.py"});
  EXPECT_EQ(p.env.at("RFPROF_REPLAY"), "step");
  EXPECT_EQ(p.env.at("RFPROF_REPLAY_GROUPS"), "2");
  EXPECT_EQ(p.env.at("RFPROF_PROFILE_FROM_START"), "off");  // each window is one step
  // Flags librfinject would refuse in the application, which would then run unprofiled, are
  // refused here, naming them.
  EXPECT_NE(error_of({"--replay-mode", "step", "--profile-from-start", "on", "a"})
                .find("--replay-mode step needs --profile-from-start off"),
            std::string::npos);
  for (const std::vector<std::string>& filter : {std::vector<std::string>{"-k", "relu"}, {"-c", "3"}, {"-s", "1"},
                                                 {"--nvtx-include", "step/"}, {"--devices", "0"},
                                                 {"--kernel-id", "::k:1"}, {"--filter-mode", "per-gpu"},
                                                 {"--launch-skip-before-match", "3"}}) {
    std::vector<std::string> args = {"--replay-mode", "step"};
    args.insert(args.end(), filter.begin(), filter.end());
    args.push_back("a");
    EXPECT_NE(error_of(args).find("profiles every kernel of a step: drop -k, -s, -c"), std::string::npos) << filter[0];
  }
  EXPECT_NE(error_of({"--replay-groups", "2", "a"}).find("--replay-groups needs --replay-mode step"),
            std::string::npos);
  EXPECT_NE(error_of({"--replay-mode", "step", "--replay-groups", "0", "a"}), "");
  // Up to 1000 groups, as librfinject reads RFPROF_REPLAY_GROUPS.
  EXPECT_EQ(parse({"--replay-mode", "step", "--replay-groups", "1000", "a"}).env.at("RFPROF_REPLAY_GROUPS"), "1000");
  EXPECT_NE(error_of({"--replay-mode", "step", "--replay-groups", "1001", "a"}), "");
  EXPECT_EQ(parse({"--replay-mode", "step", "--replay-range", "regex:^step ", "a"}).env.at("RFPROF_REPLAY_RANGE"),
            "regex:^step ");
  EXPECT_NE(error_of({"--replay-range", "step", "a"}).find("--replay-range needs --replay-mode step"),
            std::string::npos);
}

TEST(NcuArgs, NvtxIncludeAndExcludeRulesGoToTheCollector) {
  Plan p = parse({"--nvtx", "--nvtx-include", "train/*/forward/", "--nvtx-include", "Dom@epoch 2",
                  "--nvtx-exclude", "[warmup/", "python", "main.py", "--nvtx-include", "x"});
  EXPECT_EQ(p.env.at("RFPROF_NVTX_INCLUDE"), "train/*/forward/;Dom@epoch 2");
  EXPECT_EQ(p.env.at("RFPROF_NVTX_EXCLUDE"), "[warmup/");
  EXPECT_EQ(p.command, (std::vector<std::string>{"python", "main.py", "--nvtx-include", "x"}));
  EXPECT_EQ(parse({"--nvtx-incl", "A/", "a"}).env.at("RFPROF_NVTX_INCLUDE"), "A/");  // unique prefix
  // Anchors, brackets and commas reach the collector as written (CLI11 would read "[A,B]" as a
  // list): ncu's own examples.
  EXPECT_EQ(parse({"--nvtx-include", "[step/*/aten::mm]", "--nvtx-include=regex:[0-9]d@/[0-9]r,C[0-9/]", "a"})
                .env.at("RFPROF_NVTX_INCLUDE"),
            "[step/*/aten::mm];regex:[0-9]d@/[0-9]r,C[0-9/]");
  // ncu's syntax is checked before the application runs: a comma joins start/end ranges only.
  EXPECT_NE(error_of({"--nvtx-include", "[A,B]", "a"}).find("cannot appear in a push/pop rule"), std::string::npos);
  EXPECT_NE(error_of({"--nvtx-include"}).find("needs an NVTX rule"), std::string::npos);
  EXPECT_NE(error_of({"--nvtx-include", "A/", "-i", "t.rftrace"}).find("select launches while profiling"),
            std::string::npos);
  // An attached rule as the last word is a rule, not a flag missing one.
  EXPECT_NE(error_of({"-i", "t.rftrace", "--nvtx-include=A/"}).find("select launches while profiling"),
            std::string::npos);
  EXPECT_NE(error_of({"--nvtx-include", "A//B", "a"}).find("empty range name"), std::string::npos);
  EXPECT_NE(error_of({"--nvtx-exclude", "a;b/", "a"})
                .find("--nvtx-exclude a;b/: rfprof cannot pass a rule containing ';'"),
            std::string::npos);
}

TEST(NcuArgs, UnsupportedFlagsAreNamedNeverIgnored) {
  for (const auto& [flag, why] : unsupported_flags()) {
    if (why.empty()) continue;
    if (flag == "replay-mode") continue;
    std::string msg = error_of({"--" + flag, "x", "app"});
    EXPECT_EQ(msg.rfind("rfprof: --" + flag, 0), 0u) << msg;
    EXPECT_NE(msg.find("is not supported: " + why), std::string::npos) << msg;
  }
  EXPECT_EQ(error_of({"--nvtx-include", "A/", "app"}), "");  // supported since the collector filters
  // Values that describe what rfprof does anyway are accepted, the flag and its value skipped; a
  // note where ncu's numbers would differ.
  for (const auto& a : accepted_values()) {
    Plan p = parse({"--" + a.flag, a.value, "app", "arg"});
    EXPECT_EQ(p.command, (std::vector<std::string>{"app", "arg"})) << a.flag << " " << a.value;
    EXPECT_EQ(p.notes.size(), a.note.empty() ? 0u : 1u) << a.flag << " " << a.value;
  }
  EXPECT_EQ(parse({"--cache-control=all", "app"}).notes,
            (std::vector<std::string>{"rfprof: note: --cache-control all: rfprof does not flush caches before each "
                                      "kernel as ncu does; DRAM bytes are those of the application's own run"}));
  EXPECT_TRUE(parse({"--cache-c", "NONE", "app"}).notes.empty());  // prefix and case as ncu accepts them
  EXPECT_TRUE(parse({"--quiet", "--cache-control", "all", "app"}).notes.empty());  // --quiet: no notes
  EXPECT_NE(error_of({"--graph-profiling", "graph", "app"}).find("only --graph-profiling node is accepted"),
            std::string::npos);
  EXPECT_TRUE(parse({"--version"}).version);
  EXPECT_NE(error_of({"--frobnicate", "app"}).find("unknown option --frobnicate"), std::string::npos);
}

// ncu's values that describe what rfprof does anyway, listed here rather than read from the table
// they check (a ninth mutation round removed table entries and no test noticed).
TEST(NcuArgs, NcuDefaultsAcceptedWithTheirNotes) {
  const std::vector<std::pair<std::string, std::string>> silent = {
      {"--graph-profiling", "node"},   {"--check-exit-code", "yes"},    {"--check-exit-code", "no"},
      {"--import-source", "no"},       {"--import-source", "0"},        {"--kill", "no"},
      {"--kill", "0"},                 {"--clock-control", "none"},     {"--cache-control", "none"},
      {"--pipeline-boost-state", "dynamic"}, {"--rename-kernels", "on"}, {"--rename-kernels", "off"},
      {"--print-details", "header"},   {"--print-nvtx-rename", "none"}, {"--print-units", "base"}};
  for (const auto& [flag, value] : silent) {
    EXPECT_EQ(error_of({flag, value, "app"}), "") << flag << " " << value;
    if (error_of({flag, value, "app"}).empty()) {
      EXPECT_TRUE(parse({flag, value, "app"}).notes.empty()) << flag << " " << value;
    }
  }
  // A value ncu does not have is refused with the values accepted (boost was missing from the list).
  EXPECT_TRUE(has(error_of({"--clock-control", "high", "app"}), "expected base, boost, force-boost or none"))
      << error_of({"--clock-control", "high", "app"});
  // Where ncu's numbers would differ, one note says how.
  const std::vector<std::pair<std::vector<std::string>, std::string>> noted = {
      {{"--clock-control", "base"}, "rfprof: note: --clock-control base: rfprof does not lock clocks as ncu does"},
      {{"--pipeline-boost-state", "stable"},
       "rfprof: note: --pipeline-boost-state stable: rfprof does not set the tensor-core boost state as ncu does"}};
  for (const auto& [args, note] : noted) {
    Plan p = parse({args[0], args[1], "app"});
    ASSERT_EQ(p.notes.size(), 1u) << args[0];
    EXPECT_EQ(p.notes[0].rfind(note, 0), 0u) << p.notes[0];
  }
}

TEST(NcuArgs, RefusedNcuFlagsSayWhyAndLongFormsAreKnown) {
  for (const auto& [flag, why] : std::vector<std::pair<std::string, std::string>>{
           {"--mode", "rfprof has no interactive modes (launch-and-attach, attach)"},
           {"--port", "rfprof has no remote attach"},
           {"--section-folder", "section files are not read"},
           {"--launch-count-per-kernel", "use -k with -c"},
           {"--kernel-regex", "an old ncu flag: use -k regex:EXPR"},
           {"--open-in-ui", "rfprof has no UI: rfanalyze writes report.html"}}) {
    const std::string e = error_of({flag, "x", "app"});
    EXPECT_EQ(e.rfind("rfprof: " + flag, 0), 0u) << e;
    EXPECT_NE(e.find(why), std::string::npos) << flag << ": " << e;
  }
  // An ambiguous prefix names every option it could be, in order.
  const std::string ambiguous = error_of({"--print", "x", "app"});
  EXPECT_TRUE(has(ambiguous, "rfprof: --print is ambiguous: could be --print-details, ")) << ambiguous;
  for (const char* option : {"--print-fp", "--print-kernel-base", "--print-summary", "--print-units"})
    EXPECT_TRUE(has(ambiguous, option)) << option << ": " << ambiguous;
  EXPECT_TRUE(has(ambiguous, " or --print-units")) << ambiguous;
  // Each reason says "not supported" once: the message does.
  for (const auto& [flag, why] : unsupported_flags())
    EXPECT_EQ(why.find("not supported"), std::string::npos) << flag << ": " << why;
  // -i and -f in their long forms, and a unique prefix of each.
  EXPECT_EQ(parse({"--import", "t.rftrace"}).import_files, (std::vector<std::string>{"t.rftrace"}));
  EXPECT_EQ(parse({"--force-overwrite", "app"}).env.at("RFPROF_FORCE_OVERWRITE"), "1");
  EXPECT_EQ(parse({"--force", "app"}).env.at("RFPROF_FORCE_OVERWRITE"), "1");
}

TEST(NcuArgs, ImportListSetsAndMissingCommand) {
  Plan i = parse({"-i", "t.rftrace", "--csv", "--page", "raw"});
  EXPECT_EQ(i.import_files, (std::vector<std::string>{"t.rftrace"}));
  EXPECT_TRUE(i.command.empty());
  EXPECT_EQ(parse({"--list-sets", "--chip", "GH100"}).listing->chip, "GH100");
  EXPECT_EQ(parse({"--list-sets"}).listing->chip, "");  // this machine's GPU, else GH100
  EXPECT_NE(error_of({"--csv"}).find("no application given"), std::string::npos);
  EXPECT_NE(error_of({"-i", "t.rftrace", "app"}).find("drop the application or -i"), std::string::npos);
  const Plan help = parse({"--help"});
  EXPECT_TRUE(help.help);
  for (const char* flag : {"--metrics", "--set", "--section", "--kernel-name", "--launch-skip", "--replay-mode"})
    EXPECT_NE(help.help_text.find(flag), std::string::npos) << flag;
}

// A script's `--metrics "$EXTRA"` with EXTRA empty adds nothing: the other --metrics flags are read
// as if it were not there (an empty item inside one list is refused).
TEST(NcuArgs, AnEmptyMetricsFlagAddsNothing) {
  Plan p = parse({"--metrics", "launch__grid_size", "--metrics", "", "app"});
  EXPECT_EQ(p.print_attributes, (std::vector<std::string>{"launch__grid_size"}));
  p = parse({"--metrics", "", "--metrics", "launch__grid_size", "app"});
  EXPECT_EQ(p.print_attributes, (std::vector<std::string>{"launch__grid_size"}));
  EXPECT_NE(error_of({"--metrics", "launch__grid_size,,launch__block_size", "app"}).find("without empty items"),
            std::string::npos);
}

// A flag given at ncu's default still decides its variable: the application inherits rfprof's
// environment, whose RFPROF_* would otherwise win (RFPROF_LAUNCH_SKIP=5 rfprof -s 0 app). Where
// "unset" is the default, the inherited variable is removed (Plan::env_unset).
TEST(NcuArgs, FlagsGivenAtTheirDefaultStillDecide) {
  const Plan p = parse({"-s", "0", "--replay-mode", "kernel", "--filter-mode", "global", "--launch-skip-before-match",
                        "0", "--cuda-memory-usage", "false", "app"});
  EXPECT_EQ(p.env.at("RFPROF_LAUNCH_SKIP"), "0");
  EXPECT_EQ(p.env.at("RFPROF_REPLAY"), "kernel");
  EXPECT_EQ(p.env.at("RFPROF_FILTER_MODE"), "global");
  EXPECT_EQ(p.env.at("RFPROF_LAUNCH_SKIP_BEFORE_MATCH"), "0");
  EXPECT_EQ(p.env.at("RFPROF_MEMORY"), "0");
  EXPECT_EQ(parse({"-s", "0", "app"}).env.at("RFPROF_LAUNCH_SKIP"), "0");
  EXPECT_TRUE(parse({"app"}).env_unset.empty());  // no flag, nothing decided
}

// *HostApi: --set checks the set with CUPTI's profiler host API, so not in the sanitizer build
// (scripts/run-tests).
TEST(NcuArgsHostApi, ASetGivenDecidesOverInheritedMetricsAndMode) {
  const Plan p = parse({"--set", "roofline", "app"});
  EXPECT_EQ(p.env.at("RFPROF_METRIC_SET"), "hierarchical");
  // --set alone collects the set: no inherited RFPROF_METRICS besides it, nor RFPROF_MODE.
  EXPECT_EQ(p.env_unset, (std::set<std::string>{"RFPROF_METRICS", "RFPROF_MODE"}));
  EXPECT_TRUE(parse({"-i", "t.rftrace", "--metrics", "gpu__time_duration.sum"}).env_unset.empty());  // nothing runs
}

// ncu's switches without a value: the word after them is the application, never their value.
TEST(NcuArgs, Support32BitAndDetailsAllAreSwitches) {
  EXPECT_EQ(error_of({"--support-32bit", "true"}),
            "rfprof: --support-32bit is not supported: rfprof profiles 64-bit processes only");
  EXPECT_TRUE(has(error_of({"--details-all", "./app"}), "rfprof: --details-all is not supported: an old ncu flag"))
      << error_of({"--details-all", "./app"});
}

// Current ncu's --clock-control values: base, boost, force-boost, none (what rfprof does anyway,
// with a note where ncu's clocks would differ) and reset, refused with its own reason.
TEST(NcuArgs, ClockControlForceBoostAndReset) {
  const Plan p = parse({"--clock-control", "force-boost", "app"});
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0], "rfprof: note: --clock-control force-boost: rfprof does not lock clocks as ncu does; kernels "
                        "run at the application's clocks");
  EXPECT_EQ(error_of({"--clock-control", "reset", "app"}),
            "rfprof: --clock-control reset is not supported: rfprof never locks clocks, so there are none to reset "
            "(kernels run at the application's clocks)");
  EXPECT_TRUE(has(error_of({"--clock-control", "high", "app"}), "expected base, boost, force-boost or none"));
}

// -o is checked as typed: a bad placeholder names the pattern given, not the one with ".rftrace".
TEST(NcuArgs, ExportPatternIsCheckedAsTyped) {
  EXPECT_EQ(error_of({"-o", "rep%", "true"}),
            "rfprof: -o/--export rep%: expected a path pattern; it ends with a lone % (write %% for a literal %)");
  EXPECT_EQ(error_of({"-o", "x_%z", "true"}),
            "rfprof: -o/--export x_%z: expected placeholders %p, %h, %q{VAR}, %i or %%; %z is unknown");
  EXPECT_EQ(error_of({"-o", "rep_%q{RANK}_%p.ncu-rep", "true"}), "");
}

}  // namespace
}  // namespace rf::launcher
