// CorrelationFilter: accepted correlation ids as sorted disjoint intervals.
#include "rfprof/collector/correlation_filter.h"

#include <algorithm>

namespace rf::collector {

void CorrelationFilter::accept(uint32_t id) {
  if (id == 0) return;
  // Growing the last interval to `id` covers the ids in between: only when none of them was
  // rejected. With many threads an id can be rejected before a lower one is accepted (the thread
  // holding the lower id reached the callback later, after a window opened).
  if (!ranges_.empty() && last_open_ && id >= ranges_.back().lo &&
      (id <= ranges_.back().hi || highest_rejected_ <= ranges_.back().hi)) {
    ranges_.back().hi = std::max(ranges_.back().hi, id);
    return;
  }
  if (contains(id)) return;
  if (!ranges_.empty() && id == ranges_.back().hi + 1 && last_open_) {
    ranges_.back().hi = id;  // adjacent: nothing in between to swallow
    return;
  }
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), id,
                             [](uint32_t v, const Range& r) { return v < r.lo; });
  bool is_last = it == ranges_.end();
  ranges_.insert(it, Range{id, id});
  // A new last interval may grow; an interval inserted before others (an out-of-order accept at a
  // window boundary) stays a single id.
  if (is_last) last_open_ = true;
}

void CorrelationFilter::reject(uint32_t id) {
  last_open_ = false;
  if (id == 0) return;
  highest_rejected_ = std::max(highest_rejected_, id);
  // A reject inside an accepted interval (threads racing a window boundary) splits it.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), id,
                             [](uint32_t v, const Range& r) { return v < r.lo; });
  if (it == ranges_.begin()) return;
  --it;
  if (id > it->hi) return;
  Range r = *it;
  if (r.lo == id && r.hi == id) {
    ranges_.erase(it);
  } else if (r.lo == id) {
    it->lo = id + 1;
  } else if (r.hi == id) {
    it->hi = id - 1;
  } else {
    it->hi = id - 1;
    ranges_.insert(it + 1, Range{id + 1, r.hi});
  }
}

bool CorrelationFilter::contains(uint32_t id) const noexcept {
  if (id == 0) return false;
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), id,
                             [](uint32_t v, const Range& r) { return v < r.lo; });
  if (it == ranges_.begin()) return false;
  --it;
  return id <= it->hi;
}

}  // namespace rf::collector
