// Cost of recording, per launch, on the profiled process's side of the trace (bench/README.md):
//   BM_AppendLaunch:   one launch as the collector writes it (LaunchApi, KernelActivity and
//                      RangeCounters with the 14 default metrics) through rf::trace::Writer,
//                      chunks written to a file in the temp dir; items = launches
//   BM_AppendLaunchWaitingChunks: the same with full chunks written by a flush thread
//   BM_AppendLaunchMT: the same from several threads at once (the writer's mutex under contention)
//   BM_InternKnown:    Writer::intern of a kernel name already in the string table (every launch
//                      after the first of a kernel)
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <string>

#include "rfprof/trace/writer.h"

namespace {

namespace fs = std::filesystem;
using namespace rf::trace;

fs::path temp_trace(const char* tag) {
  return fs::temp_directory_path() / ("rfprof-bench-" + std::string(tag) + "-" + std::to_string(::getpid()) + ".rftrace");
}

Writer& shared_writer() {
  static Writer w(temp_trace("writer-mt"), WriterOptions{.chunk_bytes = 1u << 20, .force_overwrite = true});
  return w;
}

void append_launch(Writer& w, uint32_t corr, StringId name) {
  LaunchApi l;
  l.correlation_id = corr;
  l.thread_id = 100;
  l.api_start_ns = corr * 1000ull;
  l.api_end_ns = l.api_start_ns + 400;
  l.kernel_name = name;
  l.grid[0] = 1024;
  l.block[0] = 256;
  w.append(l);
  KernelActivity k;
  k.correlation_id = corr;
  k.start_ns = l.api_start_ns + 2000;
  k.end_ns = k.start_ns + 5000;
  k.mangled_name = k.demangled_name = name;
  w.append(k);
  RangeCounters rc;
  rc.config_id = 1;
  rc.range_index = corr;
  rc.correlation_id = corr;
  rc.values.assign(14, 1e6);
  w.append(rc);
}

void BM_AppendLaunch(benchmark::State& state) {
  const fs::path path = temp_trace("writer");
  {
    Writer w(path, WriterOptions{.chunk_bytes = 1u << 20, .force_overwrite = true});
    const StringId name = w.intern("_Z11ffma_kernelPfi");
    uint32_t corr = 1;
    for (auto _ : state) append_launch(w, corr++, name);
    state.SetItemsProcessed(state.iterations());
    w.finish();
  }
  fs::remove(path);
}

/// BM_AppendLaunch with full chunks left waiting for a flush thread (what the collector does:
/// WriterOptions::max_pending_chunks = 8): the appending thread does no file I/O. The flush thread
/// here is woken by on_chunk_pending, as the collector's is.
void BM_AppendLaunchWaitingChunks(benchmark::State& state) {
  const fs::path path = temp_trace("writer-pending");
  {
    std::mutex m;
    std::condition_variable cv;
    bool wake = false, stop = false;
    WriterOptions o{.chunk_bytes = 1u << 20, .force_overwrite = true, .max_pending_chunks = 8,
                    .on_chunk_pending = [&] {
                      std::lock_guard lock(m);
                      wake = true;
                      cv.notify_one();
                    }};
    Writer w(path, o);
    std::thread flusher([&] {
      std::unique_lock lock(m);
      while (!stop) {
        cv.wait(lock, [&] { return wake || stop; });
        wake = false;
        lock.unlock();
        w.flush();
        lock.lock();
      }
    });
    const StringId name = w.intern("_Z11ffma_kernelPfi");
    uint32_t corr = 1;
    for (auto _ : state) append_launch(w, corr++, name);
    state.SetItemsProcessed(state.iterations());
    {
      std::lock_guard lock(m);
      stop = true;
      cv.notify_one();
    }
    flusher.join();
    w.finish();
  }
  fs::remove(path);
}

void BM_AppendLaunchMT(benchmark::State& state) {
  Writer& w = shared_writer();
  const StringId name = w.intern("_Z11ffma_kernelPfi");
  uint32_t corr = static_cast<uint32_t>(state.thread_index()) << 24;
  for (auto _ : state) append_launch(w, corr++, name);
  state.SetItemsProcessed(state.iterations());
}

void BM_InternKnown(benchmark::State& state) {
  const fs::path path = temp_trace("intern");
  {
    Writer w(path, WriterOptions{.chunk_bytes = 1u << 20, .force_overwrite = true});
    const std::string name =
        "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_";
    w.intern(name);
    for (auto _ : state) benchmark::DoNotOptimize(w.intern(name));
    w.finish();
  }
  fs::remove(path);
}

}  // namespace

BENCHMARK(BM_AppendLaunch);
BENCHMARK(BM_AppendLaunchWaitingChunks);
BENCHMARK(BM_AppendLaunchMT)->Threads(1)->Threads(2)->Threads(4)->UseRealTime();
BENCHMARK(BM_InternKnown);

BENCHMARK_MAIN();
