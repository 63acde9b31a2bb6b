// Phase mapping of NVTX paths: default rules, innermost-outward search, custom files, errors.
#include <gtest/gtest.h>

#include <fstream>

#include "analyzer_samples.h"
#include "rfprof/analyzer/phases.h"

namespace rf::analyzer {
namespace {

using Path = std::vector<std::string>;

TEST(Phases, DefaultRules) {
  PhaseMap m = PhaseMap::defaults();
  EXPECT_EQ(m.phase_of({"forward"}), "forward");
  EXPECT_EQ(m.phase_of({"model_FWD"}), "forward");  // case-insensitive
  EXPECT_EQ(m.phase_of({"MulBackward0"}), "backward");
  EXPECT_EQ(m.phase_of({"bwd pass"}), "backward");
  EXPECT_EQ(m.phase_of({"Optimizer.step#SGD.step"}), "optimizer");
  EXPECT_EQ(m.phase_of({"optimiser"}), "optimizer");
  EXPECT_EQ(m.phase_of({"optim.step"}), "optimizer");      // the word "optim" (torch.optim)
  EXPECT_EQ(m.phase_of({"optimal_tiling"}), "other");      // not inside a longer word
  EXPECT_EQ(m.phase_of({"step"}), "other");  // a training step (is_step_range_name), not the optimizer
  EXPECT_EQ(m.phase_of({"zero_grad"}), "optimizer");  // a user's range, not PyTorch's: not "grad"
  EXPECT_EQ(m.phase_of({"train_step"}), "other");          // not a training iteration
  EXPECT_EQ(m.phase_of({"step 12"}), "other");
  // Optimizer comes first, forward before backward: a name that matches all three is optimizer's.
  EXPECT_EQ(m.phase_of({"optimizer fwd bwd"}), "optimizer");
  EXPECT_EQ(m.phase_of({"data loading"}), "other");
  EXPECT_EQ(m.phase_of(Path{}), "other");
}

// Rules see the first 4096 bytes of a name (collector/regex_subject.h): a 1 MiB name from a
// hostile trace overflowed libstdc++'s recursive std::regex before.
TEST(Phases, HugeNamesAreSearchedInTheirFirstBytes) {
  PhaseMap m({{"^(a|b)*forward", "forward", false}, {"^(a|b)*$", "all-ab", false}});
  const std::string huge(1 << 20, 'a');
  EXPECT_EQ(m.phase_of({huge + "forward"}), "all-ab");  // "forward" lies past the bound
  EXPECT_EQ(m.phase_of({"abforward"}), "forward");
}

TEST(Phases, InnermostMatchingRangeDecides) {
  PhaseMap m = PhaseMap::defaults();
  EXPECT_EQ(m.phase_of({"train", "forward", "aten::mm"}), "forward");    // walks outward past aten::mm
  EXPECT_EQ(m.phase_of({"backward", "forward"}), "forward");             // innermost first
  EXPECT_EQ(m.phase_of({"forward", "MulBackward0"}), "backward");
  EXPECT_EQ(m.phase_of({"step", "aten::add"}), "other");  // a launch directly in a training step
  EXPECT_EQ(m.phase_of({"step", "backward"}), "backward");
  // examples/imagenet/main.py: "step N" is a training iteration, not the optimizer.
  EXPECT_EQ(m.phase_of({"step 12", "forward"}), "forward");
  EXPECT_EQ(m.phase_of({"step 12"}), "other");
  // torch.autograd.profiler.emit_nvtx() op ranges (PyTorch 2.x names).
  EXPECT_EQ(m.phase_of({"step 3", "forward", "aten::conv2d, seq = 12, op_id = 40"}), "forward");
  EXPECT_EQ(m.phase_of({"ConvolutionBackward0, seq = 12, op_id = 95"}), "backward");
  EXPECT_EQ(m.phase_of({"autograd::engine::evaluate_function: AddmmBackward0"}), "backward");
  EXPECT_EQ(m.phase_of({"Optimizer.zero_grad#SGD.zero_grad"}), "optimizer");
  EXPECT_EQ(m.phase_of({"Optimizer.step#SGD.step", "aten::_foreach_add_, seq = 7"}), "optimizer");
  // Within one range, the first rule in order wins.
  EXPECT_EQ(m.phase_of({"forward_backward"}), "forward");
}

TEST(Phases, CustomFileReplacesDefaults) {
  testing::TempDir dir;
  auto file = dir.path / "phases.json";
  std::ofstream(file) << R"([{"regex": "^loss$", "phase": "loss"},
                            {"regex": "Fwd", "phase": "forward", "ignore_case": false}])";
  PhaseMap m = PhaseMap::from_file(file);
  ASSERT_EQ(m.rules().size(), 2u);
  EXPECT_EQ(m.phase_of({"Fwd", "loss"}), "loss");
  EXPECT_EQ(m.phase_of({"LOSS"}), "loss");        // ignore_case defaults to true
  EXPECT_EQ(m.phase_of({"Fwd"}), "forward");
  EXPECT_EQ(m.phase_of({"fwd"}), "other");        // this rule is case-sensitive
  EXPECT_EQ(m.phase_of({"backward"}), "other");   // default rules are gone
}

TEST(Phases, BadFilesAreReportedWithTheirPath) {
  testing::TempDir dir;
  auto expect_error = [&](const std::string& text, const std::string& needle) {
    auto file = dir.path / "bad.json";
    std::ofstream(file) << text;
    try {
      PhaseMap::from_file(file);
      ADD_FAILURE() << "no error for " << text;
    } catch (const PhaseMapError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(file.string()), std::string::npos) << what;
      EXPECT_NE(what.find(needle), std::string::npos) << what;
    }
  };
  expect_error("{\"regex\": \"a\"}", "expected a JSON list");
  expect_error("[{\"regex\": \"a\"}]", "entry 0");
  expect_error("[{\"regex\": \"a\", \"phase\": \"x\"}, {\"regex\": \"(\", \"phase\": \"y\"}]",
               "phase rule 1 (phase \"y\"): regex \"(\" is invalid: ");
  expect_error("[1", "not valid JSON");
  expect_error("[{\"regex\": \"a\", \"phase\": \"\"}]", "empty");
  expect_error("[{\"regex\": 5, \"phase\": \"x\"}]", "entry 0: expected {\"regex\": string, \"phase\": string}");
  expect_error("[{\"regex\": \"a\", \"phase\": 5}]", "entry 0: expected {\"regex\": string, \"phase\": string}");
  expect_error("[{\"regex\": \"a\", \"phase\": \"x\", \"ignore_case\": \"yes\"}]",
               "entry 0: \"ignore_case\" must be true or false");
  try {
    PhaseMap::from_file(dir.path / "missing.json");
    ADD_FAILURE() << "no error for a missing file";
  } catch (const PhaseMapError& e) {
    EXPECT_EQ(std::string(e.what()), "phase map " + (dir.path / "missing.json").string() + ": cannot be opened");
  }
  // A directory once ended rfanalyze with std::terminate (std::ios_base::failure from the parser).
  try {
    PhaseMap::from_file(dir.path);
    ADD_FAILURE() << "no error for a directory";
  } catch (const PhaseMapError& e) {
    EXPECT_NE(std::string(e.what()).find("is a directory (expected a JSON file)"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rf::analyzer
