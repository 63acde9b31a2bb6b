// Which CUDA devices' kernel launches are profiled: ncu's --devices (RFPROF_DEVICES), decided in
// the collector at the launch API's entry with the other launch filters (launch_filter.h), so that
// a launch on another device is neither recorded nor replayed. CUPTI-free: the session gives the
// function that asks CUPTI for a context's device.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "rfprof/trace/per_thread.h"

namespace rf::collector {

/// Parses a list of CUDA device ordinals as ncu's --devices takes it: comma-separated decimal
/// numbers ("0", "0,2"; spaces around each allowed), each below 1024, none twice. nullopt for
/// anything else (an empty list or item, a sign, a name).
std::optional<std::vector<uint32_t>> parse_device_list(std::string_view text);

/// Decides per launch whether its context's device is one of the listed ones. Thread-safe; the
/// launch path shares no lock: each thread keeps the answers for the last kContextsPerThread
/// contexts it launched on (one thread driving several GPUs alternates between their contexts),
/// and asks `device_of` (cuptiGetDeviceId in the session) for a context it does not hold. A
/// destroyed context's handle may come back for another device: forget_contexts() makes every
/// thread ask again.
class DeviceFilter {
 public:
  /// Contexts whose answers a thread keeps (the oldest is replaced).
  static constexpr size_t kContextsPerThread = 8;
  /// The CUDA device ordinal of a context; nullopt when it cannot be told.
  using DeviceOf = std::function<std::optional<uint32_t>(const void* context)>;

  /// `devices`: the CUDA device ordinals to profile (empty: every device).
  DeviceFilter(std::vector<uint32_t> devices, DeviceOf device_of);

  /// True when some devices are listed (false: every launch is selected, nothing to ask).
  bool active() const noexcept { return !devices_.empty(); }
  /// Whether a launch on `context` is selected: its device is listed, or its device cannot be told
  /// (a launch rfprof cannot place is profiled rather than lost). May throw std::bad_alloc on a
  /// thread's first call only.
  bool selects(const void* context);
  /// The CUDA device ordinal of `context` (nullopt: it cannot be told), remembered as selects()
  /// remembers its answer: ncu's --filter-mode per-gpu counts launches per device with it. May
  /// throw std::bad_alloc on a thread's first call only.
  std::optional<uint32_t> device(const void* context);
  /// A context was destroyed: every thread's remembered answer is dropped.
  void forget_contexts() noexcept { epoch_.fetch_add(1, std::memory_order_release); }

 private:
  struct Answer {  // 16 bytes: a thread's 8 answers fill two cache lines
    const void* context = nullptr;
    uint32_t device = 0;
    bool known = false;  // `device` is the context's (CUPTI could tell)
    bool selected = true;
  };
  /// One thread's answers, all of epoch `epoch` (0: none yet).
  struct Answers {
    uint64_t epoch = 0;
    size_t next = 0;  // slot replaced next
    std::array<Answer, kContextsPerThread> slots{};
  };
  /// This thread's answer for `context`, asked for when it holds none.
  const Answer& answer(const void* context);
  /// Asks device_of for `context` and remembers the answer in `a` (replacing its oldest).
  const Answer& ask(Answers& a, const void* context);

  std::vector<uint32_t> devices_;
  DeviceOf device_of_;
  std::atomic<uint64_t> epoch_{1};
  trace::PerThread<Answers> answers_;
};

}  // namespace rf::collector
