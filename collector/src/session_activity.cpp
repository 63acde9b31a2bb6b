// CUPTI activity buffers: kernels (CONCURRENT_KERNEL, or KERNEL: RFPROF_KERNEL_RECORDS), NVTX markers (MARKER), devices (DEVICE),
// memory allocations and releases (MEMORY2, with RFPROF_MEMORY).
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "convert.h"
#include "driver_shim.h"
#include "rfprof/collector/activity_buffers.h"
#include "rfprof/collector/signal_finish.h"
#include "session_impl.h"

namespace rf::collector {
namespace {

// Per activity buffer. CUPTI hands a buffer over (cuptiActivityFlushAll(0)) only once every
// record in it is complete; while the GPU is kept busy the buffer being filled always holds
// incomplete records, so it is handed over when full. 1 MiB (about 5,000 kernel records, a few
// ResNet-18 steps) keeps that delay short; 8 MiB held ~75 steps, lost on SIGKILL (H100 run).
// At most 256 outstanding (256 MiB): past that CUPTI drops records and counts them (below).
ActivityBuffers g_buffers(1u << 20, 256);

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = g_buffers.take();
  *size = *buffer ? g_buffers.buffer_bytes() : 0;  // a null buffer makes CUPTI drop records
  *max_records = 0;                                // as many records as fit
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_size) {
  if (Session* s = current_session()) s->on_buffer_completed(buffer, valid_size);
  g_buffers.give_back(buffer);
}

}  // namespace

void Session::enable_activity() {
  RF_CUPTI_CALL(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  activity_kinds_.emplace_back(CUPTI_ACTIVITY_KIND_DEVICE);
  // Replay across steps records kernels serialized, whatever kernel_records says: concurrent
  // kernel tracing instruments the kernel code (CUPTI's "Overhead" section), and under the Range
  // Profiler's user replay every smsp__sass_* count then reads 0 (H200, CUDA 13.0, 2026-11-30:
  // 0 of 128 FFMAs with CONCURRENT_KERNEL on, 128 with KERNEL or with no kernel tracing;
  // validation/h200-2026-11-30/step-replay-sass.md). Kernel replay counts right with either.
  switch (step_mode() ? KernelRecords::kSerial : options_.kernel_records) {
    case KernelRecords::kConcurrent:
      activity_kinds_.emplace_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
      break;
    case KernelRecords::kSerial:
      activity_kinds_.emplace_back(CUPTI_ACTIVITY_KIND_KERNEL);
      break;
  }
  activity_kinds_.emplace_back(CUPTI_ACTIVITY_KIND_MARKER);
  if (options_.memory) activity_kinds_.emplace_back(CUPTI_ACTIVITY_KIND_MEMORY2);
}

void Session::on_buffer_completed(uint8_t* buffer, size_t valid_size) noexcept {
  const State s = state();
  if (buffer && valid_size > 0 && (s == State::kRunning || s == State::kFinishing)) {
    ScopedOverhead timed(process_overhead(), OverheadPhase::kActivityBuffer);
    // CUPTI's thread writes every record of the buffer: the finish signals blocked once around
    // them, not at each append (trace::ThreadSignalsBlocked).
    trace::ThreadSignalsBlocked quiet(finish_signals());
    try {
      CUpti_Activity* record = nullptr;
      // Stops at CUPTI_ERROR_MAX_LIMIT_REACHED (end of buffer) or an incomplete record.
      while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS)
        handle_record(record);
      size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
        dropped_records_.fetch_add(dropped, std::memory_order_relaxed);
        write_error(trace::ErrorCode::kDroppedRecords, 0, 0, dropped,
                    "CUPTI dropped " + std::to_string(dropped) +
                        " activity records (no buffer space): some kernel timings or NVTX events "
                        "are missing");
      }
    } catch (const std::exception& e) {
      static std::atomic<bool> reported{false};
      if (!reported.exchange(true))
        print_line("rfprof: internal error reading an activity buffer: ", e.what());
    } catch (...) {
    }
  }
}

void Session::handle_record(const CUpti_Activity* record) {
  switch (record->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:  // the same record layout (RFPROF_KERNEL_RECORDS=serial)
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
      const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
      if (!launch_log_.kernel_kept(k->correlationId)) return;  // launched outside every window
      if (k->name && is_replay_tool_kernel(k->name)) return;     // CUPTI's own, during graph replay
      trace::KernelActivity rec;
      {
        std::lock_guard lock(activity_mutex_);
        rec = convert_kernel(*k, kernel_names_);
      }
      write(rec);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MARKER: {
      const auto* m = reinterpret_cast<const CUpti_ActivityMarker2*>(record);
      std::lock_guard lock(activity_mutex_);
      auto ev = convert_marker(*m, nvtx_styles_, [this](std::string_view s) { return marker_name(s); });
      if (ev) write(*ev);
      break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
      // Process-wide, whatever the profiling windows: peaks need the memory held before a window.
      if (auto m = convert_memory(*reinterpret_cast<const CUpti_ActivityMemory4*>(record))) write(*m);
      break;
    }
    case CUPTI_ACTIVITY_KIND_DEVICE: {
      // CUPTI documents that the client owns d->name; it is left alone, as NVIDIA's samples do
      // (a few bytes per device, never a double free).
      const auto* d = reinterpret_cast<const CUpti_ActivityDevice5*>(record);
      auto intern_fn = [this](std::string_view s) { return intern(s); };
      // Not in CUpti_ActivityDevice5: asked of the driver (0 when it cannot say), outside the
      // locks. cuDeviceGetAttribute is none of the callbacks rfprof enables.
      const auto ordinal = static_cast<int>(d->id);
      const unsigned memory_clock_khz =
          driver::device_attribute(ordinal, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
      const unsigned memory_bus_width_bits =
          driver::device_attribute(ordinal, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
      std::optional<trace::DeviceInfo> ready;
      {
        // Under activity_mutex_ from the chip lookup to the push, as write_pending_devices: a
        // chip learnt in between would otherwise leave this record pending until exit.
        std::lock_guard lock(activity_mutex_);
        std::string chip;
        bool never_known = false;  // asking CUPTI for its chip failed: written without one
        {
          std::lock_guard clock(chips_mutex_);
          if (auto it = chips_.find(d->id); it != chips_.end()) chip = it->second;
          never_known = chip_errors_.count(d->id) > 0;
        }
        trace::DeviceInfo info = convert_device(*d, chip, intern_fn);
        info.memory_clock_khz = memory_clock_khz;
        info.memory_bus_width_bits = memory_bus_width_bits;
        if (!chip.empty() || never_known)
          ready = std::move(info);
        else
          pending_devices_.push_back(std::move(info));  // chip learnt when a context on it is created
      }
      if (ready) write(*ready);
      break;
    }
    default:
      break;
  }
}

void Session::write_pending_devices(bool all) noexcept {
  std::vector<trace::DeviceInfo> ready;
  {
    std::lock_guard lock(activity_mutex_);
    for (auto it = pending_devices_.begin(); it != pending_devices_.end();) {
      std::string chip;
      bool never_known = false;  // asking for it failed: written without a chip now, not at exit
      {
        std::lock_guard clock(chips_mutex_);
        if (auto c = chips_.find(it->device_id); c != chips_.end()) chip = c->second;
        never_known = chip_errors_.count(it->device_id) > 0;
      }
      if (chip.empty() && !all && !never_known) {
        ++it;
        continue;
      }
      if (!chip.empty()) it->chip = intern(chip);
      ready.push_back(*it);
      it = pending_devices_.erase(it);
    }
  }
  for (const auto& d : ready) write(d);
}

}  // namespace rf::collector
