// rfprof: Nsight Compute's command line on rfprof's collector (docs/ncu-flags.md).
//   rfprof [ncu options] application [arguments]    run it under librfinject, then print ncu's
//                                                    text (--csv: its CSV; -o without --page and
//                                                    without --print-summary: nothing)
//   rfprof -i TRACE [--csv --page raw|details]        print an existing trace as ncu's text or CSV
//   rfprof --list-sets [--chip GH100]                 rfprof's metric sets and their passes
//   rfprof --list-sections | --list-metrics [--set S]  ncu's listings, from rfprof's sets
//   rfprof --query-metrics --chips gh100              ncu's metric query (--list-chips: the chips)
#include <strings.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "rfprof/analyzer/ncu_csv.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/collector/metric_sets.h"
#include "rfprof/launcher/ncu_args.h"
#include "rfprof/launcher/run.h"
#include "rfprof/trace/reader.h"

#ifndef RFPROF_VERSION
#define RFPROF_VERSION "unknown"
#endif

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace rf;

/// Where printed results go: --log-file (opened into `file`, emptied), stdout or stderr (ncu's
/// names "stdout" and "stderr"), stdout without --log-file. Null after one message when the file
/// cannot be written.
std::ostream* output_channel(const launcher::Plan& plan, std::ofstream& file) {
  if (plan.log_file == "stderr") return &std::cerr;
  if (!plan.log_file || plan.log_file == "stdout") return &std::cout;
  file.open(*plan.log_file, std::ios::trunc);
  if (!file) {
    std::cerr << "rfprof: cannot write --log-file " << *plan.log_file << "\n";
    return nullptr;
  }
  return &file;
}

/// Prints `traces` to --log-file or stdout: the CSV page with --csv, else ncu's text output.
/// Returns false (after one message) on an unreadable trace or output.
/// `filtered`: apply -k/-s/-c, --kernel-id, --filter-mode, --launch-skip-before-match and --devices while printing (-i: an existing trace); after a run the collector has
/// applied them already.
bool print_results(const launcher::Plan& plan, const std::vector<fs::path>& traces, bool filtered) {
  analyzer::NcuFilter filter;
  filter.print_kernel_base = plan.print_kernel_base;
  filter.attributes = plan.print_attributes;
  if (filtered) {
    filter.kernel_name = plan.kernel_name;
    filter.launch_skip = plan.launch_skip;
    filter.launch_count = plan.launch_count;
    filter.kernel_name_base = plan.kernel_name_base;  // the collector's -k rule, on the trace
    filter.kernel_id = plan.kernel_id;
    filter.filter_mode = collector::parse_filter_mode(plan.filter_mode).value_or(collector::FilterMode::kGlobal);
    filter.launch_skip_before_match = plan.launch_skip_before_match;
    filter.devices = plan.devices;
    filter.metrics = plan.print_metrics;
  }
  std::ofstream file;
  std::ostream* channel = output_channel(plan, file);
  if (!channel) return false;
  std::ostream& out = *channel;
  errno = 0;  // what a failed write leaves there is said with it
  try {
    uint64_t printed = 0;
    if (plan.csv)
      printed = analyzer::write_ncu_csv(out, traces, plan.page, filter, &std::cerr);
    else if (plan.print_summary)
      printed = analyzer::write_ncu_summary_text(out, traces, filter, &std::cerr);
    else
      printed = analyzer::write_ncu_text(out, traces, filter, &std::cerr);
    if (printed == 0) std::cerr << "rfprof: warning: no kernels were profiled\n";  // ncu's ==WARNING==

  } catch (const std::exception& e) {
    std::cerr << "rfprof: " << e.what() << "\n";
    for (const auto& t : traces)
      if (std::error_code ec; t.extension() == ".ncu-rep" && fs::exists(t, ec))
        std::cerr << "rfprof: " << t.string() << " looks like an Nsight Compute report: print it with "
                  << "`ncu -i " << t.string() << " --csv --page raw > report.csv`, then `rfanalyze --import-ncu "
                  << "report.csv` places its kernels on the roofline\n";
    return false;
  }
  if (!out.flush()) {
    std::cerr << "rfprof: cannot write the results to "
              << (plan.log_file && *plan.log_file != "stdout" && *plan.log_file != "stderr" ? *plan.log_file
                                                                                           : std::string("standard output"))
              << (errno ? std::string(": ") + std::strerror(errno) : std::string()) << "\n";
    return false;
  }
  return true;
}

/// The traces a run's other processes wrote under the name `asked` (-o NAME: NAME.PID.rftrace,
/// inject's per-process names), in name order: what `-i NAME.ncu-rep` means when the process
/// rfprof started (a shell script, torchrun) ran no CUDA itself and NAME.rftrace does not exist.
std::vector<fs::path> per_process_traces(const fs::path& asked) {
  fs::path base = asked;
  if (base.extension() == ".ncu-rep" || base.extension() == ".rftrace") base.replace_extension();
  const std::string prefix = base.filename().string() + ".";
  const fs::path dir = base.has_parent_path() ? base.parent_path() : fs::path(".");
  std::vector<fs::path> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    constexpr std::string_view kExt = ".rftrace";
    if (name.size() <= prefix.size() + kExt.size() || !name.starts_with(prefix) || !name.ends_with(kExt)) continue;
    const std::string_view pid(name.data() + prefix.size(), name.size() - prefix.size() - kExt.size());
    if (pid.empty() || pid.size() > 10 || !std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    // The process's own pid, as librfinject names it: not another run's rep.1.rftrace (-o rep.%i).
    const fs::path trace = base.has_parent_path() ? dir / name : fs::path(name);
    const std::optional<trace::ProcessInfo> info = analyzer::first_process_info(trace);
    if (info && std::to_string(info->pid) == pid) found.push_back(trace);
  }
  std::sort(found.begin(), found.end());
  return found;
}

/// mkstemp/mkdtemp's template `name`-XXXXXX in $TMPDIR (or /tmp).
std::string temp_template(const std::string& name) {
  std::error_code ec;
  fs::path dir = fs::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return (dir / (name + "-XXXXXX")).string();
}

/// `made` as an absolute path: a relative $TMPDIR would make inside() miss the trace list's
/// absolute paths, and the application may change folder.
fs::path absolute_or_as_is(const std::string& made) {
  std::error_code ec;
  fs::path p = fs::absolute(made, ec);
  return ec ? fs::path(made) : p;
}

/// A temporary file (mkstemp in $TMPDIR or /tmp), removed when this goes out of scope.
class TraceList {
 public:
  bool create() {
    std::string templ = temp_template("rfprof-traces");
    const int fd = ::mkstemp(templ.data());
    if (fd < 0) return false;
    ::close(fd);
    path_ = absolute_or_as_is(templ);
    return true;
  }
  const fs::path& path() const { return path_; }
  ~TraceList() {
    std::error_code ec;
    if (!path_.empty()) fs::remove(path_, ec);
  }

 private:
  fs::path path_;
};

/// A folder of its own in $TMPDIR (or /tmp), removed with what it holds when this goes out of
/// scope, unless keep() was called.
class ScratchFolder {
 public:
  bool create() {
    std::string templ = temp_template("rfprof-run");
    if (!::mkdtemp(templ.data())) return false;
    path_ = absolute_or_as_is(templ);
    return true;
  }
  const fs::path& path() const { return path_; }
  void keep() { path_.clear(); }
  ~ScratchFolder() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }

 private:
  fs::path path_;
};

/// Whether a run prints its results, as ncu: always without -o; with -o ("If no --page option is
/// given and --export is set, no results are printed") only when --page is given, or a summary is
/// asked for by name (--print-summary per-kernel).
bool prints_results(const launcher::Plan& plan) { return !plan.export_given || plan.page_given || plan.print_summary; }

/// True when `trace` lies in `folder` (empty: none).
bool inside(const fs::path& trace, const fs::path& folder) { return !folder.empty() && trace.parent_path() == folder; }

}  // namespace

int main(int argc, char** argv) {
  launcher::ignore_sigpipe();  // results into a closed pipe: a write error said, not a silent death
  launcher::Plan plan;
  try {
    plan = launcher::parse_args(std::vector<std::string>(argv + 1, argv + argc));
    launcher::check_plan(plan, [](const std::string& name) -> std::optional<std::string> {
      const char* v = std::getenv(name.c_str());
      return v ? std::optional<std::string>(v) : std::nullopt;
    });
  } catch (const launcher::ArgsError& e) {
    std::cerr << e.what() << "\n";
    return 2;
  }
  if (plan.help) {
    std::cout << plan.help_text;
    return 0;
  }
  if (plan.version) {
    std::cout << "rfprof " << RFPROF_VERSION << "\n";
    return 0;
  }
  for (const auto& n : plan.notes) std::cerr << n << "\n";
  if (plan.listing) {  // to --log-file, as the results of a run
    std::ofstream file;
    std::ostream* out = output_channel(plan, file);
    return out ? launcher::run_listing(*plan.listing, *out, std::cerr) : 2;
  }
  if (plan.list_chips) {  // to --log-file, as the listings
    std::ofstream file;
    std::ostream* out = output_channel(plan, file);
    if (!out) return 2;
    try {
      *out << launcher::chip_list(collector::MetricHost::supported_chips()) << "\n";
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
    return 0;
  }
  if (plan.metric_query) {  // to --log-file, as the results of a run
    std::ofstream file;
    std::ostream* out = output_channel(plan, file);
    return out ? launcher::run_metric_query(*plan.metric_query, *out, std::cerr) : 2;
  }
  if (!plan.import_files.empty()) {
    std::vector<fs::path> traces;
    for (const fs::path t : plan.import_files) {
      std::error_code ec;
      if (fs::exists(t, ec)) {
        traces.push_back(t);
        continue;
      }
      if (const auto others = per_process_traces(t); !others.empty()) {
        std::cerr << "rfprof: -i " << t.string() << ": no such file; printing the " << others.size()
                  << " per-process trace(s) of that name:";
        for (const auto& o : others) std::cerr << " " << o.string();
        std::cerr << "\n";
        traces.insert(traces.end(), others.begin(), others.end());
        continue;
      }
      std::cerr << "rfprof: -i " << t.string() << ": no such file";
      if (t.extension() == ".ncu-rep")  // -o NAME.ncu-rep writes NAME.rftrace: -i looked for both
        std::cerr << " (nor " << fs::path(t).replace_extension(".rftrace").string() << ")";
      std::cerr << "\n";
      return 2;
    }
    return print_results(plan, traces, /*filtered=*/true) ? 0 : 2;
  }

  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const auto inject = launcher::find_inject_library(ec ? fs::path(argv[0]) : self);
  if (!inject) {
    std::cerr << "rfprof: librfinject.so not found next to " << (ec ? argv[0] : self.string())
              << " or in ../lib (build it with the project: cmake --build build)\n";
    return 2;
  }
  // ncu opens --log-file before the application runs: an unwritable one is said now, not after.
  if (plan.log_file && plan.log_file != "stdout" && plan.log_file != "stderr" &&
      !std::ofstream(*plan.log_file, std::ios::trunc)) {
    std::cerr << "rfprof: cannot write --log-file " << *plan.log_file << "\n";
    return 2;
  }
  // Each profiled process appends the path of its trace here: --csv prints exactly this run's,
  // and rfprof names them at the end (ncu's "==PROF== Report:" line).
  TraceList list;
  if (list.create()) {
    plan.env["RFPROF_TRACE_LIST"] = list.path().string();
  } else if (prints_results(plan)) {
    std::cerr << "rfprof: cannot create a temporary file in " << fs::temp_directory_path(ec).string()
              << " (to print this run's results)\n";
    return 2;
  }
  // Without -o, as ncu ("a temporary file is used, which is removed afterwards"): the traces go to
  // a folder of their own, removed once their results are printed; -o keeps them.
  ScratchFolder scratch;
  if (!plan.export_given) {
    if (!scratch.create()) {
      std::cerr << "rfprof: cannot create a temporary folder in " << fs::temp_directory_path(ec).string()
                << " (for this run's traces; -o names where to keep them)\n";
      return 2;
    }
    plan.env["RFPROF_OUTPUT"] = (scratch.path() / "rfprof_%p.rftrace").string();
  } else {
    // As ncu's -o, relative to rfprof's folder (where check_plan looked), not to the folder the
    // application may change to (`rfprof -o rep sh -c "cd work && ./app"`).
    // A pattern that starts with %q{VAR} is left as it is: VAR may hold an absolute folder
    // (`-o %q{OUTDIR}/rep`), which rfprof's folder in front of it would break.
    const std::string& pattern = plan.env["RFPROF_OUTPUT"];
    if (!pattern.starts_with("%q{")) plan.env["RFPROF_OUTPUT"] = absolute_or_as_is(pattern).string();
  }
  bool started = false;
  const int status =
      launcher::run_application(plan, launcher::application_environment(plan, *inject, environ), std::cerr, &started);
  if (!started) return status;  // "rfprof: cannot run ..." said it; no trace to look for
  const launcher::ListedTraces traces =
      list.path().empty() ? launcher::ListedTraces{} : launcher::traces_listed(list.path());
  std::vector<fs::path> all = traces.finished;
  // A killed process's trace: print_results says it is truncated and prints what it holds.
  all.insert(all.end(), traces.unfinished.begin(), traces.unfinished.end());
  if (!plan.quiet)  // the traces kept: those -o named (the scratch folder's are removed)
    for (const auto& t : all)
      if (!inside(t, scratch.path())) std::cerr << "rfprof: trace: " << t.string() << "\n";
  // As ncu: the results are printed (the CSV with --csv, else text) unless -o wrote them and no
  // --page was given. A summary asked for with --print-summary is printed with -o too.
  // ncu warns "No kernels were profiled" with -o too: a run that profiled nothing is said always.
  if (all.empty()) {
    if (!list.path().empty())  // without the list this run's traces are unknown, not absent
      std::cerr << "rfprof: no trace was written (no CUDA work profiled?)\n";
  } else if (prints_results(plan) && !print_results(plan, all, /*filtered=*/false)) {
    if (!scratch.path().empty()) {
      std::cerr << "rfprof: the traces are kept in " << scratch.path().string() << "\n";
      scratch.keep();  // not printed: what was recorded is not thrown away
    }
    // The results asked for were not written: a job script must not read success. The
    // application's own failure, if any, is the status it gets.
    return status != 0 ? status : 2;
  }
  return status;
}
