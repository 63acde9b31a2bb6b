// NVTX callbacks, subscribed only when something needs them: the launch filter's NVTX state
// (launch_filter.h; --nvtx-include/--nvtx-exclude rules) and the NVTX-range windows of replay
// across steps (step_range_windows.h; RFPROF_REPLAY_RANGE). Push/pop and start/end ranges with
// their names and domains, and the names of domains as they are created.
#include <unistd.h>

#include <generated_nvtx_meta.h>

#include "driver_shim.h"
#include "session_impl.h"

namespace rf::collector {
namespace {

constexpr CUpti_CallbackId kFilterCallbacks[] = {
    CUPTI_CBID_NVTX_nvtxRangePushA,        CUPTI_CBID_NVTX_nvtxRangePushEx,
    CUPTI_CBID_NVTX_nvtxRangePop,          CUPTI_CBID_NVTX_nvtxDomainRangePushEx,
    CUPTI_CBID_NVTX_nvtxDomainRangePop,    CUPTI_CBID_NVTX_nvtxRangeStartA,
    CUPTI_CBID_NVTX_nvtxRangeStartEx,      CUPTI_CBID_NVTX_nvtxRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, CUPTI_CBID_NVTX_nvtxDomainRangeEnd,
    CUPTI_CBID_NVTX_nvtxDomainCreateA,
};

/// The ASCII message of an event attribute structure ("" for none, wide or registered strings).
std::string_view message_of(const nvtxEventAttributes_t* a) {
  if (!a || a->messageType != NVTX_MESSAGE_TYPE_ASCII || !a->message.ascii) return {};
  return a->message.ascii;
}

std::string_view text(const char* s) { return s ? std::string_view(s) : std::string_view(); }

/// Most NVTX domain names a thread keeps (a process has a handful of domains).
constexpr size_t kMaxCachedDomains = 64;

}  // namespace

void Session::enable_nvtx_filter_callbacks() {
  if ((!launch_filter_ || !launch_filter_->uses_nvtx()) && !step_range_) return;
  // Enabling a callback the style tracker enabled already is harmless (a flag in CUPTI).
  for (auto c : kFilterCallbacks) callbacks_.emplace_back(subscriber_.get(), CUPTI_CB_DOMAIN_NVTX, c);
}

namespace {

/// One NVTX range call, from its callback's parameters.
struct NvtxCall {
  enum Kind { kNone, kPush, kPop, kStart, kEnd } kind = kNone;
  nvtxDomainHandle_t domain = nullptr;  // null: the default domain
  std::string_view name;                // push/start message (ASCII only)
  uint64_t id = 0;                      // start/end range id
};

NvtxCall decode(CUpti_CallbackId cbid, const CUpti_NvtxData* n) {
  NvtxCall c;
  const void* p = n->functionParams;
  if (!p && cbid != CUPTI_CBID_NVTX_nvtxRangePop) return c;
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      c = {NvtxCall::kPush, nullptr, text(static_cast<const nvtxRangePushA_params*>(p)->message), 0};
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      c = {NvtxCall::kPush, nullptr, message_of(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib), 0};
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
      c.kind = NvtxCall::kPop;
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx: {
      const auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
      c = {NvtxCall::kPush, q->domain, message_of(q->core.eventAttrib), 0};
      break;
    }
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      c = {NvtxCall::kPop, static_cast<const nvtxDomainRangePop_params*>(p)->domain, {}, 0};
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      c = {NvtxCall::kStart, nullptr, text(static_cast<const nvtxRangeStartA_params*>(p)->message), 0};
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      c = {NvtxCall::kStart, nullptr, message_of(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib), 0};
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx: {
      const auto* q = static_cast<const nvtxDomainRangeStartEx_params*>(p);
      c = {NvtxCall::kStart, q->domain, message_of(q->core.eventAttrib), 0};
      break;
    }
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      c = {NvtxCall::kEnd, nullptr, {}, static_cast<const nvtxRangeEnd_params*>(p)->id};
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      c = {NvtxCall::kEnd, nullptr, {}, static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id};
      break;
    default:
      break;
  }
  if (c.kind == NvtxCall::kStart && n->functionReturnValue)
    c.id = *static_cast<const nvtxRangeId_t*>(n->functionReturnValue);
  return c;
}

}  // namespace

std::string_view Session::nvtx_domain_name(const void* domain) {
  if (!domain) return {};
  NvtxDomainNames& t = nvtx_domain_names_.local();
  const uint64_t generation = nvtx_domains_generation_.load(std::memory_order_acquire);
  if (t.generation != generation) {  // a domain was created since: its handle may be one cached
    t.names.clear();
    t.generation = generation;
  }
  for (const auto& [handle, name] : t.names)
    if (handle == domain) return name;
  std::string name;
  uint64_t now = 0;
  {
    std::lock_guard lock(nvtx_domains_mutex_);
    auto it = nvtx_domains_.find(domain);
    if (it != nvtx_domains_.end()) name = it->second;
    now = nvtx_domains_generation_.load(std::memory_order_relaxed);  // the table as read here
  }
  // A domain created since the check above: the names cached before it may be stale.
  if (now != t.generation || t.names.size() >= kMaxCachedDomains) {
    t.names.clear();
    t.generation = now;
  }
  t.names.emplace_back(domain, std::move(name));
  return t.names.back().second;
}

void Session::feed_nvtx(CUpti_CallbackId cbid, const CUpti_NvtxData* n) {
  const bool filter = launch_filter_ && launch_filter_->uses_nvtx();
  if ((!filter && !step_range_) || !n) return;
  if (cbid == CUPTI_CBID_NVTX_nvtxDomainCreateA) {
    if (n->functionParams && n->functionReturnValue) {
      const char* name = static_cast<const nvtxDomainCreateA_params*>(n->functionParams)->name;
      std::lock_guard lock(nvtx_domains_mutex_);
      nvtx_domains_[*static_cast<const nvtxDomainHandle_t*>(n->functionReturnValue)] = name ? name : "";
      nvtx_domains_generation_.fetch_add(1, std::memory_order_release);  // under the lock: in order
    }
    return;
  }
  const NvtxCall c = decode(cbid, n);
  if (c.kind == NvtxCall::kNone) return;
  if (filter) {
    NvtxState& state = launch_filter_->nvtx();
    // The calling thread's stacks (handed on when it exits), which its launches ask about.
    constexpr uint64_t me = NvtxState::kCallingThread;
    switch (c.kind) {
      case NvtxCall::kPush: state.push(me, nvtx_domain_name(c.domain), c.name); break;
      case NvtxCall::kPop: state.pop(me, nvtx_domain_name(c.domain)); break;
      case NvtxCall::kStart: state.start(c.id, nvtx_domain_name(c.domain), c.name); break;
      case NvtxCall::kEnd: state.end(c.id); break;
      default: break;
    }
  }
  if (step_range_) {
    StepRangeEvent e = StepRangeEvent::kNone;
    // The calling thread's depths (handed on, emptied, when it exits). Thread-safe; a range that
    // neither opens nor closes the window locks nothing.
    constexpr uint64_t me = StepRangeWindows::kCallingThread;
    switch (c.kind) {
      case NvtxCall::kPush: e = step_range_->push(me, c.name, reinterpret_cast<uintptr_t>(c.domain)); break;
      case NvtxCall::kPop: e = step_range_->pop(me, reinterpret_cast<uintptr_t>(c.domain)); break;
      case NvtxCall::kStart: e = step_range_->start(c.id, c.name); break;
      case NvtxCall::kEnd: e = step_range_->end(c.id); break;
      default: break;
    }
    // The step range is the window (replay across steps, RFPROF_REPLAY_RANGE).
    if (e != StepRangeEvent::kNone) release_this_threads_stale_launch_lock();  // as at cudaProfilerStart/Stop
    if (e == StepRangeEvent::kOpen) step_open_window(cbid, driver::current_context());
    else if (e == StepRangeEvent::kClose) step_close_window(cbid);
  }
}

}  // namespace rf::collector
