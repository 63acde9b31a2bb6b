// Helpers of the replay-across-steps tests on the fake CUPTI (test_session_fake_step_*.cpp): a
// training step as one cudaProfilerStart/Stop window, and the correlation ids a child says on its
// stderr for the parent to read back.
#pragma once

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "fake_cupti.h"
#include "rfprof/collector/session.h"

namespace rf::fake_cupti {

/// One training step on `ctx`: a window with kernels a(64 blocks), b(128 blocks), c(64 blocks);
/// `odd` replaces b by another kernel. Returns the driver correlation ids of its launches.
inline std::vector<uint32_t> step(CUcontext ctx, bool odd = false) {
  profiler_start(ctx);
  std::vector<uint32_t> ids;
  ids.push_back(launch({ctx, "_Z1av", {64, 1, 1}, {256, 1, 1}}));
  ids.push_back(launch({ctx, odd ? "_Z5otherv" : "_Z1bv", {128, 1, 1}, {256, 1, 1}}));
  ids.push_back(launch({ctx, "_Z1cv", {64, 1, 1}, {128, 1, 1}}));
  profiler_stop(ctx);
  return ids;
}

/// Prints the ids of a step's launches to stderr as "<tag>=a,b,c;" for the parent to read back.
inline void say(const char* tag, const std::vector<uint32_t>& ids) {
  std::fprintf(stderr, "%s=%u,%u,%u;\n", tag, ids[0], ids[1], ids[2]);
}

/// The ids "<tag>=a,b,c;" said in `err`.
inline std::vector<uint32_t> said(const std::string& err, const std::string& tag) {
  const size_t at = err.find(tag + "=");
  if (at == std::string::npos) return {};
  unsigned a = 0, b = 0, c = 0;
  if (std::sscanf(err.c_str() + at + tag.size() + 1, "%u,%u,%u;", &a, &b, &c) != 3) return {};
  return {a, b, c};
}

inline collector::SessionOptions step_options(const std::filesystem::path& trace) {
  collector::SessionOptions o;
  o.output = trace;
  o.mode = trace::CollectionMode::kCounters;
  o.profile_from_start = false;
  o.replay_across_steps = true;
  o.flush_ms = 20;
  return o;
}

/// step_options with the NVTX range "step" as the window (RFPROF_REPLAY_RANGE=step).
inline collector::SessionOptions nvtx_step_options(const std::filesystem::path& trace) {
  collector::SessionOptions o = step_options(trace);
  o.replay_range = "step";
  return o;
}

}  // namespace rf::fake_cupti
