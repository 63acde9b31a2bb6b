// One rfanalyze run: inputs checked, traces streamed, outputs written atomically.
#include "rfprof/analyzer/analyze.h"

#include <fstream>
#include <memory>
#include <system_error>

#include "rfprof/analyzer/ceilings.h"
#include "rfprof/analyzer/phases.h"
#include "rfprof/analyzer/report.h"
#include "rfprof/analyzer/trace_pass.h"
#include "rfprof/trace/reader.h"

namespace rf::analyzer {
namespace {

namespace fs = std::filesystem;

constexpr const char* kOutputs[] = {"kernels.csv", "counters.csv", "ranges.csv", "phases.csv",
                                    "summary.json"};

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

/// The output files of a run, open under temporary names until commit().
class Outputs {
 public:
  explicit Outputs(fs::path dir) : dir_(std::move(dir)) {
    for (const char* name : kOutputs) {
      auto s = std::make_unique<std::ofstream>(partial(name), std::ios::binary | std::ios::trunc);
      if (!*s) throw std::runtime_error("cannot create " + partial(name).string());
      streams_.push_back(std::move(s));
    }
  }
  ~Outputs() {
    if (committed_) return;
    streams_.clear();
    std::error_code ec;
    for (const char* name : kOutputs) fs::remove(partial(name), ec);
  }
  std::ostream& kernels() { return *streams_[0]; }
  std::ostream& counters() { return *streams_[1]; }
  std::ostream& ranges() { return *streams_[2]; }
  std::ostream& phases() { return *streams_[3]; }
  std::ostream& summary() { return *streams_[4]; }

  /// Closes every file and renames it to its final name. Throws std::runtime_error on failure.
  void commit() {
    for (size_t i = 0; i < streams_.size(); ++i) {
      streams_[i]->close();
      if (!*streams_[i]) throw std::runtime_error("cannot write " + partial(kOutputs[i]).string());
    }
    for (const char* name : kOutputs) {
      std::error_code ec;
      fs::rename(partial(name), dir_ / name, ec);
      if (ec) throw std::runtime_error("cannot rename " + partial(name).string() + ": " + ec.message());
    }
    committed_ = true;
  }

 private:
  fs::path partial(const char* name) const { return dir_ / (std::string(name) + ".partial"); }
  fs::path dir_;
  std::vector<std::unique_ptr<std::ofstream>> streams_;
  bool committed_ = false;
};

}  // namespace

int run_analysis(const AnalyzeOptions& options, std::ostream& err) {
  if (options.traces.empty()) {
    err << "rfanalyze: no trace given (expected one or more .rftrace files)\n";
    return kExitBadInput;
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

  try {
    Outputs out(options.output_dir);
    Report report(sources, out.kernels(), out.counters());
    for (const auto& path : options.traces) {
      try {
        TraceContext ctx = read_context(path);
        if (ctx.truncated)
          err << "rfanalyze: " << path.string() << " is truncated at byte " << ctx.truncated_at
              << "; analyzing the complete part\n";
        report.begin_trace(ctx);
        StreamStats stats =
            stream_launches(ctx, *phases, [&](const LaunchOutput& l) { report.add_launch(l); });
        report.end_trace(ctx, stats);
      } catch (const trace::TraceError& e) {
        err << "rfanalyze: " << trace_error_line(path, e) << "\n";
        return kExitBadInput;
      }
    }
    report.write_aggregates(out.ranges(), out.phases());
    out.summary() << report.summary().dump(2) << "\n";
    out.commit();
    if (report.above_roof_count() > 0)
      err << "rfanalyze: warning: " << report.above_roof_count()
          << " kernel launch(es) lie above their roof (attainable = min(peak FLOP/s, AI * DRAM "
             "bandwidth)): a measurement or formula error; see above_roof in "
          << (options.output_dir / "summary.json").string() << "\n";
  } catch (const std::runtime_error& e) {
    err << "rfanalyze: " << e.what() << "\n";
    return kExitOutputError;
  }
  return kExitOk;
}

}  // namespace rf::analyzer
