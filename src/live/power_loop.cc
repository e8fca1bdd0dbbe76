// The power loop (docs/live.md#energy): node power states from Slurm -> PowerSnapshot ->
// the PowerPlugin every period, plus wake-ups for pending jobs by the core's one rule; every
// power decision goes through the journaled apply path.
#include <algorithm>

#include <fmt/format.h>

#include "live/daemon.h"

namespace orrery::live {

namespace {

// A node that POWER_UP can wake: fully powered down ("idle~"), not still powering down.
bool Wakeable(const SlurmNode& n) {
  if (n.avail != NodeAvail::kPoweredDown) return false;
  return n.state_raw.empty() || (n.state_raw.back() != '%' && n.state_raw.back() != '!');
}

PowerState PowerStateOf(NodeAvail a) {
  switch (a) {
    case NodeAvail::kUp:
      return PowerState::kOn;
    case NodeAvail::kPoweringUp:
      return PowerState::kBooting;
    case NodeAvail::kDown:
    case NodeAvail::kPoweredDown:
      return PowerState::kOff;
  }
  return PowerState::kOff;
}

}  // namespace

// One VC's nodes and pending work, as the power loop counts them (as the simulator does).
struct Daemon::VcLoad {
  uint32_t used_now = 0, booting = 0, idle_on = 0, off = 0;
  uint32_t pending = 0;
  uint64_t big_nodes = 0, small_milli = 0;
  uint16_t gpn = 1;  // GPUs per node (the VC's largest)
};

std::vector<std::string> Daemon::NodesWithWork() const {
  // A node has work when a job runs there, a start decision pinned a job there (released or
  // not yet applied), or the snapshot holds an allocation there.
  std::vector<std::string> out;
  for (const auto& [id, lj] : book_)
    if (lj->state() == JobState::kStarting || lj->state() == JobState::kRunning || lj->state() == JobState::kUnplaced)
      for (const NodeShare& s : lj->nodes) out.push_back(s.node);
  for (const auto& [key, d] : ledger_.unapplied)
    if (d.kind == DecisionKind::kStart)
      for (const NodeShare& s : d.nodes) out.push_back(s.node);
  if (sched_)
    for (const Node& n : cluster_->nodes)
      if (sched_->cluster_state().powered(n.id) && sched_->cluster_state().free_gpus(n.id) != n.gpus)
        out.push_back(n.name);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void Daemon::PowerApplied(const std::string& node, bool up) {
  // Mirror the action at once (Slurm shows it at the next listing): a node being powered
  // down leaves placement now, a node powering up counts as booting for the wake-up logic.
  SlurmNode* mirror = MirrorLocally(node);
  if (mirror == nullptr) return;
  SlurmNode& n = *mirror;
  if (up) {
    if (n.avail == NodeAvail::kPoweredDown) {
      n.avail = NodeAvail::kPoweringUp;
      n.state_raw = "idle#";
      power_up_sent_[node] = clock_->Now();
    }
    return;
  }
  if (n.avail == NodeAvail::kPoweredDown) return;
  auto id = node_index_.find(node);
  bool was_up = n.avail == NodeAvail::kUp;
  n.avail = NodeAvail::kPoweredDown;
  n.state_raw = "idle%";
  idle_since_.erase(node);
  if (!sched_ || id == node_index_.end() || !was_up) return;
  const ClusterState& cs = sched_->cluster_state();
  if (cs.powered(id->second) && cs.free_gpus(id->second) == cluster_->nodes[id->second.v].gpus)
    sched_->SetNodePowered(id->second, false);
  else
    nodes_dirty_ = true;  // (an operator's power-down of a busy node) out of placement once idle
}

// ---------------------------------------------------------------- the applier's side

// A power decision met again: never sent twice (a decision planned before a crash may have
// reached Slurm; what Slurm shows now tells), never a power-down of a node with work.
Verdict Daemon::CheckPower(const JournalDecision& d, std::string* why) const {
  if (d.nodes.empty()) {
    *why = "no node";
    return Verdict::kObsolete;
  }
  const std::string& node = d.nodes[0].node;
  auto obs = nodes_.find(node);
  if (obs == nodes_.end()) return Verdict::kSend;
  const bool up = d.kind == DecisionKind::kPowerUp;
  const NodeAvail a = obs->second.avail;
  if ((up && (a == NodeAvail::kPoweringUp || a == NodeAvail::kUp)) || (!up && a == NodeAvail::kPoweredDown)) {
    *why = (d.detail.empty() ? "" : d.detail + "; ") + "confirmed: Slurm shows " + node + " " + obs->second.state_raw;
    return Verdict::kInEffect;
  }
  if (!up && a == NodeAvail::kUp && power_) {
    std::vector<std::string> busy = NodesWithWork();
    if (std::binary_search(busy.begin(), busy.end(), node)) {  // never power down a node with work
      *why = node + " has work now";
      return Verdict::kObsolete;
    }
  }
  return Verdict::kSend;
}

// Bookkeeping of a power decision Slurm took: the policy's counters, the local mirror, an event.
void Daemon::PowerActionApplied(const JournalDecision& d, Time now, CycleStats*) {
  const bool up = d.kind == DecisionKind::kPowerUp;
  const std::string& node = d.nodes[0].node;
  if (d.detail == "ces") ++(up ? m_power_ces_up_ : m_power_ces_down_);
  if (d.detail == "demand") ++m_power_demand_up_;
  PowerApplied(node, up);
  Note(now, "power", fmt::format("{}: {} {}", d.detail.empty() ? "operator" : d.detail, DecisionKindName(d.kind), node));
}

// Power decisions of the energy policy or of the wake-up rule: numbered, then the apply path.
Status Daemon::PlanPower(Time now, const std::vector<std::pair<std::string, bool>>& todo, const char* source,
                         CycleStats* st) {
  if (todo.empty()) return Status::Ok();
  std::vector<JournalDecision> batch;
  for (const auto& [node, up] : todo) {
    JournalDecision d;
    d.kind = up ? DecisionKind::kPowerUp : DecisionKind::kPowerDown;
    d.key = fmt::format("{}/{}/{}", DecisionKindName(d.kind), node, ++power_seq_);
    d.cycle = cycle_;
    d.time = now;
    d.nodes = {NodeShare{node, nodes_.at(node).gpus}};
    d.detail = source;
    batch.push_back(std::move(d));
  }
  ORR_RETURN_IF_ERROR(applier_.ApplyPath(batch, false, now, st));
  return Status::Ok();
}

std::vector<Daemon::VcLoad> Daemon::MeasureLoad(Time now, const std::vector<std::string>& busy) {
  const size_t nv = opts_.partitions.size();
  auto is_busy = [&](const std::string& n) { return std::binary_search(busy.begin(), busy.end(), n); };
  std::vector<VcLoad> load(nv);
  // Idle-since per node (the per-node keep-alive): reset while it works or is not on.
  for (const Node& nd : cluster_->nodes) {
    auto it = nodes_.find(nd.name);
    const NodeAvail avail = it == nodes_.end() ? NodeAvail::kDown : it->second.avail;  // departed: down
    const bool on = avail == NodeAvail::kUp, b = is_busy(nd.name);
    if (!on || b) {
      idle_since_.erase(nd.name);
    } else if (!idle_since_.count(nd.name)) {
      idle_since_[nd.name] = now;
    }
    VcLoad& l = load[nd.vc.v];
    l.used_now += on && b;
    l.idle_on += on && !b;
    l.booting += avail == NodeAvail::kPoweringUp;
    l.off += avail == NodeAvail::kPoweredDown;
    l.gpn = std::max(l.gpn, nd.gpus);
  }
  for (size_t v = 0; v < nv; ++v) vc_used_peak_[v] = std::max(vc_used_peak_[v], load[v].used_now);
  // Pending work per VC (jobs in the policy's queue), as the simulator counts it.
  for (const auto& [id, lj] : book_) {
    if (lj->state() != JobState::kQueued || lj->slot == UINT32_MAX) continue;
    VcLoad& l = load[lj->job.vc.v];
    ++l.pending;
    if (lj->job.nodes > 1)
      l.big_nodes += lj->job.nodes;
    else if (lj->job.gpus > l.gpn)
      l.big_nodes += (lj->job.gpus + l.gpn - 1) / l.gpn;
    else
      l.small_milli += lj->job.gpu_milli_total();
  }
  return load;
}

// The energy policy's control step, every period.
Status Daemon::PolicyPower(Time now, const std::vector<std::string>& busy, std::vector<VcLoad>& load,
                           CycleStats* st) {
  if (now < next_power_tick_) return Status::Ok();
  while (next_power_tick_ <= now) next_power_tick_ += power_->period();
  auto is_busy = [&](const std::string& n) { return std::binary_search(busy.begin(), busy.end(), n); };
  snap_.now = now;
  snap_.cluster = cluster_.get();
  snap_.nodes.assign(cluster_->nodes.size(), NodePowerView{});
  for (const Node& nd : cluster_->nodes) {
    NodePowerView& pv = snap_.nodes[nd.id.v];
    auto node = nodes_.find(nd.name);
    pv.state = PowerStateOf(node == nodes_.end() ? NodeAvail::kDown : node->second.avail);
    pv.busy = is_busy(nd.name);
    auto it = idle_since_.find(nd.name);
    pv.idle_since = it == idle_since_.end() ? now : it->second;
  }
  const size_t nv = load.size();
  snap_.used_peak = vc_used_peak_;
  snap_.used_now.assign(nv, 0);
  snap_.pending.assign(nv, 0);
  for (size_t v = 0; v < nv; ++v) {
    snap_.used_now[v] = load[v].used_now;
    snap_.pending[v] = load[v].pending;
  }
  snap_.demand_wakes = vc_demand_wakes_;
  power_out_.clear();
  power_->Decide(snap_, &power_out_);
  std::vector<std::pair<std::string, bool>> todo;
  for (const PowerDecision& d : power_out_) {
    if (d.node.v >= cluster_->nodes.size()) continue;
    const std::string& name = cluster_->nodes[d.node.v].name;
    auto found = nodes_.find(name);
    if (found == nodes_.end()) continue;  // departed
    const SlurmNode& sn = found->second;
    VcLoad& l = load[cluster_->nodes[d.node.v].vc.v];
    switch (d.kind) {
      case PowerDecision::kPowerUp:
        if (!Wakeable(sn)) break;
        todo.emplace_back(name, true);
        --l.off;
        ++l.booting;
        break;
      case PowerDecision::kPowerDown:
        if (sn.avail != NodeAvail::kUp) break;
        if (is_busy(name)) {
          ++m_power_refused_;  // the rule every driver enforces: never power down a node with work
          break;
        }
        todo.emplace_back(name, false);
        PowerApplied(name, false);  // out of placement from the moment it is planned
        --l.idle_on;
        ++l.off;
        break;
    }
  }
  vc_used_peak_ = snap_.used_now;
  std::fill(vc_demand_wakes_.begin(), vc_demand_wakes_.end(), 0);
  return PlanPower(now, todo, "ces", st);
}

// Wake-ups for pending jobs (what Slurm's own power saving does when it allocates a
// powered-down node; here jobs are held, so the daemon wakes them): how many by the core's
// rule (DemandWakeups, sched/framework/power.h), which ones: the lowest-numbered wakeable.
Status Daemon::DemandPower(Time now, const std::vector<VcLoad>& load, CycleStats* st) {
  std::vector<std::pair<std::string, bool>> wake;
  const ClusterState& cs = sched_->cluster_state();
  for (size_t v = 0; v < load.size(); ++v) {
    const VcLoad& l = load[v];
    VcPowerLoad rule;
    rule.pending_jobs = l.pending;
    rule.off = l.off;
    rule.booting = l.booting;
    rule.idle_on = l.idle_on;
    rule.gpus_per_node = l.gpn;
    rule.free_gpus = cs.vc_free_gpus(VcId(static_cast<uint16_t>(v)));
    rule.pending_small_milli = l.small_milli;
    rule.pending_big_nodes = l.big_nodes;
    uint64_t n = DemandWakeups(rule);  // the core's one rule, as in the simulator
    for (NodeId id : cluster_->vcs[v].nodes) {  // lowest-named first
      if (n == 0) break;
      const std::string& name = cluster_->nodes[id.v].name;
      auto found = nodes_.find(name);
      if (found == nodes_.end() || !Wakeable(found->second)) continue;
      bool dup = false;
      for (const auto& [k, d] : ledger_.unapplied)
        dup |= d.kind == DecisionKind::kPowerUp && !d.nodes.empty() && d.nodes[0].node == name;
      if (dup) continue;
      wake.emplace_back(name, true);
      ++vc_demand_wakes_[v];
      --n;
    }
  }
  return PlanPower(now, wake, "demand", st);
}

Status Daemon::PowerStep(Time now, CycleStats* st) {
  const size_t nv = opts_.partitions.size();
  if (vc_used_peak_.size() != nv) {
    vc_used_peak_.assign(nv, 0);
    vc_demand_wakes_.assign(nv, 0);
  }
  if (next_power_tick_ == kNoTime) next_power_tick_ = now + power_->period();
  const std::vector<std::string> busy = NodesWithWork();
  std::vector<VcLoad> load = MeasureLoad(now, busy);
  ORR_RETURN_IF_ERROR(PolicyPower(now, busy, load, st));
  return DemandPower(now, load, st);
}

}  // namespace orrery::live
