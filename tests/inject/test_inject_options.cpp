// What librfinject's entry point hands the collector (inject/entry.cpp): the session's options
// from the RFPROF_* configuration (session_options) and whether this process is profiled at all
// (profiles_process, ncu's --target-processes).
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>

#include "config.h"
#include "env_of.h"

namespace rf::inject {
namespace {

// Every field away from its default, each to a value of its own, so that a field left out or
// copied into another shows.
TEST(SessionOptions, EveryConfigFieldReachesTheSession) {
  Config c;
  c.metrics = {"dram__bytes_read.sum", "gpu__time_duration.sum"};
  c.metric_set = "roofline-tensor";
  c.profile_from_start = false;
  c.mode = trace::CollectionMode::kTiming;
  c.force_overwrite = true;
  c.disable_profiler_start_stop = true;
  c.flush_ms = 250;
  c.max_ranges = 64;
  c.call_stacks = true;
  c.memory = true;
  c.kernel_records = collector::KernelRecords::kSerial;
  c.filter.kernel_name = "regex:gemm";
  c.filter.kernel_name_base = "mangled";
  c.filter.nvtx_include = {"step/"};
  c.filter.nvtx_exclude = {"warmup/"};
  c.filter.devices = {1, 3};
  c.launch_skip = 7;
  c.launch_count = 11;
  c.filter_mode = collector::FilterMode::kPerLaunchConfig;
  c.kernel_id = collector::KernelId{"1", "7", "regex:conv", "2"};
  c.launch_skip_before_match = 5;
  c.replay_across_steps = true;
  c.replay_groups = 3;
  c.replay_range = "regex:^step";
  c.step_pass_start = collector::StepPassStart::kWindowOpen;

  const collector::SessionOptions o = session_options(c, "/tmp/out_42.rftrace");
  EXPECT_EQ(o.output, "/tmp/out_42.rftrace");
  EXPECT_EQ(o.metrics, c.metrics);
  EXPECT_EQ(o.metric_set, "roofline-tensor");
  EXPECT_FALSE(o.profile_from_start);
  EXPECT_EQ(o.mode, trace::CollectionMode::kTiming);
  EXPECT_TRUE(o.force_overwrite);
  EXPECT_TRUE(o.disable_profiler_start_stop);
  EXPECT_EQ(o.flush_ms, 250u);
  EXPECT_EQ(o.max_ranges_per_image, 64u);
  EXPECT_TRUE(o.call_stacks);
  EXPECT_TRUE(o.memory);
  EXPECT_EQ(o.kernel_records, collector::KernelRecords::kSerial);
  EXPECT_EQ(o.filter.kernel_name, "regex:gemm");
  EXPECT_EQ(o.filter.kernel_name_base, "mangled");
  EXPECT_EQ(o.filter.nvtx_include, std::vector<std::string>{"step/"});
  EXPECT_EQ(o.filter.nvtx_exclude, std::vector<std::string>{"warmup/"});
  EXPECT_EQ(o.filter.devices, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(o.launch_skip, 7u);
  EXPECT_EQ(o.launch_count, 11u);
  EXPECT_EQ(o.filter_mode, collector::FilterMode::kPerLaunchConfig);
  ASSERT_TRUE(o.kernel_id);
  EXPECT_EQ(o.kernel_id->context, "1");
  EXPECT_EQ(o.kernel_id->stream, "7");
  EXPECT_EQ(o.kernel_id->kernel_name, "regex:conv");
  EXPECT_EQ(o.kernel_id->invocation, "2");
  EXPECT_EQ(o.launch_skip_before_match, 5u);
  EXPECT_TRUE(o.replay_across_steps);
  EXPECT_EQ(o.replay_groups, 3u);
  EXPECT_EQ(o.replay_range, "regex:^step");
  EXPECT_EQ(o.step_pass_start, collector::StepPassStart::kWindowOpen);
}

// The defaults agree: a process with no RFPROF_* variable gets the session's own defaults.
TEST(SessionOptions, NoVariablesGiveTheSessionsDefaults) {
  const collector::SessionOptions o = session_options(read_config(env_of({})), "t.rftrace");
  const collector::SessionOptions d;
  EXPECT_EQ(o.metrics, d.metrics);
  EXPECT_EQ(o.metric_set, d.metric_set);
  EXPECT_EQ(o.profile_from_start, d.profile_from_start);
  EXPECT_EQ(o.mode, d.mode);
  EXPECT_EQ(o.force_overwrite, d.force_overwrite);
  EXPECT_EQ(o.disable_profiler_start_stop, d.disable_profiler_start_stop);
  EXPECT_EQ(o.flush_ms, d.flush_ms);
  EXPECT_EQ(o.max_ranges_per_image, d.max_ranges_per_image);
  EXPECT_EQ(o.call_stacks, d.call_stacks);
  EXPECT_EQ(o.memory, d.memory);
  EXPECT_EQ(o.kernel_records, d.kernel_records);
  EXPECT_EQ(o.filter.kernel_name, d.filter.kernel_name);
  EXPECT_EQ(o.filter.kernel_name_base, d.filter.kernel_name_base);
  EXPECT_EQ(o.launch_skip, d.launch_skip);
  EXPECT_EQ(o.launch_count, d.launch_count);
  EXPECT_EQ(o.filter_mode, d.filter_mode);
  EXPECT_EQ(o.kernel_id.has_value(), d.kernel_id.has_value());
  EXPECT_EQ(o.launch_skip_before_match, d.launch_skip_before_match);
  EXPECT_EQ(o.replay_across_steps, d.replay_across_steps);
  EXPECT_EQ(o.replay_groups, d.replay_groups);
  EXPECT_EQ(o.replay_range, d.replay_range);
  EXPECT_EQ(o.step_pass_start, d.step_pass_start);
}

// Replay across steps as rfprof sets it up for a training script, read from the environment.
TEST(SessionOptions, StepReplayVariablesReachTheSession) {
  const collector::SessionOptions o =
      session_options(read_config(env_of({{"RFPROF_REPLAY", "step"},
                                          {"RFPROF_PROFILE_FROM_START", "off"},
                                          {"RFPROF_REPLAY_GROUPS", "4"},
                                          {"RFPROF_REPLAY_RANGE", "train_step"},
                                          {"RFPROF_STEP_PASS_START", "window"},
                                          {"RFPROF_MAX_RANGES", "500"}})),
                      "t.rftrace");
  EXPECT_TRUE(o.replay_across_steps);
  EXPECT_FALSE(o.profile_from_start);
  EXPECT_EQ(o.replay_groups, 4u);
  EXPECT_EQ(o.replay_range, "train_step");
  EXPECT_EQ(o.step_pass_start, collector::StepPassStart::kWindowOpen);
  EXPECT_EQ(o.max_ranges_per_image, 500u);
}

// ncu's --target-processes: application-only profiles only the process rfprof started.
TEST(ProfilesProcess, ApplicationOnlyProfilesOnlyTheRootProcess) {
  Config c;
  EXPECT_TRUE(profiles_process(c, 100));  // not started by rfprof: no root
  c.root_pid = 100;
  EXPECT_TRUE(profiles_process(c, 100));
  EXPECT_TRUE(profiles_process(c, 101));  // all (the default): every process
  c.all_processes = false;
  EXPECT_TRUE(profiles_process(c, 100));
  EXPECT_FALSE(profiles_process(c, 101));
  c.root_pid.reset();
  EXPECT_TRUE(profiles_process(c, 101));  // application-only without a root: this is the application
}

}  // namespace
}  // namespace rf::inject
