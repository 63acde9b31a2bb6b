// NVTX callbacks feeding the launch filter's NVTX state (launch_filter.h), subscribed only when
// --nvtx-include/--nvtx-exclude rules are set: push/pop and start/end ranges with their names and
// domains, and the names of domains as they are created.
#include <sys/syscall.h>
#include <unistd.h>

#include <generated_nvtx_meta.h>

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

uint64_t this_thread() { return static_cast<uint64_t>(::syscall(SYS_gettid)); }

}  // namespace

void Session::enable_nvtx_filter_callbacks() {
  if (!launch_filter_ || !launch_filter_->uses_nvtx()) return;
  // Enabling a callback the style tracker enabled already is harmless (a flag in CUPTI).
  for (auto c : kFilterCallbacks) callbacks_.emplace_back(subscriber_.get(), CUPTI_CB_DOMAIN_NVTX, c);
}

void Session::feed_nvtx_filter(CUpti_CallbackId cbid, const CUpti_NvtxData* n) {
  if (!launch_filter_ || !launch_filter_->uses_nvtx() || !n) return;
  NvtxState& state = launch_filter_->nvtx();
  const void* p = n->functionParams;
  auto domain_name = [&](nvtxDomainHandle_t d) -> std::string {
    std::lock_guard lock(nvtx_domains_mutex_);
    auto it = nvtx_domains_.find(d);
    return it == nvtx_domains_.end() ? std::string() : it->second;
  };
  auto returned_id = [&]() -> uint64_t {
    return n->functionReturnValue ? *static_cast<const nvtxRangeId_t*>(n->functionReturnValue) : 0;
  };
  switch (cbid) {
    case CUPTI_CBID_NVTX_nvtxRangePushA:
      if (p) state.push(this_thread(), "", text(static_cast<const nvtxRangePushA_params*>(p)->message));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePushEx:
      if (p) state.push(this_thread(), "", message_of(static_cast<const nvtxRangePushEx_params*>(p)->eventAttrib));
      break;
    case CUPTI_CBID_NVTX_nvtxRangePop:
      state.pop(this_thread(), "");
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePushEx:
      if (p) {
        const auto* q = static_cast<const nvtxDomainRangePushEx_params*>(p);
        state.push(this_thread(), domain_name(q->domain), message_of(q->core.eventAttrib));
      }
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangePop:
      if (p) state.pop(this_thread(), domain_name(static_cast<const nvtxDomainRangePop_params*>(p)->domain));
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartA:
      if (p) state.start(returned_id(), "", text(static_cast<const nvtxRangeStartA_params*>(p)->message));
      break;
    case CUPTI_CBID_NVTX_nvtxRangeStartEx:
      if (p) state.start(returned_id(), "", message_of(static_cast<const nvtxRangeStartEx_params*>(p)->eventAttrib));
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeStartEx:
      if (p) {
        const auto* q = static_cast<const nvtxDomainRangeStartEx_params*>(p);
        state.start(returned_id(), domain_name(q->domain), message_of(q->core.eventAttrib));
      }
      break;
    case CUPTI_CBID_NVTX_nvtxRangeEnd:
      if (p) state.end(static_cast<const nvtxRangeEnd_params*>(p)->id);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainRangeEnd:
      if (p) state.end(static_cast<const nvtxDomainRangeEnd_params*>(p)->core.id);
      break;
    case CUPTI_CBID_NVTX_nvtxDomainCreateA:
      if (p && n->functionReturnValue) {
        const char* name = static_cast<const nvtxDomainCreateA_params*>(p)->name;
        std::lock_guard lock(nvtx_domains_mutex_);
        nvtx_domains_[*static_cast<const nvtxDomainHandle_t*>(n->functionReturnValue)] = name ? name : "";
      }
      break;
    default:
      break;
  }
}

}  // namespace rf::collector
