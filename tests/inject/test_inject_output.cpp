// RFPROF_OUTPUT placeholders (%p, %h, %q{VAR}, %i, %%), the name after a taken one, and
// RFPROF_TRACE_LIST's appends (docs/inject-env.md).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <set>

#include "config.h"
#include "env_of.h"

namespace rf::inject {
namespace {

// RFPROF_TRACE_LIST: every profiled process of an rfprof --csv run appends its trace's path, so
// that rfprof prints exactly this run's traces.
TEST(TraceList, EachProcessAppendsItsTraceOnALine) {
  char dir_template[] = "/tmp/rfprof-trace-list-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::filesystem::path dir = dir_template;
  EXPECT_EQ(read_config(env_of({{"RFPROF_TRACE_LIST", " /tmp/l "}})).trace_list, "/tmp/l");
  EXPECT_EQ(read_config(env_of({})).trace_list, "");
  const auto list = dir / "list";
  ASSERT_TRUE(append_trace_list(list, dir / "a.rftrace"));  // creates the list
  // Processes writing at once: whole lines, none lost (one O_APPEND write each).
  std::vector<pid_t> children;
  for (int i = 0; i < 8; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      bool ok = true;
      for (int j = 0; j < 50; ++j)
        ok = append_trace_list(list, dir / ("p" + std::to_string(i) + "_" + std::to_string(j) + ".rftrace")) && ok;
      ::_exit(ok ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t c : children) {
    int status = 0;
    ::waitpid(c, &status, 0);
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  std::ifstream in(list);
  std::string line;
  std::set<std::string> lines;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    EXPECT_EQ(line.rfind(dir.string() + "/", 0), 0u) << line;
    EXPECT_TRUE(line.ends_with(".rftrace")) << line;
    lines.insert(line);
  }
  EXPECT_EQ(n, 401u);
  EXPECT_EQ(lines.size(), 401u);
  EXPECT_TRUE(lines.count((dir / "a.rftrace").string()));
  EXPECT_FALSE(append_trace_list(dir / "no" / "such" / "list", dir / "b.rftrace"));  // false, no throw
  // A pipe that no process reads, or a folder: false at once, never a blocked application.
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0600), 0);
  EXPECT_FALSE(append_trace_list(dir / "fifo", dir / "c.rftrace"));
  EXPECT_EQ(errno, ENXIO);
  EXPECT_FALSE(append_trace_list(dir, dir / "c.rftrace"));
  EXPECT_FALSE(append_trace_list("/dev/null", dir / "c.rftrace"));  // a device: not a list
  EXPECT_EQ(errno, EINVAL);
  // A relative trace path is listed absolute; the list is readable by all (0644 under umask 022).
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const mode_t old_mask = ::umask(022);
  EXPECT_TRUE(append_trace_list(dir / "rel", "rel.rftrace"));
  ::umask(old_mask);
  std::filesystem::current_path(cwd);
  std::ifstream rel(dir / "rel");
  ASSERT_TRUE(std::getline(rel, line));
  EXPECT_EQ(line, (dir / "rel.rftrace").string());
  EXPECT_EQ(std::filesystem::status(dir / "rel").permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                std::filesystem::perms::group_read | std::filesystem::perms::others_read);
  std::filesystem::remove_all(dir);
}

// The name after a taken one: %i's next free index (whether a live process writes the taken one
// or it exists), else, for a live writer only, the pid before .rftrace, then pid-N; never the name
// taken. A fixed name that merely exists is refused (empty), as without this.
TEST(OutputPattern, TheNameAfterATakenOne) {
  PatternContext ctx;
  ctx.pid = 4242;
  std::set<std::string> taken = {"r_1.rftrace.part", "r_2.rftrace"};
  ctx.exists = [&](const std::filesystem::path& p) { return taken.count(p.string()) > 0; };
  for (const bool live : {true, false})
    EXPECT_EQ(output_after_in_use("r_%i.rftrace", ctx, "r_1.rftrace", 1, live), "r_3.rftrace");
  EXPECT_EQ(output_after_in_use("t.rftrace", ctx, "t.rftrace", 1, true), "t.4242.rftrace");
  EXPECT_EQ(output_after_in_use("t.rftrace", ctx, "t.4242.rftrace", 2, true), "t.4242.4242-2.rftrace");
  EXPECT_EQ(output_after_in_use("out/t", ctx, "out/t", 1, true), "out/t.4242");
  EXPECT_EQ(output_after_in_use("t.rftrace", ctx, "t.rftrace", 1, false), "");
  EXPECT_EQ(output_after_in_use("t_%%i.rftrace", ctx, "t_%i.rftrace", 1, false), "");  // %%i is no index
  // %i whose free index is the one taken (the other's .part not seen yet): the pid instead.
  taken.clear();
  EXPECT_EQ(output_after_in_use("r_%i.rftrace", ctx, "r_1.rftrace", 1, true), "r_1.4242.rftrace");
  EXPECT_EQ(output_after_in_use("r_%q{UNSET}_%i", ctx, "x", 1, true), "");  // cannot expand: give up
  EXPECT_TRUE(has_index_placeholder("a%ib"));
  EXPECT_TRUE(has_index_placeholder("%%%i"));
  EXPECT_FALSE(has_index_placeholder("a%%ib"));
  EXPECT_FALSE(has_index_placeholder("%p_%q{i}"));
}

PatternContext context(std::set<std::string> existing = {}) {
  PatternContext c;
  c.pid = 4242;
  c.hostname = "node7";
  c.env = env_of({{"RANK", "3"}, {"JOB", "train"}, {"EMPTY", ""}});
  c.exists = [existing = std::move(existing)](const std::filesystem::path& p) {
    return existing.count(p.string()) > 0;
  };
  return c;
}

std::string expand(const std::string& pattern, std::set<std::string> existing = {}) {
  return expand_output_pattern(pattern, context(std::move(existing))).string();
}

std::string pattern_error(const std::string& pattern) {
  try {
    expand(pattern);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputPattern, PlainPathIsUnchanged) { EXPECT_EQ(expand("/data/out.rftrace"), "/data/out.rftrace"); }

TEST(OutputPattern, ProcessIdAndHostName) {
  EXPECT_EQ(expand("rfprof_%p.rftrace"), "rfprof_4242.rftrace");
  EXPECT_EQ(expand("%h/%p_%h"), "node7/4242_node7");
}

TEST(OutputPattern, EnvironmentVariable) {
  EXPECT_EQ(expand("r%q{RANK}_%q{JOB}.rftrace"), "r3_train.rftrace");
  EXPECT_EQ(expand("x%q{EMPTY}y"), "xy");  // set but empty
}

TEST(OutputPattern, LiteralPercent) {
  EXPECT_EQ(expand("100%%_%p"), "100%_4242");
  EXPECT_EQ(expand("%%p"), "%p");
}

TEST(OutputPattern, IndexIsSmallestFreeCountingPartFiles) {
  EXPECT_EQ(expand("run_%i.rftrace"), "run_1.rftrace");
  EXPECT_EQ(expand("run_%i.rftrace", {"run_1.rftrace", "run_2.rftrace.part", "run_4.rftrace"}),
            "run_3.rftrace");
  // Every %i of a pattern gets the same number.
  EXPECT_EQ(expand("d%i/run_%i", {"d1/run_1"}), "d2/run_2");
}

TEST(OutputPattern, IndexUsesTheRealFilesystemByDefault) {
  auto dir = std::filesystem::temp_directory_path() / ("rfprof_pattern_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* f : {"t_1.rftrace", "t_2.rftrace.part"}) std::ofstream(dir / f) << "x";
  PatternContext c = context();
  c.exists = nullptr;
  EXPECT_EQ(expand_output_pattern((dir / "t_%i.rftrace").string(), c), dir / "t_3.rftrace");
  std::filesystem::remove_all(dir);
}

TEST(OutputPattern, OtherProcessesOfARunGetTheirOwnName) {
  // rfprof -o rep: the process rfprof started writes rep.rftrace, every other CUDA process of the
  // run rep.<pid>.rftrace (ncu writes one report for all of them).
  EXPECT_EQ(per_process_pattern("rep.rftrace", 100, 100u), "rep.rftrace");
  EXPECT_EQ(per_process_pattern("rep.rftrace", 101, 100u), "rep.%p.rftrace");
  EXPECT_EQ(expand(per_process_pattern("out/rep.rftrace", 101, 100u)), "out/rep.4242.rftrace");
  EXPECT_EQ(per_process_pattern("rep", 101, 100u), "rep.%p");
  EXPECT_EQ(per_process_pattern("rep.rftrace", 101, std::nullopt), "rep.rftrace");  // librfinject alone
  // Patterns that already name each process apart are left alone; %h and %% do not.
  for (const char* own : {"r_%p.rftrace", "r%i.rftrace", "r_%q{RANK}.rftrace"})
    EXPECT_EQ(per_process_pattern(own, 101, 100u), own);
  EXPECT_EQ(per_process_pattern("r_%h.rftrace", 101, 100u), "r_%h.%p.rftrace");
  EXPECT_EQ(per_process_pattern("100%%p.rftrace", 101, 100u), "100%%p.%p.rftrace");
}

TEST(OutputPattern, BlankPatternsAndMessagesOfPlaceholders) {
  EXPECT_EQ(read_config(env_of({{"RFPROF_OUTPUT", "   "}})).output_pattern, "rfprof_%p.rftrace");
  EXPECT_NE(pattern_error("   ").find("a non-empty path pattern"), std::string::npos);
  EXPECT_NE(pattern_error("out_%x").find("placeholders %p, %h, %q{VAR}, %i or %%"), std::string::npos);
  EXPECT_NE(pattern_error("out%").find("(write %% for a literal %)"), std::string::npos);
  EXPECT_NE(pattern_error("out_%q{NOT_SET_ANYWHERE}").find("%q{NOT_SET_ANYWHERE} naming a set environment variable"),
            std::string::npos);
  // Without an environment to look in, every %q{VAR} is unset.
  PatternContext no_env = context();
  no_env.env = nullptr;
  EXPECT_THROW(expand_output_pattern("r%q{RANK}", no_env), ConfigError);
  // A pattern that is only the extension gets the process id before it.
  EXPECT_EQ(per_process_pattern(".rftrace", 101, 100u), ".%p.rftrace");
}

TEST(OutputPattern, IndexGoesUpToAMillion) {
  PatternContext c = context();
  c.exists = [](const std::filesystem::path& p) { return p.string().rfind("r_1000000", 0) != 0; };
  EXPECT_EQ(expand_output_pattern("r_%i", c), "r_1000000");
  c.exists = [](const std::filesystem::path&) { return true; };
  try {
    expand_output_pattern("r_%i", c);
    FAIL() << "no free index, and no error";
  } catch (const ConfigError& e) {
    expect_names(e.what(), "RFPROF_OUTPUT", "r_%i", "a %i pattern with a free index from 1 to 1000000");
  }
}

TEST(OutputPattern, Errors) {
  struct Case {
    const char* pattern;
    const char* expected;
  } cases[] = {
      {"", "a non-empty path pattern"},
      {"out_%x.rftrace", "%x is unknown"},
      {"out_%P", "%P is unknown"},
      {"out%", "lone %"},
      {"out_%q.rftrace", "%q followed by {VAR}"},
      {"out_%qRANK", "%q followed by {VAR}"},
      {"out_%q{}", "non-empty variable name"},
      {"out_%q{RANK", "closing }"},
      {"out_%q{NOT_SET_ANYWHERE}", "NOT_SET_ANYWHERE is not set"},
  };
  for (const auto& c : cases) {
    std::string m = pattern_error(c.pattern);
    EXPECT_NE(m.find("RFPROF_OUTPUT=\"" + std::string(c.pattern) + "\""), std::string::npos) << m;
    EXPECT_NE(m.find(c.expected), std::string::npos) << c.pattern << " -> " << m;
  }
}

}  // namespace
}  // namespace rf::inject
