// Launch API names by CUPTI callback id (rfprof/trace/api_names.h).
#include "rfprof/trace/api_names.h"

namespace rf::trace {
namespace {

struct Entry {
  uint32_t cbid;
  std::string_view name;
};

// cupti_driver_cbid.h (CUDA 13.0): CUPTI_DRIVER_TRACE_CBID_<name> = cbid.
constexpr Entry kDriver[] = {
    {307, "cuLaunchKernel"},
    {442, "cuLaunchKernel_ptsz"},
    {477, "cuLaunchCooperativeKernel"},
    {478, "cuLaunchCooperativeKernel_ptsz"},
    {514, "cuGraphLaunch"},
    {515, "cuGraphLaunch_ptsz"},
    {652, "cuLaunchKernelEx"},
    {653, "cuLaunchKernelEx_ptsz"},
};

// cupti_runtime_cbid.h (CUDA 13.0): CUPTI_RUNTIME_TRACE_CBID_<name>_v<version> = cbid.
constexpr Entry kRuntime[] = {
    {211, "cudaLaunchKernel"},
    {214, "cudaLaunchKernel_ptsz"},
    {269, "cudaLaunchCooperativeKernel"},
    {270, "cudaLaunchCooperativeKernel_ptsz"},
    {311, "cudaGraphLaunch"},
    {312, "cudaGraphLaunch_ptsz"},
    {430, "cudaLaunchKernelExC"},
    {431, "cudaLaunchKernelExC_ptsz"},
    {505, "__cudaLaunchKernel"},
    {506, "__cudaLaunchKernel_ptsz"},
};

template <size_t N>
std::string_view find(const Entry (&table)[N], uint32_t cbid) noexcept {
  for (const auto& e : table)
    if (e.cbid == cbid) return e.name;
  return {};
}

}  // namespace

std::string_view launch_api_name(ApiDomain domain, uint32_t cbid) noexcept {
  return domain == ApiDomain::kRuntime ? find(kRuntime, cbid) : find(kDriver, cbid);
}

std::string launch_api_label(ApiDomain domain, uint32_t cbid) {
  if (auto name = launch_api_name(domain, cbid); !name.empty()) return std::string(name);
  return std::string(domain == ApiDomain::kRuntime ? "runtime" : "driver") + " API call (cbid " +
         std::to_string(cbid) + ")";
}

}  // namespace rf::trace
