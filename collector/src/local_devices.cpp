// local_devices(): the driver through dlopen (rfprof does not link libcuda, so it runs on machines
// without one), the chip names through the CUPTI seam.
#include "rfprof/collector/local_devices.h"

#include <cuda.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <dlfcn.h>

#include <optional>

#include "cupti_call.h"
#include "host_library.h"
#include "rfprof/collector/host_metrics.h"

namespace rf::collector {
namespace {

using InitFn = CUresult (*)(unsigned int);
using GetCountFn = CUresult (*)(int*);
using GetFn = CUresult (*)(CUdevice*, int);
using GetNameFn = CUresult (*)(char*, int, CUdevice);
using ErrorNameFn = CUresult (*)(CUresult, const char**);

/// The driver's entry points, resolved from libcuda.so.1 (never closed: CUPTI uses it after).
struct Driver {
  InitFn init = nullptr;
  GetCountFn get_count = nullptr;
  GetFn get = nullptr;
  GetNameFn get_name = nullptr;
  ErrorNameFn error_name = nullptr;

  Driver() {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* why = dlerror();
      throw HostApiError(std::string("rfprof: no CUDA driver could be loaded (") + (why ? why : "libcuda.so.1") +
                         ")");
    }
    init = reinterpret_cast<InitFn>(dlsym(lib, "cuInit"));
    get_count = reinterpret_cast<GetCountFn>(dlsym(lib, "cuDeviceGetCount"));
    get = reinterpret_cast<GetFn>(dlsym(lib, "cuDeviceGet"));
    get_name = reinterpret_cast<GetNameFn>(dlsym(lib, "cuDeviceGetName"));
    error_name = reinterpret_cast<ErrorNameFn>(dlsym(lib, "cuGetErrorName"));
    if (!init || !get_count || !get || !get_name)
      throw HostApiError("rfprof: libcuda.so.1 lacks cuInit, cuDeviceGetCount, cuDeviceGet or cuDeviceGetName");
  }

  /// Throws HostApiError "rfprof: <call>: <CUDA error name>" unless `r` is CUDA_SUCCESS.
  void check(CUresult r, const char* call) const {
    if (r == CUDA_SUCCESS) return;
    const char* name = nullptr;
    if (!error_name || error_name(r, &name) != CUDA_SUCCESS || !name) name = "unknown CUDA error";
    throw HostApiError(std::string("rfprof: ") + call + " failed: " + name +
                       (r == CUDA_ERROR_NO_DEVICE ? " (no CUDA device is visible to this process)" : ""));
  }
};

/// cuptiProfilerInitialize / cuptiProfilerDeInitialize around the chip-name queries.
class ProfilerInitGuard {
 public:
  ProfilerInitGuard() {
    CUpti_Profiler_Initialize_Params p{};
    p.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
    RF_CUPTI_CALL(cuptiProfilerInitialize(&p));
  }
  ~ProfilerInitGuard() {
    CUpti_Profiler_DeInitialize_Params p{};
    p.structSize = CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE;
    RF_CUPTI_TRY(cuptiProfilerDeInitialize(&p));
  }
  ProfilerInitGuard(const ProfilerInitGuard&) = delete;
  ProfilerInitGuard& operator=(const ProfilerInitGuard&) = delete;
};

}  // namespace

std::vector<LocalDevice> local_devices() {
  const Driver driver;
  driver.check(driver.init(0), "cuInit");
  int count = 0;
  driver.check(driver.get_count(&count), "cuDeviceGetCount");
  std::vector<LocalDevice> devices;
  std::optional<ProfilerInitGuard> profiler;
  load_host_library();  // before cuptiProfilerInitialize, which may dlopen it by name
  try {
    profiler.emplace();
  } catch (const CuptiError& e) {
    throw HostApiError(std::string("rfprof: CUPTI's profiler cannot be initialized: ") + e.what());
  }
  try {
    for (int i = 0; i < count; ++i) {
      CUdevice device = 0;
      driver.check(driver.get(&device, i), "cuDeviceGet");
      char name[256] = {};
      driver.check(driver.get_name(name, static_cast<int>(sizeof name) - 1, device), "cuDeviceGetName");
      CUpti_Device_GetChipName_Params p{};
      p.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
      p.deviceIndex = static_cast<size_t>(i);
      RF_CUPTI_CALL(cuptiDeviceGetChipName(&p));
      devices.push_back({static_cast<uint32_t>(i), name, p.pChipName ? p.pChipName : ""});
    }
  } catch (const CuptiError& e) {
    throw HostApiError(std::string("rfprof: CUPTI cannot name the device's chip: ") + e.what());
  }
  return devices;
}

}  // namespace rf::collector
