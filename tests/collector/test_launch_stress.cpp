// Many threads launching kernels at once (issue 6): 16 threads make launches (entry and exit, as
// the CUPTI callbacks do) through LaunchLog into the real trace::Writer, while another thread opens
// and closes profiling windows, the flush thread flushes, and an activity thread asks the
// kernel-record filter. The trace read back holds every launch made inside a window exactly once,
// untorn, in each thread's order, with dense per-window indices, and nothing launched outside.
// Also run under ThreadSanitizer (scripts/run-tests, build-tsan/).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "rfprof/collector/launch_log.h"
#include "rfprof/trace/reader.h"
#include "rfprof/trace/writer.h"

namespace rf::collector {
namespace {

namespace fs = std::filesystem;
using namespace rf::trace;

constexpr int kThreads = 16;
constexpr uint32_t kLaunches = 1500;  // per thread

/// What one thread did for one launch, to compare with the trace.
struct Made {
  uint32_t correlation_id = 0;
  uint32_t runtime_correlation_id = 0;
  LaunchTicket ticket;
  bool succeeded = false;
};

/// The key a thread writes into api_start_ns: thread and sequence number.
uint64_t key(int thread, uint32_t seq) { return (static_cast<uint64_t>(thread) << 32) | seq; }

/// Kernel name of launch `seq` of `thread`: names shared by all threads (interned concurrently)
/// and names of one thread.
std::string name_of(int thread, uint32_t seq) {
  if (seq % 2 == 0) return "void shared_kernel<" + std::to_string(seq % 16) + ">(float*)";
  return "kernel_t" + std::to_string(thread) + "_s" + std::to_string(seq);
}

TEST(LaunchStress, ManyThreadsLaunchingLoseTearAndReorderNothing) {
  std::string tmpl = (fs::temp_directory_path() / "rfstress-XXXXXX").string();
  const fs::path dir = ::mkdtemp(tmpl.data());
  const fs::path path = dir / "stress.rftrace";
  // Many small chunks and thread buffers, joined by full buffers, window closes and the flusher.
  Writer writer(path, {.chunk_bytes = 4096, .thread_buffer_bytes = 2048});
  // The session's sink (session.cpp): window records into the ordered stream; launches through the
  // launching thread's buffer and kernel names through its intern cache.
  LaunchLog log(/*profile_from_start=*/false,
                {[&](const Record& r) { writer.append(r); },
                 [&](std::string_view s) { return writer.intern_cached(s); },
                 [&](const Record& r) { writer.append_buffered(r); }});
  log.process_start(0);

  std::atomic<uint32_t> next_id{1};  // CUPTI's correlation ids: one increasing counter
  std::atomic<uint64_t> entered{0};   // launches past LaunchLog::enter
  std::atomic<uint64_t> allowed{0};   // launches may start while entered < allowed (window thread)
  std::atomic<bool> windows_done{false};
  std::atomic<int> launching{kThreads};
  std::vector<std::vector<Made>> made(kThreads, std::vector<Made>(kLaunches));

  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (uint32_t s = 0; s < kLaunches; ++s) {
        Made& m = made[t][s];
        // Paced by the window thread, so that every run has launches inside and outside windows
        // (up to 16 threads are past this point when a window opens or closes).
        while (entered.load() >= allowed.load() && !windows_done.load()) std::this_thread::yield();
        // A runtime launch (its id first) around the driver launch, for two launches in three.
        if (s % 3 != 0) m.runtime_correlation_id = next_id.fetch_add(1);
        m.correlation_id = next_id.fetch_add(1);
        if (s % 5 == 0) std::this_thread::yield();  // between getting the id and the callback
        m.ticket = log.enter(m.correlation_id, m.runtime_correlation_id);
        entered.fetch_add(1);
        m.succeeded = s % 7 != 3;  // some launches fail: nothing is written for them
        if (!m.succeeded) {
          log.exit(m.ticket, std::nullopt);
          continue;
        }
        LaunchApi l;
        l.correlation_id = m.correlation_id;
        l.runtime_correlation_id = m.runtime_correlation_id;
        l.cbid = 307;
        l.thread_id = static_cast<uint64_t>(t);
        l.api_start_ns = key(t, s);
        l.api_end_ns = ~key(t, s);
        l.grid[0] = t;
        l.grid[1] = static_cast<int32_t>(s);
        l.block[0] = static_cast<int32_t>(m.correlation_id);
        log.exit(m.ticket, l, name_of(t, s));
      }
      launching.fetch_sub(1);
    });
  }
  // cu(da)ProfilerStart/Stop: 200 launches outside, then a window of 300, and so on.
  std::thread windows([&] {
    uint64_t ts = 1;
    auto let_launch = [&](uint64_t n) {
      const uint64_t until = allowed.fetch_add(n) + n;
      while (launching.load() > 0 && entered.load() < until) std::this_thread::yield();
    };
    while (launching.load() > 0) {
      let_launch(200);
      log.open_window(ts++, 1);
      let_launch(300);
      if (auto w = log.close_window()) writer.append(ProfilingWindow{*w, false, ts++, 2});
    }
    windows_done = true;
  });
  std::atomic<bool> stop{false};
  std::thread flusher([&] {
    while (!stop.load()) writer.flush();
  });
  std::thread activity([&] {  // the activity buffer thread asks the filter for every kernel
    uint32_t id = 1;
    while (!stop.load()) (void)log.kernel_kept(id++ % (kThreads * kLaunches * 2));
  });
  for (auto& th : threads) th.join();
  windows.join();
  stop = true;
  flusher.join();
  activity.join();
  if (auto w = log.close_window()) writer.append(ProfilingWindow{*w, false, 0, 0});  // exit
  writer.finish();

  // Read back.
  Reader r(path);
  Record rec;
  std::set<uint32_t> opened, closed;
  std::map<uint32_t, std::vector<uint64_t>> indices;  // window -> launch indices
  std::vector<int64_t> last_seq(kThreads, -1);
  std::set<uint64_t> seen;
  bool ended = false;
  while (r.next(rec)) {
    if (auto* w = std::get_if<ProfilingWindow>(&rec)) {
      if (w->begin) {
        EXPECT_TRUE(opened.insert(w->window_id).second) << "window opened twice " << w->window_id;
        EXPECT_TRUE(opened.size() == 1 || closed.count(*std::prev(opened.find(w->window_id))))
            << "window " << w->window_id << " opened before the previous one closed";
      } else {
        EXPECT_TRUE(opened.count(w->window_id)) << "window " << w->window_id << " closed unopened";
        EXPECT_TRUE(closed.insert(w->window_id).second) << "window closed twice " << w->window_id;
      }
    } else if (auto* l = std::get_if<LaunchApi>(&rec)) {
      const int t = static_cast<int>(l->api_start_ns >> 32);
      const auto s = static_cast<uint32_t>(l->api_start_ns);
      ASSERT_GE(t, 0);
      ASSERT_LT(t, kThreads);
      ASSERT_LT(s, kLaunches);
      const Made& m = made[t][s];
      EXPECT_TRUE(seen.insert(l->api_start_ns).second) << "launch " << t << "/" << s << " twice";
      EXPECT_TRUE(m.ticket.in_window && m.succeeded) << "launch " << t << "/" << s << " not in a window";
      // Every field as the thread wrote it (nothing torn or mixed with another record).
      EXPECT_EQ(l->correlation_id, m.correlation_id);
      EXPECT_EQ(l->runtime_correlation_id, m.runtime_correlation_id);
      EXPECT_EQ(l->thread_id, static_cast<uint64_t>(t));
      EXPECT_EQ(l->api_end_ns, ~l->api_start_ns);
      EXPECT_EQ(l->cbid, 307u);
      EXPECT_EQ(l->grid[0], t);
      EXPECT_EQ(l->grid[1], static_cast<int32_t>(s));
      EXPECT_EQ(l->block[0], static_cast<int32_t>(m.correlation_id));
      EXPECT_EQ(r.string(l->kernel_name), name_of(t, s));
      EXPECT_EQ(l->window_id, m.ticket.window);
      // The window's opening record came first (written before the window was published).
      EXPECT_TRUE(opened.count(l->window_id)) << "launch before its window opened";
      EXPECT_GT(static_cast<int64_t>(s), last_seq[t]) << "thread " << t << " reordered";
      last_seq[t] = s;
      indices[l->window_id].push_back(l->launch_index);
    } else if (std::holds_alternative<TraceEnd>(rec)) {
      ended = true;
    }
  }
  EXPECT_FALSE(r.truncated());
  EXPECT_TRUE(ended);
  EXPECT_EQ(opened, closed);  // balanced

  // Nothing lost: every successful launch made inside a window is there; its kernels are kept,
  // and the kernels of launches outside every window are not.
  size_t inside = 0, outside = 0;
  for (int t = 0; t < kThreads; ++t) {
    for (uint32_t s = 0; s < kLaunches; ++s) {
      const Made& m = made[t][s];
      const bool expected = m.ticket.in_window && m.succeeded;
      EXPECT_EQ(seen.count(key(t, s)), expected ? 1u : 0u) << "launch " << t << "/" << s;
      EXPECT_EQ(log.kernel_kept(m.correlation_id), m.ticket.in_window) << m.correlation_id;
      if (m.runtime_correlation_id) {
        EXPECT_EQ(log.kernel_kept(m.runtime_correlation_id), m.ticket.in_window);
      }
      (m.ticket.in_window ? inside : outside)++;
    }
  }
  // Indices within each window: 0 .. n-1, each once.
  for (auto& [w, idx] : indices) {
    std::sort(idx.begin(), idx.end());
    for (size_t i = 0; i < idx.size(); ++i) {
      ASSERT_EQ(idx[i], i) << "window " << w;
    }
  }
  // The run exercised what it claims: launches on both sides of windows, several windows.
  EXPECT_GT(inside, 0u);
  EXPECT_GT(outside, 0u);
  EXPECT_GE(opened.size(), 2u);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace rf::collector
