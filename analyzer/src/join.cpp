// Per-launch join with a bounded buffer (rfprof/analyzer/join.h).
#include "rfprof/analyzer/join.h"

#include <algorithm>
#include <utility>

namespace rf::analyzer {
namespace {

template <typename Map>
std::vector<uint32_t> sorted_keys(const Map& map) {
  std::vector<uint32_t> keys;
  keys.reserve(map.size());
  for (const auto& kv : map) keys.push_back(kv.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

}  // namespace

LaunchJoiner::LaunchJoiner(bool await_counters, Sink sink, size_t max_waiting)
    : await_counters_(await_counters), max_waiting_(std::max<size_t>(max_waiting, 1)), sink_(std::move(sink)) {}

bool LaunchJoiner::waiting(const std::pair<uint32_t, uint64_t>& queued) const {
  auto it = entries_.find(queued.first);
  return it != entries_.end() && it->second.seq == queued.second;  // not emitted, not replaced
}

void LaunchJoiner::bound_waiting() {
  while (!order_.empty() && !waiting(order_.front())) order_.pop_front();
  if (order_.size() > 2 * entries_.size() + 1024) {  // emitted ids behind a long-waiting one
    std::deque<std::pair<uint32_t, uint64_t>> live;
    for (const auto& q : order_)
      if (waiting(q)) live.push_back(q);
    order_.swap(live);
  }
  while (entries_.size() > max_waiting_ && !order_.empty()) {
    const auto queued = order_.front();
    order_.pop_front();
    if (!waiting(queued)) continue;
    ++stats_.given_up;
    emit(take(entries_.find(queued.first)), queued.first);
  }
}

LaunchJoiner::Entry LaunchJoiner::take(std::unordered_map<uint32_t, Entry>::iterator it) {
  const uint32_t d = it->first;
  Entry e = std::move(it->second);
  entries_.erase(it);
  // Its runtime id names this launch no more: a kernel of it found later is an orphan, never a
  // later launch's (a stale alias made entries_.at() throw: exit 3 on a well-formed trace).
  if (e.launch && e.launch->runtime_correlation_id != 0) {
    auto alias = aliases_.find(e.launch->runtime_correlation_id);
    if (alias != aliases_.end() && alias->second == d) aliases_.erase(alias);
  }
  return e;
}

size_t LaunchJoiner::pending() const noexcept {
  size_t n = entries_.size() + graphs_.size() + orphan_counters_.size();
  for (const auto& [id, kernels] : orphan_kernels_) n += kernels.size();
  return n;
}

void LaunchJoiner::note_pending() { stats_.max_pending = std::max(stats_.max_pending, pending()); }

std::optional<uint32_t> LaunchJoiner::driver_id(uint32_t correlation_id) const {
  if (entries_.count(correlation_id) || graphs_.count(correlation_id)) return correlation_id;
  if (auto it = aliases_.find(correlation_id); it != aliases_.end()) return it->second;
  return std::nullopt;
}

bool LaunchJoiner::waits_for_counters(const Entry& e) const {
  return await_counters_ && e.launch && !e.launch->is_graph && !e.counters &&
         !closed_windows_.count(e.launch->window_id);
}

void LaunchJoiner::emit(Entry&& e, uint32_t id) {
  JoinedLaunch row;
  row.id = e.kernel ? e.kernel->correlation_id : id;
  if (!e.kernel) ++stats_.without_kernel;
  if (!e.launch) ++stats_.without_launch;
  if (await_counters_ && e.launch && !e.launch->is_graph && !e.counters) ++stats_.without_counters;
  row.launch = std::move(e.launch);
  row.kernel = std::move(e.kernel);
  row.counters = std::move(e.counters);
  ++stats_.emitted;
  sink_(std::move(row));
}

void LaunchJoiner::try_emit(uint32_t driver) {
  auto it = entries_.find(driver);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  if (!e.launch || !e.kernel || waits_for_counters(e)) return;
  emit(take(it), driver);
}

void LaunchJoiner::emit_graph_kernel(Graph& g, const trace::KernelActivity& kernel) {
  ++g.kernels;
  Entry e;
  e.launch = g.launch;
  e.kernel = kernel;
  emit(std::move(e), kernel.correlation_id);
}

void LaunchJoiner::add_launch(const trace::LaunchApi& launch) {
  const uint32_t d = launch.correlation_id;
  const uint32_t r = launch.runtime_correlation_id;
  std::vector<trace::KernelActivity> kernels;
  for (uint32_t key : {d, r}) {
    if (key == 0) continue;
    if (auto it = orphan_kernels_.find(key); it != orphan_kernels_.end()) {
      for (auto& k : it->second) kernels.push_back(std::move(k));
      orphan_kernels_.erase(it);
    }
  }
  std::optional<CounterSample> counters;
  if (auto it = orphan_counters_.find(d); it != orphan_counters_.end()) {
    counters = std::move(it->second);
    orphan_counters_.erase(it);
  }

  if (launch.is_graph) {
    if (counters) ++stats_.graph_counters;  // a graph launch has no per-kernel counters
    Graph& g = graphs_[d];
    g.launch = launch;
    if (r != 0) aliases_[r] = d;
    for (const auto& k : kernels) emit_graph_kernel(g, k);
    note_pending();
    return;
  }

  if (auto it = entries_.find(d); it != entries_.end()) emit(take(it), d);  // a second launch with this id
  Entry& e = entries_[d];
  // Queued with its arrival number: a reused id's earlier place is stale, not this launch's (it
  // was, and the copies of a live id piled up: quadratic time on a trace of one id).
  e.seq = ++arrivals_;
  order_.emplace_back(d, e.seq);
  e.launch = launch;
  e.counters = std::move(counters);
  if (r != 0) aliases_[r] = d;
  for (size_t i = 0; i < kernels.size(); ++i) {
    if (i == 0) {
      e.kernel = std::move(kernels[0]);
      continue;
    }
    Entry extra;  // more than one kernel for a non-graph launch: a row each
    extra.launch = launch;
    extra.kernel = std::move(kernels[i]);
    emit(std::move(extra), d);
  }
  note_pending();
  try_emit(d);
  bound_waiting();
}

void LaunchJoiner::add_kernel(const trace::KernelActivity& kernel) {
  auto d = driver_id(kernel.correlation_id);
  if (!d) {
    orphan_kernels_[kernel.correlation_id].push_back(kernel);
    note_pending();
    return;
  }
  if (auto g = graphs_.find(*d); g != graphs_.end()) {
    emit_graph_kernel(g->second, kernel);
    return;
  }
  auto found = entries_.find(*d);
  if (found == entries_.end()) {  // not reachable with the aliases kept right; a hostile trace is no bug
    orphan_kernels_[kernel.correlation_id].push_back(kernel);
    note_pending();
    return;
  }
  Entry& e = found->second;
  if (e.kernel) {
    Entry extra;
    extra.launch = e.launch;
    extra.kernel = kernel;
    emit(std::move(extra), *d);
    return;
  }
  e.kernel = kernel;
  try_emit(*d);
}

void LaunchJoiner::add_counters(const trace::RangeCounters& counters) {
  const uint32_t d = counters.correlation_id;
  if (d == 0) {
    ++stats_.unmapped_counters;
    return;
  }
  if (graphs_.count(d)) {
    ++stats_.graph_counters;
    return;
  }
  CounterSample sample{counters.config_id, counters.values};
  if (auto it = entries_.find(d); it != entries_.end()) {
    if (it->second.counters) {
      ++stats_.duplicate_counters;
      return;
    }
    it->second.counters = std::move(sample);
    try_emit(d);
    return;
  }
  if (!orphan_counters_.emplace(d, std::move(sample)).second) ++stats_.duplicate_counters;
  note_pending();
}

void LaunchJoiner::close_window(uint32_t window_id) {
  closed_windows_.insert(window_id);
  std::vector<uint32_t> ready;
  for (const auto& [d, e] : entries_)
    if (e.launch && e.launch->window_id == window_id && e.kernel) ready.push_back(d);
  std::sort(ready.begin(), ready.end());
  for (uint32_t d : ready) try_emit(d);
}

void LaunchJoiner::finish() {
  for (uint32_t d : sorted_keys(entries_)) emit(std::move(entries_.at(d)), d);
  entries_.clear();
  order_.clear();
  for (uint32_t d : sorted_keys(graphs_)) {
    Graph& g = graphs_.at(d);
    if (g.kernels != 0) continue;
    Entry e;  // a graph launch whose kernels never arrived
    e.launch = g.launch;
    emit(std::move(e), d);
  }
  graphs_.clear();
  aliases_.clear();
  for (uint32_t c : sorted_keys(orphan_kernels_)) {
    for (auto& k : orphan_kernels_.at(c)) {
      Entry e;
      e.kernel = std::move(k);
      if (auto it = orphan_counters_.find(c); it != orphan_counters_.end()) {
        e.counters = std::move(it->second);
        orphan_counters_.erase(it);
      }
      emit(std::move(e), c);
    }
  }
  orphan_kernels_.clear();
  for (uint32_t d : sorted_keys(orphan_counters_)) {
    Entry e;
    e.counters = std::move(orphan_counters_.at(d));
    emit(std::move(e), d);
  }
  orphan_counters_.clear();
}

}  // namespace rf::analyzer
