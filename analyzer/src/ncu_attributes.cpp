// ncu's launch__* and device__attribute_* columns from an rfprof trace (rfprof/analyzer/ncu_csv.h,
// ncu_attributes).
#include <algorithm>
#include <array>
#include <cstdint>

#include "rfprof/analyzer/ncu_csv.h"

namespace rf::analyzer {
namespace {

using Value = std::function<std::string(const KernelRow&, const DeviceRecord*)>;

std::string number(uint64_t v) { return ncu_whole_number(v); }

/// Component `axis` of a launch's grid or block; "" when the trace lacks it.
Value dim(std::optional<std::array<int32_t, 3>> KernelRow::*field, int axis) {
  return [field, axis](const KernelRow& r, const DeviceRecord*) {
    const auto& d = r.*field;
    return d && (*d)[axis] >= 0 ? number(static_cast<uint64_t>((*d)[axis])) : std::string();
  };
}

/// x*y*z of a grid or block (blocks, threads per block); nullopt when the trace lacks it, for a
/// negative component (a hostile trace) or when the product overflows 64 bits.
std::optional<uint64_t> product(const std::optional<std::array<int32_t, 3>>& d) {
  if (!d || (*d)[0] < 0 || (*d)[1] < 0 || (*d)[2] < 0) return std::nullopt;
  uint64_t xy = 0, xyz = 0;
  if (__builtin_mul_overflow(static_cast<uint64_t>((*d)[0]), static_cast<uint64_t>((*d)[1]), &xy) ||
      __builtin_mul_overflow(xy, static_cast<uint64_t>((*d)[2]), &xyz))
    return std::nullopt;
  return xyz;
}

/// x*y*z of a grid or block as ncu prints it; "" when product() has none.
Value size_of(std::optional<std::array<int32_t, 3>> KernelRow::*field) {
  return [field](const KernelRow& r, const DeviceRecord*) {
    const auto n = product(r.*field);
    return n ? number(*n) : std::string();
  };
}

Value optional_number(std::optional<uint32_t> KernelRow::*field) {
  return [field](const KernelRow& r, const DeviceRecord*) {
    const auto& v = r.*field;
    return v ? number(*v) : std::string();
  };
}

/// A device record's field, "" without a device record or when the field is 0 (not recorded:
/// none of these is 0 on a real device).
template <typename T>
Value device_number(T trace::DeviceInfo::*field) {
  return [field](const KernelRow&, const DeviceRecord* d) {
    return d && d->info.*field != 0 ? number(static_cast<uint64_t>(d->info.*field)) : std::string();
  };
}

}  // namespace

const std::vector<NcuAttribute>& ncu_attributes() {
  static const std::vector<NcuAttribute> attributes = {
      {"device__attribute_clock_rate", "", device_number(&trace::DeviceInfo::core_clock_khz)},
      {"device__attribute_compute_capability_major", "", device_number(&trace::DeviceInfo::cc_major)},
      {"device__attribute_compute_capability_minor", "",
       [](const KernelRow&, const DeviceRecord* d) {  // 0 is a minor version
         return d && d->info.cc_major != 0 ? number(d->info.cc_minor) : std::string();
       }},
      {"device__attribute_device_index", "",
       [](const KernelRow& r, const DeviceRecord* d) { return d && r.device ? number(*r.device) : std::string(); }},
      {"device__attribute_display_name", "",
       [](const KernelRow&, const DeviceRecord* d) { return d ? d->name : std::string(); }},
      {"device__attribute_global_memory_bus_width", "",
       device_number(&trace::DeviceInfo::memory_bus_width_bits)},
      {"device__attribute_l2_cache_size", "", device_number(&trace::DeviceInfo::l2_cache_bytes)},
      {"device__attribute_max_gpu_frequency_khz", "", device_number(&trace::DeviceInfo::core_clock_khz)},
      {"device__attribute_memory_clock_rate", "", device_number(&trace::DeviceInfo::memory_clock_khz)},
      {"device__attribute_multiprocessor_count", "", device_number(&trace::DeviceInfo::sm_count)},
      {"device__attribute_total_memory", "", device_number(&trace::DeviceInfo::global_memory_bytes)},
      {"launch__block_dim_x", "block", dim(&KernelRow::block, 0)},
      {"launch__block_dim_y", "block", dim(&KernelRow::block, 1)},
      {"launch__block_dim_z", "block", dim(&KernelRow::block, 2)},
      {"launch__block_size", "", size_of(&KernelRow::block)},
      {"launch__context_id", "", optional_number(&KernelRow::context)},
      {"launch__device_id", "", optional_number(&KernelRow::device)},
      {"launch__grid_dim_x", "", dim(&KernelRow::grid, 0)},
      {"launch__grid_dim_y", "", dim(&KernelRow::grid, 1)},
      {"launch__grid_dim_z", "", dim(&KernelRow::grid, 2)},
      {"launch__grid_size", "", size_of(&KernelRow::grid)},
      {"launch__registers_per_thread", "register/thread", optional_number(&KernelRow::registers_per_thread)},
      {"launch__shared_mem_per_block_dynamic", "byte/block", optional_number(&KernelRow::shared_bytes)},
      {"launch__shared_mem_per_block_static", "byte/block", optional_number(&KernelRow::static_shared_bytes)},
      {"launch__sm_count", "SM", device_number(&trace::DeviceInfo::sm_count)},
      {"launch__stream_id", "", optional_number(&KernelRow::stream)},
      {"launch__thread_count", "thread",
       [](const KernelRow& r, const DeviceRecord*) {
         const auto g = product(r.grid), b = product(r.block);
         uint64_t threads = 0;
         return g && b && !__builtin_mul_overflow(*g, *b, &threads) ? number(threads) : std::string();
       }},
  };
  return attributes;
}

bool is_ncu_attribute(std::string_view name) {
  const auto& all = ncu_attributes();
  return std::any_of(all.begin(), all.end(), [&](const NcuAttribute& a) { return a.name == name; });
}

}  // namespace rf::analyzer
