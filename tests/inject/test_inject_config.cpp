// RFPROF_* configuration (docs/inject-env.md). RFPROF_OUTPUT placeholders and the trace list:
// test_inject_output.cpp.
#include <gtest/gtest.h>

#include <optional>
#include <cerrno>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <set>

#include "config.h"
#include "env_of.h"

namespace rf::inject {
namespace {

/// The ConfigError message of reading `var=value`, or "" when no error was thrown.
std::string error_of(const std::string& var, const std::string& value) {
  try {
    read_config(env_of({{var, value}}));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

/// The ConfigError message of reading all of `vars`, or "" when no error was thrown.
std::string error_of_all(std::map<std::string, std::string> vars) {
  try {
    read_config(env_of(std::move(vars)));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

/// error_of_all with RFPROF_REPLAY=step among `vars`.
std::string step_error_of(std::map<std::string, std::string> vars) {
  vars["RFPROF_REPLAY"] = "step";
  return error_of_all(std::move(vars));
}

TEST(ReadConfig, DefaultsWhenNothingIsSet) {
  Config c = read_config(env_of({}));
  EXPECT_EQ(c.output_pattern, "rfprof_%p.rftrace");
  EXPECT_TRUE(c.metrics.empty());
  EXPECT_TRUE(c.profile_from_start);
  EXPECT_EQ(c.mode, trace::CollectionMode::kCounters);
  EXPECT_FALSE(c.force_overwrite);
  EXPECT_EQ(c.flush_ms, 1000u);
}

TEST(ReadConfig, EmptyValuesKeepDefaults) {
  Config c = read_config(env_of({{"RFPROF_OUTPUT", ""},
                                 {"RFPROF_METRICS", "  "},
                                 {"RFPROF_PROFILE_FROM_START", ""},
                                 {"RFPROF_MODE", ""},
                                 {"RFPROF_FLUSH_MS", ""}}));
  EXPECT_EQ(c.output_pattern, "rfprof_%p.rftrace");
  EXPECT_TRUE(c.metrics.empty());
  EXPECT_TRUE(c.profile_from_start);
  EXPECT_EQ(c.flush_ms, 1000u);
}

TEST(ReadConfig, GoodValues) {
  Config c = read_config(env_of({{"RFPROF_OUTPUT", "/tmp/run_%h.rftrace"},
                                 {"RFPROF_METRICS", " dram__bytes_read.sum , gpu__time_duration.sum,dram__bytes_read.sum"},
                                 {"RFPROF_PROFILE_FROM_START", "off"},
                                 {"RFPROF_MODE", "counters"},
                                 {"RFPROF_FORCE_OVERWRITE", "1"},
                                 {"RFPROF_FLUSH_MS", "250"}}));
  EXPECT_EQ(c.output_pattern, "/tmp/run_%h.rftrace");
  EXPECT_EQ(c.metrics, (std::vector<std::string>{"dram__bytes_read.sum", "gpu__time_duration.sum"}));
  EXPECT_FALSE(c.profile_from_start);
  EXPECT_EQ(c.mode, trace::CollectionMode::kCounters);
  EXPECT_TRUE(c.force_overwrite);
  EXPECT_EQ(c.flush_ms, 250u);
  // Blanks around the path are dropped, as around every other value.
  EXPECT_EQ(read_config(env_of({{"RFPROF_OUTPUT", "  out_%p.rftrace\n"}})).output_pattern, "out_%p.rftrace");
}

TEST(ReadConfig, ProfileFromStartAcceptsNcuSpellings) {
  for (const char* on : {"on", "yes", "1", "ON", "Yes"})
    EXPECT_TRUE(read_config(env_of({{"RFPROF_PROFILE_FROM_START", on}})).profile_from_start) << on;
  for (const char* off : {"off", "no", "0", "OFF", " no "})
    EXPECT_FALSE(read_config(env_of({{"RFPROF_PROFILE_FROM_START", off}})).profile_from_start) << off;
}

TEST(ReadConfig, ModeAndOverwriteAndFlushBounds) {
  EXPECT_EQ(read_config(env_of({{"RFPROF_MODE", "counters"}})).mode, trace::CollectionMode::kCounters);
  EXPECT_FALSE(read_config(env_of({{"RFPROF_FORCE_OVERWRITE", "0"}})).force_overwrite);
  EXPECT_EQ(read_config(env_of({{"RFPROF_FLUSH_MS", "1"}})).flush_ms, 1u);
  EXPECT_EQ(read_config(env_of({{"RFPROF_FLUSH_MS", "60000"}})).flush_ms, 60000u);
}

TEST(ReadConfig, MetricSetByName) {
  Config c = read_config(env_of({{"RFPROF_METRIC_SET", "Roofline-Tensor"}}));
  EXPECT_EQ(c.metric_set, "roofline-tensor");
  EXPECT_EQ(c.mode, trace::CollectionMode::kCounters);
  EXPECT_TRUE(c.metrics.empty());
  Config t = read_config(env_of({{"RFPROF_METRIC_SET", "timing"}}));
  EXPECT_EQ(t.metric_set, "timing");
  EXPECT_EQ(t.mode, trace::CollectionMode::kTiming);
  EXPECT_EQ(read_config(env_of({})).metric_set, "");
}

TEST(ReadConfig, BadMetricSet) {
  expect_names(error_of("RFPROF_METRIC_SET", "roofline-tensors"), "RFPROF_METRIC_SET", "roofline-tensors",
               "one of timing, roofline, roofline-tensor, hierarchical");
  // The timing set collects no counters: a metric list with it is a contradiction.
  try {
    read_config(env_of({{"RFPROF_METRICS", "dram__bytes_read.sum"}, {"RFPROF_METRIC_SET", "timing"}}));
    FAIL() << "the timing set and a metric list were both accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("the timing set collects no counters"), std::string::npos) << e.what();
  }
}

// As ncu collects --set/--section and --metrics together, a set and a metric list are both kept:
// the collector adds the list to the set it plans for each chip.
TEST(ReadConfig, AMetricSetAndAMetricListAreCollectedTogether) {
  const Config c = read_config(env_of({{"RFPROF_METRICS", "sm__cycles_elapsed.avg"}, {"RFPROF_METRIC_SET", "roofline"}}));
  EXPECT_EQ(c.metric_set, "roofline");
  EXPECT_EQ(c.metrics, std::vector<std::string>{"sm__cycles_elapsed.avg"});
  EXPECT_EQ(c.mode, trace::CollectionMode::kCounters);
}

TEST(ReadConfig, LauncherVariables) {
  Config d = read_config(env_of({}));
  EXPECT_TRUE(d.all_processes);
  EXPECT_FALSE(d.root_pid);
  EXPECT_FALSE(d.disable_profiler_start_stop);
  Config c = read_config(env_of({{"RFPROF_TARGET_PROCESSES", "application-only"},
                                 {"RFPROF_ROOT_PID", "4242"},
                                 {"RFPROF_DISABLE_PROFILER_START_STOP", "1"}}));
  EXPECT_FALSE(c.all_processes);
  EXPECT_EQ(c.root_pid, 4242u);
  EXPECT_TRUE(c.disable_profiler_start_stop);
  expect_names(error_of("RFPROF_TARGET_PROCESSES", "some"), "RFPROF_TARGET_PROCESSES", "some",
               "application-only or all");
  for (const char* v : {"0", "-1", "12x", "99999999999"})
    expect_names(error_of("RFPROF_ROOT_PID", v), "RFPROF_ROOT_PID", v, "a process id");
  expect_names(error_of("RFPROF_DISABLE_PROFILER_START_STOP", "yes"), "RFPROF_DISABLE_PROFILER_START_STOP", "yes",
               "0 or 1");
  // The other accepted values, each the opposite of the test above (a mutation check found none).
  Config other = read_config(env_of({{"RFPROF_TARGET_PROCESSES", "All"}, {"RFPROF_DISABLE_PROFILER_START_STOP", "0"}}));
  EXPECT_TRUE(other.all_processes);
  EXPECT_FALSE(other.disable_profiler_start_stop);
}

// application-only names its process by RFPROF_ROOT_PID; without it every process was profiled,
// silently the opposite of what was asked.
TEST(ReadConfig, ApplicationOnlyNeedsTheRootPid) {
  expect_names(error_of("RFPROF_TARGET_PROCESSES", "application-only"), "RFPROF_TARGET_PROCESSES", "application-only",
               "all, or application-only with RFPROF_ROOT_PID set");
  EXPECT_EQ(error_of("RFPROF_TARGET_PROCESSES", "all"), "");
  EXPECT_EQ(error_of("RFPROF_ROOT_PID", "77"), "");
}

TEST(ReadConfig, BadProfileFromStart) {
  for (const char* v : {"maybe", "2", "onn", "true"})
    expect_names(error_of("RFPROF_PROFILE_FROM_START", v), "RFPROF_PROFILE_FROM_START", v,
                 "one of on, off, yes, no, 1, 0");
}

TEST(ReadConfig, BadMode) {
  for (const char* v : {"count", "trace", "counters,timing"})
    expect_names(error_of("RFPROF_MODE", v), "RFPROF_MODE", v, "counters or timing");
}

TEST(ReadConfig, BadForceOverwrite) {
  for (const char* v : {"yes", "2", "true", "-1"})
    expect_names(error_of("RFPROF_FORCE_OVERWRITE", v), "RFPROF_FORCE_OVERWRITE", v, "0 or 1");
}

TEST(ReadConfig, BadFlushMs) {
  for (const char* v : {"0", "60001", "-5", "abc", "100ms", "1.5", "99999999999999999999"})
    expect_names(error_of("RFPROF_FLUSH_MS", v), "RFPROF_FLUSH_MS", v,
                 "an integer number of milliseconds from 1 to 60000");
}

TEST(ReadConfig, MaxRangesBounds) {
  EXPECT_EQ(read_config(env_of({})).max_ranges, 2000u);
  EXPECT_EQ(read_config(env_of({{"RFPROF_MAX_RANGES", " 20000 "}})).max_ranges, 20000u);
  EXPECT_EQ(read_config(env_of({{"RFPROF_MAX_RANGES", "1"}})).max_ranges, 1u);
  for (const char* v : {"0", "100001", "-1", "2k", "1.5", "99999999999999999999"})
    expect_names(error_of("RFPROF_MAX_RANGES", v), "RFPROF_MAX_RANGES", v,
                 "a number of kernels per counter image from 1 to 100000");
}

TEST(ReadConfig, CallStacksAndMemoryAreOffUnlessAsked) {
  Config none = read_config(env_of({}));
  EXPECT_FALSE(none.call_stacks);
  EXPECT_FALSE(none.memory);
  Config both = read_config(env_of({{"RFPROF_CALLSTACKS", "on"}, {"RFPROF_MEMORY", " YES "}}));
  EXPECT_TRUE(both.call_stacks);
  EXPECT_TRUE(both.memory);
  EXPECT_FALSE(read_config(env_of({{"RFPROF_CALLSTACKS", "0"}})).call_stacks);
  for (const char* var : {"RFPROF_CALLSTACKS", "RFPROF_MEMORY"})
    for (const char* v : {"2", "true", "native"})
      expect_names(error_of(var, v), var, v, "one of on, off, yes, no, 1, 0");
}

// RFPROF_KERNEL_RECORDS: the kernel-replay cost experiment (validation/README.md).
TEST(ReadConfig, KernelRecords) {
  using collector::KernelRecords;
  EXPECT_EQ(read_config(env_of({})).kernel_records, KernelRecords::kConcurrent);
  EXPECT_EQ(read_config(env_of({{"RFPROF_KERNEL_RECORDS", " Serial "}})).kernel_records, KernelRecords::kSerial);
  EXPECT_EQ(read_config(env_of({{"RFPROF_KERNEL_RECORDS", "concurrent"}})).kernel_records, KernelRecords::kConcurrent);
  for (const char* v : {"none", "off", "kernel"})
    expect_names(error_of("RFPROF_KERNEL_RECORDS", v), "RFPROF_KERNEL_RECORDS", v, "concurrent or serial");
}

// Replay across steps records kernels serialized: with concurrent kernel tracing on, CUDA 13's user
// replay counted 0 FFMAs for kernels of 128 (H200, validation/h200-2026-11-30/step-replay-sass.md).
TEST(ReadConfig, ReplayAcrossStepsRecordsKernelsSerialized) {
  using collector::KernelRecords;
  std::map<std::string, std::string> step = {{"RFPROF_REPLAY", "step"}, {"RFPROF_PROFILE_FROM_START", "off"}};
  EXPECT_EQ(read_config(env_of(step)).kernel_records, KernelRecords::kSerial);
  step["RFPROF_KERNEL_RECORDS"] = "serial";
  EXPECT_EQ(read_config(env_of(step)).kernel_records, KernelRecords::kSerial);
  step["RFPROF_KERNEL_RECORDS"] = " Concurrent ";
  const std::string e = error_of_all(step);
  expect_names(e, "RFPROF_KERNEL_RECORDS", "Concurrent", "serial (or unset) with RFPROF_REPLAY=step");
  EXPECT_NE(e.find("smsp__sass_*"), std::string::npos) << e;
  // Kernel replay keeps the default.
  EXPECT_EQ(read_config(env_of({{"RFPROF_REPLAY", "kernel"}})).kernel_records, KernelRecords::kConcurrent);
}

TEST(ReadConfig, LaunchFilters) {
  Config none = read_config(env_of({}));
  EXPECT_TRUE(none.filter.kernel_name.empty());
  EXPECT_EQ(none.filter.kernel_name_base, "function");
  EXPECT_EQ(none.launch_skip, 0u);
  EXPECT_FALSE(none.launch_count.has_value());
  Config c = read_config(env_of({{"RFPROF_KERNEL_NAME", "regex:gemm"},
                                 {"RFPROF_KERNEL_NAME_BASE", "Demangled"},
                                 {"RFPROF_LAUNCH_SKIP", "3"},
                                 {"RFPROF_LAUNCH_COUNT", "2"},
                                 {"RFPROF_NVTX_INCLUDE", "train/*/forward/; Dom@epoch 2"},
                                 {"RFPROF_NVTX_EXCLUDE", "[warmup/"}}));
  EXPECT_EQ(c.filter.kernel_name, "regex:gemm");
  EXPECT_EQ(c.filter.kernel_name_base, "demangled");
  EXPECT_EQ(c.launch_skip, 3u);
  EXPECT_EQ(c.launch_count, std::optional<uint64_t>(2));
  EXPECT_EQ(c.filter.nvtx_include, (std::vector<std::string>{"train/*/forward/", "Dom@epoch 2"}));
  EXPECT_EQ(c.filter.nvtx_exclude, (std::vector<std::string>{"[warmup/"}));
  EXPECT_TRUE(none.filter.devices.empty());  // every device
  EXPECT_EQ(read_config(env_of({{"RFPROF_DEVICES", "0, 2"}})).filter.devices, (std::vector<uint32_t>{0, 2}));
}

TEST(ReadConfig, BadLaunchFilters) {
  for (const char* v : {"-1", "x", "1.5"})
    expect_names(error_of("RFPROF_LAUNCH_SKIP", v), "RFPROF_LAUNCH_SKIP", v, "a number of launches (0 or more)");
  for (const char* v : {"0", "ten"})
    expect_names(error_of("RFPROF_LAUNCH_COUNT", v), "RFPROF_LAUNCH_COUNT", v, "a number of launches (1 or more)");
  // The bounds themselves are accepted: skip none, profile one.
  Config bounds = read_config(env_of({{"RFPROF_LAUNCH_SKIP", "0"}, {"RFPROF_LAUNCH_COUNT", "1"},
                                      {"RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "0"}}));
  EXPECT_EQ(bounds.launch_skip, 0u);
  EXPECT_EQ(bounds.launch_count, std::optional<uint64_t>(1));
  EXPECT_EQ(bounds.launch_skip_before_match, 0u);
  expect_names(error_of("RFPROF_NVTX_INCLUDE", "A/;;B/"), "RFPROF_NVTX_INCLUDE", "A/;;B/",
               "NVTX rules in ncu's syntax separated by ';', without empty items");
  const std::string bad_regex = error_of("RFPROF_KERNEL_NAME", "regex:(x");
  EXPECT_NE(bad_regex.find("RFPROF_KERNEL_NAME=\"regex:(x\": "), std::string::npos) << bad_regex;
  EXPECT_NE(bad_regex.find("not a valid regular expression"), std::string::npos) << bad_regex;
  const std::string bad_rule = error_of("RFPROF_NVTX_EXCLUDE", "A//B");
  EXPECT_NE(bad_rule.find("RFPROF_NVTX_EXCLUDE=\"A//B\": "), std::string::npos) << bad_rule;
  EXPECT_NE(bad_rule.find("empty range name"), std::string::npos) << bad_rule;
  for (const char* v : {"gpu0", "0,,1", "-1", "0,0"})
    expect_names(error_of("RFPROF_DEVICES", v), "RFPROF_DEVICES", v,
                 "CUDA device ordinals below 1024 separated by commas, none twice, such as 0 or 0,2");
  const std::string bad_base = error_of("RFPROF_KERNEL_NAME_BASE", "short");
  EXPECT_NE(bad_base.find("RFPROF_KERNEL_NAME_BASE=\"short\": "), std::string::npos) << bad_base;
}

TEST(ReadConfig, NcuCountingFilters) {
  Config none = read_config(env_of({}));
  EXPECT_EQ(none.filter_mode, collector::FilterMode::kGlobal);
  EXPECT_FALSE(none.kernel_id.has_value());
  EXPECT_EQ(none.launch_skip_before_match, 0u);
  Config c = read_config(env_of({{"RFPROF_FILTER_MODE", "Per-Launch-Config"},
                                 {"RFPROF_KERNEL_ID", "1:7:regex:at::native::.*:3"},
                                 {"RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "4"}}));
  EXPECT_EQ(c.filter_mode, collector::FilterMode::kPerLaunchConfig);
  ASSERT_TRUE(c.kernel_id.has_value());
  EXPECT_EQ(c.kernel_id->context, "1");
  EXPECT_EQ(c.kernel_id->stream, "7");
  EXPECT_EQ(c.kernel_id->kernel_name, "regex:at::native::.*");
  EXPECT_EQ(c.kernel_id->invocation, "3");
  EXPECT_EQ(c.launch_skip_before_match, 4u);
  expect_names(error_of("RFPROF_FILTER_MODE", "per-kernel"), "RFPROF_FILTER_MODE", "per-kernel",
               "global, per-gpu or per-launch-config");
  expect_names(error_of("RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "-2"), "RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "-2",
               "a number of launches (0 or more)");
  const std::string bad_id = error_of("RFPROF_KERNEL_ID", "foo:2");
  EXPECT_EQ(bad_id.rfind("rfprof: RFPROF_KERNEL_ID=\"foo:2\": expected CONTEXT:STREAM:[regex:]NAME:INVOCATION", 0), 0u)
      << bad_id;
  const std::string bad_re = error_of("RFPROF_KERNEL_ID", "::regex:(:1");
  EXPECT_NE(bad_re.find("RFPROF_KERNEL_ID=\"::regex:(:1\": the kernel name '(' is not a valid regular expression"),
            std::string::npos)
      << bad_re;
}

TEST(ReadConfig, ReplayAcrossSteps) {
  Config d = read_config(env_of({}));
  EXPECT_FALSE(d.replay_across_steps);
  EXPECT_EQ(d.replay_groups, 1u);
  Config c = read_config(env_of({{"RFPROF_REPLAY", "Step"}, {"RFPROF_PROFILE_FROM_START", "off"},
                                 {"RFPROF_REPLAY_GROUPS", "3"}}));
  EXPECT_TRUE(c.replay_across_steps);
  EXPECT_EQ(c.replay_groups, 3u);
  EXPECT_FALSE(read_config(env_of({{"RFPROF_REPLAY", "kernel"}})).replay_across_steps);
  Config r = read_config(env_of({{"RFPROF_REPLAY", "step"}, {"RFPROF_PROFILE_FROM_START", "off"},
                                 {"RFPROF_REPLAY_RANGE", " regex:^step [0-9]+$ "}}));
  EXPECT_EQ(r.replay_range, "regex:^step [0-9]+$");  // trimmed, like every value
}

TEST(ReadConfig, StepPassStart) {
  using collector::StepPassStart;
  const std::map<std::string, std::string> step = {{"RFPROF_REPLAY", "step"}, {"RFPROF_PROFILE_FROM_START", "off"}};
  EXPECT_EQ(read_config(env_of(step)).step_pass_start, StepPassStart::kFirstLaunch);
  auto with = [&](const std::string& v) {
    auto vars = step;
    vars["RFPROF_STEP_PASS_START"] = v;
    return read_config(env_of(vars)).step_pass_start;
  };
  EXPECT_EQ(with(" Window "), StepPassStart::kWindowOpen);
  EXPECT_EQ(with("launch"), StepPassStart::kFirstLaunch);
  auto vars = step;
  vars["RFPROF_STEP_PASS_START"] = "kernel";
  try {
    read_config(env_of(vars));
    ADD_FAILURE() << "kernel accepted";
  } catch (const ConfigError& e) {
    expect_names(e.what(), "RFPROF_STEP_PASS_START", "kernel", "launch or window");
  }
  // Without replay across steps there are no passes to start.
  expect_names(error_of("RFPROF_STEP_PASS_START", "window"), "RFPROF_STEP_PASS_START", "window",
               "RFPROF_REPLAY=step with it");
}

TEST(ReadConfig, BadReplayAcrossSteps) {
  expect_names(error_of("RFPROF_REPLAY", "application"), "RFPROF_REPLAY", "application", "kernel or step");
  for (const char* v : {"0", "1001", "two", "-1"})
    expect_names(error_of("RFPROF_REPLAY_GROUPS", v), "RFPROF_REPLAY_GROUPS", v,
                 "a number of groups from 1 to 1000");
  const auto error_with = step_error_of;
  // The window must be a step: profile-from-start would make the whole run window 0.
  EXPECT_NE(error_with({}).find("RFPROF_PROFILE_FROM_START=off with it"), std::string::npos);
  EXPECT_NE(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_MODE", "timing"}}).find("counters mode"),
            std::string::npos);
  EXPECT_NE(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_KERNEL_NAME", "gemm"}}).find("no kernel, NVTX, launch or device filter"),
            std::string::npos);
  EXPECT_NE(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_DEVICES", "0"}}).find("device filter"),
            std::string::npos);
  EXPECT_NE(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_LAUNCH_COUNT", "5"}}).find("filter"),
            std::string::npos);
  for (const auto& [var, value] : std::vector<std::pair<std::string, std::string>>{
           {"RFPROF_KERNEL_ID", "::foo:1"}, {"RFPROF_FILTER_MODE", "per-gpu"}, {"RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "2"}})
    EXPECT_NE(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {var, value}}).find("launch or device filter"),
              std::string::npos)
        << var;
  expect_names(error_of("RFPROF_REPLAY_RANGE", "step"), "RFPROF_REPLAY_RANGE", "step", "RFPROF_REPLAY=step with it");
  const std::string bad_regex = error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_REPLAY_RANGE", "regex:("}});
  EXPECT_NE(bad_regex.find("RFPROF_REPLAY_RANGE=\"regex:(\""), std::string::npos) << bad_regex;
  EXPECT_NE(bad_regex.find("not a valid regular expression"), std::string::npos) << bad_regex;
}

TEST(ReadConfig, BadMetricsList) {
  for (const char* v : {"a,,b", "a,", ",a", "a, ,b"}) {
    std::string m = error_of("RFPROF_METRICS", v);
    expect_names(m, "RFPROF_METRICS", v, "a comma-separated list of metric names without empty items");
  }
}

// A ninth mutation round (docs/testing.md): each check below failed with one change to config.cpp.
TEST(ReadConfig, ValuesAreShownAsGivenAndWordsComparedWithoutCase) {
  // Messages quote the value as it was given, not lowered or trimmed.
  expect_names(error_of("RFPROF_MEMORY", "TRUE"), "RFPROF_MEMORY", "TRUE", "one of on, off, yes, no, 1, 0");
  expect_names(error_of("RFPROF_MODE", "Trace"), "RFPROF_MODE", "Trace", "counters or timing");
  expect_names(error_of("RFPROF_METRIC_SET", "Foo"), "RFPROF_METRIC_SET", "Foo", "one of timing, roofline");
  expect_names(error_of("RFPROF_FILTER_MODE", "Per-Kernel"), "RFPROF_FILTER_MODE", "Per-Kernel",
               "global, per-gpu or per-launch-config");
  // Words compare without case; names (kernels, metrics) keep theirs.
  EXPECT_EQ(read_config(env_of({{"RFPROF_MODE", "TIMING"}})).mode, trace::CollectionMode::kTiming);
  EXPECT_EQ(read_config(env_of({{"RFPROF_MODE", "Counters"}})).mode, trace::CollectionMode::kCounters);
  EXPECT_EQ(read_config(env_of({{"RFPROF_KERNEL_NAME", "MyKernel"}})).filter.kernel_name, "MyKernel");
  EXPECT_EQ(read_config(env_of({{"RFPROF_METRICS", "A,a"}})).metrics, (std::vector<std::string>{"A", "a"}));
  // Only the listed words: no prefixes, no other spellings.
  for (const char* v : {"y", "yeah", "n"})
    expect_names(error_of("RFPROF_CALLSTACKS", v), "RFPROF_CALLSTACKS", v, "one of on, off, yes, no, 1, 0");
  expect_names(error_of("RFPROF_FORCE_OVERWRITE", "off"), "RFPROF_FORCE_OVERWRITE", "off", "0 or 1");
  expect_names(error_of("RFPROF_DISABLE_PROFILER_START_STOP", "on"), "RFPROF_DISABLE_PROFILER_START_STOP", "on",
               "0 or 1");
  expect_names(error_of("RFPROF_TARGET_PROCESSES", "application"), "RFPROF_TARGET_PROCESSES", "application",
               "application-only or all");
  expect_names(error_of("RFPROF_KERNEL_RECORDS", "serialized"), "RFPROF_KERNEL_RECORDS", "serialized",
               "concurrent or serial");
  expect_names(error_of("RFPROF_METRICS", "a,,b"), "RFPROF_METRICS", "a,,b",
               "a comma-separated list of metric names without empty items, e.g. "
               "dram__bytes_read.sum,gpu__time_duration.sum");
}

TEST(ReadConfig, NumbersAtTheirBoundsAndBeyond) {
  EXPECT_EQ(read_config(env_of({{"RFPROF_MAX_RANGES", "100000"}})).max_ranges, 100000u);
  const std::map<std::string, std::string> step = {{"RFPROF_REPLAY", "step"}, {"RFPROF_PROFILE_FROM_START", "off"}};
  for (const char* g : {"1", "1000"}) {
    auto vars = step;
    vars["RFPROF_REPLAY_GROUPS"] = g;
    EXPECT_EQ(read_config(env_of(vars)).replay_groups, std::stoul(g));
  }
  expect_names(error_of("RFPROF_REPLAY_GROUPS", "3x"), "RFPROF_REPLAY_GROUPS", "3x", "a number of groups from 1 to 1000");
  for (const char* var : {"RFPROF_LAUNCH_SKIP", "RFPROF_LAUNCH_SKIP_BEFORE_MATCH"})
    expect_names(error_of(var, "99999999999999999999"), var, "99999999999999999999", "a number of launches (0 or more)");
  // Linux process ids go up to 4194304 (pid_max on 64-bit).
  EXPECT_EQ(read_config(env_of({{"RFPROF_ROOT_PID", "4194304"}})).root_pid, 4194304u);
}

TEST(ReadConfig, EachBadNvtxRuleNamesItsOwnVariable) {
  expect_names(error_of("RFPROF_NVTX_EXCLUDE", "A/;;B/"), "RFPROF_NVTX_EXCLUDE", "A/;;B/",
               "NVTX rules in ncu's syntax separated by ';', without empty items");
  const auto error_with = error_of_all;
  EXPECT_EQ(error_with({{"RFPROF_NVTX_INCLUDE", "A//B"}}).rfind("rfprof: RFPROF_NVTX_INCLUDE=\"A//B\": ", 0), 0u);
  // An exclude rule's text inside the bad include rule, not as the quoted rule, is no match.
  const std::string inside = error_with({{"RFPROF_NVTX_INCLUDE", "A//B"}, {"RFPROF_NVTX_EXCLUDE", "A/"}});
  EXPECT_EQ(inside.rfind("rfprof: RFPROF_NVTX_INCLUDE=\"A//B\": ", 0), 0u) << inside;
  // A valid exclude rule quoted in the bad include rule's error (it named RFPROF_NVTX_EXCLUDE).
  const std::string quoted = error_with({{"RFPROF_NVTX_INCLUDE", "regex:("}, {"RFPROF_NVTX_EXCLUDE", "("}});
  EXPECT_EQ(quoted.rfind("rfprof: RFPROF_NVTX_INCLUDE=\"regex:(\": ", 0), 0u) << quoted;
  // And a bad exclude rule with a good include rule names the exclude variable.
  const std::string exclude = error_with({{"RFPROF_NVTX_INCLUDE", "A/"}, {"RFPROF_NVTX_EXCLUDE", "A//B"}});
  EXPECT_EQ(exclude.rfind("rfprof: RFPROF_NVTX_EXCLUDE=\"A//B\": ", 0), 0u) << exclude;
  // A rule mentioning "kernel name" is still an NVTX rule.
  const std::string kernel = error_with({{"RFPROF_NVTX_INCLUDE", "kernel name//x"}});
  EXPECT_EQ(kernel.rfind("rfprof: RFPROF_NVTX_INCLUDE=\"kernel name//x\": ", 0), 0u) << kernel;
}

TEST(ReadConfig, ReplayAcrossStepsRefusesEveryFilterAndNamesItself) {
  const auto error_with = step_error_of;
  for (const auto& [var, value] : std::vector<std::pair<std::string, std::string>>{
           {"RFPROF_NVTX_INCLUDE", "train/"}, {"RFPROF_NVTX_EXCLUDE", "warmup/"}, {"RFPROF_LAUNCH_SKIP", "1"},
           {"RFPROF_LAUNCH_SKIP_BEFORE_MATCH", "1"}, {"RFPROF_LAUNCH_COUNT", "1"}})
    expect_names(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {var, value}}), "RFPROF_REPLAY", "step",
                 "no kernel, NVTX, launch or device filter with it (every kernel of a window runs the pass); " + var +
                     " is set");
  // Every filter set is named; the value is echoed as given.
  const std::string two = error_of_all({{"RFPROF_REPLAY", "STEP"}, {"RFPROF_PROFILE_FROM_START", "off"},
                                        {"RFPROF_DEVICES", "0"}, {"RFPROF_KERNEL_NAME", "gemm"}});
  expect_names(two, "RFPROF_REPLAY", "STEP", "no kernel, NVTX, launch or device filter with it");
  EXPECT_TRUE(two.ends_with("; RFPROF_KERNEL_NAME, RFPROF_DEVICES are set")) << two;
  expect_names(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_MODE", "timing"}}), "RFPROF_REPLAY", "step",
               "counters mode with it (RFPROF_MODE=timing is timing mode");
  expect_names(error_with({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_METRIC_SET", "timing"}}), "RFPROF_REPLAY",
               "step", "counters mode with it (RFPROF_METRIC_SET=timing is timing mode");
  // RFPROF_REPLAY_GROUPS, as RFPROF_REPLAY_RANGE and RFPROF_STEP_PASS_START, belongs to step replay.
  expect_names(error_of("RFPROF_REPLAY_GROUPS", "5"), "RFPROF_REPLAY_GROUPS", "5", "RFPROF_REPLAY=step with it");
  expect_names(error_with({}), "RFPROF_REPLAY", "step", "RFPROF_PROFILE_FROM_START=off with it");
  // A bad value is named before the missing RFPROF_REPLAY=step.
  expect_names(error_of("RFPROF_REPLAY_RANGE", "regex:("), "RFPROF_REPLAY_RANGE", "regex:(",
               "an NVTX range name or regex:EXPR: ");
  expect_names(error_of("RFPROF_STEP_PASS_START", "kernel"), "RFPROF_STEP_PASS_START", "kernel", "launch or window");
}

// Profiling off at the start and every cudaProfilerStart ignored: nothing would ever be profiled.
TEST(ReadConfig, NoWindowCouldEverOpen) {
  expect_names(error_of_all({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_DISABLE_PROFILER_START_STOP", "1"}}),
               "RFPROF_DISABLE_PROFILER_START_STOP", "1", "RFPROF_PROFILE_FROM_START=on with it");
  EXPECT_NO_THROW(read_config(env_of({{"RFPROF_DISABLE_PROFILER_START_STOP", "1"}})));  // window 0: the whole run
  // Replay across steps with an NVTX range as the window needs neither.
  EXPECT_NO_THROW(read_config(env_of({{"RFPROF_PROFILE_FROM_START", "off"}, {"RFPROF_DISABLE_PROFILER_START_STOP", "1"},
                                      {"RFPROF_REPLAY", "step"}, {"RFPROF_REPLAY_RANGE", "step"}})));
}

TEST(ReadConfig, MetricSetAgainstModeAndMetrics) {
  // The timing set is timing mode: with RFPROF_MODE saying otherwise, one of them would be dropped
  // without a word, so the conflict is named; so are counters asked for in timing mode.
  EXPECT_EQ(read_config(env_of({{"RFPROF_MODE", "timing"}, {"RFPROF_METRIC_SET", "timing"}})).mode,
            trace::CollectionMode::kTiming);
  EXPECT_EQ(read_config(env_of({{"RFPROF_METRIC_SET", "timing"}})).mode, trace::CollectionMode::kTiming);
  expect_names(error_of_all({{"RFPROF_MODE", "counters"}, {"RFPROF_METRIC_SET", "timing"}}), "RFPROF_METRIC_SET",
               "timing", "a set that agrees with RFPROF_MODE=counters (the timing set is timing mode, the others counters mode)");
  expect_names(error_of_all({{"RFPROF_MODE", "Timing"}, {"RFPROF_METRIC_SET", "roofline"}}), "RFPROF_METRIC_SET",
               "roofline", "a set that agrees with RFPROF_MODE=timing");
  expect_names(error_of_all({{"RFPROF_MODE", "timing"}, {"RFPROF_METRICS", "dram__bytes_read.sum"}}), "RFPROF_MODE",
               "timing", "no RFPROF_METRICS with it (timing mode collects no counters)");
  // An unknown set is named as unknown before the conflict with RFPROF_METRICS.
  try {
    read_config(env_of({{"RFPROF_METRICS", "dram__bytes_read.sum"}, {"RFPROF_METRIC_SET", "rooflines"}}));
    FAIL() << "an unknown set was accepted";
  } catch (const ConfigError& e) {
    expect_names(e.what(), "RFPROF_METRIC_SET", "rooflines", "one of timing, roofline");
  }
}

}  // namespace
}  // namespace rf::inject
