// End to end without a GPU: an application linked with the fake CUPTI (fake_app.cpp) runs under
// librfinject as cuInit would load it (CUDA_INJECTION64_PATH), configured by RFPROF_* variables
// or by the rfprof launcher's ncu flags; rfanalyze and rfprof's CSV pages then read what it
// recorded. The fake evaluates metric m of the launch with driver correlation id c to
// c * 1000 + m (tests/collector/fake_cupti.h), so every number below is known in advance.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "rfprof/trace/reader.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace rf::trace;

struct Ran {
  int status = -1;
  std::string out, err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs `argv` with `env` added to this process's environment; stdout and stderr into files.
Ran run(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& dir) {
  std::vector<std::string> all_env = env;
  for (char** e = environ; *e; ++e)
    if (std::string(*e).rfind("RFPROF_", 0) != 0 && std::string(*e).rfind("CUDA_INJECTION64_PATH=", 0) != 0)
      all_env.emplace_back(*e);
  std::vector<char*> a, e;
  for (const auto& s : argv) a.push_back(const_cast<char*>(s.c_str()));
  a.push_back(nullptr);
  for (const auto& s : all_env) e.push_back(const_cast<char*>(s.c_str()));
  e.push_back(nullptr);
  const fs::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  Ran r;
  if (posix_spawn(&pid, a[0], &fa, nullptr, a.data(), e.data()) == 0) ::waitpid(pid, &r.status, 0);
  posix_spawn_file_actions_destroy(&fa);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

bool exited_zero(const Ran& r) { return r.status >= 0 && WIFEXITED(r.status) && WEXITSTATUS(r.status) == 0; }

/// "launch NAME ID" lines of fake_app's stdout, in order.
std::vector<std::pair<std::string, uint32_t>> launches_of(const std::string& out) {
  std::vector<std::pair<std::string, uint32_t>> v;
  std::istringstream in(out);
  std::string word, name;
  uint32_t id = 0;
  while (in >> word)
    if (word == "launch" && in >> name >> id) v.emplace_back(name, id);
  return v;
}

/// The metric names of a trace's (only) MetricConfig, in evaluation order.
std::vector<std::string> metrics_of(const fs::path& trace) {
  Reader reader(trace);
  Record r;
  std::vector<std::string> names;
  while (reader.next(r))
    if (const auto* mc = std::get_if<MetricConfig>(&r))
      for (StringId id : mc->metrics) names.push_back(reader.string(id));
  return names;
}

/// The fake's value of metric `name` for the launch with driver correlation id `cid`.
double fake_value(const std::vector<std::string>& metrics, const std::string& name, uint32_t cid) {
  for (size_t m = 0; m < metrics.size(); ++m)
    if (metrics[m] == name) return cid * 1000.0 + static_cast<double>(m);
  ADD_FAILURE() << name << " was not collected";
  return 0;
}

/// A number as ncu's CSV prints it, with thousands separators ("14,001").
double number(std::string text) {
  std::erase(text, ',');
  return std::stod(text);
}

/// Splits a CSV line whose fields may be quoted (no quotes inside quotes: enough for these files).
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> f(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    else if (ch == ',' && !quoted) f.emplace_back();
    else f.back() += ch;
  }
  return f;
}

/// A CSV file's rows as column -> value maps.
std::vector<std::map<std::string, std::string>> csv_rows(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  std::vector<std::string> header;
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    if (line.empty() || (header.empty() && line.find(',') == std::string::npos)) continue;
    if (header.empty()) {
      header = fields(line);
      continue;
    }
    const auto f = fields(line);
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size() && i < f.size(); ++i) row[header[i]] = f[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

class InjectFake : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "rfinjfake-XXXXXX").string();
    dir_ = ::mkdtemp(tmpl.data());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(InjectFake, RfanalyzeGivesEachKernelTheFlopAndBytesOfItsOwnCounters) {
  const fs::path trace = dir_ / "app.rftrace";
  const Ran app = run({FAKE_APP}, {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + trace.string()}, dir_);
  ASSERT_TRUE(exited_zero(app)) << app.err;
  EXPECT_EQ(app.err, "");
  const auto launches = launches_of(app.out);
  ASSERT_EQ(launches.size(), 5u) << app.out;
  const std::vector<std::string> metrics = metrics_of(trace);
  ASSERT_FALSE(metrics.empty());

  const Ran analyze = run({RFANALYZE_BIN, trace.string(), "-o", (dir_ / "report").string(), "-q"}, {}, dir_);
  ASSERT_TRUE(exited_zero(analyze)) << analyze.err;
  auto rows = csv_rows(slurp(dir_ / "report" / "kernels.csv"));
  ASSERT_EQ(rows.size(), launches.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t cid = launches[i].second;
    // ncu SpeedOfLight_RooflineChart: fadd + fmul + 2 * ffma.
    const double fp32 = fake_value(metrics, "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", cid) +
                        fake_value(metrics, "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", cid) +
                        2 * fake_value(metrics, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", cid);
    EXPECT_DOUBLE_EQ(std::stod(rows[i]["fp32_flop"]), fp32) << "row " << i;
    EXPECT_DOUBLE_EQ(std::stod(rows[i]["dram_read_bytes"]), fake_value(metrics, "dram__bytes_read.sum", cid));
    EXPECT_EQ(rows[i]["duration_ns"], "1000");  // the fake kernel record's end - start
    EXPECT_EQ(rows[i]["grid"], std::to_string(launches[i].first == "_Z4gemmPKfS0_Pf"   ? 128
                                              : launches[i].first == "_Z4reluPf" ? 64
                                                                                 : 1) +
                                   ",1,1");
  }
  // The NVTX range reaches the rows inside it.
  EXPECT_EQ(rows[0]["nvtx"], "forward");
  EXPECT_EQ(rows[4]["nvtx"], "");
}

// libnvperf_host.so (CUPTI's profiler host API) costs about 110 MB and 40-160 ms when loaded: a
// timing session never loads it, a counters session does (collector/src/host_library.h).
TEST_F(InjectFake, OnlyACountersSessionLoadsTheProfilerHostLibrary) {
  const fs::path trace = dir_ / "app.rftrace";
  const std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + trace.string()};
  std::vector<std::string> timing_env = env;
  timing_env.push_back("RFPROF_MODE=timing");
  const Ran timing = run({FAKE_APP}, timing_env, dir_);
  ASSERT_TRUE(exited_zero(timing)) << timing.err;
  EXPECT_EQ(launches_of(timing.out).size(), 5u) << timing.out;
  EXPECT_TRUE(timing.out.ends_with("nvperf_host-loaded 0\n")) << timing.out;
  fs::remove(trace);
  const Ran counters = run({FAKE_APP}, env, dir_);
  ASSERT_TRUE(exited_zero(counters)) << counters.err;
  EXPECT_TRUE(counters.out.ends_with("nvperf_host-loaded 1\n")) << counters.out;
  EXPECT_FALSE(metrics_of(trace).empty());
}

/// The files in `dir` whose names start with `stem` and end with ".rftrace".
std::vector<std::string> traces_in(const fs::path& dir, const std::string& stem) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(stem, 0) == 0 && n.size() > 8 && n.ends_with(".rftrace")) names.push_back(n);
  }
  return names;
}

// ncu's --target-processes as rfprof passes it down (RFPROF_ROOT_PID, the process it started):
// with application-only another process steps aside silently; with all it writes a trace of its
// own, named apart from the started process's.
TEST_F(InjectFake, ProcessesOtherThanTheStartedOneFollowTargetProcesses) {
  const fs::path trace = dir_ / "t.rftrace";
  const std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + trace.string(),
                                        "RFPROF_MODE=timing", "RFPROF_ROOT_PID=1"};
  std::vector<std::string> only = env;
  only.push_back("RFPROF_TARGET_PROCESSES=application-only");
  const Ran aside = run({FAKE_APP}, only, dir_);
  ASSERT_TRUE(exited_zero(aside)) << aside.err;
  EXPECT_EQ(aside.err, "");
  EXPECT_EQ(launches_of(aside.out).size(), 5u);  // the application ran as without rfprof
  EXPECT_TRUE(traces_in(dir_, "t").empty());

  std::vector<std::string> all = env;
  all.push_back("RFPROF_TARGET_PROCESSES=all");
  const Ran traced = run({FAKE_APP}, all, dir_);
  ASSERT_TRUE(exited_zero(traced)) << traced.err;
  const auto written = traces_in(dir_, "t.");
  ASSERT_EQ(written.size(), 1u);
  EXPECT_NE(written[0], "t.rftrace");  // t.PID.rftrace: the started process's name stays free
  EXPECT_FALSE(fs::exists(trace));
}

/// Launch records of each finished trace under `dir` whose name starts with `stem`, by file name;
/// a truncated trace is a test failure.
std::map<std::string, size_t> launches_per_trace(const fs::path& dir, const std::string& stem) {
  std::map<std::string, size_t> out;
  for (const auto& name : traces_in(dir, stem)) {
    Reader reader(dir / name);
    Record r;
    size_t launches = 0;
    while (reader.next(r))
      if (std::holds_alternative<LaunchApi>(r)) ++launches;
    EXPECT_FALSE(reader.truncated()) << name;
    out[name] = launches;
  }
  return out;
}

// Two live processes given one name (a parent and the CUDA child it execs, each starting its own
// session, as with rfprof -o r_%q{JOB} where JOB is the same for both): the second writes
// NAME.PID.rftrace and says so in one line. Before, it was refused (without -f) or truncated the
// first one's .part, and one of the two traces was lost (with -f).
TEST_F(InjectFake, TwoLiveProcessesGivenOneNameBothKeepTheirTraces) {
  for (const char* force : {"0", "1"}) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" RFINJECT_PATH,
                                          "RFPROF_OUTPUT=" + (dir_ / "t.rftrace").string(), "RFPROF_MODE=timing",
                                          std::string("RFPROF_FORCE_OVERWRITE=") + force,
                                          "RFPROF_TRACE_LIST=" + (dir_ / "list.txt").string()};
    const Ran ran = run({FAKE_APP, "fork-exec"}, env, dir_);
    ASSERT_TRUE(exited_zero(ran)) << ran.err;
    EXPECT_NE(ran.out.find("child-status 0\n"), std::string::npos) << ran.out;
    const auto traces = launches_per_trace(dir_, "t.");
    ASSERT_EQ(traces.size(), 2u) << "force " << force << ": " << ran.err;
    for (const auto& [name, launches] : traces) EXPECT_EQ(launches, 5u) << name;
    ASSERT_TRUE(traces.count("t.rftrace"));
    const std::string child = std::next(traces.begin())->first == "t.rftrace" ? traces.begin()->first
                                                                             : std::next(traces.begin())->first;
    EXPECT_EQ(ran.err, "rfprof: trace " + (dir_ / "t.rftrace").string() +
                           " is being written by another process; this one writes " + (dir_ / child).string() + "\n");
    std::istringstream list(slurp(dir_ / "list.txt"));  // rfprof --csv prints the traces it names
    std::set<std::string> listed;
    for (std::string line; std::getline(list, line);) listed.insert(line);
    EXPECT_EQ(listed, (std::set<std::string>{(dir_ / "t.rftrace").string(), (dir_ / child).string()}));
  }
}

// %i with a live process on the index: the next index, silently.
TEST_F(InjectFake, APercentIIndexALiveProcessHoldsIsNotShared) {
  const std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" RFINJECT_PATH,
                                        "RFPROF_OUTPUT=" + (dir_ / "r_%i.rftrace").string(), "RFPROF_MODE=timing",
                                        "RFPROF_FORCE_OVERWRITE=1"};
  const Ran ran = run({FAKE_APP, "fork-exec"}, env, dir_);
  ASSERT_TRUE(exited_zero(ran)) << ran.err;
  EXPECT_EQ(ran.err, "");
  const auto traces = launches_per_trace(dir_, "r_");
  EXPECT_EQ(traces, (std::map<std::string, size_t>{{"r_1.rftrace", 5}, {"r_2.rftrace", 5}}));
}

// Many processes started at once under one %i pattern: each takes an index of its own, with or
// without -f. Before, two could take one index (chosen from what existed, opened later): the
// second was refused, or with -f replaced the first's trace (24 processes kept 15 to 23 traces).
// Nondeterministic by nature; the invariant must hold in every round.
TEST_F(InjectFake, ProcessesStartedAtOnceUnderPercentIEachKeepATrace) {
  constexpr int kProcesses = 16;
  const fs::path traces = dir_ / "traces";
  for (const char* force : {"0", "1"}) {
    for (int round = 0; round < 3; ++round) {
      fs::remove_all(traces);
      fs::create_directories(traces);
      std::vector<std::thread> threads;
      std::vector<Ran> ran(kProcesses);
      for (int k = 0; k < kProcesses; ++k) {
        const fs::path own = dir_ / ("p" + std::to_string(k));
        fs::create_directories(own);
        threads.emplace_back([&, k, own] {
          ran[k] = run({FAKE_APP},
                       {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + (traces / "r_%i.rftrace").string(),
                        "RFPROF_MODE=timing", std::string("RFPROF_FORCE_OVERWRITE=") + force},
                       own);
        });
      }
      for (auto& t : threads) t.join();
      for (const Ran& r : ran) {
        EXPECT_TRUE(exited_zero(r)) << r.err;
        EXPECT_EQ(r.err, "");
      }
      const auto written = launches_per_trace(traces, "r_");
      EXPECT_EQ(written.size(), static_cast<size_t>(kProcesses)) << "force " << force << ", round " << round;
      for (const auto& [name, launches] : written) EXPECT_EQ(launches, 5u) << name;
    }
  }
}

// A value holding a newline cannot forge a second line (the one line names the variable).
TEST_F(InjectFake, ABadValueIsOneLineWhateverItHolds) {
  const Ran ran = run({FAKE_APP}, {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_MODE=count\nrfprof: trace: /x.rftrace\x1b[2J"},
                      dir_);
  ASSERT_TRUE(exited_zero(ran)) << ran.err;
  EXPECT_EQ(ran.err, "rfprof: RFPROF_MODE=\"count?rfprof: trace: /x.rftrace?[2J\": expected counters or timing; rfprof is disabled\n");
}

// A misspelled variable is one warning naming the variable meant; profiling goes on (here with
// the default flush interval) and the trace is written.
TEST_F(InjectFake, AMisspelledVariableIsOneWarningAndProfilingGoesOn) {
  const fs::path trace = dir_ / "app.rftrace";
  const Ran ran = run({FAKE_APP}, {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + trace.string(),
                                   "RFPROF_FLUSHMS=5"},
                      dir_);
  ASSERT_TRUE(exited_zero(ran)) << ran.err;
  EXPECT_EQ(ran.err,
            "rfprof: RFPROF_FLUSHMS is set, but librfinject reads no such variable; did you mean RFPROF_FLUSH_MS? "
            "(docs/inject-env.md)\n");
  EXPECT_FALSE(metrics_of(trace).empty());
}

// A child that forks and execs a CUDA program (a launcher script, a worker started with spawn)
// loads librfinject afresh and writes a trace of its own (%p in the output name); the parent's
// trace keeps its own launches only, and both are finished.
TEST_F(InjectFake, AChildThatExecsAndUsesCudaWritesItsOwnTrace) {
  const std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" RFINJECT_PATH,
                                        "RFPROF_OUTPUT=" + (dir_ / "t.%p.rftrace").string(), "RFPROF_MODE=timing"};
  const Ran ran = run({FAKE_APP, "fork-exec"}, env, dir_);
  ASSERT_TRUE(exited_zero(ran)) << ran.err;
  EXPECT_NE(ran.out.find("child-status 0\n"), std::string::npos) << ran.out;
  EXPECT_EQ(launches_of(ran.out).size(), 10u);  // 5 each
  const auto written = traces_in(dir_, "t.");
  ASSERT_EQ(written.size(), 2u);
  std::vector<uint32_t> pids;
  for (const auto& name : written) {
    Reader reader(dir_ / name);
    Record r;
    size_t launches = 0;
    uint32_t pid = 0;
    while (reader.next(r)) {
      if (std::holds_alternative<LaunchApi>(r)) ++launches;
      if (const auto* p = std::get_if<ProcessInfo>(&r)) pid = p->pid;
    }
    EXPECT_FALSE(reader.truncated()) << name;
    EXPECT_EQ(launches, 5u) << name;
    EXPECT_EQ(name, "t." + std::to_string(pid) + ".rftrace");  // written by the process it names
    pids.push_back(pid);
  }
  ASSERT_EQ(pids.size(), 2u);
  EXPECT_NE(pids[0], pids[1]);
}

// RFPROF_TRACE_LIST (rfprof --csv prints exactly the traces listed there) names a trace only when
// the session started and will write it: not an earlier run's trace it refused to overwrite.
TEST_F(InjectFake, OnlyATraceThatIsWrittenJoinsTheTraceList) {
  const fs::path trace = dir_ / "t.rftrace", list = dir_ / "list.txt";
  { std::ofstream(trace) << "an earlier run's trace"; }
  const std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + trace.string(),
                                        "RFPROF_MODE=timing", "RFPROF_TRACE_LIST=" + list.string()};
  const Ran refused = run({FAKE_APP}, env, dir_);
  ASSERT_TRUE(exited_zero(refused)) << refused.err;
  EXPECT_NE(refused.err.find("rfprof: "), std::string::npos);
  EXPECT_EQ(slurp(trace), "an earlier run's trace");
  EXPECT_EQ(slurp(list), "");

  std::vector<std::string> force = env;
  force.push_back("RFPROF_FORCE_OVERWRITE=1");
  const Ran written = run({FAKE_APP}, force, dir_);
  ASSERT_TRUE(exited_zero(written)) << written.err;
  EXPECT_EQ(slurp(list), fs::absolute(trace).string() + "\n");
}

// RFPROF_CALLSTACKS=1: each launch's native call stack, symbolized once at exit, without the
// frames of librfinject (the launch machinery); rfanalyze's call sites sum the launches.
TEST_F(InjectFake, CallStacksNameTheApplicationsFramesAndLeaveOutRfprofs) {
  const fs::path trace = dir_ / "stacks.rftrace";
  const Ran app = run({FAKE_APP}, {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + trace.string(),
                                   "RFPROF_MODE=timing", "RFPROF_CALLSTACKS=1"},
                      dir_);
  ASSERT_TRUE(exited_zero(app)) << app.err;
  EXPECT_EQ(app.err, "");
  Reader reader(trace);
  Record r;
  std::vector<LaunchApi> launches;
  std::map<uint32_t, CallStack> stacks;
  while (reader.next(r)) {
    if (const auto* l = std::get_if<LaunchApi>(&r)) launches.push_back(*l);
    if (const auto* cs = std::get_if<CallStack>(&r)) stacks[cs->stack_id] = *cs;
  }
  ASSERT_EQ(launches.size(), 5u);
  ASSERT_FALSE(stacks.empty());
  const std::string app_name = fs::path(FAKE_APP).filename().string();
  for (const auto& l : launches) {
    ASSERT_TRUE(stacks.count(l.stack_id)) << "launch " << l.correlation_id << " has stack " << l.stack_id;
    const CallStack& cs = stacks[l.stack_id];
    ASSERT_EQ(cs.functions.size(), cs.modules.size());
    bool in_main = false, in_app = false;
    for (size_t i = 0; i < cs.functions.size(); ++i) {
      const std::string module = fs::path(reader.string(cs.modules[i])).filename().string();
      EXPECT_NE(module.rfind("librfinject", 0), 0u) << "a frame of rfprof itself";
      in_app = in_app || module == app_name;
      in_main = in_main || reader.string(cs.functions[i]) == "main";
    }
    EXPECT_TRUE(in_app) << "no frame in " << app_name;
    EXPECT_TRUE(in_main);
  }

  const Ran analyze = run({RFANALYZE_BIN, trace.string(), "-o", (dir_ / "report").string(), "-q"}, {}, dir_);
  ASSERT_TRUE(exited_zero(analyze)) << analyze.err;
  uint64_t launches_at_sites = 0;
  for (auto& row : csv_rows(slurp(dir_ / "report" / "callsites.csv"))) launches_at_sites += std::stoull(row["launches"]);
  EXPECT_EQ(launches_at_sites, 5u);
  // The flame graph's lines: one per path of function names (gemm, relu, loss), each through main
  // and ending in its kernel, weighted by GPU time (1000 ns a launch on the fake).
  std::istringstream folded(slurp(dir_ / "report" / "callsites_time.folded"));
  std::map<std::string, uint64_t> by_kernel;
  for (std::string line; std::getline(folded, line);) {
    EXPECT_NE(line.find(";main;"), std::string::npos) << line;
    const size_t space = line.rfind(' '), semi = line.rfind(';');
    ASSERT_NE(space, std::string::npos);
    by_kernel[line.substr(semi + 1, space - semi - 1)] += std::stoull(line.substr(space + 1));
  }
  EXPECT_EQ(by_kernel, (std::map<std::string, uint64_t>{{"gemm(float const*, float const*, float*)", 2000},
                                                         {"loss(float const*, float*)", 1000},
                                                         {"relu(float*)", 2000}}));
}

// NVTX_INJECTION64_PATH: the NVTX loader may call the library before cuInit does. Its entry point
// starts the session first and only then hands NVTX to CUPTI (the CUPTI 13.0 GA guard), and says
// 0 when no session runs, so that NVTX stays a no-op.
TEST_F(InjectFake, TheNvtxEntryPointStartsTheSessionBeforeHandingNvtxOver) {
  const fs::path trace = dir_ / "nvtx.rftrace";
  const std::vector<std::string> env = {"CUDA_INJECTION64_PATH=" RFINJECT_PATH, "RFPROF_OUTPUT=" + trace.string(),
                                        "RFPROF_FORCE_OVERWRITE=1"};
  auto with = [&](std::vector<std::string> extra) {
    extra.insert(extra.end(), env.begin(), env.end());
    return run({FAKE_APP, "nvtx-first"}, extra, dir_);
  };
  const Ran ok = with({"RFPROF_MODE=timing"});
  ASSERT_TRUE(exited_zero(ok)) << ok.err;
  EXPECT_EQ(ok.err, "");
  EXPECT_NE(ok.out.find("nvtx-init 1\nnvtx-forwarded 1\n"), std::string::npos) << ok.out;
  EXPECT_EQ(launches_of(ok.out).size(), 5u);
  ASSERT_TRUE(fs::exists(trace));
  {
    Reader reader(trace);
    Record r;
    size_t launches = 0;
    while (reader.next(r)) launches += std::holds_alternative<LaunchApi>(r);
    EXPECT_EQ(launches, 5u);  // InitializeInjection afterwards started nothing a second time
  }

  const Ran refused = with({"RFPROF_MODE=timing", "FAKE_NVTX_REFUSED=1"});
  ASSERT_TRUE(exited_zero(refused)) << refused.err;
  EXPECT_NE(refused.out.find("nvtx-init 0\nnvtx-forwarded 1\n"), std::string::npos) << refused.out;
  EXPECT_EQ(refused.err,
            "rfprof: NVTX ranges will not be recorded (cuptiNvtxInitialize2: CUPTI_ERROR_NOT_INITIALIZED)\n");
  EXPECT_TRUE(fs::exists(trace));  // the kernels are still traced

  fs::remove(trace);
  const Ran disabled = with({"RFPROF_MODE=bogus"});
  ASSERT_TRUE(exited_zero(disabled)) << disabled.err;
  EXPECT_NE(disabled.out.find("nvtx-init 0\nnvtx-forwarded 0\n"), std::string::npos) << disabled.out;
  EXPECT_EQ(disabled.err, "rfprof: RFPROF_MODE=\"bogus\": expected counters or timing; rfprof is disabled\n");
  EXPECT_EQ(launches_of(disabled.out).size(), 5u);  // the application ran as without rfprof
  EXPECT_FALSE(fs::exists(trace));
}

// Without -o, as ncu: librfinject writes the trace into a folder of rfprof's in $TMPDIR, rfprof
// prints it, then removes it: nothing is left in the working folder or in $TMPDIR.
TEST_F(InjectFake, WithoutAnExportRfprofPrintsTheRunAndKeepsNoTrace) {
  const fs::path tmp = dir_ / "tmp";
  fs::create_directory(tmp);
  const Ran r = run({RFPROF_BIN, "--csv", "--page", "raw", "--profile-from-start", "off", FAKE_APP, "windows"},
                    {"TMPDIR=" + tmp.string()}, dir_);
  ASSERT_TRUE(exited_zero(r)) << r.err << r.out;
  size_t rows = 0;
  for (auto& row : csv_rows(r.out.substr(r.out.find('"'))))
    if (!row["ID"].empty() && std::isdigit(static_cast<unsigned char>(row["ID"][0]))) ++rows;
  EXPECT_EQ(rows, 5u) << r.out;
  EXPECT_TRUE(fs::is_empty(tmp));
  for (const auto& e : fs::directory_iterator(dir_))
    EXPECT_EQ(e.path().string().find(".rftrace"), std::string::npos) << e.path();
}

TEST_F(InjectFake, RfprofsRawPageHasEachLaunchsMetricsAsNcuPrintsThem) {
  const fs::path trace = dir_ / "r";
  const Ran r = run({RFPROF_BIN, "--csv", "--page", "raw", "--metrics",
                     "dram__bytes_read.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", "-o", trace.string(),
                     "--profile-from-start", "off", FAKE_APP, "windows"},
                    {}, dir_);
  ASSERT_TRUE(exited_zero(r)) << r.err << r.out;
  const auto launches = launches_of(r.out);
  ASSERT_EQ(launches.size(), 6u) << r.out;  // the application's own output comes first
  const std::vector<std::string> metrics = metrics_of(fs::path(trace.string() + ".rftrace"));
  std::vector<std::map<std::string, std::string>> rows;
  for (auto& row : csv_rows(r.out.substr(r.out.find('"'))))
    if (!row["ID"].empty() && std::isdigit(static_cast<unsigned char>(row["ID"][0]))) rows.push_back(std::move(row));
  ASSERT_EQ(rows.size(), 5u) << r.out;  // the warm-up launch is outside the window
  for (size_t i = 0; i < rows.size(); ++i) {
    const uint32_t cid = launches[i + 1].second;
    EXPECT_EQ(rows[i]["ID"], std::to_string(i));
    EXPECT_DOUBLE_EQ(number(rows[i]["dram__bytes_read.sum"]), fake_value(metrics, "dram__bytes_read.sum", cid))
        << "row " << i;
    EXPECT_DOUBLE_EQ(number(rows[i]["smsp__sass_thread_inst_executed_op_ffma_pred_on.sum"]),
                     fake_value(metrics, "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", cid));
  }
  EXPECT_EQ(rows[0]["Kernel Name"], "gemm(float const*, float const*, float*)");
  EXPECT_EQ(rows[1]["Grid Size"], "(64, 1, 1)");
}

}  // namespace
