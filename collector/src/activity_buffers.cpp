// CUPTI activity buffers with a memory bound (rfprof/collector/activity_buffers.h).
#include "rfprof/collector/activity_buffers.h"

#include <cstdlib>

namespace rf::collector {

uint8_t* ActivityBuffers::take() noexcept {
  if (outstanding_.fetch_add(1, std::memory_order_relaxed) >= max_buffers_) {
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
    refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto* b = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes_));
  if (!b) {
    outstanding_.fetch_sub(1, std::memory_order_relaxed);
    refused_.fetch_add(1, std::memory_order_relaxed);
  }
  return b;
}

void ActivityBuffers::give_back(uint8_t* buffer) noexcept {
  if (!buffer) return;
  std::free(buffer);
  outstanding_.fetch_sub(1, std::memory_order_relaxed);
}

}  // namespace rf::collector
