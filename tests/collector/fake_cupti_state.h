// Internal state of the fake CUPTI (fake_cupti.h), shared by fake_cupti.cpp (the tests' side:
// contexts, launches, windows, NVTX) and fake_cupti_api.cpp (the CUPTI functions the session
// calls). Not for tests: they use fake_cupti.h.
#pragma once

#include <cuda.h>
#include <cupti.h>
#include <cupti_range_profiler.h>
#include <cupti_profiler_target.h>
#include <dlfcn.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace rf::fake_cupti::detail {

/// Every activity record goes into a slot of this size (the fake's cuptiActivityGetNextRecord
/// steps by it); large enough for every record type the session reads.
constexpr size_t kSlot = 256;
static_assert(sizeof(CUpti_ActivityKernel10) <= kSlot && sizeof(CUpti_ActivityDevice5) <= kSlot &&
              sizeof(CUpti_ActivityMarker2) <= kSlot && sizeof(CUpti_ActivityMemory4) <= kSlot);

/// The fake counter-data image: "LOPDATA\0", u32 range count, u32 dropped, then per range the
/// u32 correlation id of its launch and a 64-byte NUL-terminated kernel name.
constexpr char kSignature[8] = {'L', 'O', 'P', 'D', 'A', 'T', 'A', '\0'};
constexpr size_t kHeader = 16, kRangeBytes = 4 + 64;

struct Range {
  uint32_t correlation_id;
  std::string name;
};

struct Profiler {  // one per context with the Range Profiler enabled
  CUcontext ctx = nullptr;
  bool configured = false, started = false, user_replay = false;
  uint8_t* image = nullptr;
  size_t image_size = 0;
  size_t max_ranges = 0;
  uint32_t pass_index = 0;         // passes stopped since SetConfig
  std::vector<Range> ranges;       // of the current pass
  std::vector<Range> decodable;    // of the last completed pass
  uint64_t dropped = 0;
};

struct Context {
  uint32_t index = 0, device = 0;
};

struct State {
  std::mutex m;
  std::map<std::string, CUptiResult> failures;
  std::set<std::string> hangs;  // functions whose calls never return (hang())
  std::map<std::string, std::function<void()>> before;  // before_next_call(), run once
  std::map<std::string, uint64_t> calls;
  std::string other_subscriber, subscriber;
  CUpti_CallbackFunc callback = nullptr;
  void* userdata = nullptr;
  std::set<std::pair<int, uint32_t>> enabled;
  std::set<int> kinds;
  CUpti_BuffersCallbackRequestFunc requested = nullptr;
  CUpti_BuffersCallbackCompleteFunc completed = nullptr;
  std::vector<std::array<uint8_t, kSlot>> pending;
  std::deque<std::string> names;  // record strings: alive until the process ends
  std::map<CUcontext, Context> contexts;
  std::set<uint32_t> devices_seen;
  std::map<CUcontext, Profiler*> profilers;
  uint32_t passes = 2;
  bool start_misses_launch = false;  // set_pass_start_in_a_launch_misses_it
  std::string chip = "GH100";
  std::map<uint32_t, std::string> device_chips;
  std::map<uint32_t, std::map<std::string, CUpti_Profiler_Support_Level>> support;  // device -> field -> level
  uint64_t dropped = 0;             // since the last cuptiActivityGetNumDroppedRecords
  bool system_thread_ids = false;   // cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
  uint32_t next_correlation = 1;
  uint32_t next_marker = 1;
  uint64_t next_range_id = 1;       // nvtx(Domain)RangeStart ids
  std::vector<uint32_t> marker_stack;
  uint64_t off_context = 0;
};

/// The fake's state, one per process.
extern State g;

/// A function of the fake driver, or null while it is not loaded.
template <typename F>
F driver_fn(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_DEFAULT, name));
}

/// Counts a Range Profiler call made while `ctx` is not current (caller holds g.m).
void check_current(CUcontext ctx);
/// The steady clock in ns (the fake's cuptiGetTimestamp and record times).
uint64_t now_ns();
/// A call the real CUPTI refuses (cupti_range_profiler.h; NVIDIA's range_profiling sample shows
/// the one order that works: Enable, SetConfig, then Start/Stop pairs, Decode after the last pass,
/// Disable). Writes "fake CUPTI misuse: <what>" to stderr, where run_child (fake_session.h) fails
/// the test on it, counts it (misuses()), and returns `result`. Caller may hold g.m.
CUptiResult misuse(const std::string& what, CUptiResult result);
/// The Range Profiler object `object` if it is enabled (made by Enable, not yet disabled), else
/// null. Caller holds g.m.
Profiler* enabled(CUpti_RangeProfiler_Object* object);
/// Counts the call and returns the injected failure, or CUPTI_SUCCESS.
CUptiResult enter(const char* function);
/// The fake's CUPTI stream id of `stream` (cuptiGetStreamIdEx, kernel records): 7 for the legacy
/// default stream (null), 20 for the per-thread default stream (null or CU_STREAM_PER_THREAD with
/// `per_thread`, as a _ptsz call makes it), the handle's bits 4..19 for any other.
uint32_t stream_id(CUstream stream, bool per_thread);
/// A copy of `s` that lives until the process ends (record strings). Caller holds g.m.
const char* keep(const std::string& s);
/// A marker record's thread id, of the type cuptiSetThreadIdType chose. Caller holds g.m.
uint32_t record_thread_id();
/// The fake's unique id of context `ctx` (CUpti_CallbackData::contextUid); 0 for an unknown one.
uint32_t context_uid(CUcontext ctx);

template <typename R>
void push_record(const R& r) {  // caller holds g.m
  std::array<uint8_t, kSlot> slot{};
  std::memcpy(slot.data(), &r, sizeof r);
  g.pending.push_back(slot);
}

}  // namespace rf::fake_cupti::detail
