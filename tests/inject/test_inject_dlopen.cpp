// librfinject loaded like the CUDA driver / NVTX loader load it, in a subprocess: it must never
// crash or abort the process, and must say what happened in exactly one "rfprof:" line.
// Without a GPU (CI), CUPTI cannot attach: one line, no trace. With a GPU, the session starts:
// no line, and a finished trace at RFPROF_OUTPUT.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;

struct RunResult {
  int exit_code = -1;   // -1: killed by a signal
  int signal = 0;
  std::vector<std::string> out_lines;
  std::vector<std::string> err_lines;
  std::vector<std::string> files;  // files left in the output directory
};

std::vector<std::string> lines_of(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

class InjectDlopen : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("rfinject_dlopen_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "out");
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// Runs the helper with the process environment minus RFPROF_*/injection variables, plus `env`.
  RunResult run(const std::string& mode, std::map<std::string, std::string> env = {}) {
    if (!env.count("RFPROF_OUTPUT")) env["RFPROF_OUTPUT"] = (dir_ / "out" / "trace_%p.rftrace").string();
    std::vector<std::string> vars;
    for (char** e = environ; *e; ++e) {
      std::string v(*e);
      if (v.rfind("RFPROF_", 0) == 0 || v.rfind("CUDA_INJECTION64_PATH=", 0) == 0 ||
          v.rfind("NVTX_INJECTION64_PATH=", 0) == 0)
        continue;
      vars.push_back(v);
    }
    for (const auto& [k, v] : env) vars.push_back(k + "=" + v);
    std::vector<char*> envp;
    for (auto& v : vars) envp.push_back(v.data());
    envp.push_back(nullptr);

    std::string helper = RFINJECT_HELPER, lib = RFINJECT_PATH;
    std::vector<char*> argv = {helper.data(), lib.data(), const_cast<char*>(mode.c_str()), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    std::string out = (dir_ / "stdout").string(), err = (dir_ / "stderr").string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    RunResult r;
    int rc = posix_spawn(&pid, helper.c_str(), &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    EXPECT_EQ(rc, 0) << "cannot spawn " << helper;
    if (rc != 0) return r;
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
    r.out_lines = lines_of(out);
    r.err_lines = lines_of(err);
    for (const auto& f : fs::directory_iterator(dir_ / "out")) r.files.push_back(f.path().filename());
    return r;
  }

  static size_t rfprof_lines(const RunResult& r) {
    size_t n = 0;
    for (const auto& l : r.err_lines)
      if (l.rfind("rfprof:", 0) == 0) ++n;
    return n;
  }

  static std::string dump(const RunResult& r) {
    std::ostringstream s;
    s << "exit " << r.exit_code << " signal " << r.signal << "\nstdout:\n";
    for (const auto& l : r.out_lines) s << "  " << l << "\n";
    s << "stderr:\n";
    for (const auto& l : r.err_lines) s << "  " << l << "\n";
    s << "files:";
    for (const auto& f : r.files) s << " " << f;
    return s.str();
  }

  fs::path dir_;
};

TEST_F(InjectDlopen, InitializeInjectionReturnsOneAndNeverCrashes) {
  RunResult r = run("cuda");
  ASSERT_EQ(r.signal, 0) << dump(r);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  EXPECT_EQ(r.out_lines, (std::vector<std::string>{"InitializeInjection returned 1",
                                                   "InitializeInjection returned 1"}))
      << dump(r);
  if (rfprof_lines(r) == 1) {
    // No usable CUDA driver (CI): CUPTI refused, rfprof stepped aside, nothing on disk, and the
    // second call did not print again.
    EXPECT_NE(r.err_lines.front().find("rfprof is disabled"), std::string::npos) << dump(r);
    EXPECT_TRUE(r.files.empty()) << dump(r);
  } else {
    // A GPU machine: the session ran and the exit handler finished the trace (no .part left).
    EXPECT_EQ(rfprof_lines(r), 0u) << dump(r);
    ASSERT_EQ(r.files.size(), 1u) << dump(r);
    EXPECT_EQ(fs::path(r.files[0]).extension(), ".rftrace") << dump(r);
  }
}

TEST_F(InjectDlopen, BadConfigurationIsOneLineNamingTheVariable) {
  RunResult r = run("cuda", {{"RFPROF_MODE", "bogus"}});
  ASSERT_EQ(r.signal, 0) << dump(r);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  ASSERT_EQ(r.err_lines.size(), 1u) << dump(r);
  EXPECT_EQ(r.err_lines[0],
            "rfprof: RFPROF_MODE=\"bogus\": expected counters or timing; rfprof is disabled");
  EXPECT_EQ(r.out_lines.size(), 2u) << dump(r);
  EXPECT_TRUE(r.files.empty()) << dump(r);
}

TEST_F(InjectDlopen, BadOutputPatternIsOneLineNamingRfprofOutput) {
  RunResult r = run("cuda", {{"RFPROF_OUTPUT", (dir_ / "out" / "t_%z").string()}});
  ASSERT_EQ(r.signal, 0) << dump(r);
  ASSERT_EQ(r.err_lines.size(), 1u) << dump(r);
  EXPECT_EQ(r.err_lines[0].rfind("rfprof: RFPROF_OUTPUT=", 0), 0u) << dump(r);
  EXPECT_NE(r.err_lines[0].find("%z is unknown"), std::string::npos) << dump(r);
  EXPECT_TRUE(r.files.empty()) << dump(r);
}

TEST_F(InjectDlopen, NvtxIsNotHandedToCuptiWhenCuptiCannotStart) {
  RunResult probe = run("cuda");
  if (!probe.files.empty()) GTEST_SKIP() << "a GPU is present: CUPTI started (covered by GPU tests)";
  fs::remove_all(dir_ / "out");
  fs::create_directories(dir_ / "out");
  RunResult r = run("nvtx");
  ASSERT_EQ(r.signal, 0) << dump(r);
  ASSERT_EQ(r.exit_code, 0) << dump(r);
  // The NVTX 13.0 GA guard: no CUPTI session, so NVTX is declined (0) instead of forwarded.
  EXPECT_EQ(r.out_lines, (std::vector<std::string>{"InitializeInjectionNvtx2 returned 0",
                                                   "InitializeInjection returned 1"}))
      << dump(r);
  EXPECT_EQ(rfprof_lines(r), 1u) << dump(r);
}

}  // namespace
