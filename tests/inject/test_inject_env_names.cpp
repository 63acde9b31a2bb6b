// RFPROF_* variable names: the list librfinject reads against read_config and docs/inject-env.md,
// and the warning for a likely misspelling (inject/env_names.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "config.h"
#include "env_names.h"

namespace rf::inject {
namespace {

std::set<std::string> known() {
  const auto& v = config_variables();
  return {v.begin(), v.end()};
}

// Every variable read_config asks for is in the list, so none of them is ever called misspelled.
// read_config asks for some only when others are set (RFPROF_REPLAY=step for its options), so it
// is run with each of a few environments and every name asked for is collected.
TEST(EnvNames, EveryVariableReadConfigAsksForIsListed) {
  std::set<std::string> asked;
  const std::vector<std::map<std::string, std::string>> envs = {
      {},
      {{"RFPROF_REPLAY", "step"}, {"RFPROF_PROFILE_FROM_START", "off"}},
      {{"RFPROF_MODE", "timing"}},
      {{"RFPROF_TARGET_PROCESSES", "application-only"}, {"RFPROF_ROOT_PID", "1"}}};
  for (const auto& values : envs) {
    EnvLookup env = [&](const std::string& name) -> std::optional<std::string> {
      asked.insert(name);
      auto it = values.find(name);
      return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    try {
      (void)read_config(env);
    } catch (const ConfigError&) {
    }
  }
  for (const std::string& name : asked) EXPECT_TRUE(known().contains(name)) << name << " is read but not listed";
  EXPECT_GE(asked.size(), 25u);
}

// The list is docs/inject-env.md's table, no more, no less.
TEST(EnvNames, TheListIsTheDocumentedTable) {
  std::ifstream in(RFPROF_DOCS_DIR "/inject-env.md");
  ASSERT_TRUE(in) << RFPROF_DOCS_DIR "/inject-env.md";
  std::set<std::string> documented;
  std::string line;
  const std::regex name("`(RFPROF_[A-Z0-9_]+)`");
  while (std::getline(in, line)) {
    if (!line.starts_with("| `RFPROF_")) continue;
    const std::string first_cell = line.substr(0, line.find('|', 1));
    for (std::sregex_iterator it(first_cell.begin(), first_cell.end(), name), end; it != end; ++it)
      documented.insert((*it)[1]);
  }
  EXPECT_EQ(documented, known());
}

TEST(EnvNames, ALikelyMisspellingNamesTheVariableMeant) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"RFPROF_FLUSHMS", "RFPROF_FLUSH_MS"},             // an underscore left out
      {"rfprof_mode", "RFPROF_MODE"},                    // case
      {"RFPROF_LAUNCH-COUNT", "RFPROF_LAUNCH_COUNT"},    // '-' for '_'
      {"RFPROF_LAUNCH_SKIPS", "RFPROF_LAUNCH_SKIP"},     // one letter more
      {"RFPROF_CALLSTACK", "RFPROF_CALLSTACKS"},         // one letter less
      {"RFPROF_MEMROY", "RFPROF_MEMORY"},                // two letters swapped
      {"RFPROF_KERNEL_NAME_BSAE", "RFPROF_KERNEL_NAME_BASE"},
      {"RFPROF_TARGET_PROCESS", "RFPROF_TARGET_PROCESSES"},  // two letters less in a long name
      {"RFPROF_NVTX_INCLUD", "RFPROF_NVTX_INCLUDE"}};
  for (const auto& [typed, meant] : cases) {
    const auto w = misspelled_variables({typed});
    ASSERT_EQ(w.size(), 1u) << typed;
    EXPECT_EQ(w[0], "rfprof: " + typed + " is set, but librfinject reads no such variable; did you mean " + meant +
                        "? (docs/inject-env.md)");
  }
}

// The variables read, the project's other RFPROF_* variables (scripts, tests, benchmarks), names
// too far from any read one, and other tools' variables give no warning.
TEST(EnvNames, OtherNamesGiveNoWarning) {
  std::vector<std::string> names(config_variables().begin(), config_variables().end());
  for (const char* other : {"RFPROF_BIN", "RFPROF_VALIDATE_BUDGET_S", "RFPROF_GPU_TESTS", "RFPROF_PYTHON",
                            "RFPROF_OVERHEAD_REPEATS", "RFPROF_OVERHEAD_MODES", "RFPROF_OVERHEAD_WORKLOADS",
                            "RFPROF_EXPECTED", "RFPROF_FUZZ_SECONDS", "RFPROF_SKIP_SANITIZERS", "RFPROF_BUILD_DIR",
                            "RFPROF_RESNET_ARGS", "RFPROF_TSAN", "RFPROF_X", "RFPROF_TEST_SURELY_UNSET",
                            "RFPROF_UPDATE_GOLDEN", "RFPROF_PANDAS_CHECK", "RFPROF_PIDS", "RFPROF_SANITIZE",
                            "RFPROF", "RFPROF_", "PATH", "CUDA_INJECTION64_PATH", "NCU_MODE", "RF_MODE",
                            "RFPROF_KERNEL_NAME_BASE_AND_MORE"})
    names.emplace_back(other);
  names.emplace_back("RFPROF_" + std::string(100000, 'A'));  // long: no quadratic table of it
  for (const std::string& w : misspelled_variables(names)) ADD_FAILURE() << w;
}

TEST(EnvNames, EnvironmentNamesStopAtTheFirstEqualsSign) {
  ASSERT_EQ(::setenv("RFPROF_TEST_ENV_NAME", "a=b", 1), 0);
  const auto names = environment_names();
  ::unsetenv("RFPROF_TEST_ENV_NAME");
  EXPECT_EQ(std::count(names.begin(), names.end(), "RFPROF_TEST_ENV_NAME"), 1);
}

}  // namespace
}  // namespace rf::inject
