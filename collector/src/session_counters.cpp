// Counters: one ContextProfiler per context, decoded images -> RangeCounters, failures.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

#include "driver_shim.h"
#include "host_library.h"
#include "rfprof/collector/metric_sets.h"
#include "session_impl.h"

namespace rf::collector {

uint32_t Session::current_window() noexcept {
  return launch_log_.current_window().value_or(0);
}

std::string Session::chip_for(uint32_t device_id) {
  {
    std::lock_guard lock(chips_mutex_);
    if (auto e = chip_errors_.find(device_id); e != chip_errors_.end()) std::rethrow_exception(e->second);
    if (auto it = chips_.find(device_id); it != chips_.end()) return it->second;
  }
  // Asked with no lock held (CUPTI calls). Two threads may both ask; the first answer is kept.
  std::string chip;
  try {
    // Counters need the host API's library before CUPTI's profiler looks for it; timing mode
    // asks only the chip's name and leaves the library to CUPTI (host_library.h).
    if (options_.mode == trace::CollectionMode::kCounters) load_host_library();
    initialize_profiler_once();
    chip = device_chip_name(device_id);
  } catch (...) {
    // Asked once: every later ask rethrows this error (so a context's setup reports the CUPTI
    // error itself, e.g. ERR_NVGPUCTRPERM), and DeviceInfo is written without a chip.
    std::lock_guard lock(chips_mutex_);
    chip_errors_.emplace(device_id, std::current_exception());
    throw;
  }
  std::lock_guard lock(chips_mutex_);
  return chips_.emplace(device_id, std::move(chip)).first->second;
}

std::string Session::chip_of(uint32_t device_id) noexcept {
  try {
    return chip_for(device_id);
  } catch (...) {
    return std::string();
  }
}

uint32_t Session::config_id(const ContextProfiler& cp) noexcept {
  // The MetricConfig record is written under the lock, so no thread can use an id before it is.
  std::lock_guard lock(chips_mutex_);
  auto it = config_ids_.find(cp.chip());
  if (it != config_ids_.end()) return it->second;
  auto id = static_cast<uint32_t>(config_ids_.size() + 1);
  try {
    config_ids_.emplace(cp.chip(), id);
    trace::MetricConfig mc;
    mc.config_id = id;
    mc.chip = intern(cp.chip());
    mc.num_passes = static_cast<uint32_t>(cp.num_passes());
    for (const auto& m : cp.metrics()) mc.metrics.push_back(intern(m));
    write(mc);
  } catch (...) {
  }
  return id;
}

void Session::counters_unavailable(uint32_t window, CountersFailure failure, const std::string& detail,
                                   std::optional<uint32_t> device) noexcept {
  try {
    const bool mps = failure == CountersFailure::kUnsupported && device &&
                     driver::device_attribute(static_cast<int>(*device), CU_DEVICE_ATTRIBUTE_MPS_ENABLED) == 1;
    std::string line = counters_unavailable_message(failure, detail, mps);
    if (!counters_message_printed_.exchange(true)) print_line(line);
    write_error(trace::ErrorCode::kCountersUnavailable, window, 0, 0, line);
  } catch (...) {
  }
}

void Session::counters_failed(CUcontext ctx, uint32_t device, uint32_t window, const std::string& detail,
                              int cupti_result) noexcept {
  try {
    (void)profilers_.refuse(ctx);
  } catch (...) {
  }
  counters_unavailable(window, classify_counters_failure(cupti_result), detail, device);
}

std::shared_ptr<ContextProfiler> Session::profiler_for(CUcontext ctx) {
  // One setup attempt per context; a failed one is remembered until the context is destroyed.
  return profilers_.get_or_setup(ctx, [this, ctx] { return set_up_profiler(ctx); });
}

std::shared_ptr<ContextProfiler> Session::set_up_profiler(CUcontext ctx) {
  const uint32_t window = current_window();
  ScopedOverhead timed(process_overhead(), OverheadPhase::kCountersSetup);
  std::optional<uint32_t> device;  // known once CUPTI names it
  std::string where = "context setup";
  try {
    uint32_t id = 0;
    RF_CUPTI_CALL(cuptiGetDeviceId(ctx, &id));
    device = id;
    where = "device " + std::to_string(id);
    std::string chip = chip_for(id);
    where += " (" + chip + ")";
    std::vector<std::string> metrics = options_.metrics;
    if (default_metrics_ && chip_has_packed_fp32(chip))  // FP32 FLOP of packed FFMA2/FADD2/FMUL2 too
      metrics.insert(metrics.end(), packed_fp32_metrics().begin(), packed_fp32_metrics().end());
    if (!options_.metric_set.empty()) {  // planned for this chip with the host API (metric_sets.h)
      metrics = plan_metric_set(MetricHost(chip), options_.metric_set).metrics;
      for (const auto& m : options_.metrics)  // and --metrics besides, as ncu collects both
        if (std::find(metrics.begin(), metrics.end(), m) == metrics.end()) metrics.push_back(m);
    }
    auto cp = std::make_shared<ContextProfiler>(ctx, id, chip, std::move(metrics),
                                                options_.max_ranges_per_image,
                                                step_mode() ? ReplayMode::kStep : ReplayMode::kKernel);
    cp->set_config_id(config_id(*cp));
    return cp;
  } catch (const CuptiError& e) {
    counters_unavailable(window, classify_counters_failure(static_cast<int>(e.result())),
                         where + ": " + e.what(), device);
  } catch (const MetricError& e) {
    counters_unavailable(window, CountersFailure::kMetrics, where + ": " + detail_of(e));
  } catch (const std::exception& e) {
    counters_unavailable(window, CountersFailure::kOther, where + ": " + detail_of(e));
  }
  return nullptr;
}

void Session::flush_image(ContextProfiler& cp, DecodeFrom from, bool last) noexcept {
  try {
    if (!cp.started() || cp.abandoned()) {
      cp.launches().reset();
      return;
    }
    const uint32_t window = cp.window_id();
    const std::string device = "device " + std::to_string(cp.device_id()) + " (" + cp.chip() + ")";
    driver::ScopedContext scope(cp.context());
    if (cp.replay() == ReplayMode::kStep) {  // passes of a group are decoded by step_close_window
      (void)cp.stop_pass();
      cp.launches().reset();
      return;
    }
    DecodedImage image;
    try {
      image = cp.stop_and_decode(/*prepare_next=*/!last);
    } catch (const std::exception& e) {
      if (from == DecodeFrom::kFlushThread) {
        // Not yet run on a GPU: if CUPTI refuses to decode off the launching thread, only this
        // image is lost. The Range Profiler is disabled (the next launch enables it afresh) and
        // images are decoded where they were before, at launches, window ends and exit.
        waiting_decodes_off_.store(true, std::memory_order_relaxed);
        write_error(trace::ErrorCode::kDecodeFailed, window, cp.launches().size(), 0,
                    "decoding the counter image of " + device + " on rfprof's flush thread failed: " +
                        e.what() + "; the counters of its " + std::to_string(cp.launches().size()) +
                        " launches are lost; images are decoded only at launches from now on");
        cp.disable();
        cp.launches().reset();
        return;
      }
      write_error(trace::ErrorCode::kDecodeFailed, window, cp.launches().size(), 0,
                  "decoding the counter image of " + device + " failed: " + e.what() +
                      "; the counters of its " + std::to_string(cp.launches().size()) +
                      " launches are lost and counters stop on this context");
      CUcontext ctx = cp.context();
      cp.stop_for_good();  // also for a launch that already holds cp
      // An abandoned cp's context is gone and its handle may already be another context's.
      if (!cp.abandoned()) (void)profilers_.refuse(ctx);  // the caller holds its own reference to cp
      return;
    }
    if (!image.all_passes_submitted)
      write_error(trace::ErrorCode::kDecodeFailed, window, 0, 0,
                  "cuptiRangeProfilerStop on " + device +
                      " reports that not all replay passes were submitted; counters of this image "
                      "may be incomplete");
    RangeMapping mapping = cp.launches().map(image.ranges.size());
    if (!mapping.ok) {
      std::string msg = device + ": " + mapping.message;
      if (image.dropped_ranges > 0)
        msg += " (CUPTI dropped " + std::to_string(image.dropped_ranges) + " ranges)";
      write_error(trace::ErrorCode::kRangeLaunchMismatch, window, mapping.expected_ranges,
                  mapping.actual_ranges, msg);
    }
    for (size_t i = 0; i < image.ranges.size(); ++i) {
      trace::RangeCounters rc;
      rc.config_id = cp.config_id();
      rc.window_id = window;
      rc.range_index = i;
      rc.correlation_id = mapping.correlation_ids[i];
      rc.range_name = intern(image.ranges[i].range_name);
      rc.values = std::move(image.ranges[i].values);
      write(rc);
    }
    cp.launches().reset();
    if (!image.prepare_error.empty())
      write_error(trace::ErrorCode::kCuptiCall, window, 0, 0,
                  "preparing the next counter image of " + device + " failed: " + image.prepare_error +
                      "; the decoded counters are kept and the Range Profiler is enabled again at the "
                      "next launch in a window");
  } catch (const std::exception& e) {
    static std::atomic<bool> reported{false};  // once: an error at every window must not flood stderr
    if (!reported.exchange(true)) print_line("rfprof: internal error while decoding counters: ", e.what());
  } catch (...) {
  }
}

void Session::flush_all_images(bool at_exit, std::chrono::milliseconds launch_wait,
                               uint32_t exit_window) noexcept {
  // One deadline for every context: N busy contexts must not cost N times the wait.
  const auto deadline = std::chrono::steady_clock::now() + launch_wait;
  for (auto& cp : profilers_.all()) {
    std::unique_lock<std::timed_mutex> lock(cp->mutex(), std::defer_lock);
    if (at_exit) {
      // A launch still in flight on another thread at exit must not hang the process.
      if (!lock.try_lock_until(deadline)) {
        // cp is not ours to read (its launch thread holds it): the window the exit closed.
        write_error(trace::ErrorCode::kDecodeFailed, exit_window, 0, 0,
                    "a kernel launch on device " + std::to_string(cp->device_id()) + " was still running " +
                        std::to_string(launch_wait.count()) +
                        " ms after the trace began to finish; the counter image of that context was not "
                        "decoded");
        continue;
      }
    } else {
      lock.lock();
    }
    flush_image(*cp, DecodeFrom::kLaunchPath, /*last=*/at_exit);
    if (at_exit) {
      driver::ScopedContext scope(cp->context());  // as the samples disable: the context current
      cp->disable();
    }
  }
}

void Session::decode_waiting_images() noexcept {
  if (options_.mode != trace::CollectionMode::kCounters || step_mode()) return;  // passes end with windows
  for (auto& cp : profilers_.all()) {
    if (waiting_decodes_off_.load(std::memory_order_relaxed)) return;
    std::unique_lock<std::timed_mutex> lock(cp->mutex(), std::try_to_lock);
    // Held: a launch is in flight on the context, and its successor's entry decodes an image
    // older than the flush interval (image_must_be_decoded). Not running: finishing has begun and
    // decodes every image itself, before the window's close record.
    if (!lock.owns_lock() || !running() || !cp->started() || cp->launches().empty()) continue;
    flush_image(*cp, DecodeFrom::kFlushThread);
  }
}

void Session::drop_context(CUcontext ctx) noexcept {
  std::shared_ptr<ContextProfiler> cp = profilers_.erase(ctx);  // the handle may be reused
  if (!cp) return;
  {
    // Bounded: the flush thread may be decoding this context's image (decode_waiting_images),
    // with the context pushed, while the driver destroys it from this callback.
    std::unique_lock<std::timed_mutex> lock(cp->mutex(), std::defer_lock);
    if (!lock.try_lock_for(kDropContextWait)) {
      cp->abandon();  // whoever holds it makes no CUPTI call on the dying context after its current one
      write_error(trace::ErrorCode::kDecodeFailed, 0, 0, 0,
                  "a context of device " + std::to_string(cp->device_id()) + " was destroyed while rfprof " +
                      "still held its counter image after " + std::to_string(kDropContextWait.count()) +
                      " ms (a launch in flight, or a decode); that image is lost");
      return;
    }
    if (step_mode()) step_context_destroyed(*cp);
    flush_image(*cp, DecodeFrom::kLaunchPath, /*last=*/true);  // a decode failure refuses ctx: forgotten below
    driver::ScopedContext scope(cp->context());
    cp->stop_for_good();  // before the context goes away; a launch still holding cp starts nothing
  }
  (void)profilers_.erase(ctx);
}

}  // namespace rf::collector
