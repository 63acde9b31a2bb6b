// ncu command lines from public cluster scripts and from ncu's documentation, as rfprof reads them
// (ncu_args.h, metric_names.h): what ncu accepts and rfprof can honour is honoured, ncu's harmless
// defaults are accepted, the rest is refused before the application runs, naming the flag.
#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "rfprof/launcher/metric_names.h"
#include "rfprof/launcher/ncu_args.h"
#include "launcher_test_util.h"

namespace rf::launcher {
namespace {

namespace fs = std::filesystem;

using test_util::error_of;
using test_util::has;

/// Writes `text` to `path` (through a named stream: clang's rvalue `ofstream(p) << "..."` may pick
/// the `const void*` inserter and write an address).
void write_file(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// NcuDropInHostApi: CUPTI's profiler host API, so not in the sanitizer build (scripts/run-tests).
TEST(NcuDropInHostApi, MetricsRepeatedBaseNamesAndForms) {
  // Repeated --metrics add up, as in ncu.
  Plan p = parse_args({"--metrics", "dram__bytes_read.sum", "--metrics", "dram__bytes_write.sum", "app"});
  EXPECT_EQ(p.env.at("RFPROF_METRICS"), "dram__bytes_read.sum,dram__bytes_write.sum");
  EXPECT_TRUE(p.notes.empty());
  // A base name gets ncu's extra suffixes, with a note.
  p = parse_args({"--metrics", "gpu__time_duration,dram__bytes_read.sum", "app"});
  EXPECT_EQ(p.env.at("RFPROF_METRICS"),
            "gpu__time_duration.sum,gpu__time_duration.avg,gpu__time_duration.min,gpu__time_duration.max,"
            "dram__bytes_read.sum");
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_TRUE(has(p.notes[0], "a base name")) << p.notes[0];
  EXPECT_TRUE(parse_args({"--quiet", "--metrics", "gpu__time_duration", "app"}).notes.empty());
  EXPECT_TRUE(has(error_of({"--disable-extra-suffixes", "--metrics", "gpu__time_duration", "app"}),
                  "gpu__time_duration.sum"));
  // ncu's forms and unknown names are refused before the run, with the closest names.
  for (const char* form : {"breakdown:sm__throughput.avg.pct_of_peak_sustained_elapsed", "group:occupancy",
                           "regex:sm__inst_issued.*"})
    EXPECT_TRUE(has(error_of({"--metrics", form, "app"}), "breakdown:, group: and regex: forms")) << form;
  const std::string unknown = error_of({"--metrics", "dram__bytes_reed.sum", "app"});
  EXPECT_TRUE(has(unknown, "rfprof: --metrics dram__bytes_reed.sum: not a metric")) << unknown;
  EXPECT_TRUE(has(unknown, "dram__bytes_read.sum")) << unknown;
  EXPECT_TRUE(has(error_of({"--metrics", "a,,b", "app"}), "--metrics: RFPROF_METRICS"));
  // With -i the names choose what is printed: kept as given (a base name stays a base name), nothing
  // is collected, and a typo is refused with the closest names as for a run.
  p = parse_args({"-i", "t.rftrace", "--metrics", "gpu__time_duration,dram__bytes_read.sum"});
  EXPECT_EQ(p.print_metrics, (std::vector<std::string>{"gpu__time_duration", "dram__bytes_read.sum"}));
  EXPECT_EQ(p.env.count("RFPROF_METRICS"), 0u);
  EXPECT_TRUE(parse_args({"-i", "t.rftrace"}).print_metrics.empty());
  EXPECT_TRUE(has(error_of({"-i", "t.rftrace", "--metrics", "dram__bytes_reed.sum"}), "dram__bytes_read.sum"));
  EXPECT_TRUE(has(error_of({"-i", "t.rftrace", "--metrics", "regex:dram.*"}), "regex: forms"));
  EXPECT_TRUE(has(error_of({"-i", "t.rftrace", "--set", "roofline"}), "-i with --set/--section"));
  EXPECT_TRUE(has(error_of({"-i", "t.rftrace", "--section", "SpeedOfLight_RooflineChart"}), "-i with --set/--section"));
}

TEST(NcuDropInHostApi, ResolveMetricNamesKeepsOrderAndDropsDuplicates) {
  std::vector<std::string> notes;
  EXPECT_EQ(resolve_metric_names({"dram__bytes_read.sum", "dram__bytes", "dram__bytes.sum"}, true, notes),
            (std::vector<std::string>{"dram__bytes_read.sum", "dram__bytes.sum", "dram__bytes.avg",
                                      "dram__bytes.min", "dram__bytes.max"}));
  EXPECT_EQ(notes.size(), 1u);
  // A full name given first is not added again by its base name.
  EXPECT_EQ(resolve_metric_names({"dram__bytes.max", "dram__bytes"}, true, notes),
            (std::vector<std::string>{"dram__bytes.max", "dram__bytes.sum", "dram__bytes.avg", "dram__bytes.min"}));
}

// A ninth mutation round (docs/testing.md): each check below failed with one change to
// metric_names.cpp.
TEST(NcuDropInHostApi, MetricNamesOfEveryChipTheirFormsAndNotes) {
  std::vector<std::string> notes;
  // gr__workids_granted is a GB100 counter GH100 lacks: the chip asked is the device's, not GH100.
  EXPECT_EQ(resolve_metric_names({"gr__workids_granted.sum"}, true, notes),
            (std::vector<std::string>{"gr__workids_granted.sum"}));
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(resolve_metric_names({"gr__workids_granted"}, true, notes),
            (std::vector<std::string>{"gr__workids_granted.sum", "gr__workids_granted.avg", "gr__workids_granted.min",
                                      "gr__workids_granted.max"}));
  // The note names every name a base name stands for, those also given in full too.
  notes.clear();
  (void)resolve_metric_names({"dram__bytes.max", "dram__bytes"}, true, notes);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "rfprof: note: --metrics dram__bytes: a base name; collecting dram__bytes.sum, dram__bytes.avg, "
                      "dram__bytes.min, dram__bytes.max (as ncu does)");
  // ncu's forms: every item is checked, each named; a name holding "regex:" after its start is no form.
  const std::string later = error_of({"--metrics", "dram__bytes_read.sum,regex:dram.*", "app"});
  EXPECT_TRUE(has(later, "rfprof: --metrics regex:dram.*: ncu's breakdown:, group: and regex: forms")) << later;
  const std::string inside = error_of({"--metrics", "dram__bytesregex:x", "app"});
  EXPECT_TRUE(has(inside, "rfprof: --metrics dram__bytesregex:x: not a metric CUPTI knows")) << inside;
  EXPECT_TRUE(has(error_of({"--disable-extra-suffixes", "--metrics", "gpu__time_duration", "app"}),
                  "rfprof: --metrics gpu__time_duration: a base metric name"));
  // An unknown name: the three closest names on GH100.
  const std::string unknown = error_of({"--metrics", "dram__bytes_reed.sum", "app"});
  const size_t open = unknown.find("(closest on GH100: ");
  ASSERT_NE(open, std::string::npos) << unknown;
  const std::string hint = unknown.substr(open, unknown.find(')', open) - open);
  EXPECT_EQ(std::count(hint.begin(), hint.end(), ','), 2) << hint;
}

TEST(NcuDropIn, SectionsAndCallStackTypesRepeat) {
  // Two roofline sections: the larger of the sets they need.
  Plan p = parse_args({"--section", "SpeedOfLight_RooflineChart", "--section",
                       "SpeedOfLight_HierarchicalDoubleRooflineChart", "app"});
  EXPECT_EQ(p.env.at("RFPROF_METRIC_SET"), "hierarchical");
  p = parse_args({"--section", "SpeedOfLight_RooflineChart", "app"});
  EXPECT_EQ(p.env.at("RFPROF_METRIC_SET"), "roofline");
  EXPECT_TRUE(has(error_of({"--section", "SpeedOfLight", "--section", "Occupancy", "app"}), "--section SpeedOfLight"));
  // --call-stack-type implies --call-stack (ncu); python is refused by name.
  EXPECT_EQ(parse_args({"--call-stack-type", "native", "app"}).env.at("RFPROF_CALLSTACKS"), "1");
  EXPECT_TRUE(has(error_of({"--call-stack-type", "native", "--call-stack-type", "python", "app"}),
                  "--call-stack-type python: only native"));
}

TEST(NcuDropIn, NcuDefaultsAreAcceptedAndOtherNcuFlagsNamed) {
  Plan p = parse_args({"--config-file", "off", "--kill", "no", "--filter-mode", "global", "--import-sass", "yes",
                       "--apply-rules", "no", "--nvtx-push-pop-scope", "thread", "--launch-skip-before-match", "0",
                       "--print-kernel-base", "demangled", "--verbose", "--forward-signals", "--null-stdin", "app", "x"});
  EXPECT_EQ(p.command, (std::vector<std::string>{"app", "x"}));  // no value was taken for a switch
  EXPECT_TRUE(p.null_stdin);
  EXPECT_TRUE(parse_args({"-v"}).version);
  EXPECT_EQ(error_of({"--config-file", "on", "app"}), "");  // ncu's default, without a config.ncu-cfg
  // A switch of ncu rfprof does not support is refused without taking the next word as its value.
  EXPECT_EQ(error_of({"--list-rules", "app"}), "rfprof: --list-rules is not supported: ncu's rules are not applied");
  EXPECT_TRUE(has(error_of({"--print-fp", "app"}), "rfprof: --print-fp is not supported"));
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--kill", "yes", "app"},
                                             {"--range-filter", ":[1-3]:", "app"},
                                             {"--pm-sampling-buffer-size", "0", "app"},
                                             {"--native-include", "FuncA", "app"},
                                             {"--communicator", "tcp", "app"},
                                             {"--config-file-path", "x.cfg", "app"}}) {
    const std::string e = error_of(args);
    EXPECT_EQ(e.rfind("rfprof: " + args[0] + " " + args[1] + " is not supported: ", 0), 0u) << e;
  }
  // --target-process: the shortest option it begins, as ncu reads it.
  EXPECT_EQ(parse_args({"--target-process", "application-only", "app"}).env.at("RFPROF_TARGET_PROCESSES"),
            "application-only");
  EXPECT_TRUE(has(error_of({"--print-s", "x", "app"}), "ambiguous"));  // print-source or print-summary
}

TEST(NcuDropIn, StepReplayWithoutAnyWindowIsRefused) {
  EXPECT_TRUE(has(error_of({"--replay-mode", "step", "--disable-profiler-start-stop", "app"}), "--replay-range"));
  EXPECT_EQ(parse_args({"--replay-mode", "step", "--disable-profiler-start-stop", "--replay-range", "step", "app"})
                .env.at("RFPROF_REPLAY_RANGE"),
            "step");
}

TEST(NcuDropIn, NcuRepNamesAndImport) {
  EXPECT_EQ(parse_args({"-o", "rep.ncu-rep", "app"}).output_pattern, "rep.rftrace");
  // A name that is only the extension is a name: never emptied, never given a second extension.
  EXPECT_EQ(parse_args({"-o", ".ncu-rep", "app"}).output_pattern, ".ncu-rep.rftrace");
  EXPECT_EQ(parse_args({"-o", ".rftrace", "app"}).output_pattern, ".rftrace");
  EXPECT_TRUE(has(error_of({"-i", "t.rftrace", "-o", "copy"}), "-i with -o"));
  // -i rep.ncu-rep finds the rep.rftrace that -o rep.ncu-rep wrote.
  const fs::path dir = fs::temp_directory_path() / ("rfprof-dropin-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "rep.rftrace", "x");
  EXPECT_EQ(parse_args({"-i", (dir / "rep.ncu-rep").string()}).import_files,
            (std::vector<std::string>{(dir / "rep.rftrace").string()}));
  write_file(dir / "rep.ncu-rep", "x");  // a real one is read as asked (and refused when read)
  EXPECT_EQ(parse_args({"-i", (dir / "rep.ncu-rep").string()}).import_files,
            (std::vector<std::string>{(dir / "rep.ncu-rep").string()}));
  fs::remove_all(dir);
}

TEST(NcuDropIn, OutputIsCheckedBeforeTheRun) {
  const fs::path dir = fs::temp_directory_path() / ("rfprof-dropin-out-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "rep.rftrace", "x");
  auto no_env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };
  auto check = [&](const std::vector<std::string>& args) -> std::string {
    try {
      check_plan(parse_args(args), no_env);
    } catch (const ArgsError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_TRUE(has(check({"-o", (dir / "rep").string(), "app"}),
                  (dir / "rep.rftrace").string() + " exists; -f/--force-overwrite overwrites it"));
  EXPECT_EQ(check({"-f", "-o", (dir / "rep").string(), "app"}), "");
  // -f replaces an earlier trace, not a folder (or a device, a pipe) that has the trace's name.
  fs::create_directory(dir / "box.rftrace");
  EXPECT_EQ(check({"-f", "-o", (dir / "box").string(), "app"}),
            "rfprof: -o/--export " + (dir / "box").string() + ".rftrace: " + (dir / "box.rftrace").string() +
                " exists and is not a file (a folder, a device or a pipe)");
  // %h is this machine's name, as librfinject expands it; a folder of the trace's name is refused too.
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  write_file(dir / (std::string("rep_") + host + ".rftrace"), "x");
  const fs::path named = dir / (std::string("rep_") + host + ".rftrace");
  EXPECT_TRUE(has(check({"-o", (dir / "rep_%h").string(), "app"}),
                  "-o/--export " + (dir / "rep_%h.rftrace").string() + ": " + named.string() + " exists"))
      << check({"-o", (dir / "rep_%h").string(), "app"});
  fs::create_directories(dir / "folder.rftrace");
  EXPECT_TRUE(has(check({"-o", (dir / "folder").string(), "app"}), "exists"));
  EXPECT_EQ(check({"-o", (dir / "rep_%p").string(), "app"}), "");  // a name per process: not known yet
  EXPECT_TRUE(has(check({"-o", (dir / "missing" / "rep").string(), "app"}), "does not exist"));
  EXPECT_TRUE(has(check({"-o", (dir / "rep.rftrace" / "x").string(), "app"}), "is not a folder"));
  EXPECT_EQ(check({"-o", (dir / "new").string(), "app"}), "");
  fs::remove_all(dir);
}

/// check_plan(parse_args(`args`)) with `vars` as rfprof's environment: its ArgsError message, or "".
std::string check_with(const std::map<std::string, std::string>& vars, const std::vector<std::string>& args) {
  try {
    check_plan(parse_args(args), [&](const std::string& name) -> std::optional<std::string> {
      if (auto it = vars.find(name); it != vars.end()) return it->second;
      return std::nullopt;
    });
  } catch (const ArgsError& e) {
    return e.what();
  }
  return "";
}

// check_plan reads the RFPROF_* variables as the application will: the plan's over the process's
// own, each problem named by the flag that set it or as the environment's.
TEST(NcuDropIn, ThePlansVariablesGoOverTheEnvironments) {
  const fs::path dir = fs::temp_directory_path() / ("rfprof-dropin-env-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "rep_0.rftrace", "x");
  write_file(dir / "rep.rftrace", "x");
  std::map<std::string, std::string> vars;
  auto check = [&](const std::vector<std::string>& args) { return check_with(vars, args); };
  vars = {{"RFPROF_METRIC_SET", "bogus"}};
  EXPECT_EQ(check({"--set", "roofline", "app"}), "");  // the flag's value is the one read
  EXPECT_TRUE(has(check({"app"}), "rfprof: the environment's RFPROF_METRIC_SET=\"bogus\"")) << check({"app"});
  EXPECT_EQ(check({"-i", "t.rftrace"}), "");  // nothing runs: nothing to check
  vars = {{"RFPROF_LAUNCH_SKIP", "x"}};
  EXPECT_TRUE(has(check({"app"}), "rfprof: the environment's RFPROF_LAUNCH_SKIP=\"x\"")) << check({"app"});
  vars = {{"RFPROF_NVTX_EXCLUDE", "A//B"}};
  EXPECT_TRUE(has(check({"app"}), "rfprof: the environment's RFPROF_NVTX_EXCLUDE=\"A//B\": ")) << check({"app"});
  // Traces named per process are not looked for: %q{RANK} differs in each process of the command.
  vars = {{"RANK", "0"}};
  EXPECT_EQ(check({"-o", (dir / "rep_%q{RANK}").string(), "app"}), "");
  // A folder with a placeholder is made per process: not looked for either.
  EXPECT_EQ(check({"-o", (dir / "run_%q{RANK}" / "rep").string(), "app"}), "");
  // RFPROF_FORCE_OVERWRITE=0 or empty in the environment overwrites nothing.
  vars = {{"RFPROF_FORCE_OVERWRITE", "0"}};
  EXPECT_TRUE(has(check({"-o", (dir / "rep").string(), "app"}), "exists")) << check({"-o", (dir / "rep").string(), "app"});
  vars = {{"RFPROF_FORCE_OVERWRITE", ""}};
  EXPECT_TRUE(has(check({"-o", (dir / "rep").string(), "app"}), "exists")) << check({"-o", (dir / "rep").string(), "app"});
  vars = {{"RFPROF_FORCE_OVERWRITE", "1"}};
  EXPECT_EQ(check({"-o", (dir / "rep").string(), "app"}), "");
  fs::remove_all(dir);
}

// A flag given decides its variables at its default too, and a conflict between a flag's variable
// and one of rfprof's environment says that the latter came from the environment.
TEST(NcuDropIn, FlagsGivenDecideOverTheEnvironmentsVariables) {
  std::map<std::string, std::string> vars;
  auto check = [&](const std::vector<std::string>& args) { return check_with(vars, args); };
  // The inherited step replay would refuse -k; --replay-mode kernel given decides.
  vars = {{"RFPROF_REPLAY", "step"}, {"RFPROF_PROFILE_FROM_START", "off"}};
  EXPECT_EQ(check({"--replay-mode", "kernel", "-k", "gemm", "app"}), "");
  // The inherited metrics would be refused with the timing set; --set timing alone removes them.
  vars = {{"RFPROF_METRICS", "dram__bytes_read.sum"}};
  EXPECT_EQ(check({"--set", "timing", "app"}), "");
  vars = {{"RFPROF_MODE", "timing"}};
  EXPECT_EQ(check({"--set", "roofline", "app"}), "");
  // A conflict with a variable the flags do not decide: named as the environment's.
  vars = {{"RFPROF_KERNEL_NAME", "relu"}};
  EXPECT_EQ(check({"--replay-mode", "step", "app"}),
            "rfprof: --replay-mode: RFPROF_REPLAY=\"step\": expected no kernel, NVTX, launch or device filter with it "
            "(every kernel of a window runs the pass); RFPROF_KERNEL_NAME is set (from the environment: "
            "RFPROF_KERNEL_NAME=\"relu\")");
  vars = {{"RFPROF_PROFILE_FROM_START", "off"}};
  EXPECT_TRUE(has(check({"--disable-profiler-start-stop", "app"}),
                  "rfprof: --disable-profiler-start-stop: RFPROF_DISABLE_PROFILER_START_STOP=\"1\": expected "
                  "RFPROF_PROFILE_FROM_START=on with it"))
      << check({"--disable-profiler-start-stop", "app"});
  EXPECT_TRUE(has(check({"--disable-profiler-start-stop", "app"}),
                  "(from the environment: RFPROF_PROFILE_FROM_START=\"off\")"))
      << check({"--disable-profiler-start-stop", "app"});
  // The flag's own variables are not said to come from the environment.
  vars = {};
  EXPECT_TRUE(has(check({"--profile-from-start", "off", "--disable-profiler-start-stop", "app"}), "with it (profiling"));
  EXPECT_FALSE(has(check({"--profile-from-start", "off", "--disable-profiler-start-stop", "app"}), "from the environment"));
}

// ncu ignores --set and --section with --import and --page raw (its manual: "This option is ignored
// when used with --import and --page raw"): so does rfprof, with one note. Where ncu would use them
// to choose the printed sections (the details page, the text), they are refused as before.
TEST(NcuDropIn, ImportWithThePageRawIgnoresSetsAndSections) {
  const Plan p = parse_args({"-i", "src.rftrace", "--section", "SpeedOfLight_RooflineChart", "--csv", "--page", "raw"});
  EXPECT_EQ(p.import_files, (std::vector<std::string>{"src.rftrace"}));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_EQ(p.notes[0], "rfprof: note: --set/--section: ignored with -i and --page raw, as ncu ignores them (the raw "
                        "page prints every metric of the trace; --metrics a,b chooses them)");
  EXPECT_FALSE(p.env.count("RFPROF_METRIC_SET"));
  EXPECT_EQ(error_of({"-i", "src.rftrace", "--set", "basic", "--csv", "--page", "raw"}), "");  // ignored, as in ncu
  EXPECT_TRUE(parse_args({"--quiet", "-i", "src.rftrace", "--set", "roofline", "--page", "raw"}).notes.empty());
  EXPECT_TRUE(has(error_of({"-i", "src.rftrace", "--set", "roofline", "--csv", "--page", "details"}),
                  "-i with --set/--section"));
  EXPECT_TRUE(has(error_of({"-i", "src.rftrace", "--set", "roofline"}), "-i with --set/--section"));
}

TEST(NcuDropIn, ResponseFilesAreSplicedInBeforeTheApplication) {
  const fs::path dir = fs::temp_directory_path() / ("rfprof-dropin-rsp-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_file(dir / "a.rsp", "--set roofline-tensor\n  -k 'my kernel' @" + (dir / "b.rsp").string() + "\n");
  write_file(dir / "b.rsp", "--launch-count \"3\"");
  Plan p = parse_args({"@" + (dir / "a.rsp").string(), "app", "@not-ours"});
  ASSERT_TRUE(p.env.count("RFPROF_METRIC_SET")) << ::testing::PrintToString(p.command);
  EXPECT_EQ(p.env.at("RFPROF_METRIC_SET"), "roofline-tensor");
  EXPECT_EQ(p.env.at("RFPROF_KERNEL_NAME"), "my kernel");
  EXPECT_EQ(p.env.at("RFPROF_LAUNCH_COUNT"), "3");
  EXPECT_EQ(p.command, (std::vector<std::string>{"app", "@not-ours"}));  // the application's own words
  write_file(dir / "self.rsp", "@" + (dir / "self.rsp").string());
  EXPECT_TRUE(has(error_of({"@" + (dir / "self.rsp").string(), "app"}), "more than 64 response files"));
  EXPECT_TRUE(has(error_of({"@" + (dir / "missing.rsp").string(), "app"}), "cannot read this response file"));
  write_file(dir / "open.rsp", "-k 'x");
  EXPECT_TRUE(has(error_of({"@" + (dir / "open.rsp").string(), "app"}), "quote is not closed"));
  // A backslash escapes the next character: a blank inside a word, a quote kept.
  write_file(dir / "escape.rsp", "-k my\\ kernel\\'s --launch-skip 2");
  p = parse_args({"@" + (dir / "escape.rsp").string(), "app"});
  EXPECT_EQ(p.env.at("RFPROF_KERNEL_NAME"), "my kernel's");
  EXPECT_EQ(p.env.at("RFPROF_LAUNCH_SKIP"), "2");
  // A backslash that ends the file escapes nothing: it is kept.
  write_file(dir / "trailing.rsp", "-k kern\\");
  EXPECT_EQ(parse_args({"@" + (dir / "trailing.rsp").string(), "app"}).env.at("RFPROF_KERNEL_NAME"), "kern\\");
  // 64 response files, each naming the next, are read; a 65th is refused.
  auto chain = [&](int n) {
    for (int k = 0; k < n; ++k)
      write_file(dir / ("c" + std::to_string(k) + ".rsp"),
                 k + 1 < n ? "@" + (dir / ("c" + std::to_string(k + 1) + ".rsp")).string() : "-c 5");
    return "@" + (dir / "c0.rsp").string();
  };
  EXPECT_EQ(parse_args({chain(64), "app"}).env.at("RFPROF_LAUNCH_COUNT"), "5");
  EXPECT_TRUE(has(error_of({chain(65), "app"}), "more than 64 response files"));
  fs::remove_all(dir);
}

// ncu's --print-summary: per-kernel is printed (as text), the other groupings are refused with
// where rfprof has them, and the CSV summary is refused with the CSV to use instead.
TEST(NcuDropIn, PrintSummaryPerKernel) {
  EXPECT_TRUE(parse_args({"--print-summary", "per-kernel", "app"}).print_summary);
  EXPECT_TRUE(parse_args({"-i", "t.rftrace", "--print-summary", "per-kernel"}).print_summary);
  EXPECT_FALSE(parse_args({"--print-summary", "none", "app"}).print_summary);
  EXPECT_FALSE(parse_args({"app"}).print_summary);
  EXPECT_TRUE(has(error_of({"--print-summary", "per-gpu", "app"}), "only per-kernel"));
  EXPECT_TRUE(has(error_of({"--print-summary", "per-nvtx", "app"}), "ranges.csv"));
  EXPECT_TRUE(has(error_of({"--print-summary", "per-kernel", "--csv", "app"}), "--csv --page raw"));
  EXPECT_FALSE(error_of({"--print-summary", "per-launch", "app"}).empty());
}

// ncu's --print-kernel-base (how names are printed) and --kernel-name-base (what -k compares; with
// -i applied while printing, so the plan keeps it besides the collector's variable).
TEST(NcuDropIn, KernelNameBases) {
  EXPECT_EQ(parse_args({"app"}).print_kernel_base, "demangled");
  EXPECT_EQ(parse_args({"--print-kernel-base", "function", "app"}).print_kernel_base, "function");
  EXPECT_EQ(parse_args({"-i", "t.rftrace", "--print-kernel-base", "mangled"}).print_kernel_base, "mangled");
  EXPECT_TRUE(has(error_of({"--print-kernel-base", "short", "app"}), "--print-kernel-base"));
  EXPECT_EQ(parse_args({"app"}).kernel_name_base, "function");
  const Plan p = parse_args({"-i", "t.rftrace", "-k", "_Z3fooi", "--kernel-name-base", "mangled"});
  EXPECT_EQ(p.kernel_name_base, "mangled");
  EXPECT_EQ(parse_args({"--kernel-name-base", "demangled", "app"}).env.at("RFPROF_KERNEL_NAME_BASE"), "demangled");
}

}  // namespace
}  // namespace rf::launcher
