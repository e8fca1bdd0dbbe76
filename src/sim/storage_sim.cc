#include "sim/storage_sim.h"

#include <algorithm>
#include <cmath>

#include "base/result.h"

namespace orrery {

namespace {
// A read is over once what is left is below a millionth of a byte per byte read (and a byte).
bool Finished(double left, double bytes) { return left <= 1e-9 * bytes + 1.0; }
}  // namespace

void StorageSim::Join(uint32_t slot, uint32_t node, uint32_t checkpoint, double bytes, bool cacheable, Time at) {
  ORR_CHECK(at >= now_);
  Request r{node, checkpoint, bytes, cacheable, at, next_order_++};
  if (at == now_) {  // begins now (no phase before the load)
    Sync(at);
    Begin(slot, r);
    SetRates();
    return;
  }
  pending_[slot] = r;
  joins_.insert({at, r.order, slot});
}

Time StorageSim::Cancel(uint32_t slot, Time t) {
  Sync(t);
  if (auto p = pending_.find(slot); p != pending_.end()) {
    joins_.erase({p->second.joined, p->second.order, slot});
    pending_.erase(p);
    return kNoTime;
  }
  for (auto& [key, list] : waiting_) {
    auto it = std::find_if(list.begin(), list.end(), [&](const auto& w) { return w.first == slot; });
    if (it == list.end()) continue;
    const Time joined = it->second.joined;
    list.erase(it);
    if (list.empty()) waiting_.erase(key);
    return joined;
  }
  auto r = reads_.find(slot);
  if (r == reads_.end()) return kNoTime;
  const Time joined = r->second.req.joined;
  const Key key{r->second.req.node, r->second.req.checkpoint};
  const bool was_filling = r->second.source == Source::kShared && filling_.count(key) && filling_[key] == slot;
  reads_.erase(r);
  if (was_filling) {
    filling_.erase(key);
    if (auto w = waiting_.find(key); w != waiting_.end()) {  // the first waiter fills the cache instead
      auto [next, req] = w->second.front();
      w->second.erase(w->second.begin());
      std::vector<std::pair<uint32_t, Request>> rest = std::move(w->second);
      waiting_.erase(w);
      StartRead(next, req, Source::kShared);
      filling_[key] = next;
      if (!rest.empty()) waiting_[key] = std::move(rest);
    }
  }
  SetRates();
  return joined;
}

void StorageSim::Begin(uint32_t slot, const Request& r) {
  const Key key{r.node, r.checkpoint};
  if (r.cacheable && cached_.count(key)) return StartRead(slot, r, Source::kCache);
  if (r.cacheable && filling_.count(key)) {
    waiting_[key].push_back({slot, r});
    return;
  }
  if (r.cacheable) filling_[key] = slot;
  StartRead(slot, r, Source::kShared);
}

void StorageSim::StartRead(uint32_t slot, const Request& r, Source s) {
  reads_[slot] = Read{r, s, r.bytes, 0};
  if (s == Source::kShared) shared_bytes_ += r.bytes;
  max_concurrent_ = std::max(max_concurrent_, static_cast<uint32_t>(reads_.size()));
}

void StorageSim::SetRates() {
  std::map<uint32_t, uint32_t> per_node;
  for (const auto& [slot, rd] : reads_)
    if (rd.source == Source::kShared) ++per_node[rd.req.node];
  const uint32_t nodes = static_cast<uint32_t>(per_node.size());
  for (auto& [slot, rd] : reads_)
    rd.rate = rd.source == Source::kCache ? spec_.cache_bytes_per_s : SharedReadRate(spec_, nodes, per_node[rd.req.node]);
}

void StorageSim::Sync(Time t) {
  if (t <= now_) return;
  const double dt = static_cast<double>(t - now_);
  for (auto& [slot, rd] : reads_) rd.left = std::max(0.0, rd.left - rd.rate * dt);
  now_ = t;
}

void StorageSim::EndRead(uint32_t slot, std::vector<ReadDone>* done) {
  const Read rd = reads_.at(slot);
  reads_.erase(slot);
  done->push_back(ReadDone{slot, rd.req.joined});
  const Key key{rd.req.node, rd.req.checkpoint};
  if (rd.source != Source::kShared || !rd.req.cacheable) return;
  filling_.erase(key);
  cached_.insert(key);
  auto w = waiting_.find(key);
  if (w == waiting_.end()) return;
  for (const auto& [s, req] : w->second) StartRead(s, req, Source::kCache);
  waiting_.erase(w);
}

void StorageSim::Advance(Time t, std::vector<ReadDone>* done) {
  Sync(t);
  std::vector<std::pair<uint64_t, uint32_t>> ended;  // (join order, slot)
  for (const auto& [slot, rd] : reads_)
    if (Finished(rd.left, rd.req.bytes)) ended.push_back({rd.req.order, slot});
  std::sort(ended.begin(), ended.end());
  for (const auto& [order, slot] : ended) EndRead(slot, done);
  while (!joins_.empty() && std::get<0>(*joins_.begin()) <= t) {
    const uint32_t slot = std::get<2>(*joins_.begin());
    joins_.erase(joins_.begin());
    const Request r = pending_.at(slot);
    pending_.erase(slot);
    Begin(slot, r);
  }
  SetRates();
}

Time StorageSim::NextEvent() const {
  Time next = joins_.empty() ? kNoTime : std::get<0>(*joins_.begin());
  for (const auto& [slot, rd] : reads_) {
    const double secs = rd.left / rd.rate;
    // The first whole second at which the read is over (at least the next second).
    const Time end = now_ + std::max<Time>(1, static_cast<Time>(std::ceil(secs - 1e-9)));
    if (next == kNoTime || end < next) next = end;
  }
  return next;
}

}  // namespace orrery
