// Replay across steps on the fake CUPTI (fake_cupti.h), at the edges of a window: a launch on
// another thread whose call began before its window opened, stepping aside inside a pass window,
// windows that launch nothing, a launch call on another context during a pass start, and a launch
// while the run finishes with a pass started. Each test here failed before its fix (reviews of the
// step replay code, 2026-11-25 and 2026-11-29).
#include <atomic>
#include <cstdio>
#include <chrono>
#include <thread>

#include "fake_session.h"
#include "fake_steps.h"
#include "rfprof/collector/step_replay_collector.h"

namespace rf::fake_cupti {
namespace {

/// The messages of the trace's range-launch mismatch records (discarded windows, restarts).
std::vector<std::string> mismatches(const Trace& t) {
  std::vector<std::string> out;
  for (const auto& e : t.all<trace::CollectorError>())
    if (e.code == trace::ErrorCode::kRangeLaunchMismatch) out.push_back(t.str(e.message));
  return out;
}

/// Runs `body` in a child whose session replays across steps with passes started at `start`.
template <typename Body>
Child run_step_child(const std::filesystem::path& trace, collector::StepPassStart start, Body body) {
  return run_child([&] {
    collector::SessionOptions o = step_options(trace);
    o.step_pass_start = start;
    if (!collector::start_session(o)) std::_Exit(3);
    body();
  });
}

/// Pass 0, then the last pass window opened on thread A while thread B is inside a launch call
/// that began before the window opened: B's kernel runs 50 ms after A's window opened, and A's
/// window launches its first kernel, then waits for B's call to return before the other two.
/// Then the timing window.
void last_pass_opened_during_another_threads_launch(CUcontext ctx) {
  step(ctx);  // pass 0
  std::thread a;
  std::atomic<bool> b_returned{false};
  Launch x{ctx, "_Z6loaderv", {8, 1, 1}, {32, 1, 1}};
  x.after_enter = [&] {
    a = std::thread([&] {
      profiler_start(ctx);
      launch({ctx, "_Z1av", {64, 1, 1}, {256, 1, 1}});
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (!b_returned && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      launch({ctx, "_Z1bv", {128, 1, 1}, {256, 1, 1}});
      launch({ctx, "_Z1cv", {64, 1, 1}, {128, 1, 1}});
      profiler_stop(ctx);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  };
  std::thread b([&] {
    launch(x);
    b_returned = true;
  });
  b.join();
  a.join();
  step(ctx);  // timing window: gets the counters
}

// A pass waits for launch calls that began before its window opened: their kernels would run
// inside the pass and make ranges no launch of the window accounts for (one more range than
// launches, and the group restarted). Before the fix: "4 ranges decoded for 3 launches".
TEST_F(FakeSessionTest, APassWaitsForLaunchCallsThatBeganBeforeItsWindowOpened) {
  for (const auto start : {collector::StepPassStart::kFirstLaunch, collector::StepPassStart::kWindowOpen}) {
    std::filesystem::remove(trace_);
    const Child c = run_step_child(trace_, start, [] { last_pass_opened_during_another_threads_launch(create_context(1)); });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    const Trace t = read_trace(trace_);
    for (const auto& m : mismatches(t)) ADD_FAILURE() << m;
    EXPECT_EQ(t.all<trace::RangeCounters>().size(), 3u) << c.err;
  }
}

// A Start refused inside a pass window steps aside: that window ran its 3 kernels, unfollowed,
// and must not be reported as "a pass 0 window was discarded: window launched no kernel".
TEST_F(FakeSessionTest, SteppingAsideInsideAPassWindowReportsNoDiscardedWindow) {
  for (const auto start : {collector::StepPassStart::kFirstLaunch, collector::StepPassStart::kWindowOpen}) {
    std::filesystem::remove(trace_);
    const Child c = run_child([&] {
      fail("cuptiRangeProfilerStart", CUPTI_ERROR_INSUFFICIENT_PRIVILEGES);
      collector::SessionOptions o = step_options(trace_);
      o.step_pass_start = start;
      if (!collector::start_session(o)) std::_Exit(3);
      CUcontext ctx = create_context(1);
      step(ctx);
      step(ctx);  // an ordinary recorded window
    });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    const Trace t = read_trace(trace_);
    for (const auto& m : mismatches(t)) ADD_FAILURE() << m;
    // The second window is recorded (and, refused when the window opened, the first one too:
    // the driver's cuProfilerStart callback after the runtime's opens it as an ordinary window).
    EXPECT_EQ(t.all<trace::LaunchApi>().size(), start == collector::StepPassStart::kWindowOpen ? 6u : 3u);
    EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  }
}

// Windows that launch no kernel (warm-up steps on the CPU) start no group: they are not group
// restarts, and four of them in a row do not make replay across steps give up.
TEST_F(FakeSessionTest, WindowsWithoutKernelsAreNoGroupRestarts) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 2 * static_cast<int>(collector::StepReplayCollector::kMaxRestarts); ++i) {
      profiler_start(ctx);
      profiler_stop(ctx);
    }
    step(ctx);
    step(ctx);
    say("timing", step(ctx));
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const std::vector<uint32_t> timing = said(c.err, "timing");
  const auto ranges = read_trace(trace_).all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), 3u) << c.err;
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(ranges[i].correlation_id, timing[i]);
  EXPECT_EQ(rfprof_lines(c.err), 0u) << c.err;
}

// A launch call on another context, still inside the driver when a pass starts, takes no part in
// the pass: the pass does not wait for it, whether the call began inside the pass's window or
// before it opened (before the fix it was counted among the launches a pass waits for, so a
// thread launching steadily on a second GPU held every pass start for 500 ms).
TEST_F(FakeSessionTest, APassDoesNotWaitForALaunchCallOnAnotherContext) {
  for (const auto start : {collector::StepPassStart::kFirstLaunch, collector::StepPassStart::kWindowOpen})
    for (const bool before_window : {false, true}) {
      std::filesystem::remove(trace_);
      const Child c = run_step_child(trace_, start, [before_window] {
        CUcontext ctx = create_context(1);
        CUcontext other = create_context(2);
        step(ctx);  // pass 0: the step's context is known from here on
        std::atomic<bool> in_call{false}, returned{false};
        Launch slow{other, "_Z4slowv"};
        slow.after_enter = [&] {
          in_call = true;
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
        };
        std::thread t;
        auto start_slow_call = [&] {
          t = std::thread([&] {
            launch(slow);
            returned = true;
          });
          while (!in_call) std::this_thread::yield();
        };
        if (before_window) start_slow_call();
        profiler_start(ctx);  // pass 1's window
        if (!before_window) start_slow_call();
        launch({ctx, "_Z1av", {64, 1, 1}, {256, 1, 1}});  // the pass has started by its return
        const bool waited = returned.load();
        launch({ctx, "_Z1bv", {128, 1, 1}, {256, 1, 1}});
        launch({ctx, "_Z1cv", {64, 1, 1}, {128, 1, 1}});
        profiler_stop(ctx);
        t.join();
        step(ctx);  // timing window
        std::fprintf(stderr, "waited=%d;\n", waited ? 1 : 0);
      });
      ASSERT_TRUE(c.exited_zero()) << c.err;
      EXPECT_NE(c.err.find("waited=0;"), std::string::npos)
          << "the pass waited for the other context's launch call (before the window: " << before_window << ")\n"
          << c.err;
      const Trace t = read_trace(trace_);
      for (const auto& m : mismatches(t)) ADD_FAILURE() << m;
      EXPECT_EQ(t.all<trace::RangeCounters>().size(), 3u) << c.err;
    }
}

/// Whether the launch late_launch_before_stop started had returned 300 ms later.
std::atomic<bool> g_late_launch_returned{false};

/// The next cuptiRangeProfilerStop (the finishing thread's, at exit, holding the profiler's lock)
/// first starts a launch on `ctx` on another thread and says on stderr whether that launch call
/// returned within 300 ms: if it did, it ran while a pass was started, unserialized with the
/// Stop and Disable that follow.
void late_launch_before_stop(CUcontext ctx) {
  before_next_call("cuptiRangeProfilerStop", [ctx] {
    std::thread([ctx] {
      launch({ctx, "_Z4latev", {1, 1, 1}, {32, 1, 1}});
      g_late_launch_returned = true;
    }).detach();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    while (!g_late_launch_returned && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    std::fprintf(stderr, "late launch returned during stop: %d\n", g_late_launch_returned ? 1 : 0);
  });
}

// The run ends (exit, a SIGTERM) with pass 1 started; another thread launches while the finishing
// thread stops the pass. The launch waits for the profiler's lock as under kernel replay, so it
// never runs inside a pass being stopped and disabled (until 2026-11-29, step replay let it through).
TEST_F(FakeSessionTest, ALaunchWhileTheRunFinishesWaitsUntilThePassIsStopped) {
  for (const bool step_mode : {false, true}) {
    const Child c = run_child([&] {
      auto o = step_options(trace_);
      o.replay_across_steps = step_mode;
      o.force_overwrite = true;  // the first round's trace
      if (!collector::start_session(o)) std::_Exit(3);
      CUcontext ctx = create_context(1);
      if (step_mode) step(ctx);  // pass 0; then pass 1's window opens and starts at its first launch
      profiler_start(ctx);
      launch({ctx, "_Z1av", {64, 1, 1}, {256, 1, 1}});
      late_launch_before_stop(ctx);
    });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    EXPECT_NE(c.err.find("late launch returned during stop: 0\n"), std::string::npos)
        << (step_mode ? "replay across steps" : "kernel replay") << "\n" << c.err;
    EXPECT_EQ(c.err.find("fake CUPTI misuse"), std::string::npos) << c.err;
  }
}

// The thread opening each window has device 0's context current (PyTorch's default device) while
// the step's kernels run on device 1's (tensors on cuda:1, no set_device): every window is empty on
// the step's context, and the end-of-run line says where the kernels went and what to do.
TEST_F(FakeSessionTest, KernelsOnAnotherContextThanTheStepsAreNamedInTheEndLine) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx0 = create_context(1, 0);
    CUcontext ctx1 = create_context(2, 1);
    for (int i = 0; i < 4; ++i) {
      profiler_start(ctx0);
      launch({ctx1, "_Z1av", {64, 1, 1}, {256, 1, 1}});
      profiler_stop(ctx0);
    }
    launch({ctx1, "_Z1bv"});  // outside every window: not what the line is about
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("kernels of another CUDA context ran inside the windows, and only those of the step's "
                       "context (device 0, current where the first window opened) are counted"),
            std::string::npos)
      << c.err;
}

// Kernels on the step's context only: no such hint.
TEST_F(FakeSessionTest, KernelsOnTheStepsContextGiveNoOtherContextHint) {
  const Child c = run_child([&] {
    if (!collector::start_session(step_options(trace_))) std::_Exit(3);
    CUcontext ctx1 = create_context(2, 1);
    launch({create_context(1, 0), "_Z1bv"});  // another context, before any window
    step(ctx1);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("collected no counters"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find("another CUDA context"), std::string::npos) << c.err;
}

}  // namespace
}  // namespace rf::fake_cupti
