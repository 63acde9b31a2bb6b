// The collector session on the fake CUPTI (fake_cupti.h), its life cycle: a full disk (a file
// size limit, SIGXFSZ's default action kept; a stalled file: test_session_fake_stall.cpp), what
// ProcessInfo says, start_session's second call, the start-up refusals not covered in
// test_session_fake_timing.cpp, the window records and which calls open and close them, ncu's
// --disable-profiler-start-stop, SIGTERM with the application's own handler, SIGTERM while
// finishing is blocked in CUPTI, and fork() (DataLoader workers).
#include <sys/wait.h>

#include <pthread.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <fstream>

#include "fake_session.h"
#include "rfprof/trace/writer.h"

namespace rf::fake_cupti {
namespace {

using trace::CollectionMode;

/// The number after "`key`=" in `err` (-1 when absent).
long long value_after(const std::string& err, const std::string& key) {
  const size_t at = err.find(key + "=");
  return at == std::string::npos ? -1 : std::stoll(err.substr(at + key.size() + 1));
}

// A full disk (here a file size limit of 256 KiB: `ulimit -f`, which Slurm passes on to a job):
// rfprof says so once, stops writing, keeps what it wrote, and the application runs to its end.
// SIGXFSZ keeps the default action the application left it: the trace write past the limit raised
// it on the writing thread (the flush thread, or an application thread past the writer's bound)
// and it killed the application (a review; this test ignored SIGXFSZ then, and hid it). The
// application's own write past the limit still dies of it.
TEST_F(FakeSessionTest, AFullDiskStopsWritingOnceAndTheApplicationGoesOn) {
  constexpr rlim_t kLimit = 256 * 1024;
  const Child c = run_child([&] {
    const struct rlimit lim {kLimit, kLimit};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) std::_Exit(5);
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 20000; ++i) launch({ctx, "_Z1kv"});  // about 1.5 MB of records
    struct sigaction now {};
    ::sigaction(SIGXFSZ, nullptr, &now);
    sigset_t mask;
    ::pthread_sigmask(SIG_BLOCK, nullptr, &mask);
    if (now.sa_handler != SIG_DFL || ::sigismember(&mask, SIGXFSZ)) std::_Exit(6);
    std::fprintf(stderr, "application done\n");
  });
  ASSERT_FALSE(WIFSIGNALED(c.status)) << "killed by signal " << WTERMSIG(c.status) << ": " << c.err;
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_NE(c.err.find("application done\n"), std::string::npos) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("; rfprof stops writing (the trace keeps what was written)\n"), std::string::npos) << c.err;
  // Never finished, so never renamed: the .part holds what fitted, readable up to where it was cut.
  EXPECT_FALSE(std::filesystem::exists(trace_));
  const std::filesystem::path part = trace_.string() + ".part";
  ASSERT_TRUE(std::filesystem::exists(part));
  EXPECT_LE(std::filesystem::file_size(part), kLimit);
  const Trace t = read_trace(part);
  EXPECT_TRUE(t.truncated);
  const size_t kept = t.all<trace::LaunchApi>().size();
  // How many fitted depends on how many kernel records the 20 ms activity flushes wrote between
  // them: 804 to 1,100 launches in runs here, so the bound is well below.
  EXPECT_GT(kept, 400u);
  EXPECT_LT(kept, 20000u);

  // The application's own write past the limit, rfprof running: the default action, as without it.
  const std::filesystem::path own = dir_ / "own.bin";
  std::filesystem::remove(part);
  const Child app = run_child([&] {
    const struct rlimit lim {kLimit, kLimit};
    if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) std::_Exit(5);
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 10; ++i) launch({ctx, "_Z1kv"});
    std::ofstream out(own, std::ios::binary);
    const std::string block(kLimit + 4096, 'x');
    out << block << std::flush;
    std::fprintf(stderr, "the application's write past the limit went on\n");
  });
  ASSERT_TRUE(app.status != -1 && WIFSIGNALED(app.status)) << app.err;
  EXPECT_EQ(WTERMSIG(app.status), SIGXFSZ) << app.err;
}

TEST_F(FakeSessionTest, ProcessInfoNamesThisProcessAndItsMode) {
  const Child c = run_child([&] {
    std::fprintf(stderr, "pid=%d\n", static_cast<int>(::getpid()));
    if (!collector::start_session(options(CollectionMode::kCounters))) std::_Exit(3);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const Trace t = read_trace(trace_);
  const auto processes = t.all<trace::ProcessInfo>();
  ASSERT_EQ(processes.size(), 1u);
  EXPECT_EQ(static_cast<long long>(processes[0].pid), value_after(c.err, "pid"));
  EXPECT_EQ(processes[0].ppid, static_cast<uint32_t>(::getpid()));  // the test forked it
  EXPECT_EQ(processes[0].mode, CollectionMode::kCounters);
}

TEST_F(FakeSessionTest, ASecondStartReturnsTheFirstResultAndDoesNothing) {
  const Child ok = run_child([&] {
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    if (!collector::start_session(options(CollectionMode::kTiming))) std::_Exit(4);
    std::fprintf(stderr, "subscribes=%llu\n", static_cast<unsigned long long>(calls("cuptiSubscribe_v2")));
  });
  ASSERT_TRUE(ok.exited_zero()) << ok.err;
  EXPECT_EQ(ok.err, "subscribes=1\n");
  EXPECT_EQ(read_trace(trace_).all<trace::ProcessInfo>().size(), 1u);

  // After a refusal the second call is refused too, without a second attempt or line, even once
  // the cause is gone.
  const Child refused = run_child([&] {
    fail("cuptiSubscribe_v2", CUPTI_ERROR_NOT_INITIALIZED);
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    fail("cuptiSubscribe_v2", CUPTI_SUCCESS);
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(4);
    std::fprintf(stderr, "subscribes=%llu\n", static_cast<unsigned long long>(calls("cuptiSubscribe_v2")));
  });
  ASSERT_TRUE(refused.exited_zero()) << refused.err;
  EXPECT_EQ(rfprof_lines(refused.err), 1u) << refused.err;
  EXPECT_EQ(value_after(refused.err, "subscribes"), 1);
}

TEST_F(FakeSessionTest, AnUnknownErrorFromSubscribeAlsoAsksWhetherADriverIsInstalled) {
  const Child c = run_child([&] {
    fail("cuptiSubscribe_v2", CUPTI_ERROR_UNKNOWN);
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("is an NVIDIA driver installed"), std::string::npos) << c.err;
}

// A .part no process holds (a killed run's) is kept, and the line says how to replace it; a live
// writer's is another matter (ALiveWritersTraceNameIsLeftToItAndTheNextNameTaken).
TEST_F(FakeSessionTest, AStalePartFileIsKeptAndTheLineSaysHowToReplaceIt) {
  const std::string part = trace_.string() + ".part";
  { std::ofstream(part) << "another process's trace"; }
  const Child c = run_child([&] {
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    std::fprintf(stderr, "subscriber=[%s]\n", subscriber_name().c_str());
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find(part + " exists (a killed run left it); remove it or pass -f"), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("subscriber=[]"), std::string::npos) << c.err;
  std::ifstream in(part);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()),
            "another process's trace");
  EXPECT_FALSE(std::filesystem::exists(trace_));
}

// Another live process writing the same name (here a Writer of this process: flock locks of two
// opens conflict as two processes' do): the session takes the name output_in_use gives and never
// touches the other .part, forced or not (with -f it once truncated it); without output_in_use,
// one line and nothing of the session's on disk.
TEST_F(FakeSessionTest, ALiveWritersTraceNameIsLeftToItAndTheNextNameTaken) {
  const std::filesystem::path next = dir_ / "t.next.rftrace";
  for (const bool force : {false, true}) {
    std::filesystem::remove(trace_);
    std::filesystem::remove(next);
    const Child c = run_child([&] {
      trace::Writer other(trace_);
      other.append(trace::ProcessInfo{});
      other.flush();
      auto o = options(CollectionMode::kTiming);
      o.force_overwrite = force;
      o.output_in_use = [&](const std::filesystem::path& taken, uint32_t attempt, bool live) {
        std::fprintf(stderr, "in-use %s %u %d\n", taken.filename().c_str(), attempt, live);
        return next;
      };
      if (!collector::start_session(o)) std::_Exit(3);
      if (collector::session_output() != next) std::_Exit(4);
      launch({create_context(1), "_Z4gemmv"});
    });
    ASSERT_TRUE(c.exited_zero()) << c.err;
    EXPECT_EQ(c.err, "in-use t.rftrace 1 1\n") << "force " << force;
    EXPECT_EQ(read_trace(next).all<trace::LaunchApi>().size(), 1u);
    const Trace other = read_trace(trace_);  // whole: its ProcessInfo, no launch of the session
    EXPECT_FALSE(other.truncated);
    EXPECT_EQ(other.all<trace::ProcessInfo>().size(), 1u);
    EXPECT_TRUE(other.all<trace::LaunchApi>().empty());
  }
  std::filesystem::remove(trace_);
  const Child alone = run_child([&] {
    trace::Writer other(trace_);
    if (collector::start_session(options(CollectionMode::kTiming))) std::_Exit(3);
    if (!collector::session_output().empty()) std::_Exit(4);
  });
  ASSERT_TRUE(alone.exited_zero()) << alone.err;
  EXPECT_EQ(rfprof_lines(alone.err), 1u) << alone.err;
  EXPECT_NE(alone.err.find(trace_.string() + ".part is being written by another process"), std::string::npos) << alone.err;
}

TEST_F(FakeSessionTest, WindowRecordsNameTheCallbackThatOpenedOrClosedThem) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.profile_from_start = false;
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    profiler_start(ctx);
    launch({ctx, "_Z6insidev"});
    profiler_stop(ctx);
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  const auto windows = read_trace(trace_).all<trace::ProfilingWindow>();
  ASSERT_EQ(windows.size(), 2u);
  // cudaProfilerStart's window opens when the cuProfilerStart it makes has returned (the first exit
  // callback after the profiler started); cudaProfilerStop's closes at its own entry, before the
  // driver call stops anything.
  EXPECT_TRUE(windows[0].begin);
  EXPECT_EQ(windows[0].cbid, static_cast<uint32_t>(CUPTI_DRIVER_TRACE_CBID_cuProfilerStart));
  EXPECT_FALSE(windows[1].begin);
  EXPECT_EQ(windows[1].cbid, static_cast<uint32_t>(CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000));
}

TEST_F(FakeSessionTest, DisableProfilerStartStopIgnoresTheCallsAndTheExitClosesTheWindow) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.disable_profiler_start_stop = true;
    if (!collector::start_session(o)) std::_Exit(3);
    std::fprintf(stderr, "driver=%d runtime=%d\n",
                 callback_enabled(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuProfilerStop) ? 1 : 0,
                 callback_enabled(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaProfilerStop_v4000) ? 1 : 0);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z1av"});
    profiler_stop(ctx);
    launch({ctx, "_Z1bv"});
    profiler_start(ctx);
    launch({ctx, "_Z1cv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_EQ(c.err, "driver=0 runtime=0\n");  // never subscribed
  const Trace t = read_trace(trace_);
  const auto launches = t.all<trace::LaunchApi>();
  ASSERT_EQ(launches.size(), 3u);
  for (const auto& l : launches) EXPECT_EQ(l.window_id, 0u);
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 3u);
  // Window 0 opens at the start and closes at exit (cbid 0: no API call).
  const auto windows = t.all<trace::ProfilingWindow>();
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_EQ(windows[0], (trace::ProfilingWindow{0, true, windows[0].timestamp_ns, 0}));
  EXPECT_EQ(windows[1], (trace::ProfilingWindow{0, false, windows[1].timestamp_ns, 0}));
  EXPECT_GE(windows[1].timestamp_ns, launches[2].api_end_ns);
}

TEST_F(FakeSessionTest, WithTheApplicationsOwnSigtermHandlerTheRecordsAreFlushedAndItDecides) {
  static volatile std::sig_atomic_t handled = 0;
  const Child c = run_child([&] {
    std::signal(SIGTERM, [](int) { handled = 1; });  // installed first: rfprof calls it
    auto o = options(CollectionMode::kTiming);
    o.flush_ms = 60000;  // only the signal's flush writes the launches before the SIGKILL
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 3; ++i) launch({ctx, "_Z1kv"});
    std::raise(SIGTERM);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    std::fprintf(stderr, "handled=%d\n", static_cast<int>(handled));
    std::raise(SIGKILL);  // the application chose to go on; then something kills it
  });
  ASSERT_NE(c.status, -1) << c.err;
  ASSERT_TRUE(WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGKILL) << c.err;
  EXPECT_NE(c.err.find("handled=1"), std::string::npos) << c.err;
  const std::filesystem::path part = trace_.string() + ".part";
  ASSERT_TRUE(std::filesystem::exists(part));
  const Trace t = read_trace(part);
  EXPECT_TRUE(t.truncated);  // not finished: the process went on after the signal
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 3u);
}

// A SIGTERM whose finish blocks in CUPTI for good (the forced activity flush never returns, as
// behind a hung kernel): the signal watcher's last resort (Session::end_trace_now) ends the trace
// with what was written, under its final name, before the handler's 3 s run out; then the process
// dies of the signal. Without the last resort the trace stays a .part.
TEST_F(FakeSessionTest, AFinishBlockedInCuptiIsEndedByTheLastResortAndTheProcessDiesOfTheSignal) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.flush_ms = 60000;  // no periodic activity flush: only finishing calls cuptiActivityFlushAll
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    for (int i = 0; i < 3; ++i) launch({ctx, "_Z1kv"});
    hang("cuptiActivityFlushAll");
    std::raise(SIGTERM);
    std::_Exit(5);  // not reached: the handler re-raises SIGTERM with its default action
  });
  ASSERT_NE(c.status, -1) << c.err;
  ASSERT_TRUE(WIFSIGNALED(c.status)) << c.err;
  EXPECT_EQ(WTERMSIG(c.status), SIGTERM);
  EXPECT_FALSE(std::filesystem::exists(trace_.string() + ".part"));
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);  // TraceEnd written by the last resort
  const auto cut = errors_with(t, trace::ErrorCode::kFinishCutShort);
  ASSERT_EQ(cut.size(), 1u);
  EXPECT_EQ(cut[0].expected, 2200u);  // ms waited: the 3 s timeout less the last resort's 800 ms
  EXPECT_EQ(t.all<trace::LaunchApi>().size(), 3u);  // written by finishing before it blocked
  EXPECT_TRUE(t.all<trace::KernelActivity>().empty());  // still inside the flush that never returned
  EXPECT_EQ(rfprof_lines(c.err), 1u) << c.err;
  EXPECT_NE(c.err.find("rfprof: finishing the trace was blocked for 2200 ms after the signal"), std::string::npos)
      << c.err;
}

// fork() after the session started, as PyTorch's DataLoader workers do: a worker's launches reach
// the callbacks it inherited, but the fork handler disabled the session in the child, so they are
// not written (not even past the writer's chunk size, which would write to the shared file) and
// its exit (exit() or _exit()) neither flushes the inherited buffers nor finishes
// the parent's trace. The parent's trace holds its own launches only, finished once.
TEST_F(FakeSessionTest, ForkedWorkersWriteNothingAndTheParentFinishesItsTraceOnce) {
  const Child c = run_child([&] {
    auto o = options(CollectionMode::kTiming);
    o.flush_ms = 60000;  // the parent's launch is still in its thread's buffer at the fork
    if (!collector::start_session(o)) std::_Exit(3);
    CUcontext ctx = create_context(1);
    launch({ctx, "_Z6parentv"});
    std::vector<pid_t> workers;
    for (int i = 0; i < 4; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        // The first worker launches past the writer's 1 MiB chunk, which a session that were
        // still running in the child would write to the file it shares with the parent.
        for (int k = 0; k < (i == 0 ? 30000 : 10); ++k) launch({ctx, "_Z6workerv"});
        if (i % 2 == 0) std::exit(0);  // runs the inherited exit handler
        ::_exit(0);
      }
      if (pid < 0) std::_Exit(6);
      workers.push_back(pid);
    }
    for (pid_t pid : workers) {
      int status = 0;
      if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) std::_Exit(7);
    }
    launch({ctx, "_Z6parentv"});
  });
  ASSERT_TRUE(c.exited_zero()) << c.err;
  EXPECT_FALSE(std::filesystem::exists(trace_.string() + ".part"));
  const Trace t = read_trace(trace_);
  EXPECT_FALSE(t.truncated);
  EXPECT_EQ(t.all<trace::TraceEnd>().size(), 1u);
  EXPECT_EQ(launch_names(t), (std::vector<std::string>{"_Z6parentv", "_Z6parentv"}));
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), 2u);
  EXPECT_EQ(t.all<trace::ProcessInfo>().size(), 1u);
}

}  // namespace
}  // namespace rf::fake_cupti
