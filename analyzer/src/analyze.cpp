// One rfanalyze run: inputs checked, traces streamed, outputs written atomically.
#include "rfprof/analyzer/analyze.h"
#include "rfprof/analyzer/terminal_summary.h"

#include <algorithm>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <streambuf>
#include <system_error>

#include "rfprof/analyzer/ceilings.h"
#include "rfprof/analyzer/batch_thread.h"
#include "rfprof/analyzer/chrome_trace.h"
#include "rfprof/analyzer/csv.h"
#include "rfprof/analyzer/flops.h"
#include "rfprof/analyzer/memory.h"
#include "rfprof/analyzer/html_report.h"
#include "rfprof/analyzer/ncu_import.h"
#include "rfprof/analyzer/utf8.h"
#include "rfprof/analyzer/phases.h"
#include "rfprof/analyzer/report.h"
#include "rfprof/analyzer/roofline_charts.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/trace/reader.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;

/// "<path>: <problem> at byte N" from a TraceError, whose what() is "<message> (at byte N)".
std::string trace_error_line(const fs::path& path, const trace::TraceError& e) {
  std::string m = e.what();
  const std::string suffix = " (at byte " + std::to_string(e.offset()) + ")";
  if (m.size() >= suffix.size() && m.compare(m.size() - suffix.size(), suffix.size(), suffix) == 0)
    m = m.substr(0, m.size() - suffix.size());
  const std::string p = path.string();
  if (m.rfind(p + ": ", 0) == 0)
    m = m.substr(p.size() + 2);
  else if (m.rfind(p + " ", 0) == 0)
    m = m.substr(p.size() + 1);
  return p + ": " + m + " at byte " + std::to_string(e.offset());
}

/// An output file that could not be created, written or renamed (exit kExitOutputError).
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A stream buffer that takes every byte and keeps none: the stream of a skipped output, which stays
/// good, so a writer that checks its stream sees no error.
class DiscardBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

/// The output files of a run, each open under a temporary name ("NAME.partial") until commit();
/// a run that fails before commit() removes them all, so it leaves no partial outputs behind.
/// An output in `skip` is not created: open() gives a stream that discards what it is given.
class Outputs {
 public:
  Outputs(fs::path dir, const std::set<std::string>& skip) : dir_(std::move(dir)), skip_(skip) {}
  ~Outputs() {
    if (committed_) return;
    for (auto& f : files_) f.stream.reset();
    std::error_code ec;
    for (const auto& f : files_) fs::remove(partial(f.name), ec);
  }
  /// Whether output `name` is written (not skipped).
  bool written(const std::string& name) const { return !skip_.contains(name); }
  /// open(name), or nullptr for a skipped output: for a writer that then skips its work too.
  std::ostream* open_if_written(const std::string& name) { return written(name) ? &open(name) : nullptr; }
  /// Opens output `name` (a file name inside the output directory). Throws OutputError when it
  /// cannot be created.
  std::ostream& open(const std::string& name) {
    if (skip_.contains(name)) return discard_;
    auto s = std::make_unique<std::ofstream>(partial(name), std::ios::binary | std::ios::trunc);
    if (!*s) throw OutputError("cannot create " + partial(name).string());
    files_.push_back({name, std::move(s)});
    return *files_.back().stream;
  }

  /// Closes every file and renames it to its final name. Throws OutputError on failure.
  void commit() {
    for (auto& f : files_) {
      f.stream->close();
      if (!*f.stream) throw OutputError("cannot write " + partial(f.name).string());
    }
    for (const auto& f : files_) {
      std::error_code ec;
      fs::rename(partial(f.name), dir_ / f.name, ec);
      if (ec) throw OutputError("cannot rename " + partial(f.name).string() + ": " + ec.message());
    }
    committed_ = true;
  }

 private:
  struct File {
    std::string name;
    std::unique_ptr<std::ofstream> stream;
  };
  fs::path partial(const std::string& name) const { return dir_ / (name + ".partial"); }
  fs::path dir_;
  const std::set<std::string>& skip_;
  DiscardBuffer discard_buffer_;
  std::ostream discard_{&discard_buffer_};
  std::vector<File> files_;
  bool committed_ = false;
};

}  // namespace

const std::vector<std::string>& output_names() {
  static const std::vector<std::string> names{
      "kernels.csv",  "counters.csv",          "trace.json",             "memory.csv",
      "ranges.csv",   "phases.csv",            "processes.csv",          "profiler_overhead.csv",
      "ops.csv",      "layers.csv",            "callsites_time.folded",  "callsites_flop.folded",
      "callsites.csv", "summary.json",         "roofline.svg",           "scaling.csv",
      "report.html"};
  return names;
}

std::optional<std::string> output_name_problem(std::string_view option, std::string_view name) {
  const auto& names = output_names();
  if (std::find(names.begin(), names.end(), name) != names.end()) return std::nullopt;
  std::string m = "rfanalyze: " + std::string(option) + ": \"" + std::string(name) + "\" is not an output (expected one of: ";
  for (size_t i = 0; i < names.size(); ++i) m += (i ? ", " : "") + names[i];
  return m + ")";
}

int run_analysis(const AnalyzeOptions& options, std::ostream& err, std::ostream* summary) {
  if (options.traces.empty() && options.import_ncu.empty()) {
    err << "rfanalyze: no trace given (expected one or more .rftrace files, or --import-ncu FILE.csv)\n";
    return kExitBadInput;
  }
  for (const auto& name : options.skip)
    if (auto problem = output_name_problem("--skip/--outputs", name)) {
      err << *problem << "\n";
      return kExitBadInput;
    }
  for (const auto& t : options.import_ncu) {
    std::error_code ec;
    if (!fs::is_regular_file(t, ec)) {
      err << "rfanalyze: " << t.string() << (fs::exists(t, ec) ? ": not a regular file" : ": no such file")
          << " (expected an ncu CSV: its raw page, ncu --csv --page raw, or its details page, ncu --csv)\n";
      return kExitBadInput;
    }
  }
  for (const auto& t : options.traces) {
    std::error_code ec;
    if (!fs::exists(t, ec)) {
      err << "rfanalyze: " << t.string() << ": no such file (expected an rfprof trace)\n";
      return kExitBadInput;
    }
    if (!fs::is_regular_file(t, ec)) {
      err << "rfanalyze: " << t.string() << ": not a regular file (expected an rfprof trace)\n";
      return kExitBadInput;
    }
  }

  std::optional<PhaseMap> phases;
  CeilingDb user_db;
  CeilingSources sources;
  sources.datasheet = &CeilingDb::builtin();
  try {
    phases = options.phase_map ? PhaseMap::from_file(*options.phase_map) : PhaseMap::defaults();
    if (options.ceilings) {
      user_db = CeilingDb::from_file(*options.ceilings);
      sources.user = &user_db;
      sources.user_path = options.ceilings->string();
    }
    sources.forced = options.device;
    validate_forced_device(sources);
  } catch (const PhaseMapError& e) {
    err << "rfanalyze: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const CeilingsError& e) {
    err << "rfanalyze: " << e.what() << "\n";
    return kExitBadInput;
  }

  std::error_code ec;
  fs::create_directories(options.output_dir, ec);
  if (ec || !fs::is_directory(options.output_dir)) {
    err << "rfanalyze: cannot create output directory " << options.output_dir.string()
        << (ec ? ": " + ec.message() : std::string()) << "\n";
    return kExitOutputError;
  }

  nlohmann::ordered_json page_data;  // report.html's data, then the stdout summary's
  try {
    Outputs out(options.output_dir, options.skip);
    Report report(sources, out.open_if_written("kernels.csv"), out.open_if_written("counters.csv"));
    std::optional<ChromeTrace> timeline;
    if (std::ostream* json = out.open_if_written("trace.json")) {
      timeline.emplace(*json);
      // One time axis from the earliest process start: a later trace that started earlier (another
      // rank) would otherwise have events before 0, which Perfetto drops. With two or more traces,
      // from the earliest NVTX range start too (a range before its process's start, as in a
      // hand-made trace), which only the first trace's begin_trace could still move the axis to.
      std::optional<uint64_t> base;
      for (const auto& path : options.traces) {
        if (const auto process = first_process_info(path)) base = std::min(base.value_or(process->start_ns), process->start_ns);
        if (options.traces.size() > 1)
          if (const auto nvtx = earliest_nvtx_start(path)) base = std::min(base.value_or(*nvtx), *nvtx);
      }
      if (base) timeline->set_time_base(*base);
    }
    // trace.json's events are serialized on a thread of their own, while this one writes the CSV
    // outputs (bench/README.md: nlohmann::json's dump was 55% of a run's instructions). Drained
    // after each trace, so begin_trace and finish() find it idle. No thread without trace.json.
    std::optional<BatchThread<KernelRow>> timeline_thread;
    if (timeline) timeline_thread.emplace([&](const KernelRow& row) { timeline->add_launch(row); });
    std::ostream& memory_csv = out.open("memory.csv");
    write_csv_row(memory_csv, memory_csv_header());
    ReportPage page;
    for (const auto& path : options.traces) {
      try {
        TraceContext ctx = read_context(path);
        if (ctx.truncated && ctx.records == 0) {  // killed before its first flush: nothing to analyze
          err << "rfanalyze: " << path.string() << " is truncated at byte " << ctx.truncated_at
              << " before its first record (its process was killed before the first flush?): nothing to analyze\n";
          return kExitBadInput;
        }
        if (ctx.truncated)
          err << "rfanalyze: " << path.string() << " is truncated at byte " << ctx.truncated_at
              << "; analyzing the complete part\n";
        report.begin_trace(ctx);
        if (timeline) timeline->begin_trace(ctx);
        page.begin_trace(ctx);
        StreamStats stats = stream_launches(ctx, *phases, [&](const LaunchOutput& l) {
          report.add_launch(l);
          if (timeline_thread)
            timeline_thread->add_by([&](KernelRow& slot) {
              slot = l.row;
              slot.mangled = {};  // a view into the trace reader, gone before the thread reads it
            });
          page.add_launch(l.row);
        });
        if (timeline_thread) timeline_thread->drain();
        report.end_trace(ctx, stats);
        write_memory_rows(memory_csv, ctx.pid(), ctx.memory);
      } catch (const trace::TraceError& e) {
        err << "rfanalyze: " << trace_error_line(path, e) << "\n";
        return kExitBadInput;
      } catch (const NvtxPathBudgetError& e) {  // a path of process and thread ranges, made in pass 2
        err << "rfanalyze: " << path.string() << ": " << e.what() << "\n";
        return kExitBadInput;
      }
    }
    for (const auto& path : options.import_ncu) {
      NcuImport imp;
      try {
        imp = read_ncu_csv(path);
      } catch (const NcuImportError& e) {
        err << "rfanalyze: " << e.what() << "\n";
        return kExitBadInput;
      }
      if (!imp.scaled_metric.empty())
        err << "rfanalyze: note: " << path.string() << ": ncu printed " << imp.scaled_metric << " in "
            << imp.scaled_unit << " (its default --print-units auto), which keeps two decimals: the imported values "
            << "are rounded as printed; ncu --print-units base exports exact ones\n";
      if (!imp.rate_metric.empty())
        err << "rfanalyze: note: " << path.string() << ": it has " << imp.rate_metric
            << ", a rate ncu's roofline sections collect, without the count rfanalyze sums: its launches have no "
               "FLOP or bytes; export with ncu --metrics and the counts (rfprof --list-metrics --set roofline names "
               "them)\n";
      if (imp.no_used_metric)
        err << "rfanalyze: note: " << path.string() << ": none of its columns is a metric rfanalyze uses ("
            << metric::kGpuTime << ", the FLOP counts, dram__bytes_*): its launches have no duration, FLOP or bytes; "
            << "export with ncu --print-metric-name name and --metrics with the counts (rfprof --list-metrics --set "
               "roofline names them)\n";
      if (imp.rows.empty())
        err << "rfanalyze: note: " << path.string() << ": no launches (an ncu run that profiled no kernel?)\n";
      for (const NcuImport::Process& p : imp.processes) {  // a trace each, as rfprof writes them
        TraceContext ctx;
        ctx.path = path;
        ctx.process = trace::ProcessInfo{};
        ctx.process->pid = p.pid;
        ctx.process->mode = trace::CollectionMode::kCounters;
        ctx.process_name = p.name;
        ctx.hostname = p.host;
        for (const auto& [id, d] : p.devices) {  // ceilings by name, or --device for all
          DeviceRecord rec;
          rec.info.device_id = id;
          rec.info.cc_major = d.cc_major;
          rec.info.cc_minor = d.cc_minor;
          rec.info.sm_count = d.sm_count;
          rec.info.core_clock_khz = d.core_clock_khz;
          rec.info.memory_clock_khz = d.memory_clock_khz;
          rec.info.memory_bus_width_bits = d.memory_bus_width_bits;
          rec.info.l2_cache_bytes = d.l2_cache_bytes;
          rec.name = d.name;
          ctx.devices.emplace(id, std::move(rec));
        }
        ctx.nvtx.finalize();
        report.begin_trace(ctx);
        page.begin_trace(ctx);
        const std::string phase = phases->phase_of({});
        for (const size_t i : p.rows) {
          LaunchOutput l;
          l.row = imp.rows[i];
          l.row.phase = phase;
          l.metric_names = &imp.metric_names;
          l.metric_values = &imp.values[i];
          report.add_launch(l);
          page.add_launch(l.row);
        }
        report.end_trace(ctx, StreamStats{});
      }
    }
    if (timeline) timeline->finish();
    report.write_aggregates(out.open("ranges.csv"), out.open("phases.csv"));
    report.write_processes(out.open("processes.csv"));
    report.write_overhead(out.open("profiler_overhead.csv"));
    report.write_ops(out.open("ops.csv"), out.open("layers.csv"));
    report.write_call_sites(out.open("callsites_time.folded"), out.open("callsites_flop.folded"),
                            out.open("callsites.csv"));
    // Names come from the application and may not be UTF-8: replaced by U+FFFD, never thrown.
    out.open("summary.json") << report.summary().dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                             << "\n";
    out.open("roofline.svg") << render_roofline_svg(run_charts(report));
    page.write_scaling_csv(out.open("scaling.csv"));
    page_data = page.data(report);
    write_report_html(out.open("report.html"), page_data);
    out.commit();
    std::string stale;  // skipped outputs an earlier run left in the folder: kept, but said
    for (const auto& name : output_names()) {
      std::error_code exists_ec;
      if (!out.written(name) && fs::exists(options.output_dir / name, exists_ec))
        stale += (stale.empty() ? "" : ", ") + name;
    }
    if (!stale.empty())
      err << "rfanalyze: note: " << options.output_dir.string()
          << " holds outputs this run skipped, left from an earlier run: " << stale << "\n";
    // Where the launches above their roof are listed: summary.json, unless this run skipped it.
    const std::string see_above_roof =
        out.written("summary.json") ? "; see above_roof in " + (options.output_dir / "summary.json").string()
                                    : " (listed in summary.json, which this run skipped)";
    const uint64_t errors = report.above_roof_errors();
    const uint64_t near_measured = report.above_roof_count() - errors;
    if (errors > 0)
      err << "rfanalyze: warning: " << errors
          << " kernel launch(es) lie above their roof (attainable = min(peak FLOP/s, AI * DRAM "
             "bandwidth)): a measurement or formula error"
          << see_above_roof << "\n";
    if (near_measured > 0)
      err << "rfanalyze: note: " << near_measured
          << " kernel launch(es) lie slightly above measured ceilings (at most 10 %): rfbench "
             "did not reach the hardware's peak there"
          << see_above_roof << "\n";
    // Tensor-core work the metrics did not count as FLOP (summary.json's uncounted_tensor_work), also with -q.
    err << uncounted_tensor_work_line(report.uncounted_tensor_work_json());
    // Devices without any ceiling (a name no datasheet entry matches, an ncu CSV without
    // device__attribute_display_name): their launches have no bound, which a table would only
    // show as empty cells.
    std::set<int64_t> launched_on;  // devices with launches (a trace lists every device it saw)
    for (const auto& [key, sums] : report.kernel_groups()) launched_on.insert(key.device_index);
    std::string roofless;
    size_t roofless_count = 0;
    for (size_t i = 0; i < report.devices().size(); ++i) {
      const DeviceSummary& d = report.devices()[i];
      const DeviceCeilings& c = d.ceilings;
      if (c.dram.value || c.fp32.value || c.fp64.value || c.fp16.value) continue;
      if (!launched_on.count(static_cast<int64_t>(i)) || ++roofless_count > 3) continue;
      const std::string name = printable(d.device.name);  // the trace's, untrusted: no escape sequences
      roofless += (roofless.empty() ? "" : ", ") + std::string("device ") + std::to_string(d.device.info.device_id) +
                  " of " + report.traces().at(d.trace_index).path + " (pid " + std::to_string(d.pid) +
                  (name.empty() ? ", no name)" : ", \"" + name + "\")");
    }
    if (roofless_count > 0)
      err << "rfanalyze: note: no ceilings for " << roofless << (roofless_count > 3 ? " and others" : "")
          << ": their launches have no roofline bound; --device NAME takes a datasheet entry for every device "
             "(rfanalyze ceilings --list names them), --ceilings FILE your own\n";
  } catch (const OutputError& e) {
    err << "rfanalyze: " << e.what() << "\n";
    return kExitOutputError;
  } catch (const std::exception& e) {
    // Anything else is a bug (fuzz_analysis fails on it); the outputs were unwound away.
    err << "rfanalyze: internal error: " << e.what() << " (no outputs written; please report it)\n";
    return kExitInternalError;
  }
  // After the outputs are committed: a failure here must not say they were not written.
  if (summary) {
    try {
      print_terminal_summary(*summary, page_data, options.output_dir, 10, options.skip);
    } catch (const std::exception& e) {
      err << "rfanalyze: the outputs are written, but the summary could not be printed: " << e.what() << "\n";
    }
  }
  return kExitOk;
}

}  // namespace rf::analyzer
