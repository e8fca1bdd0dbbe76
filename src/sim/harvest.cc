#include "sim/harvest.h"

#include <cmath>

namespace orrery {

PluginStatus HarvestPlacer::Place(const SchedJob& j, const ClusterState& state, const NodeMask* blocked,
                                  Allocation* out) {
  PluginStatus st = inner_->Place(j, state, blocked, out);
  const size_t idx = static_cast<size_t>(static_cast<const Job*>(j.job) - lent_->first_job);
  if (!st.ok() || idx >= lent_->no_borrow.size() || !lent_->no_borrow[idx] || !UsesLent(*out, state)) return st;
  const std::vector<NodeId>& nodes = state.vc_nodes(j.vc);
  NodeMask mask = blocked ? *blocked : NodeMask(nodes.size());
  for (NodeId n : nodes)
    if (lent_->per_node[n.v] > 0) mask.Set(state.local_index(n));
  out->clear();
  return inner_->Place(j, state, &mask, out);
}

// Whether `a` takes GPUs of a node beyond those free there that are not lent.
bool HarvestPlacer::UsesLent(const Allocation& a, const ClusterState& state) const {
  for (const Slot& s : a) {
    const uint32_t lent = lent_->per_node[s.node.v];
    if (lent > 0 && s.gpus + lent > state.free_gpus(s.node)) return true;
  }
  return false;
}

std::unique_ptr<PlacePlugin> HarvestPlacer::Clone(PluginCopies& copies) const {
  std::unique_ptr<PlacePlugin> inner = inner_->Clone(copies);
  if (!inner) return nullptr;
  return std::make_unique<HarvestPlacer>(std::move(inner), lent_);
}

HarvestSim::HarvestSim(const std::vector<HarvestPlan>& plans, size_t jobs, size_t nodes, std::shared_ptr<LentGpus> lent)
    : plan_of_(jobs, -1), plans_(plans), lent_(std::move(lent)), node_lent_(lent_->per_node), node_counted_(nodes, 0),
      borrowers_(nodes) {
  node_lent_.assign(nodes, 0);
  for (size_t i = 0; i < plans_.size(); ++i)
    if (plans_[i].job < jobs && plans_[i].step_s > 0) plan_of_[plans_[i].job] = static_cast<int32_t>(i);
}

Time HarvestSim::ReturnAt(const Lease& l) const {
  return static_cast<Time>(std::floor(StepStart(l) + l.plan->return_s));
}

Time HarvestSim::ReleaseAt(const Lease& l, size_t i) const {
  return static_cast<Time>(std::ceil(StepStart(l) + l.plan->releases[i].at_s));
}

bool HarvestSim::NoteStart(uint32_t slot, uint32_t gen, const Allocation& alloc, Time t) {
  if (nodes_lending_ == 0) return false;
  bool borrowed = false;
  for (const Slot& s : alloc) {
    const uint32_t n = s.node.v;
    if (node_lent_[n] == 0) continue;
    const uint32_t left = node_lent_[n] > node_counted_[n] ? node_lent_[n] - node_counted_[n] : 0;
    const uint16_t counted = static_cast<uint16_t>(std::min<uint32_t>(s.gpus, left));
    node_counted_[n] += counted;
    borrowers_[n].push_back(Borrower{slot, gen, t, counted});
    borrowing_[slot].emplace_back(n, gen);
    borrowed = true;
  }
  stats_.borrower_starts += borrowed ? 1 : 0;
  return borrowed;
}

Time HarvestSim::Started(uint32_t slot, uint32_t job, Time t, Duration restore, int64_t from, int64_t total) {
  if (job >= plan_of_.size() || plan_of_[job] < 0 || from >= total) return kNoTime;
  Lease l;
  l.plan = &plans_[static_cast<size_t>(plan_of_[job])];
  l.t0 = t + restore;
  l.steps = total - from;
  leases_[slot] = std::move(l);
  return Next(slot);
}

// The earliest release of the current step that still lends before the return, else the
// return when anything is lent, else the next step's.
Time HarvestSim::Next(uint32_t slot) {
  Lease& l = leases_.at(slot);
  const size_t n = l.plan->releases.size();
  while (l.step < l.steps) {
    const Time ret = ReturnAt(l);
    if (l.next < n && ReleaseAt(l, l.next) < ret) return ReleaseAt(l, l.next);
    l.next = n;  // releases are ascending: none later lends either
    if (!l.lent.empty()) return ret;
    ++l.step;
    l.next = 0;
  }
  return kNoTime;
}

HarvestSim::Action HarvestSim::Due(uint32_t slot, Time t) const {
  auto it = leases_.find(slot);
  if (it == leases_.end()) return Action::kNone;
  const Lease& l = it->second;
  if (l.step >= l.steps) return Action::kNone;
  if (l.next < l.plan->releases.size()) return ReleaseAt(l, l.next) <= t ? Action::kLend : Action::kNone;
  return !l.lent.empty() && ReturnAt(l) <= t ? Action::kReturn : Action::kNone;
}

uint32_t HarvestSim::Lend(uint32_t slot, Time t, Scheduler& sched) {
  Lease& l = leases_.at(slot);
  const Time ret = ReturnAt(l);
  uint32_t want = 0;
  while (l.next < l.plan->releases.size() && ReleaseAt(l, l.next) <= t && ReleaseAt(l, l.next) < ret)
    want += l.plan->releases[l.next++].gpus;
  // An RL job that itself borrows lends nothing: the GPUs it holds on a lending node may be
  // another job's, and its return could not be guaranteed.
  if (Borrowing(slot)) return 0;
  Allocation keep = sched.view(slot).alloc;
  uint32_t held = 0;
  for (const Slot& s : keep) held += s.gpus;
  want = std::min(want, held > 0 ? held - 1 : 0);  // the worker that ends the rollout stays
  if (want == 0) return 0;
  uint32_t lent = 0;
  const size_t before = l.lent.size();
  for (size_t i = keep.size(); i-- > 0 && lent < want;) {  // the end of the allocation first
    Slot& s = keep[i];
    const uint16_t g = static_cast<uint16_t>(std::min<uint32_t>(s.gpus, want - lent));
    s.gpus = static_cast<uint16_t>(s.gpus - g);
    lent += g;
    l.lent.push_back(Part{s.node.v, g, t});
  }
  Allocation rest;
  for (const Slot& s : keep)
    if (s.gpus > 0) rest.push_back(s);
  sched.Resize(slot, std::move(rest), t);
  for (size_t i = before; i < l.lent.size(); ++i) AddLent(l.lent[i].node, l.lent[i].gpus);
  ++stats_.lends;
  return lent;
}

uint32_t HarvestSim::Reclaim(uint32_t slot, Time t, Scheduler& sched) {
  Lease& l = leases_.at(slot);
  Allocation back = sched.view(slot).alloc;
  uint32_t gpus = 0;
  for (const Part& p : l.lent) {
    auto it = std::find_if(back.begin(), back.end(), [&](const Slot& s) { return s.node.v == p.node; });
    if (it != back.end()) {
      it->gpus = static_cast<uint16_t>(it->gpus + p.gpus);
    } else {
      Slot s;
      s.node = NodeId(p.node);
      s.gpus = p.gpus;
      back.push_back(s);
    }
    gpus += p.gpus;
    stats_.lent_gpu_seconds += static_cast<double>(p.gpus) * static_cast<double>(t - p.since);
  }
  // Free the lent parts first: a part's node stops counting its borrowers when nothing is lent.
  for (const Part& p : l.lent) DropLent(p.node, p.gpus, t);
  l.lent.clear();
  sched.Resize(slot, std::move(back), t);
  ++stats_.returns;
  ++l.step;
  l.next = 0;
  return gpus;
}

bool HarvestSim::Borrowing(uint32_t slot) const {
  auto it = borrowing_.find(slot);
  if (it == borrowing_.end()) return false;
  for (const auto& [node, gen] : it->second)
    for (const Borrower& b : borrowers_[node])
      if (b.slot == slot && b.gen == gen) return true;
  return false;
}

void HarvestSim::Stopped(uint32_t slot, Time t) {
  if (auto it = leases_.find(slot); it != leases_.end()) {
    for (const Part& p : it->second.lent) {
      stats_.lent_gpu_seconds += static_cast<double>(p.gpus) * static_cast<double>(t - p.since);
      DropLent(p.node, p.gpus, t);
    }
    leases_.erase(it);
  }
  if (auto it = borrowing_.find(slot); it != borrowing_.end()) {
    for (const auto& [node, gen] : it->second) CloseBorrower(node, slot, gen, t);
    borrowing_.erase(it);
  }
}

void HarvestSim::AddLent(uint32_t node, uint16_t gpus) {
  if (node_lent_[node] == 0) ++nodes_lending_;
  node_lent_[node] += gpus;
}

void HarvestSim::DropLent(uint32_t node, uint16_t gpus, Time t) {
  node_lent_[node] -= std::min<uint32_t>(node_lent_[node], gpus);
  if (node_lent_[node] > 0) return;
  --nodes_lending_;
  for (const Borrower& b : borrowers_[node])
    stats_.harvested_gpu_seconds += static_cast<double>(b.counted) * static_cast<double>(t - b.start);
  borrowers_[node].clear();
  node_counted_[node] = 0;
}

void HarvestSim::CloseBorrower(uint32_t node, uint32_t slot, uint32_t gen, Time t) {
  auto& v = borrowers_[node];
  auto it = std::find_if(v.begin(), v.end(), [&](const Borrower& b) { return b.slot == slot && b.gen == gen; });
  if (it == v.end()) return;  // the node's lending ended first and counted it then
  stats_.harvested_gpu_seconds += static_cast<double>(it->counted) * static_cast<double>(t - it->start);
  node_counted_[node] -= std::min<uint32_t>(node_counted_[node], it->counted);
  v.erase(it);
}

}  // namespace orrery
