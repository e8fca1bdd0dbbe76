// The power loop (power_loop.h): the energy policy's control step, wake-ups for pending jobs,
// operators' power actions, the bookkeeping of what Slurm took.
#include "live/power_loop.h"

#include <algorithm>

#include <fmt/format.h>

#include "sched/plugins/ces.h"

namespace orrery::live {

namespace {

// Slurm's power thread shows a POWER_UP within this many seconds.
constexpr Duration kPowerUpGrace = 10;

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

Status PowerLoop::Load() {
  ORR_ASSIGN_OR_RETURN(seq_, journal_->GetCounter("power"));
  return Status::Ok();
}

Status PowerLoop::MakePolicy() {
  if (opts_.energy.empty()) return Status::Ok();
  // Live time is Unix seconds: the forecaster's calendar epoch is 0.
  if (opts_.factory) {
    policy_ = opts_.factory();
  } else {
    ORR_ASSIGN_OR_RETURN(policy_, MakePowerPlugin(opts_.energy, opts_.seed, 0));
  }
  return Status::Ok();
}

std::vector<std::string> PowerLoop::NodesWithWork() const {
  // A node has work when a job runs there, a start decision pinned a job there (released or
  // not yet applied), or the snapshot holds an allocation there.
  std::vector<std::string> out;
  for (const auto& [id, lj] : *book_)
    if (lj->state() == JobState::kStarting || lj->state() == JobState::kRunning || lj->state() == JobState::kUnplaced)
      for (const NodeShare& s : lj->nodes) out.push_back(s.node);
  for (const auto& [key, d] : ledger_->unapplied)
    if (d.kind == DecisionKind::kStart)
      for (const NodeShare& s : d.nodes) out.push_back(s.node);
  host_->AllocatedNodes(&out);
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void PowerLoop::PowerApplied(const std::string& node, bool up) {
  // Mirror the action at once (Slurm shows it at the next listing): a node being powered
  // down leaves placement now, a node powering up counts as booting for the wake-up logic.
  SlurmNode* mirror = host_->MirrorLocally(node);
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
  bool was_up = n.avail == NodeAvail::kUp;
  n.avail = NodeAvail::kPoweredDown;
  n.state_raw = "idle%";
  idle_since_.erase(node);
  if (was_up) host_->PoweringDown(node);
}

// ---------------------------------------------------------------- the applier's side

// A power decision met again: never sent twice (a decision planned before a crash may have
// reached Slurm; what Slurm shows now tells), never a power-down of a node with work.
Verdict PowerLoop::Check(const JournalDecision& d, std::string* why) const {
  if (d.nodes.empty()) {
    *why = "no node";
    return Verdict::kObsolete;
  }
  const std::string& node = d.nodes[0].node;
  const SlurmNode* obs = host_->NodeOf(node);
  if (obs == nullptr) return Verdict::kSend;
  const bool up = d.kind == DecisionKind::kPowerUp;
  const NodeAvail a = obs->avail;
  if ((up && (a == NodeAvail::kPoweringUp || a == NodeAvail::kUp)) || (!up && a == NodeAvail::kPoweredDown)) {
    *why = (d.detail.empty() ? "" : d.detail + "; ") + "confirmed: Slurm shows " + node + " " + obs->state_raw;
    return Verdict::kInEffect;
  }
  if (!up && a == NodeAvail::kUp && policy_) {
    std::vector<std::string> busy = NodesWithWork();
    if (std::binary_search(busy.begin(), busy.end(), node)) {  // never power down a node with work
      *why = node + " has work now";
      return Verdict::kObsolete;
    }
  }
  return Verdict::kSend;
}

// Bookkeeping of a power decision Slurm took: the policy's counters, the local mirror, an event.
void PowerLoop::Applied(const JournalDecision& d, Time now, CycleStats*) {
  const bool up = d.kind == DecisionKind::kPowerUp;
  const std::string& node = d.nodes[0].node;
  if (d.detail == "ces") ++(up ? ces_ups_ : ces_downs_);
  if (d.detail == "demand") ++demand_ups_;
  PowerApplied(node, up);
  Note(now, "power", fmt::format("{}: {} {}", d.detail.empty() ? "operator" : d.detail, DecisionKindName(d.kind), node));
}

// Power decisions of the energy policy or of the wake-up rule: numbered, then the apply path.
Status PowerLoop::PlanPower(Time now, const std::vector<std::pair<std::string, bool>>& todo, const char* source,
                            CycleStats* st) {
  if (todo.empty()) return Status::Ok();
  std::vector<JournalDecision> batch;
  for (const auto& [node, up] : todo) {
    JournalDecision d;
    d.kind = up ? DecisionKind::kPowerUp : DecisionKind::kPowerDown;
    d.key = fmt::format("{}/{}/{}", DecisionKindName(d.kind), node, ++seq_);
    d.cycle = host_->CycleNumber();
    d.time = now;
    d.nodes = {NodeShare{node, host_->NodeOf(node)->gpus}};
    d.detail = source;
    batch.push_back(std::move(d));
  }
  ORR_RETURN_IF_ERROR(applier_->ApplyPath(batch, false, now, st));
  return Status::Ok();
}

std::vector<PowerLoop::VcLoad> PowerLoop::MeasureLoad(Time now, const std::vector<std::string>& busy) {
  const size_t nv = opts_.vcs;
  const Cluster& cluster = *host_->ModelCluster();
  auto is_busy = [&](const std::string& n) { return std::binary_search(busy.begin(), busy.end(), n); };
  std::vector<VcLoad> load(nv);
  // Idle-since per node (the per-node keep-alive): reset while it works or is not on.
  for (const Node& nd : cluster.nodes) {
    const SlurmNode* it = host_->NodeOf(nd.name);
    const NodeAvail avail = it == nullptr ? NodeAvail::kDown : it->avail;  // departed: down
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
  for (const auto& [id, lj] : *book_) {
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
Status PowerLoop::PolicyPower(Time now, const std::vector<std::string>& busy, std::vector<VcLoad>& load,
                              CycleStats* st) {
  if (now < next_tick_) return Status::Ok();
  while (next_tick_ <= now) next_tick_ += policy_->period();
  const Cluster& cluster = *host_->ModelCluster();
  auto is_busy = [&](const std::string& n) { return std::binary_search(busy.begin(), busy.end(), n); };
  snap_.now = now;
  snap_.cluster = &cluster;
  snap_.nodes.assign(cluster.nodes.size(), NodePowerView{});
  for (const Node& nd : cluster.nodes) {
    NodePowerView& pv = snap_.nodes[nd.id.v];
    const SlurmNode* node = host_->NodeOf(nd.name);
    pv.state = PowerStateOf(node == nullptr ? NodeAvail::kDown : node->avail);
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
  out_.clear();
  policy_->Decide(snap_, &out_);
  std::vector<std::pair<std::string, bool>> todo;
  for (const PowerDecision& d : out_) {
    if (d.node.v >= cluster.nodes.size()) continue;
    const std::string& name = cluster.nodes[d.node.v].name;
    const SlurmNode* found = host_->NodeOf(name);
    if (found == nullptr) continue;  // departed
    const SlurmNode& sn = *found;
    VcLoad& l = load[cluster.nodes[d.node.v].vc.v];
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
          ++refused_;  // the rule every driver enforces: never power down a node with work
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
Status PowerLoop::DemandPower(Time now, const std::vector<VcLoad>& load, CycleStats* st) {
  std::vector<std::pair<std::string, bool>> wake;
  const Cluster& cluster = *host_->ModelCluster();
  for (size_t v = 0; v < load.size(); ++v) {
    const VcLoad& l = load[v];
    VcPowerLoad rule;
    rule.pending_jobs = l.pending;
    rule.off = l.off;
    rule.booting = l.booting;
    rule.idle_on = l.idle_on;
    rule.gpus_per_node = l.gpn;
    rule.free_gpus = host_->VcFreeGpus(VcId(static_cast<uint16_t>(v)));
    rule.pending_small_milli = l.small_milli;
    rule.pending_big_nodes = l.big_nodes;
    uint64_t n = DemandWakeups(rule);  // the core's one rule, as in the simulator
    for (NodeId id : cluster.vcs[v].nodes) {  // lowest-named first
      if (n == 0) break;
      const std::string& name = cluster.nodes[id.v].name;
      const SlurmNode* found = host_->NodeOf(name);
      if (found == nullptr || !Wakeable(*found)) continue;
      bool dup = false;
      for (const auto& [k, d] : ledger_->unapplied)
        dup |= d.kind == DecisionKind::kPowerUp && !d.nodes.empty() && d.nodes[0].node == name;
      if (dup) continue;
      wake.emplace_back(name, true);
      ++vc_demand_wakes_[v];
      --n;
    }
  }
  return PlanPower(now, wake, "demand", st);
}

Status PowerLoop::Step(Time now, CycleStats* st) {
  const size_t nv = opts_.vcs;
  if (vc_used_peak_.size() != nv) {
    vc_used_peak_.assign(nv, 0);
    vc_demand_wakes_.assign(nv, 0);
  }
  if (next_tick_ == kNoTime) next_tick_ = now + policy_->period();
  const std::vector<std::string> busy = NodesWithWork();
  std::vector<VcLoad> load = MeasureLoad(now, busy);
  ORR_RETURN_IF_ERROR(PolicyPower(now, busy, load, st));
  return DemandPower(now, load, st);
}

// An operator's action (HTTP API), journaled like decisions with the next power number.
Status PowerLoop::Request(const std::string& node, bool up, Time now) {
  const SlurmNode* n = host_->NodeOf(node);
  if (n == nullptr) return MakeError("no managed node named '" + node + "'", kExitBadInput, ErrorCode::kNotFound);
  JournalDecision d;
  d.kind = up ? DecisionKind::kPowerUp : DecisionKind::kPowerDown;
  d.key = fmt::format("{}/{}/{}", DecisionKindName(d.kind), node, seq_ + 1);
  d.cycle = host_->CycleNumber();
  d.time = now;
  d.nodes = {NodeShare{node, n->gpus}};
  // Planned now, applied at the next cycle by the apply path's retry step.
  ORR_RETURN_IF_ERROR(journal_->Begin());
  Status s = journal_->Plan(&d);
  if (s.ok()) s = journal_->SetCounter("power", seq_ + 1);
  if (!s.ok()) {
    Status rb = journal_->Rollback();
    return rb.ok() ? s : s.error().With("journal rollback failed too (" + rb.error().message + ")");
  }
  ORR_RETURN_IF_ERROR(journal_->Commit());
  ++seq_;
  ledger_->unapplied[d.key] = d;
  ledger_->Remember(d);
  return Status::Ok();
}

// ---------------------------------------------------------------- the node listing's side

bool PowerLoop::StillBooting(const SlurmNode& listed, const SlurmNode& believed, Time now) {
  if (power_up_sent_.empty()) return false;
  auto sent = power_up_sent_.find(listed.name);
  if (sent == power_up_sent_.end()) return false;
  if (listed.avail == NodeAvail::kPoweredDown && believed.avail == NodeAvail::kPoweringUp &&
      now - sent->second < kPowerUpGrace)
    return true;
  power_up_sent_.erase(sent);
  return false;
}

// Slurm marks a node DOWN when it misses ResumeTimeout after a POWER_UP.
void PowerLoop::FailedResume(const SlurmNode& n, Time now) {
  ++failed_resumes_;
  Note(now, "power", fmt::format("failed resume: {} went down while powering up ({})", n.name, n.state_raw));
}

}  // namespace orrery::live
