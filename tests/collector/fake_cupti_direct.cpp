// The fake CUPTI's direct callers (fake_cupti.h): DirectLaunch and DirectNvtx call the subscribed
// callback exactly as CUPTI would, with none of the fake's own work (no records, no ranges, no
// lock), for measuring what the session's callbacks cost (time, allocations, locks).
#include <generated_nvtx_meta.h>

#include <tuple>

#include "fake_cupti.h"
#include "fake_cupti_state.h"

namespace rf::fake_cupti {

using detail::context_uid;

DirectLaunch::DirectLaunch(CUcontext ctx, const char* kernel, unsigned grid_x, unsigned block_x) {
  std::tie(fn_, user_) = subscriber();
  params_.gridDimX = grid_x;
  params_.gridDimY = params_.gridDimZ = 1;
  params_.blockDimX = block_x;
  params_.blockDimY = params_.blockDimZ = 1;
  runtime_.functionName = "cudaLaunchKernel";
  runtime_.functionReturnValue = &runtime_result_;
  runtime_.symbolName = kernel;
  runtime_.context = ctx;
  runtime_.contextUid = context_uid(ctx);
  driver_ = runtime_;
  driver_.functionName = "cuLaunchKernel";
  driver_.functionParams = &params_;
  driver_.functionReturnValue = &driver_result_;
}

void DirectLaunch::operator()(uint32_t id) {
  runtime_.correlationId = id;
  driver_.correlationId = id;
  runtime_.callbackSite = driver_.callbackSite = CUPTI_API_ENTER;
  fn_(user_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &runtime_);
  fn_(user_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &driver_);
  runtime_.callbackSite = driver_.callbackSite = CUPTI_API_EXIT;
  fn_(user_, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, &driver_);
  fn_(user_, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, &runtime_);
}

DirectNvtx::DirectNvtx(nvtxDomainHandle_t domain) : domain_(domain) { std::tie(fn_, user_) = subscriber(); }

namespace {

/// Event attributes with an ASCII `message`, as nvtxDomainRangePushEx/StartEx take them.
nvtxEventAttributes_t ascii_attributes(const char* message) {
  nvtxEventAttributes_t a{};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return a;
}

}  // namespace

void DirectNvtx::push(const char* message) {
  int level = 0;
  if (domain_) {
    nvtxEventAttributes_t a = ascii_attributes(message);
    nvtxDomainRangePushEx_params p{};
    p.domain = domain_;
    p.core.eventAttrib = &a;
    CUpti_NvtxData d{"nvtxDomainRangePushEx", &p, &level};
    fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangePushEx, &d);
    return;
  }
  nvtxRangePushA_params p{};
  p.message = message;
  CUpti_NvtxData d{"nvtxRangePushA", &p, &level};
  fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePushA, &d);
}

void DirectNvtx::pop() {
  int level = 0;
  if (domain_) {
    nvtxDomainRangePop_params p{};
    p.domain = domain_;
    CUpti_NvtxData d{"nvtxDomainRangePop", &p, &level};
    fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangePop, &d);
    return;
  }
  nvtxRangePop_params p{};
  CUpti_NvtxData d{"nvtxRangePop", &p, &level};
  fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangePop, &d);
}

void DirectNvtx::start(const char* message, uint64_t id) {
  nvtxRangeId_t rid = id;
  if (domain_) {
    nvtxEventAttributes_t a = ascii_attributes(message);
    nvtxDomainRangeStartEx_params p{};
    p.domain = domain_;
    p.core.eventAttrib = &a;
    CUpti_NvtxData d{"nvtxDomainRangeStartEx", &p, &rid};
    fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangeStartEx, &d);
    return;
  }
  nvtxRangeStartA_params p{};
  p.message = message;
  CUpti_NvtxData d{"nvtxRangeStartA", &p, &rid};
  fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangeStartA, &d);
}

void DirectNvtx::end(uint64_t id) {
  if (domain_) {
    nvtxDomainRangeEnd_params p{};
    p.domain = domain_;
    p.core.id = id;
    CUpti_NvtxData d{"nvtxDomainRangeEnd", &p, nullptr};
    fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxDomainRangeEnd, &d);
    return;
  }
  nvtxRangeEnd_params p{};
  p.id = id;
  CUpti_NvtxData d{"nvtxRangeEnd", &p, nullptr};
  fn_(user_, CUPTI_CB_DOMAIN_NVTX, CUPTI_CBID_NVTX_nvtxRangeEnd, &d);
}

}  // namespace rf::fake_cupti
