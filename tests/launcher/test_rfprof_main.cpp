// The rfprof binary's main (launcher/src/main.cpp) without a GPU: where help, version, notes,
// listings and results go, which filters -i applies and a run does not apply again, the temporary
// trace list, and the traces named after a run. No GPU here: the application plays librfinject's
// part, copying a trace into place and listing it in $RFPROF_TRACE_LIST.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>

#include "../analyzer/analyzer_samples.h"
#include "launcher_test_util.h"

namespace rf::launcher {
namespace {

namespace fs = std::filesystem;
using analyzer::testing::slurp;
using analyzer::testing::TempDir;
using analyzer::testing::TraceBuilder;
using test_util::has;
using test_util::lines_of;

/// What one shell command gave: its exit status and what it wrote to stdout and stderr.
struct Result {
  int status = -1;
  std::string out;
  std::string err;
};

/// Runs `command` (a shell command line; RFPROF stands for the rfprof binary) in `dir`.
Result run_in(const fs::path& dir, const std::string& command) {
  std::string cmd = command;
  for (size_t at; (at = cmd.find("RFPROF ")) != std::string::npos;) cmd.replace(at, 6, RFPROF_BIN);
  const int rc = std::system(("cd " + dir.string() + " && (" + cmd + ") > stdout.txt 2> stderr.txt").c_str());
  Result r;
  r.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  r.out = slurp(dir / "stdout.txt");
  r.err = slurp(dir / "stderr.txt");
  return r;
}

/// The data rows of an ncu raw CSV page (after its header and units rows).
size_t csv_rows(const std::string& csv) {
  const size_t lines = lines_of(csv).size();
  return lines < 2 ? 0 : lines - 2;
}

/// A timing trace of pid `pid` with one kernel "mine()", at `path`.
void one_kernel_trace(const fs::path& path, uint32_t pid = 11) {
  TraceBuilder t(path);
  t.process(pid, trace::CollectionMode::kTiming);
  t.launch(1, 0, 100, 1000);
  t.kernel(1, 2000, 3000, "mine()");
  t.finish();
}

/// The application of a run: copies `source` to `name` and lists it, as librfinject would.
std::string lists(const std::string& source, const std::string& name) {
  return "sh -c 'cp " + source + " " + name + " && echo $PWD/" + name + " >> \"$RFPROF_TRACE_LIST\"'";
}

TEST(RfprofBinary, HelpVersionAndNotesGoWhereNcuPutsThem) {
  TempDir dir;
  const Result help = run_in(dir.path, "RFPROF --help");
  EXPECT_EQ(help.status, 0);
  EXPECT_TRUE(has(help.out, "--metrics")) << help.out;
  const Result version = run_in(dir.path, "RFPROF --version");
  EXPECT_EQ(version.status, 0);
  EXPECT_EQ(version.out.rfind("rfprof ", 0), 0u) << version.out;
  EXPECT_EQ(version.err, "");
  // Notes go to stderr, never into the printed CSV or text.
  const Result noted = run_in(dir.path, "RFPROF --cache-control all true");
  EXPECT_EQ(noted.status, 0) << noted.err;
  EXPECT_EQ(noted.out, "");
  EXPECT_TRUE(has(noted.err, "rfprof: note: --cache-control all")) << noted.err;
  // rfprof's own RFPROF_* variables are checked before the application runs, as its flags are.
  const Result env = run_in(dir.path, "RFPROF_METRIC_SET=bogus RFPROF touch ran");
  EXPECT_EQ(env.status, 2) << env.err;
  EXPECT_TRUE(has(env.err, "RFPROF_METRIC_SET=\"bogus\"")) << env.err;
  EXPECT_FALSE(fs::exists(dir.path / "ran"));
}

// ncu writes listings and metric queries to --log-file too, as the results of a run.
TEST(RfprofBinary, ListingsAndQueriesGoToTheLogFile) {
  TempDir dir;
  for (const std::string flags : {"--list-sets --chip GH100", "--query-metrics --chips gh100"}) {
    const Result r = run_in(dir.path, "RFPROF " + flags + " --log-file listed.txt");
    EXPECT_EQ(r.status, 0) << flags << ": " << r.err;
    EXPECT_EQ(r.out, "") << flags;
    EXPECT_TRUE(has(slurp(dir.path / "listed.txt"), "dram__bytes")) << flags;
    const Result bad = run_in(dir.path, "RFPROF " + flags + " --log-file /no/such/dir/x.txt");
    EXPECT_EQ(bad.status, 2) << flags;
    EXPECT_EQ(bad.err, "rfprof: cannot write --log-file /no/such/dir/x.txt\n") << flags;
  }
}

// -i prints an existing trace, so it applies every selection flag itself.
TEST(RfprofBinary, ImportAppliesEverySelectionFlag) {
  TempDir dir;
  {
    TraceBuilder t(dir.path / "t.rftrace");
    t.process(11, trace::CollectionMode::kTiming);
    for (uint32_t corr = 1; corr <= 4; ++corr) {
      const bool b = corr % 2 == 0;  // a(int) on device 0, b(int) on device 1, in turn
      t.launch(corr, 0, 100, corr * 1000);
      t.kernel(corr, corr * 1000 + 10, corr * 1000 + 20, b ? "b(int)" : "a(int)", b ? 1 : 0, b ? "_Z1bi" : "_Z1ai");
    }
    t.finish();
  }
  auto rows = [&](const std::string& flags) {
    const Result r = run_in(dir.path, "RFPROF -i t.rftrace --csv --page raw " + flags);
    EXPECT_EQ(r.status, 0) << flags << ": " << r.err;
    return csv_rows(r.out);
  };
  EXPECT_EQ(rows(""), 4u);
  EXPECT_EQ(rows("-s 1"), 3u);
  EXPECT_EQ(rows("--devices 1"), 2u);
  EXPECT_EQ(rows("-k b"), 2u);  // the function name
  EXPECT_EQ(rows("--kernel-name-base mangled -k b"), 0u);  // _Z1bi is not b
  EXPECT_EQ(rows("--kernel-name-base demangled -k b"), 0u);  // nor is b(int)
  EXPECT_EQ(rows("--kernel-name-base demangled -k 'b(int)'"), 2u);
  EXPECT_EQ(rows("-k a"), 2u);
  EXPECT_EQ(rows("-k a --launch-skip-before-match 1"), 1u);  // the first launch counts, then a matches once
  // A results file that cannot take the output: exit 2.
  if (fs::exists("/dev/full")) {
    const Result full = run_in(dir.path, "RFPROF -i t.rftrace --csv --log-file /dev/full");
    EXPECT_EQ(full.status, 2) << full.err;
  }
  // An Nsight Compute report given to -i: said how to read it instead.
  std::ofstream(dir.path / "x.ncu-rep") << "NVIDIA Nsight Compute report, not a trace";
  const Result rep = run_in(dir.path, "RFPROF -i x.ncu-rep");
  EXPECT_EQ(rep.status, 2);
  EXPECT_TRUE(has(rep.err, "x.ncu-rep looks like an Nsight Compute report")) << rep.err;
}

// After a run the collector has applied the selection flags: printing applies none of them again,
// but prints the launch attributes --metrics asked for.
TEST(RfprofBinary, AfterARunTheCollectorsSelectionIsPrintedAsItIs) {
  TempDir dir;
  one_kernel_trace(dir.path / "mine.src");
  const std::string app = lists("mine.src", "t.rftrace");
  for (const std::string flags : {"-s 1", "-k other", "--devices 1", "--launch-skip-before-match 5 -k mine"}) {
    const Result r = run_in(dir.path, "RFPROF --csv --page raw " + flags + " " + app);
    EXPECT_EQ(r.status, 0) << flags << ": " << r.err;
    EXPECT_EQ(csv_rows(r.out), 1u) << flags << ": " << r.out;
  }
  const Result attr = run_in(dir.path, "RFPROF --metrics launch__grid_size " + app);
  EXPECT_TRUE(has(attr.out, "launch__grid_size")) << attr.out;
  // A trace without kernels: nothing printed, and said.
  {
    TraceBuilder t(dir.path / "empty.src");
    t.process(12, trace::CollectionMode::kTiming);
    t.finish();
  }
  const Result none = run_in(dir.path, "RFPROF --csv " + lists("empty.src", "e.rftrace"));
  EXPECT_EQ(none.status, 0);
  EXPECT_TRUE(has(none.err, "rfprof: warning: no kernels were profiled\n")) << none.err;
}

// The trace list lives in $TMPDIR (or /tmp) and is removed after the run; the log file is emptied
// before the application starts; --log-file stderr is no file.
TEST(RfprofBinary, TheTraceListAndTheLogFileAroundARun) {
  TempDir dir;
  one_kernel_trace(dir.path / "mine.src");
  const std::string app = lists("mine.src", "t.rftrace");
  fs::create_directory(dir.path / "tmp");
  const Result own_tmp = run_in(dir.path, "TMPDIR=$PWD/tmp RFPROF --csv --page raw " + app);
  EXPECT_EQ(own_tmp.status, 0) << own_tmp.err;
  EXPECT_EQ(csv_rows(own_tmp.out), 1u);
  EXPECT_TRUE(fs::is_empty(dir.path / "tmp"));  // the list was there, and is gone
  const Result no_tmp = run_in(dir.path, "TMPDIR=/no/such/dir RFPROF --csv --page raw " + app);
  EXPECT_EQ(no_tmp.status, 0) << no_tmp.err;
  EXPECT_EQ(csv_rows(no_tmp.out), 1u);
  std::ofstream(dir.path / "log.txt") << "an earlier run's results\n";
  EXPECT_EQ(run_in(dir.path, "RFPROF --csv --log-file log.txt true").status, 0);
  EXPECT_EQ(slurp(dir.path / "log.txt"), "");  // emptied before the run, though nothing was printed
  EXPECT_EQ(run_in(dir.path, "RFPROF --csv --log-file stderr " + app).status, 0);
  EXPECT_FALSE(fs::exists(dir.path / "stderr"));
}

// --target-processes application-only (ncu's flag, docs/cluster.md's example) runs the
// application: the check before the run refused it, since rfprof sets RFPROF_ROOT_PID only in the
// child ("expected all, or application-only with RFPROF_ROOT_PID set", exit 2, nothing run).
TEST(RfprofBinary, ApplicationOnlyRunsTheApplication) {
  TempDir dir;
  one_kernel_trace(dir.path / "mine.src");
  const Result r =
      run_in(dir.path, "RFPROF --target-processes application-only --csv --page raw " + lists("mine.src", "t.rftrace"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(csv_rows(r.out), 1u) << r.out;
  EXPECT_EQ(r.err.find("RFPROF_TARGET_PROCESSES"), std::string::npos) << r.err;
}

// Found through a symbolic link elsewhere (a PATH entry), rfprof finds librfinject beside itself.
TEST(RfprofBinary, FoundThroughASymlinkItFindsItsLibrary) {
  TempDir dir;
  fs::create_directory(dir.path / "bin");
  fs::create_symlink(RFPROF_BIN, dir.path / "bin" / "rfprof");
  const Result r = run_in(dir.path, "bin/rfprof --quiet true");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_FALSE(has(r.err, "librfinject.so not found")) << r.err;
}

// Without -o, as ncu ("a temporary file is used, which is removed afterwards"): the traces go to a
// folder of their own, are printed, then removed; nothing is left in the working folder.
TEST(RfprofBinary, WithoutAnExportTheTracesArePrintedThenRemoved) {
  TempDir dir;
  one_kernel_trace(dir.path / "mine.src");
  // The application writes its trace where RFPROF_OUTPUT says (%p: its pid), as librfinject does.
  const std::string app =
      "sh -c 'out=$(printf %s \"$RFPROF_OUTPUT\" | sed \"s/%p/$$/\"); cp mine.src \"$out\" && "
      "echo \"$out\" >> \"$RFPROF_TRACE_LIST\" && dirname \"$out\" > where.txt'";
  const Result r = run_in(dir.path, "RFPROF --csv --page raw " + app);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(csv_rows(r.out), 1u) << r.out;
  const std::string where = slurp(dir.path / "where.txt");
  ASSERT_FALSE(where.empty());
  EXPECT_NE(fs::path(where.substr(0, where.size() - 1)), dir.path);  // not the working folder
  EXPECT_FALSE(fs::exists(where.substr(0, where.size() - 1)));       // removed after printing
  EXPECT_FALSE(has(r.err, "rfprof: trace:")) << r.err;               // no trace to name
  for (const auto& e : fs::directory_iterator(dir.path)) EXPECT_NE(e.path().extension(), ".rftrace") << e.path();
  // A relative $TMPDIR: the folder is named absolutely, as librfinject lists its traces, so the
  // trace is still known as the run's own (not named as kept) and removed.
  fs::create_directory(dir.path / "tmp");
  const std::string absolute_app =
      "sh -c 'out=$(printf %s \"$RFPROF_OUTPUT\" | sed \"s/%p/$$/\"); cp mine.src \"$out\" && "
      "echo \"$(cd \"$(dirname \"$out\")\" && pwd)/$(basename \"$out\")\" >> \"$RFPROF_TRACE_LIST\" && "
      "printf %s \"$out\" > where.txt'";
  const Result relative = run_in(dir.path, "TMPDIR=tmp RFPROF --csv --page raw " + absolute_app);
  EXPECT_EQ(relative.status, 0) << relative.err;
  EXPECT_EQ(csv_rows(relative.out), 1u) << relative.out;
  EXPECT_EQ(slurp(dir.path / "where.txt").rfind('/', 0), 0u) << slurp(dir.path / "where.txt");  // RFPROF_OUTPUT
  EXPECT_FALSE(has(relative.err, "rfprof: trace:")) << relative.err;
  EXPECT_TRUE(fs::is_empty(dir.path / "tmp"));
  // With -o the trace is kept where it names, and named.
  const Result kept = run_in(dir.path, "RFPROF -o t --csv --page raw " + app);
  EXPECT_EQ(kept.status, 0) << kept.err;
  EXPECT_TRUE(has(kept.err, "rfprof: trace: ")) << kept.err;
  const std::string kept_where = slurp(dir.path / "where.txt");
  EXPECT_TRUE(fs::exists(kept_where.substr(0, kept_where.size() - 1)));
}

// A trace in the launcher's own folder that cannot be printed (here not a trace at all) is not
// removed with the folder: the folder is kept and named, with the trace in it.
TEST(RfprofBinary, TracesThatCannotBePrintedAreKeptAndTheirFolderNamed) {
  TempDir dir;
  const std::string app =
      "sh -c 'out=$(printf %s \"$RFPROF_OUTPUT\" | sed \"s/%p/$$/\"); printf \"not a trace\" > \"$out\" && "
      "echo \"$out\" >> \"$RFPROF_TRACE_LIST\" && printf %s \"$out\" > where.txt'";
  const Result r = run_in(dir.path, "RFPROF --csv --page raw " + app);
  const std::string trace = slurp(dir.path / "where.txt");
  ASSERT_FALSE(trace.empty()) << r.err;
  const std::string folder = fs::path(trace).parent_path().string();
  EXPECT_TRUE(has(r.err, "rfprof: the traces are kept in " + folder + "\n")) << r.err;
  EXPECT_EQ(slurp(trace), "not a trace");  // kept as the application wrote it
  std::error_code ec;
  fs::remove_all(folder, ec);
}

// The launcher waits beside the application for the whole run without CUPTI's profiler host
// library (libnvperf_host.so, about 110 MB of memory), which only listings and queries load.
TEST(RfprofBinary, WhileTheApplicationRunsTheLauncherHoldsNoHostLibrary) {
  TempDir dir;
  const Result r = run_in(dir.path, "RFPROF --quiet sh -c 'grep -c libcupti /proc/$PPID/maps > cupti.txt; "
                                    "grep -c libnvperf_host /proc/$PPID/maps > nvperf.txt; true'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(slurp(dir.path / "cupti.txt"), "0\n");  // $PPID is the launcher, which links libcupti
  EXPECT_EQ(slurp(dir.path / "nvperf.txt"), "0\n");
}

// As ncu's -o, a relative name is relative to rfprof's folder, where check_plan looked for it: an
// application that changes folder (a job script's `cd $WORKDIR`) got it relative to its own, and
// a second run there was refused inside the application (trace exists), unprofiled, exit 0.
TEST(RfprofBinary, ARelativeExportIsRfprofsFolderNotTheApplications) {
  TempDir dir;
  const Result r = run_in(dir.path, "RFPROF --quiet -o rep sh -c 'mkdir -p work && cd work && "
                                    "printf %s \"$RFPROF_OUTPUT\" > ../output.txt'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(dir.path / "output.txt"), (dir.path / "rep.rftrace").string());
}

// -o %q{VAR}/NAME with VAR an absolute folder (a job's scratch): not made relative to rfprof's
// folder, which put that folder in front of VAR's (cwd/%q{OUTDIR}/rep: a folder that does not
// exist, an unprofiled run, exit 0). -i on a closed pipe is a write error, as after a run.
TEST(RfprofBinary, AnExportStartingWithAVariableIsLeftAsItIs) {
  TempDir dir;
  const Result r = run_in(dir.path, "OUTDIR=/somewhere RFPROF --quiet -o '%q{OUTDIR}/rep' sh -c "
                                    "'printf %s \"$RFPROF_OUTPUT\" > output.txt'");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(slurp(dir.path / "output.txt"), "%q{OUTDIR}/rep.rftrace");
  {
    TraceBuilder t(dir.path / "t.rftrace");  // more CSV than a pipe holds (64 KiB)
    t.process(11, trace::CollectionMode::kTiming);
    for (uint32_t i = 1; i <= 2000; ++i) {
      t.launch(i, 0, 100, 1000 * i);
      t.kernel(i, 1000 * i + 10, 1000 * i + 500, "mine()");
    }
    t.finish();
  }
  const Result pipe = run_in(dir.path, "bash -c 'RFPROF -i t.rftrace --csv --page raw | true; "
                                       "echo ${PIPESTATUS[0]} > status.txt'");
  EXPECT_EQ(slurp(dir.path / "status.txt"), "2\n") << pipe.err;
}

// Results that cannot be written (a full disk, a closed pipe) are said, and the run's status is
// not 0 unless the application failed on its own. A closed pipe (`rfprof --csv ... | head`) killed
// rfprof with SIGPIPE, its temporary traces left behind unnamed; the application still gets
// SIGPIPE's default, not rfprof's ignored disposition.
TEST(RfprofBinary, ResultsThatCannotBeWrittenAreSaidAndFailTheRun) {
  TempDir dir;
  one_kernel_trace(dir.path / "mine.src");
  std::ofstream(dir.path / "app.sh") << "sleep \"${SLEEP:-0}\"\n"
                                        "grep SigIgn /proc/$$/status > ignored.txt\n"
                                        "out=$(printf %s \"$RFPROF_OUTPUT\" | sed \"s/%p/$$/\")\n"
                                        "cp mine.src \"$out\" && echo \"$out\" >> \"$RFPROF_TRACE_LIST\"\n"
                                        "exit \"${STATUS:-0}\"\n";
  const Result full = run_in(dir.path, "RFPROF --csv --page raw --log-file /dev/full sh app.sh");
  EXPECT_EQ(full.status, 2) << full.err;
  EXPECT_TRUE(has(full.err, "rfprof: cannot write the results to /dev/full: No space left on device\n")) << full.err;
  EXPECT_TRUE(has(full.err, "rfprof: the traces are kept in ")) << full.err;
  const Result failed = run_in(dir.path, "STATUS=3 RFPROF --csv --page raw --log-file /dev/full sh app.sh");
  EXPECT_EQ(failed.status, 3) << failed.err;  // the application's own failure first
  const Result pipe =
      run_in(dir.path, "bash -c 'SLEEP=0.3 RFPROF --csv --page raw sh app.sh | true; echo ${PIPESTATUS[0]} > status.txt'");
  EXPECT_EQ(slurp(dir.path / "status.txt"), "2\n") << pipe.err;
  EXPECT_TRUE(has(pipe.err, "rfprof: cannot write the results to standard output: Broken pipe\n")) << pipe.err;
  const unsigned long ignored = std::stoul(slurp(dir.path / "ignored.txt").substr(7), nullptr, 16);
  EXPECT_EQ(ignored & (1ul << (SIGPIPE - 1)), 0u) << "SIGPIPE ignored in the application";
  for (const auto& line : lines_of(full.err + failed.err + pipe.err))
    if (line.starts_with("rfprof: the traces are kept in ")) fs::remove_all(line.substr(31));
}

// `rfprof -o rep bash job.sh`: the shell runs no CUDA, its CUDA children write rep.PID.rftrace, and
// `-i rep.ncu-rep` (ncu's round trip) found nothing. It prints those per-process traces, naming
// them; other names stay apart (rep2.5.rftrace, rep.x.rftrace), and so does a trace whose number is
// not its process's pid (another run's rep.3.rftrace, from -o rep.%i).
TEST(RfprofBinary, ImportOfANameOnlyOtherProcessesWroteReadsTheirTraces) {
  TempDir dir;
  one_kernel_trace(dir.path / "rep.222.rftrace", 222);
  one_kernel_trace(dir.path / "rep.111.rftrace", 111);
  one_kernel_trace(dir.path / "rep.3.rftrace", 4242);
  one_kernel_trace(dir.path / "rep2.5.rftrace", 5);
  one_kernel_trace(dir.path / "rep.x.rftrace");
  const Result r = run_in(dir.path, "RFPROF -i rep.ncu-rep --csv --page raw");
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(csv_rows(r.out), 2u) << r.out;
  EXPECT_TRUE(has(r.err, "rfprof: -i rep.ncu-rep: no such file; printing the 2 per-process trace(s) of that name: "
                         "rep.111.rftrace rep.222.rftrace\n"))
      << r.err;
  const Result none = run_in(dir.path, "RFPROF -i other.ncu-rep --csv --page raw");
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(has(none.err, "rfprof: -i other.ncu-rep: no such file (nor other.rftrace)\n")) << none.err;
}

// Every listed trace is named after the run, finished ones first, then a killed process's .part.
TEST(RfprofBinary, FinishedTracesAreNamedFirstThenKilledOnes) {
  TempDir dir;
  one_kernel_trace(dir.path / "mine.src");
  const std::string bytes = slurp(dir.path / "mine.src");
  std::ofstream(dir.path / "r_7.rftrace.part", std::ios::binary) << bytes.substr(0, bytes.size() - 40);
  const Result r = run_in(dir.path, "RFPROF -o r sh -c 'echo $PWD/r_7.rftrace >> \"$RFPROF_TRACE_LIST\" && "
                                    "cp mine.src r_5.rftrace && echo $PWD/r_5.rftrace >> \"$RFPROF_TRACE_LIST\"'");
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string named = "rfprof: trace: " + (dir.path / "r_5.rftrace").string() + "\nrfprof: trace: " +
                            (dir.path / "r_7.rftrace.part").string() + "\n";
  EXPECT_TRUE(has(r.err, named)) << r.err;
}

// As ncu ("If no --page option is given and --export is set, no results are printed to the console
// output"): with -o the results are printed only when --page is given, --csv or not; without -o
// they are printed always. --print-summary per-kernel prints with -o too (asked for by name).
TEST(RfprofBinary, WithAnExportResultsArePrintedOnlyWithPage) {
  TempDir dir;
  one_kernel_trace(dir.path / "mine.src");
  const std::string app = lists("mine.src", "rep.rftrace");
  const Result csv = run_in(dir.path, "RFPROF -f -o rep --csv " + app);
  EXPECT_EQ(csv.status, 0) << csv.err;
  EXPECT_EQ(csv.out, "");  // -o without --page: nothing printed
  EXPECT_TRUE(has(csv.err, "rfprof: trace: ")) << csv.err;
  const Result raw = run_in(dir.path, "RFPROF -f -o rep --page raw " + app);
  EXPECT_EQ(raw.status, 0) << raw.err;
  EXPECT_TRUE(has(raw.out, "mine()")) << raw.out;  // --page given: printed (text, without --csv)
  const Result raw_csv = run_in(dir.path, "RFPROF -f -o rep --csv --page raw " + app);
  EXPECT_EQ(raw_csv.status, 0) << raw_csv.err;
  EXPECT_EQ(csv_rows(raw_csv.out), 1u) << raw_csv.out;
  const Result details = run_in(dir.path, "RFPROF -f -o rep --csv --page details " + app);
  EXPECT_TRUE(has(details.out, "\"Metric Name\"")) << details.out;
  const Result no_export = run_in(dir.path, "RFPROF --csv " + lists("mine.src", "t.rftrace"));
  EXPECT_TRUE(has(no_export.out, "\"Metric Name\"")) << no_export.out;  // without -o: printed, details page
}

// A flag given decides over rfprof's own environment, which the application inherits, at ncu's
// default too; the inherited RFPROF_ROOT_PID (rfprof under rfprof) is replaced by the child's own.
TEST(RfprofBinary, FlagsGivenDecideOverRfprofsOwnEnvironment) {
  TempDir dir;
  const Result r = run_in(dir.path, "RFPROF_LAUNCH_SKIP=5 RFPROF_FILTER_MODE=per-gpu RFPROF_ROOT_PID=1 RFPROF --quiet "
                                    "-o t -s 0 --filter-mode global env");  // env: no shell to merge duplicates
  EXPECT_EQ(r.status, 0) << r.err;
  const std::vector<std::string> env = lines_of(r.out);
  auto values = [&](const std::string& name) {
    std::vector<std::string> found;
    for (const auto& line : env)
      if (line.rfind(name + "=", 0) == 0) found.push_back(line.substr(name.size() + 1));
    return found;
  };
  EXPECT_EQ(values("RFPROF_LAUNCH_SKIP"), (std::vector<std::string>{"0"}));
  EXPECT_EQ(values("RFPROF_FILTER_MODE"), (std::vector<std::string>{"global"}));
  const std::vector<std::string> root = values("RFPROF_ROOT_PID");
  ASSERT_EQ(root.size(), 1u) << ::testing::PrintToString(root);  // the child's own, once
  EXPECT_NE(root[0], "1");
}

}  // namespace
}  // namespace rf::launcher
