// Runs the real collector session (start_session, its callbacks, its exit) in a forked child on
// the fake CUPTI (fake_cupti.h), and reads back the trace it left. A session is one per process
// and never deleted, so each scenario gets a process of its own.
#pragma once

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "fake_cupti.h"
#include "rfprof/collector/session.h"
#include "rfprof/trace/reader.h"

namespace rf::fake_cupti {

/// What a child left: its wait status (-1 if it hung and was killed) and its stderr.
struct Child {
  int status = 0;
  std::string err;
  bool exited_zero() const { return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

/// Forks; the child resets the fake, runs `body` with its stderr in a file, then exit(0), which
/// runs the session's exit handler (the trace is finished there). Waits at most `limit`.
inline Child run_child(const std::function<void()>& body, std::chrono::seconds limit = std::chrono::seconds(60)) {
  char path[] = "/tmp/rffake-err-XXXXXX";
  const int fd = ::mkstemp(path);
  std::fflush(nullptr);  // or the child's exit writes the parent's buffered output a second time
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fd, 2);
    reset();
    body();
    std::fflush(nullptr);
    std::exit(0);
  }
  ::close(fd);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  Child c;
  pid_t r = 0;
  while ((r = ::waitpid(pid, &c.status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  if (r == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &c.status, 0);
    c.status = -1;
  }
  std::ifstream in(path);
  c.err.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  ::unlink(path);
  // The session called CUPTI in an order the real one refuses (fake_cupti_state.h, misuse()).
  EXPECT_EQ(c.err.find("fake CUPTI misuse:"), std::string::npos) << c.err;
  return c;
}

/// A trace read whole: its records, their strings, and whether it ended without TraceEnd.
struct Trace {
  std::vector<trace::Record> records;
  std::map<trace::StringId, std::string> strings;
  bool truncated = false;

  template <typename R>
  std::vector<R> all() const {
    std::vector<R> out;
    for (const auto& r : records)
      if (const R* x = std::get_if<R>(&r)) out.push_back(*x);
    return out;
  }
  const std::string& str(trace::StringId id) const {
    static const std::string empty;
    auto it = strings.find(id);
    return it == strings.end() ? empty : it->second;
  }
};

/// Reads `path` whole (throws trace::TraceError when it is corrupt).
inline Trace read_trace(const std::filesystem::path& path) {
  Trace t;
  trace::Reader reader(path);
  trace::Record r;
  while (reader.next(r)) {
    if (const auto* s = std::get_if<trace::StringDef>(&r)) t.strings[s->id] = s->value;
    t.records.push_back(r);
  }
  t.truncated = reader.truncated();
  return t;
}

/// The driver correlation ids of the trace's launches (LaunchApi), in order.
inline std::vector<uint32_t> launch_ids(const Trace& t) {
  std::vector<uint32_t> out;
  for (const auto& l : t.all<trace::LaunchApi>()) out.push_back(l.correlation_id);
  return out;
}

/// Expects one RangeCounters per launch, in launch order, each with the fake's values of its
/// launch, and one kernel record per launch.
inline void expect_one_range_per_launch(const Trace& t) {
  const auto launches = t.all<trace::LaunchApi>();
  const auto ranges = t.all<trace::RangeCounters>();
  ASSERT_EQ(ranges.size(), launches.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    EXPECT_EQ(ranges[i].correlation_id, launches[i].correlation_id);
    EXPECT_EQ(ranges[i].values[0], value(launches[i].correlation_id, 0));
  }
  EXPECT_EQ(t.all<trace::KernelActivity>().size(), launches.size());
}

/// Launches kernel _Z1kv on `ctx` once through each driver launch call (fake_cupti.h's DriverCall
/// order), the i-th (from 1) with grid (10i, i, 2) and block (32i, 2, i).
inline void launch_each_driver_call(CUcontext ctx) {
  const DriverCall calls[] = {DriverCall::kLaunchKernel,   DriverCall::kLaunchKernelPtsz,
                              DriverCall::kLaunchKernelEx, DriverCall::kLaunchKernelExPtsz,
                              DriverCall::kCooperative,    DriverCall::kCooperativePtsz};
  unsigned n = 0;
  for (DriverCall call : calls) {
    ++n;
    Launch l{ctx, "_Z1kv", {10 * n, n, 2}, {32 * n, 2, n}};
    l.call = call;
    launch(l);
  }
}

/// The kernel names (mangled) of the trace's launches, in order ("" for a graph launch).
inline std::vector<std::string> launch_names(const Trace& t) {
  std::vector<std::string> out;
  for (const auto& l : t.all<trace::LaunchApi>()) out.push_back(t.str(l.kernel_name));
  return out;
}

/// The correlation ids the trace's RangeCounters were mapped to (0: unmapped), in order.
inline std::vector<uint32_t> range_ids(const Trace& t) {
  std::vector<uint32_t> out;
  for (const auto& rc : t.all<trace::RangeCounters>()) out.push_back(rc.correlation_id);
  return out;
}

/// The trace's CollectorErrors with `code`, in order.
inline std::vector<trace::CollectorError> errors_with(const Trace& t, trace::ErrorCode code) {
  std::vector<trace::CollectorError> out;
  for (const auto& e : t.all<trace::CollectorError>())
    if (e.code == code) out.push_back(e);
  return out;
}

/// A fresh directory for one test's traces, removed with the fixture.
class FakeSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (std::filesystem::temp_directory_path() / "rffake-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
    trace_ = dir_ / "t.rftrace";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  /// Options writing to trace_, with a short flush interval.
  collector::SessionOptions options(trace::CollectionMode mode) const {
    collector::SessionOptions o;
    o.output = trace_;
    o.mode = mode;
    o.flush_ms = 20;
    return o;
  }
  /// Number of "rfprof:" lines in `err`.
  static size_t rfprof_lines(const std::string& err) {
    size_t n = 0;
    for (size_t at = err.find("rfprof:"); at != std::string::npos; at = err.find("rfprof:", at + 1))
      if (at == 0 || err[at - 1] == '\n') ++n;
    return n;
  }

  std::filesystem::path dir_, trace_;
};

/// For tests that load the fake driver (fake_libcuda.cpp) in their child: it must be the only
/// libcuda.so.1 the session can find (its shim asks the loader for one by that name). Where a
/// real driver is already loaded into the test process (a GPU machine whose libcupti loaded it),
/// these tests are skipped rather than mixing the two.
class FakeDriverTest : public FakeSessionTest {
 protected:
  void SetUp() override {
    FakeSessionTest::SetUp();
    if (void* real = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
      ::dlclose(real);
      GTEST_SKIP() << "a libcuda.so.1 is already loaded in this process";
    }
  }
};

}  // namespace rf::fake_cupti
