// RAII guards for the CUPTI calls that come in pairs (the seam, part 2; part 1 is cupti_call.h).
// Each guard undoes its call in its destructor with RF_CUPTI_TRY (never throws); release() keeps
// the resource alive past the guard. Constructors call CUPTI with RF_CUPTI_CALL and throw
// CuptiError on failure, so a failed setup unwinds every pair it had already made.
#pragma once

#include <cupti.h>
#include <cupti_range_profiler.h>

#include <string>
#include <utility>

#include "cupti_call.h"

namespace rf::collector {

/// cuptiSubscribe_v2 / cuptiUnsubscribe. When CUPTI refuses (e.g.
/// CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) the constructor stores CUPTI's name of the
/// other client in `*other_client_out` (may be empty) and throws CuptiError.
class SubscriberGuard {
 public:
  SubscriberGuard() = default;
  SubscriberGuard(CUpti_CallbackFunc callback, void* userdata, std::string* other_client_out) {
    char old_name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = {};
    CUpti_SubscriberParams params{};
    params.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    params.subscriberName = "rfprof";
    params.oldSubscriberName = old_name;
    params.oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN;
    CUptiResult r = cuptiSubscribe_v2(&handle_, callback, userdata, &params);
    if (r != CUPTI_SUCCESS) {
      handle_ = nullptr;
      if (other_client_out) *other_client_out = old_name;
      throw CuptiError(r, "cuptiSubscribe_v2", __FILE__, __LINE__);
    }
  }
  ~SubscriberGuard() { reset(); }
  SubscriberGuard(SubscriberGuard&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  SubscriberGuard& operator=(SubscriberGuard&& o) noexcept {
    if (this != &o) {
      reset();
      handle_ = std::exchange(o.handle_, nullptr);
    }
    return *this;
  }
  SubscriberGuard(const SubscriberGuard&) = delete;
  SubscriberGuard& operator=(const SubscriberGuard&) = delete;

  CUpti_SubscriberHandle get() const noexcept { return handle_; }
  /// Unsubscribes now (no more callbacks to this subscriber).
  void reset() noexcept {
    if (handle_) RF_CUPTI_TRY(cuptiUnsubscribe(handle_));
    handle_ = nullptr;
  }

 private:
  CUpti_SubscriberHandle handle_ = nullptr;
};

/// cuptiEnableCallback(1, ...) / cuptiEnableCallback(0, ...) for one (domain, cbid).
class CallbackGuard {
 public:
  CallbackGuard(CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
      : subscriber_(subscriber), domain_(domain), cbid_(cbid) {
    RF_CUPTI_CALL(cuptiEnableCallback(1, subscriber_, domain_, cbid_));
  }
  ~CallbackGuard() {
    if (subscriber_) RF_CUPTI_TRY(cuptiEnableCallback(0, subscriber_, domain_, cbid_));
  }
  CallbackGuard(CallbackGuard&& o) noexcept
      : subscriber_(std::exchange(o.subscriber_, nullptr)), domain_(o.domain_), cbid_(o.cbid_) {}
  CallbackGuard& operator=(CallbackGuard&&) = delete;
  CallbackGuard(const CallbackGuard&) = delete;
  CallbackGuard& operator=(const CallbackGuard&) = delete;
  /// Leaves the callback enabled (the subscriber's own teardown disables it).
  void release() noexcept { subscriber_ = nullptr; }

 private:
  CUpti_SubscriberHandle subscriber_;
  CUpti_CallbackDomain domain_;
  CUpti_CallbackId cbid_;
};

/// cuptiActivityEnable / cuptiActivityDisable for one activity kind.
class ActivityKindGuard {
 public:
  explicit ActivityKindGuard(CUpti_ActivityKind kind) : kind_(kind), active_(true) {
    RF_CUPTI_CALL(cuptiActivityEnable(kind_));
  }
  ~ActivityKindGuard() { reset(); }
  ActivityKindGuard(ActivityKindGuard&& o) noexcept
      : kind_(o.kind_), active_(std::exchange(o.active_, false)) {}
  ActivityKindGuard& operator=(ActivityKindGuard&&) = delete;
  ActivityKindGuard(const ActivityKindGuard&) = delete;
  ActivityKindGuard& operator=(const ActivityKindGuard&) = delete;
  /// Disables the kind now.
  void reset() noexcept {
    if (active_) RF_CUPTI_TRY(cuptiActivityDisable(kind_));
    active_ = false;
  }

 private:
  CUpti_ActivityKind kind_;
  bool active_;
};

/// cuptiRangeProfilerEnable / cuptiRangeProfilerDisable for one context.
class RangeProfilerGuard {
 public:
  RangeProfilerGuard() = default;
  explicit RangeProfilerGuard(CUcontext ctx) {
    CUpti_RangeProfiler_Enable_Params p{};
    p.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
    p.ctx = ctx;
    RF_CUPTI_CALL(cuptiRangeProfilerEnable(&p));
    object_ = p.pRangeProfilerObject;
  }
  ~RangeProfilerGuard() { reset(); }
  RangeProfilerGuard(RangeProfilerGuard&& o) noexcept : object_(std::exchange(o.object_, nullptr)) {}
  RangeProfilerGuard& operator=(RangeProfilerGuard&& o) noexcept {
    if (this != &o) {
      reset();
      object_ = std::exchange(o.object_, nullptr);
    }
    return *this;
  }
  RangeProfilerGuard(const RangeProfilerGuard&) = delete;
  RangeProfilerGuard& operator=(const RangeProfilerGuard&) = delete;

  CUpti_RangeProfiler_Object* get() const noexcept { return object_; }
  /// Drops the object without a CUPTI call: its context is gone (ContextProfiler::abandon).
  void forget() noexcept { object_ = nullptr; }
  /// Disables the range profiler of the context now.
  void reset() noexcept {
    if (!object_) return;
    CUpti_RangeProfiler_Disable_Params p{};
    p.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE;
    p.pRangeProfilerObject = object_;
    RF_CUPTI_TRY(cuptiRangeProfilerDisable(&p));
    object_ = nullptr;
  }

 private:
  CUpti_RangeProfiler_Object* object_ = nullptr;
};

}  // namespace rf::collector
