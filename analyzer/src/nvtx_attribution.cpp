// Per-thread NVTX timelines and the attribution rule (rfprof/analyzer/nvtx_attribution.h).
#include "rfprof/analyzer/nvtx_attribution.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

namespace rf::analyzer {

NvtxIndex::NvtxIndex() {
  paths_.push_back(RangePath{});
  path_names_.emplace_back();
}

uint32_t NvtxIndex::intern_name(std::string_view name) {
  auto it = name_ids_.find(name);
  if (it != name_ids_.end()) return it->second;
  auto id = static_cast<uint32_t>(names_.size());
  names_.emplace_back(name);
  name_ids_.emplace(std::string(name), id);
  return id;
}

uint32_t NvtxIndex::intern_path(const std::vector<uint32_t>& names, bool prefixes) const {
  if (names.empty()) return kNoPath;
  auto it = path_ids_.find(names);
  if (it != path_ids_.end()) return it->second;
  if (!prefixes) return add_path(names);
  // Every prefix is a path too: a call spanning a transition is given the outer ranges that
  // stayed open, which may never have been open alone (attribute(), rule 3). Usually only the
  // path itself is new; the missing prefixes are added shortest first, without recursion (a
  // hostile trace may nest ranges as deep as it likes).
  size_t have = names.size() - 1;  // the longest prefix already a path
  std::vector<uint32_t> prefix(names.begin(), names.end() - 1);
  while (have > 0 && path_ids_.find(prefix) == path_ids_.end()) prefix.resize(--have);
  uint32_t id = kNoPath;
  for (size_t n = have + 1; n <= names.size(); ++n) {
    prefix.assign(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(n));
    id = add_path(prefix);
  }
  return id;
}

uint32_t NvtxIndex::add_path(const std::vector<uint32_t>& names) const {
  uint64_t bytes = 64 + 2 * sizeof(uint32_t) * names.size();  // path_names_ and path_ids_' key
  for (uint32_t name : names) bytes += 2 * names_[name].size() + 1 + sizeof(std::string);
  path_bytes_ += bytes;
  if (path_bytes_ > path_budget_)
    throw NvtxPathBudgetError("its NVTX ranges, " + std::to_string(names.size()) +
                              " open at once, have range paths of more than " + std::to_string(path_budget_ >> 20) +
                              " MiB (their names repeated at every depth): not a trace rfprof wrote");
  RangePath p;
  for (uint32_t name : names) {
    if (!p.joined.empty()) p.joined += '/';
    p.joined += names_[name];
    p.names.push_back(names_[name]);
  }
  const auto id = static_cast<uint32_t>(paths_.size());
  paths_.push_back(std::move(p));
  path_names_.push_back(names);
  path_ids_.emplace(names, id);
  return id;
}

void NvtxIndex::add(const trace::NvtxEvent& event, std::string_view name) {
  switch (event.kind) {
    case trace::NvtxEventKind::kStart: {
      Range r{event.thread_id, event.timestamp_ns, std::numeric_limits<uint64_t>::max(), seq_++ & 0x7fffffffu,
              event.style == trace::NvtxRangeStyle::kStartEnd ? 1u : 0u, intern_name(name)};
      if (auto end = early_ends_.find(event.id); end != early_ends_.end()) {
        const uint64_t end_ns = end->second;  // its kEnd came first in the trace
        early_ends_.erase(end);
        close(r, end_ns);
        break;
      }
      if (!open_.emplace(event.id, r).second) ++duplicate_starts_;
      break;
    }
    case trace::NvtxEventKind::kEnd: {
      auto it = open_.find(event.id);
      if (it == open_.end()) {
        // Activity records of different threads may arrive out of order: keep the end until its
        // start comes; finalize() counts the ends that never found one.
        early_ends_.emplace(event.id, event.timestamp_ns);
        break;
      }
      Range r = it->second;
      open_.erase(it);
      close(r, event.timestamp_ns);
      break;
    }
    case trace::NvtxEventKind::kInstant:
      break;
  }
}

void NvtxIndex::close(Range r, uint64_t end_ns) {
  if (end_ns < r.start_ns) {
    ++backwards_ranges_;
    return;
  }
  r.end_ns = end_ns;
  ranges_.push_back(r);
}

void NvtxIndex::finalize() {
  unmatched_ends_ = early_ends_.size();
  early_ends_.clear();
  for (auto& [id, r] : open_) ranges_.push_back(r);  // never ended: open to the end of the trace
  open_.clear();
  // Trimmed now, before any timeline exists, so that the copy is not added to build_timeline's peak;
  // kept otherwise (up to a quarter unused).
  if (ranges_.capacity() - ranges_.size() > ranges_.size() / 4) ranges_.shrink_to_fit();
  range_count_ = ranges_.size();
  std::sort(ranges_.begin(), ranges_.end(), [](const Range& a, const Range& b) {
    return a.thread_id != b.thread_id ? a.thread_id < b.thread_id : a.seq < b.seq;
  });
  // Process ranges (start/end) on a timeline of their own; thread ranges on their thread's. A
  // thread's ranges are passed in place when it has no process range (the common case), else its
  // thread ranges are copied for the time of its timeline's build.
  std::vector<Range> thread_ranges;
  size_t begin = 0;
  while (begin < ranges_.size()) {
    size_t end = begin;
    size_t process = 0;
    for (; end < ranges_.size() && ranges_[end].thread_id == ranges_[begin].thread_id; ++end)
      process += ranges_[end].process;
    std::span<const Range> all(ranges_.data() + begin, end - begin);
    if (process == 0) {
      build_timeline(all, timelines_[ranges_[begin].thread_id]);
    } else {
      thread_ranges.clear();
      for (const Range& r : all) (r.process ? process_ranges_ : thread_ranges).push_back(r);
      if (!thread_ranges.empty()) build_timeline(thread_ranges, timelines_[ranges_[begin].thread_id]);
    }
    begin = end;
  }
  std::vector<Range>().swap(thread_ranges);
  std::sort(process_ranges_.begin(), process_ranges_.end(), [](const Range& a, const Range& b) {
    return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.seq < b.seq;
  });
  // Without every prefix of each path: process ranges need not nest, so as the oldest open one
  // ends every prefix changes (8 threads' overlapping ranges interned ~d^2/2 names a transition),
  // and only own_path asks for one (interned then).
  build_timeline(process_ranges_, process_timeline_, /*prefixes=*/false);
  // ranges_ is kept for ranges() and for_each_range() (trace.json, step counts, memory peaks).
}

std::vector<NvtxRange> NvtxIndex::ranges() const {
  std::vector<NvtxRange> out;
  out.reserve(ranges_.size());
  for_each_range([&out](const NvtxRange& r) { out.push_back(r); });
  return out;
}

void NvtxIndex::build_timeline(std::span<const Range> ranges, std::vector<Transition>& timeline, bool prefixes) {
  // Events: (time, is_start, index into ranges), 16 bytes. All events at one time are applied
  // together. A thread has fewer than 2^32 ranges (pass 1 would need over 128 GB for them).
  struct Event {
    uint64_t time;
    uint32_t range;
    bool start;
  };
  std::vector<Event> events;
  events.reserve(ranges.size() * 2);
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto index = static_cast<uint32_t>(i);
    events.push_back({ranges[i].start_ns, index, true});
    if (ranges[i].end_ns != std::numeric_limits<uint64_t>::max())
      events.push_back({ranges[i].end_ns, index, false});
  }
  // Starts before ends at one time: a zero-length range's end must find it open (std::sort keeps
  // no order among equal times, and an end applied first left the range open for good).
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.time != b.time ? a.time < b.time : a.start > b.start; });

  // Open ranges ordered outermost first: by start time, then by order in the trace.
  std::vector<size_t> open;
  auto outer_first = [&](size_t a, size_t b) {
    return ranges[a].start_ns != ranges[b].start_ns ? ranges[a].start_ns < ranges[b].start_ns
                                                    : ranges[a].seq < ranges[b].seq;
  };
  timeline.reserve(events.size());  // at most one transition per event: no growth, no slack to double
  std::vector<uint32_t> names;
  std::vector<size_t> before;  // the open ranges before this time's events
  size_t i = 0;
  while (i < events.size()) {
    const uint64_t t = events[i].time;
    before = open;
    for (; i < events.size() && events[i].time == t; ++i) {
      const size_t r = events[i].range;
      if (events[i].start) {
        open.insert(std::upper_bound(open.begin(), open.end(), r, outer_first), r);
      } else {
        auto it = std::find(open.begin(), open.end(), r);
        if (it != open.end()) open.erase(it);
      }
    }
    names.clear();
    for (size_t r : open) names.push_back(ranges[r].name);
    uint32_t kept = 0;
    while (kept < before.size() && kept < open.size() && before[kept] == open[kept]) ++kept;
    Transition tr{t, open.empty() ? 0 : ranges[open.back()].start_ns, intern_path(names, prefixes), kept};
    if (!timeline.empty() && timeline.back().path == tr.path && kept == before.size() && kept == open.size())
      continue;  // nothing changed (a zero-length range)
    timeline.push_back(tr);
  }
  std::vector<Event>().swap(events);  // freed before the timeline is trimmed: the two never peak together
  if (timeline.capacity() - timeline.size() > timeline.size() / 4) timeline.shrink_to_fit();
}

const NvtxIndex::Transition* NvtxIndex::state_at(const std::vector<Transition>& timeline,
                                                  uint64_t time_ns) {
  auto it = std::upper_bound(timeline.begin(), timeline.end(), time_ns,
                             [](uint64_t t, const Transition& tr) { return t < tr.time_ns; });
  if (it == timeline.begin()) return nullptr;
  return &*std::prev(it);
}

uint32_t NvtxIndex::without_inner(uint32_t open_path, size_t inner, uint32_t name) const {
  if (open_path == kNoPath) return kNoPath;
  const std::vector<uint32_t>& open = path_names_[open_path];
  if (inner >= open.size() || open[open.size() - 1 - inner] != name) return kNoPath;
  const std::vector<uint32_t> own(open.begin(), open.end() - static_cast<std::ptrdiff_t>(inner));
  auto p = path_ids_.find(own);  // every prefix of a thread timeline's path is interned
  return p != path_ids_.end() ? p->second : intern_path(own, /*prefixes=*/false);
}

uint32_t NvtxIndex::own_path(size_t i) const {
  const Range& r = ranges_[i];
  const Transition* process_at = state_at(process_timeline_, r.start_ns);
  const uint32_t process_path = process_at ? process_at->path : kNoPath;
  if (r.process) {
    // The process ranges started in the same nanosecond after it (in trace order) nest inside it:
    // process_ranges_ is ordered by start, then trace order, so they follow it there.
    auto it = std::lower_bound(process_ranges_.begin(), process_ranges_.end(), r, [](const Range& a, const Range& b) {
      return a.start_ns != b.start_ns ? a.start_ns < b.start_ns : a.seq < b.seq;
    });
    size_t inner = 0;
    for (++it; it != process_ranges_.end() && it->start_ns == r.start_ns; ++it)
      if (it->end_ns != r.start_ns) ++inner;
    return without_inner(process_path, inner, r.name);
  }
  auto it = timelines_.find(r.thread_id);
  if (it == timelines_.end()) return kNoPath;
  const Transition* at = state_at(it->second, r.start_ns);
  if (!at) return kNoPath;
  // The thread ranges started in the same nanosecond after it nest inside it (by trace order, as
  // the timeline orders them): ranges_ holds a thread's ranges in trace order, so they follow it.
  size_t inner = 0;
  for (size_t j = i + 1; j < ranges_.size() && ranges_[j].thread_id == r.thread_id && ranges_[j].start_ns == r.start_ns; ++j)
    if (!ranges_[j].process && ranges_[j].end_ns != r.start_ns) ++inner;
  const uint32_t own = without_inner(at->path, inner, r.name);
  return own == kNoPath ? kNoPath : combine(process_path, own);
}

uint32_t NvtxIndex::combine(uint32_t outer, uint32_t inner) const {
  if (outer == kNoPath) return inner;
  if (inner == kNoPath) return outer;
  const uint64_t key = (uint64_t{outer} << 32) | inner;
  if (auto it = combined_.find(key); it != combined_.end()) return it->second;
  std::vector<uint32_t> names = path_names_[outer];
  names.insert(names.end(), path_names_[inner].begin(), path_names_[inner].end());
  const uint32_t id = intern_path(names, /*prefixes=*/false);  // no lookup asks for their prefixes
  combined_.emplace(key, id);
  return id;
}

uint32_t NvtxIndex::attribute(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const {
  const Transition* process = state_at(process_timeline_, start_ns);
  return combine(process ? process->path : kNoPath, thread_path(thread_id, start_ns, end_ns));
}

uint32_t NvtxIndex::context_path(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const {
  const Transition* process = state_at(process_timeline_, start_ns);
  return combine(process ? process->path : kNoPath, others_path(thread_id, start_ns, end_ns));
}

uint32_t NvtxIndex::thread_path(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const {
  if (auto it = timelines_.find(thread_id); it != timelines_.end()) {
    const Transition* own = state_at(it->second, start_ns);
    if (own && own->path != kNoPath) return own->path;
  }
  return others_path(thread_id, start_ns, end_ns);
}

uint32_t NvtxIndex::others_path(uint64_t thread_id, uint64_t start_ns, uint64_t end_ns) const {
  if (end_ns < start_ns) end_ns = start_ns;
  const Transition* best = nullptr;  // innermost range spans the call, started last
  uint32_t partial = kNoPath;        // only outer ranges span the call (first such thread)
  for (const auto& [tid, timeline] : timelines_) {  // ascending thread id: ties keep the lowest
    if (tid == thread_id) continue;
    const Transition* s = state_at(timeline, start_ns);
    if (!s || s->path == kNoPath) continue;
    const Transition* e = state_at(timeline, end_ns);
    if (s == e) {
      if (!best || s->innermost_start_ns > best->innermost_start_ns) best = s;
      continue;
    }
    if (best || partial != kNoPath) continue;
    // The thread's ranges changed during the call: the outer ranges that stayed open through it,
    // the same instances at every transition in between (a range ended and another of its name
    // started at one time stamp did not stay open). Ranges that do not nest (start/end) and
    // stayed open under one that ended are not kept: the outer ones only.
    const std::vector<uint32_t>& open = path_names_[s->path];
    size_t kept = open.size();
    for (const Transition* t = s + 1; t <= e && kept > 0; ++t) kept = std::min<size_t>(kept, t->kept);
    if (kept == 0) continue;
    const std::vector<uint32_t> common(open.begin(), open.begin() + static_cast<std::ptrdiff_t>(kept));
    if (auto p = path_ids_.find(common); p != path_ids_.end()) partial = p->second;  // interned with its path
  }
  return best ? best->path : partial;
}

}  // namespace rf::analyzer
