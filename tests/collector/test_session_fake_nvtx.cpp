// NVTX on the fake CUPTI (fake_cupti.h): --nvtx-include rules in a named domain (its name from
// nvtxDomainCreateA, its own push/pop stack) and on start/end ranges (followed by range id, in the
// default or a named domain), and the end-of-run line of RFPROF_REPLAY_RANGE when no range matched.
#include "fake_session.h"
#include "fake_steps.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// Runs `body` with --nvtx-include `rule` in timing mode; returns the names of the recorded launches.
std::vector<std::string> included(FakeSessionTest* test, collector::SessionOptions o, const std::string& rule,
                                  const std::function<void(CUcontext)>& body) {
  o.filter.nvtx_include = {rule};
  const Child c = run_child([&] {
    if (!collector::start_session(o)) std::_Exit(3);
    body(create_context(1));
  });
  EXPECT_TRUE(c.exited_zero()) << c.err;
  (void)test;
  return launch_names(read_trace(o.output));
}

TEST_F(FakeSessionTest, NvtxIncludeInANamedDomainFollowsThatDomainsStack) {
  const auto names = included(this, options(CollectionMode::kTiming), "Dom@forward/", [](CUcontext ctx) {
    nvtxDomainHandle_t dom = nvtx_domain_create("Dom");
    nvtx_domain_create("Other");
    launch({ctx, "_Z6beforev"});
    nvtx_push("forward");  // the default domain's "forward": not the rule's
    launch({ctx, "_Z7defaultv"});
    nvtx_pop();
    nvtx_domain_push(dom, "forward");
    launch({ctx, "_Z6insidev"});
    nvtx_domain_pop(dom);
    launch({ctx, "_Z5afterv"});
  });
  EXPECT_EQ(names, (std::vector<std::string>{"_Z6insidev"}));
}

// Each thread keeps the names of the domains it used (no shared lock per range); a domain created
// afterwards makes it read them again. The fake has 16 domain handles: the 17th domain created,
// "Dom", gets the handle of the first, "Other", which this thread has used, and the range pushed
// in it afterwards is Dom's "forward".
TEST_F(FakeSessionTest, NvtxIncludeSeesADomainCreatedAfterTheThreadUsedItsHandle) {
  const auto names = included(this, options(CollectionMode::kTiming), "Dom@forward/", [](CUcontext ctx) {
    nvtxDomainHandle_t other = nvtx_domain_create("Other");
    for (int i = 0; i < 15; ++i) nvtx_domain_create("Filler");
    nvtx_domain_push(other, "forward");
    launch({ctx, "_Z5otherv"});
    nvtx_domain_pop(other);
    nvtxDomainHandle_t dom = nvtx_domain_create("Dom");
    if (dom != other) std::_Exit(7);
    nvtx_domain_push(dom, "forward");
    launch({ctx, "_Z6insidev"});
    nvtx_domain_pop(dom);
  });
  EXPECT_EQ(names, (std::vector<std::string>{"_Z6insidev"}));
}

// The Ex calls of the default domain (a message in event attributes): NVTX's C++ API
// (nvtx3::scoped_range) and many libraries name their ranges so.
TEST_F(FakeSessionTest, NvtxIncludeReadsTheMessageOfTheExCalls) {
  const auto pushed = included(this, options(CollectionMode::kTiming), "step/", [](CUcontext ctx) {
    launch({ctx, "_Z6beforev"});
    nvtx_push_ex("step");
    launch({ctx, "_Z6insidev"});
    nvtx_pop();
    nvtx_push_ex("stepper");  // another name
    launch({ctx, "_Z5otherv"});
    nvtx_pop();
  });
  EXPECT_EQ(pushed, (std::vector<std::string>{"_Z6insidev"}));
  std::filesystem::remove(trace_);
  const auto started = included(this, options(CollectionMode::kTiming), "epoch", [](CUcontext ctx) {
    launch({ctx, "_Z6beforev"});
    const uint64_t epoch = nvtx_start_ex("epoch");
    launch({ctx, "_Z6insidev"});
    nvtx_end(epoch);
    launch({ctx, "_Z5afterv"});
  });
  EXPECT_EQ(started, (std::vector<std::string>{"_Z6insidev"}));
}

TEST_F(FakeSessionTest, NvtxIncludeOnAStartEndRangeFollowsItsId) {
  const auto names = included(this, options(CollectionMode::kTiming), "epoch", [](CUcontext ctx) {
    launch({ctx, "_Z6beforev"});
    nvtx_push("epoch");  // a push/pop range: not a start/end one
    launch({ctx, "_Z6pushedv"});
    nvtx_pop();
    const uint64_t epoch = nvtx_start("epoch");
    launch({ctx, "_Z6insidev"});
    const uint64_t other = nvtx_start("other");  // overlaps, and outlives it
    nvtx_end(epoch);
    launch({ctx, "_Z5afterv"});
    nvtx_end(other);
  });
  EXPECT_EQ(names, (std::vector<std::string>{"_Z6insidev"}));
}

TEST_F(FakeSessionTest, NvtxIncludeOnAStartEndRangeInANamedDomain) {
  const auto names = included(this, options(CollectionMode::kTiming), "Dom@epoch", [](CUcontext ctx) {
    nvtxDomainHandle_t dom = nvtx_domain_create("Dom");
    const uint64_t plain = nvtx_start("epoch");  // the default domain's
    launch({ctx, "_Z7defaultv"});
    nvtx_end(plain);
    const uint64_t epoch = nvtx_domain_start(dom, "epoch");
    launch({ctx, "_Z6insidev"});
    nvtx_domain_end(dom, epoch);
    launch({ctx, "_Z5afterv"});
  });
  EXPECT_EQ(names, (std::vector<std::string>{"_Z6insidev"}));
}

TEST_F(FakeSessionTest, AReplayRangeThatNeverMatchedSaysWhatItSaw) {
  const Child c = run_child([&] {
    collector::SessionOptions o = nvtx_step_options(trace_);
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    nvtx_push("warmup");
    launch({ctx, "_Z1av"});
    nvtx_pop();
    nvtx_end(nvtx_start("epoch"));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("no window opened; each is one NVTX range \"step\" (2 NVTX push/start calls seen, none matching it)"),
            std::string::npos)
      << c.err;
}

// emit_nvtx names every op call apart ("aten::mm, seq = N"): the session keeps at most
// kMarkerNames names (Session::marker_name), not every name of the run, so a name seen again
// after 20,000 others is defined again, and every marker still reads back as its own name. Until
// 2026-11-29 the writer interned each name for the whole run (126 bytes a range).
TEST_F(FakeSessionTest, NvtxRangeNamesAreKeptInABoundedTableAndReadBackWhole) {
  constexpr int kRanges = 20000;
  const Child c = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    for (int i = 0; i < kRanges; ++i) {
      nvtx_push("aten::mm, seq = " + std::to_string(i));
      nvtx_pop();
      if (i % 1000 == 0) {
        nvtx_push("step");
        nvtx_pop();
      }
    }
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  int seq = 0, steps = 0;
  for (const auto& e : t.all<trace::NvtxEvent>()) {
    if (e.kind != trace::NvtxEventKind::kStart) continue;
    const std::string& name = t.str(e.name);
    if (name == "step") {
      ++steps;
    } else {
      EXPECT_EQ(name, "aten::mm, seq = " + std::to_string(seq)) << "marker " << seq;
      ++seq;
    }
  }
  EXPECT_EQ(seq, kRanges);
  EXPECT_EQ(steps, kRanges / 1000);
  size_t step_defs = 0;
  for (const auto& [id, value] : t.strings) step_defs += value == "step";
  EXPECT_GE(step_defs, 2u) << "defined again after the table was emptied";
  EXPECT_LE(step_defs, size_t{kRanges / 8192 + 2});
}

}  // namespace
}  // namespace rf::fake_cupti
