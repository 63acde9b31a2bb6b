// ncu's --devices in the collector (rfprof/collector/device_filter.h).
#include "rfprof/collector/device_filter.h"

#include <algorithm>
#include <charconv>

namespace rf::collector {

std::optional<std::vector<uint32_t>> parse_device_list(std::string_view text) {
  constexpr uint32_t kMaxOrdinal = 1024;
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (true) {
    const size_t comma = text.find(',', pos);
    std::string_view item = text.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    uint32_t n = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), n);
    if (item.empty() || ec != std::errc() || ptr != item.data() + item.size() || n >= kMaxOrdinal ||
        std::find(out.begin(), out.end(), n) != out.end())
      return std::nullopt;
    out.push_back(n);
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return out;
}

DeviceFilter::DeviceFilter(std::vector<uint32_t> devices, DeviceOf device_of)
    : devices_(std::move(devices)), device_of_(std::move(device_of)) {}

bool DeviceFilter::selects(const void* context) {
  if (devices_.empty()) return true;
  // answer()'s loop, kept here so the launch path's common case is one function (measured:
  // BM_DeviceFilterSelectsOnly, bench/README.md).
  Answers& a = answers_.local();
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  if (a.epoch != epoch) a = Answers{epoch, 0, {}};  // a context was destroyed since: ask again
  const size_t used = std::min(a.next, kContextsPerThread);
  for (size_t i = 0; i < used; ++i)
    if (a.slots[i].context == context) return a.slots[i].selected;
  return ask(a, context).selected;
}

std::optional<uint32_t> DeviceFilter::device(const void* context) {
  const Answer& a = answer(context);
  if (!a.known) return std::nullopt;
  return a.device;
}

const DeviceFilter::Answer& DeviceFilter::answer(const void* context) {
  Answers& a = answers_.local();
  const uint64_t epoch = epoch_.load(std::memory_order_acquire);
  if (a.epoch != epoch) a = Answers{epoch, 0, {}};  // a context was destroyed since: ask again
  const size_t used = std::min(a.next, kContextsPerThread);
  for (size_t i = 0; i < used; ++i)
    if (a.slots[i].context == context) return a.slots[i];
  return ask(a, context);
}

const DeviceFilter::Answer& DeviceFilter::ask(Answers& a, const void* context) {
  const std::optional<uint32_t> device = device_of_ ? device_of_(context) : std::nullopt;
  const bool selected = devices_.empty() || !device ||
                        std::find(devices_.begin(), devices_.end(), *device) != devices_.end();
  Answer& slot = a.slots[a.next % kContextsPerThread];
  slot = Answer{context, device.value_or(0), device.has_value(), selected};
  ++a.next;
  return slot;
}

}  // namespace rf::collector
