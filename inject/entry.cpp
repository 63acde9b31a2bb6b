// librfinject's only exported symbols: the CUDA and NVTX injection entry points.
//   CUDA_INJECTION64_PATH=librfinject.so  -> cuInit calls InitializeInjection()
//   NVTX_INJECTION64_PATH=librfinject.so  -> the first NVTX call calls InitializeInjectionNvtx2()
// Both start the same collector session once (whichever runs first); nothing here throws, aborts
// or exits: a problem is one "rfprof:" line on stderr and the application goes on unprofiled.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>

#include "config.h"
#include "env_names.h"
#include "rfprof/collector/messages.h"
#include "rfprof/collector/session.h"

#define RF_EXPORT __attribute__((visibility("default")))

namespace {

/// Starts the collector once per process. Re-entrant: a call from inside the first one (CUPTI
/// initializing CUDA, which calls InitializeInjection) returns false instead of deadlocking.
bool initialize_once() noexcept {
  static std::recursive_mutex mutex;
  static enum { kNotStarted, kStarting, kDone } state = kNotStarted;
  static bool running = false;
  std::lock_guard lock(mutex);
  if (state == kStarting) return false;
  if (state == kDone) return running;
  state = kStarting;
  try {
    rf::inject::EnvLookup env = rf::inject::process_environment();
    rf::inject::Config config = rf::inject::read_config(env);
    const auto pid = static_cast<uint32_t>(::getpid());
    if (!rf::inject::profiles_process(config, pid)) {  // --target-processes application-only
      state = kDone;
      return false;
    }
    for (const std::string& warning : rf::inject::misspelled_variables(rf::inject::environment_names()))
      rf::collector::print_line(warning);  // RFPROF_FLUSHMS: profiling goes on, with the default
    rf::inject::PatternContext pattern;
    pattern.pid = pid;
    char host[HOST_NAME_MAX + 1] = {};
    if (::gethostname(host, sizeof host - 1) == 0) pattern.hostname = host;
    pattern.env = env;
    const std::string own_pattern = rf::inject::per_process_pattern(config.output_pattern, pid, config.root_pid);
    rf::collector::SessionOptions options =
        rf::inject::session_options(config, rf::inject::expand_output_pattern(own_pattern, pattern));
    // A name taken meanwhile (a %i index another process took between the choice and the open,
    // or one name for several live processes): the next index, or this process's pid in the name,
    // said once when it is not %i's. %i names a free index, so -f has nothing to replace there: a
    // name that exists by then is another process's trace, never replaced.
    const bool indexed = rf::inject::has_index_placeholder(own_pattern);
    if (indexed) options.force_overwrite = false;
    options.output_in_use = [own_pattern, pattern, indexed](const std::filesystem::path& taken, uint32_t attempt,
                                                            bool live) {
      std::filesystem::path next = rf::inject::output_after_in_use(own_pattern, pattern, taken, attempt, live);
      if (!next.empty() && !indexed && attempt == 1)
        rf::collector::print_line("rfprof: trace " + taken.string(), " is being written by another process; this one writes ",
                                  next.string());
      return next;
    };
    running = rf::collector::start_session(options);  // prints its own rfprof: line on failure
    const std::filesystem::path written = running ? rf::collector::session_output() : std::filesystem::path();
    if (running && !config.trace_list.empty() && !rf::inject::append_trace_list(config.trace_list, written)) {
      const int err = errno;
      rf::collector::print_line("rfprof: RFPROF_TRACE_LIST=\"" + config.trace_list + "\": cannot add " + written.string(),
                                " to it (" + std::string(std::strerror(err)) + ")", "; rfprof --csv will not print it");
    }
  } catch (const rf::inject::ConfigError& e) {
    rf::collector::print_line(e.what(), "; rfprof is disabled");
  } catch (const std::exception& e) {
    rf::collector::print_line("rfprof: cannot start: ", e.what(), "; rfprof is disabled");
  } catch (...) {
    std::fprintf(stderr, "rfprof: cannot start (unknown error); rfprof is disabled\n");
  }
  state = kDone;
  return running;
}

}  // namespace

/// Called by the CUDA driver during cuInit when CUDA_INJECTION64_PATH names this library.
/// Always returns 1 (the application must run whether or not profiling could start).
extern "C" RF_EXPORT int InitializeInjection(void) {
  (void)initialize_once();
  return 1;
}

/// Called by the NVTX loader at the first NVTX call when NVTX_INJECTION64_PATH names this
/// library. Guard for the CUPTI 13.0 GA bug (NVTX reaching CUPTI before CUPTI is initialized
/// crashes; NVIDIA/NVTX issue 125): the collector session, and with it CUPTI, is started first,
/// and only then is NVTX handed to cuptiNvtxInitialize2. Returns 1 when NVTX events will be
/// recorded, 0 otherwise (NVTX then stays a no-op; the library is never unloaded: -z nodelete).
extern "C" RF_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  if (!initialize_once()) return 0;
  return rf::collector::forward_nvtx_injection(reinterpret_cast<const void*>(get_export_table));
}
