#include "sim/power_sim.h"

#include <algorithm>
#include <functional>

namespace orrery {

PowerSim::PowerSim(const Cluster& cluster, std::unique_ptr<PowerPlugin> plugin, std::vector<PowerModel> node_power,
                   Duration wake_latency, double resume_failure, uint64_t seed, Time first_submit)
    : cluster_(cluster),
      plugin_(std::move(plugin)),
      power_(std::move(node_power)),
      wake_latency_(wake_latency),
      resume_failure_(resume_failure),
      rng_(seed, "power/resume") {
  const size_t nv = cluster.vcs.size();
  nodes_.resize(cluster.nodes.size());
  for (auto* v : {&vc_off_, &vc_booting_, &vc_used_, &vc_used_peak_, &vc_demand_wakes_, &vc_pending_}) v->assign(nv, 0);
  vc_pending_small_milli_.assign(nv, 0);
  vc_pending_big_nodes_.assign(nv, 0);
  vc_gpn_.assign(nv, 0);
  for (const Node& n : cluster.nodes) vc_gpn_[n.vc.v] = std::max(vc_gpn_[n.vc.v], n.gpus);
  st_.power_known = !power_.empty();
  for (const PowerModel& p : power_) st_.power_known &= p.known();
  if (power_.size() != cluster.nodes.size()) {
    power_.assign(cluster.nodes.size(), PowerModel{});
    st_.power_known = false;
  }
  for (const PowerModel& p : power_) idle_w_total_ += p.idle_watts;
  idle_w_powered_ = idle_w_total_;
  st_.nodes = cluster.nodes.size();
  st_.total_gpus = cluster.total_gpus();
  powered_gpus_ = st_.total_gpus;
  st_.wake_latency = wake_latency;
  st_.resume_failure = resume_failure;
  st_.min_powered = st_.max_powered = static_cast<uint32_t>(cluster.nodes.size());
  const Duration P = plugin_->period();
  Time m = first_submit % P;
  next_tick_ = first_submit - (m < 0 ? m + P : m) + P;  // first bin boundary after the first submit
  snap_.cluster = &cluster;
  for (NodeInfo& ni : nodes_) ni.idle_since = first_submit;
}

Time PowerSim::NextEvent(bool work_left) const {
  Time t = INT64_MAX;
  if (!boots_.empty()) t = boots_.front().first;
  if (work_left) t = std::min(t, next_tick_);
  return t;
}

void PowerSim::Advance(Time last, Time t, uint64_t busy_milli) {
  if (t <= last) return;
  const double dt = static_cast<double>(t - last);
  const double on = static_cast<double>(nodes_.size() - off_count_ - booting_count_);
  st_.seconds += dt;
  st_.node_s_on += on * dt;
  st_.node_s_booting += static_cast<double>(booting_count_) * dt;
  st_.node_s_off += static_cast<double>(off_count_) * dt;
  uint64_t used = 0;
  for (uint32_t u : vc_used_) used += u;
  st_.node_s_used += static_cast<double>(used) * dt;
  st_.gpu_s_busy += static_cast<double>(busy_milli) / 1000.0 * dt;
  st_.gpu_s_powered += static_cast<double>(powered_gpus_) * dt;
  st_.energy_j += (idle_w_powered_ + busy_w_) * dt;
  st_.baseline_energy_j += (idle_w_total_ + busy_w_) * dt;
}

void PowerSim::FinishBoots(Time t, Scheduler& sched) {
  auto later = std::greater<std::pair<Time, uint32_t>>();
  while (!boots_.empty() && boots_.front().first == t) {
    std::pop_heap(boots_.begin(), boots_.end(), later);
    uint32_t n = boots_.back().second;
    boots_.pop_back();
    NodeInfo& ni = nodes_[n];
    if (ni.state != PowerState::kBooting || ni.boot_end != t) continue;
    const uint16_t vc = cluster_.nodes[n].vc.v;
    --booting_count_;
    --vc_booting_[vc];
    if (resume_failure_ > 0 && rng_.Uniform() < resume_failure_) {
      // Failed resume: the node is off again (and draws nothing); the controller or the next
      // pending job may wake it again at once.
      ++st_.failed_resumes;
      ni.state = PowerState::kOff;
      ++off_count_;
      ++vc_off_[vc];
      idle_w_powered_ -= power_[n].idle_watts;
      powered_gpus_ -= cluster_.nodes[n].gpus;
      continue;
    }
    ni.state = PowerState::kOn;
    ni.ready_at = t;
    ni.idle_since = t;
    sched.SetNodePowered(NodeId(n), true);
  }
}

void PowerSim::PowerUp(NodeId id, Time t, Scheduler& sched, bool demand) {
  (void)sched;
  NodeInfo& ni = nodes_[id.v];
  if (ni.state != PowerState::kOff) return;
  const uint16_t vc = cluster_.nodes[id.v].vc.v;
  ++st_.power_ups;
  if (demand) {
    ++st_.demand_wakes;
    ++vc_demand_wakes_[vc];
  }
  --off_count_;
  --vc_off_[vc];
  idle_w_powered_ += power_[id.v].idle_watts;  // booting draws idle power
  powered_gpus_ += cluster_.nodes[id.v].gpus;
  ni.state = PowerState::kBooting;
  ni.boot_end = t + wake_latency_;
  ++booting_count_;
  ++vc_booting_[vc];
  boots_.emplace_back(ni.boot_end, id.v);
  std::push_heap(boots_.begin(), boots_.end(), std::greater<std::pair<Time, uint32_t>>());
}

void PowerSim::PowerDown(NodeId id, Time t, Scheduler& sched) {
  NodeInfo& ni = nodes_[id.v];
  if (ni.state == PowerState::kOff) return;
  if (ni.jobs > 0 || ni.state != PowerState::kOn || !sched.cluster_state().powered(id) ||
      sched.cluster_state().free_gpus(id) != sched.cluster_state().total_gpus(id)) {
    ++st_.refused_downs;  // never power off a node with work (or one still booting)
    return;
  }
  const uint16_t vc = cluster_.nodes[id.v].vc.v;
  sched.SetNodePowered(id, false);
  ++st_.power_downs;
  ni.state = PowerState::kOff;
  ni.unavailable_since = t;
  ++off_count_;
  ++vc_off_[vc];
  idle_w_powered_ -= power_[id.v].idle_watts;
  powered_gpus_ -= cluster_.nodes[id.v].gpus;
}

void PowerSim::AfterCycle(Time t, Scheduler& sched) {
  if (t >= next_tick_) {  // (later than due only after a stretch with no work left)
    while (next_tick_ <= t) next_tick_ += plugin_->period();
    snap_.now = t;
    snap_.nodes.resize(nodes_.size());
    for (size_t n = 0; n < nodes_.size(); ++n)
      snap_.nodes[n] = NodePowerView{nodes_[n].state, nodes_[n].jobs > 0, nodes_[n].idle_since};
    snap_.used_peak = vc_used_peak_;
    snap_.used_now = vc_used_;
    snap_.demand_wakes = vc_demand_wakes_;
    snap_.pending = vc_pending_;
    decisions_.clear();
    plugin_->Decide(snap_, &decisions_);
    for (const PowerDecision& d : decisions_) {
      if (d.node.v >= nodes_.size()) continue;
      if (d.kind == PowerDecision::kPowerUp)
        PowerUp(d.node, t, sched, false);
      else
        PowerDown(d.node, t, sched);
    }
    vc_used_peak_ = vc_used_;
    std::fill(vc_demand_wakes_.begin(), vc_demand_wakes_.end(), 0);
  }
  // Wake-ups for pending jobs: the core's one rule (DemandWakeups, sched/framework/power.h).
  const ClusterState& cs = sched.cluster_state();
  for (size_t v = 0; v < vc_pending_.size(); ++v) {
    const auto& vn = cluster_.vcs[v].nodes;
    const uint64_t powered_on = vn.size() - vc_off_[v] - vc_booting_[v];
    VcPowerLoad load;
    load.pending_jobs = vc_pending_[v];
    load.off = vc_off_[v];
    load.booting = vc_booting_[v];
    load.idle_on = powered_on - std::min<uint64_t>(powered_on, vc_used_[v]);
    load.gpus_per_node = vc_gpn_[v];
    load.free_gpus = cs.vc_free_gpus(VcId(static_cast<uint16_t>(v)));
    load.pending_small_milli = vc_pending_small_milli_[v];
    load.pending_big_nodes = vc_pending_big_nodes_[v];
    uint64_t wake = DemandWakeups(load);
    for (NodeId n : vn) {
      if (wake == 0) break;
      if (nodes_[n.v].state == PowerState::kOff) {
        PowerUp(n, t, sched, true);
        --wake;
      }
    }
  }
  uint32_t p = powered();
  st_.min_powered = std::min(st_.min_powered, p);
  st_.max_powered = std::max(st_.max_powered, p);
}

uint32_t PowerSim::NodesFor(const SchedJob& j) const {
  const JobRequest& job = *j.job;
  const uint16_t G = std::max<uint16_t>(1, vc_gpn_[j.vc.v]);
  if (job.nodes > 1) return job.nodes;
  if (job.gpus > G) return (job.gpus + G - 1) / G;
  return 0;  // small job
}

void PowerSim::Pending(const SchedJob& j, int sign) {
  const uint16_t v = j.vc.v;
  vc_pending_[v] += sign;
  uint32_t big = NodesFor(j);
  if (big)
    vc_pending_big_nodes_[v] += static_cast<uint64_t>(sign) * big;
  else
    vc_pending_small_milli_[v] += static_cast<uint64_t>(static_cast<int64_t>(sign)) * j.job->gpu_milli_total();
}

void PowerSim::OnSubmit(const SchedJob& j) { Pending(j, +1); }
void PowerSim::OnWithdraw(const SchedJob& j) { Pending(j, -1); }

void PowerSim::OnStart(uint32_t slot, const SchedJob& j, Time submit, Time t) {
  Pending(j, -1);
  if (slot_alloc_.size() <= slot) slot_alloc_.resize(slot + 1);
  slot_alloc_[slot] = j.alloc;
  Time delay = 0;
  for (const Slot& s : j.alloc) {
    NodeInfo& ni = nodes_[s.node.v];
    if (ni.jobs++ == 0) {
      uint16_t v = cluster_.nodes[s.node.v].vc.v;
      ++vc_used_[v];
      vc_used_peak_[v] = std::max(vc_used_peak_[v], vc_used_[v]);
    }
    busy_w_ += power_[s.node.v].busy_watts_per_gpu * s.gpus * s.milli / 1000.0;
    if (ni.ready_at > submit) delay = std::max(delay, ni.ready_at - std::max(submit, ni.unavailable_since));
  }
  if (j.preemptions == 0) ++st_.jobs_started;
  if (delay > 0) {
    (void)t;
    if (delayed_jobs_.insert(j.job).second) ++st_.jobs_delayed;  // distinct jobs
    st_.delay_sum_s += static_cast<double>(delay);
    st_.delay_max_s = std::max(st_.delay_max_s, static_cast<double>(delay));
  }
}

void PowerSim::OnStop(uint32_t slot, const SchedJob& j, bool requeued, Time t) {
  for (const Slot& s : slot_alloc_[slot]) {
    NodeInfo& ni = nodes_[s.node.v];
    if (--ni.jobs == 0) {
      --vc_used_[cluster_.nodes[s.node.v].vc.v];
      ni.idle_since = t;
    }
    busy_w_ -= power_[s.node.v].busy_watts_per_gpu * s.gpus * s.milli / 1000.0;
  }
  slot_alloc_[slot].clear();
  if (requeued) Pending(j, +1);
}

EnergyStats PowerSim::Finish(Time, Time) {
  ForecastError e = plugin_->forecast_error();
  st_.forecaster = e.forecaster;
  st_.forecaster_trainings = e.trainings;
  st_.forecast_n = e.n;
  st_.forecast_mae = e.mae();
  st_.forecast_rmse = e.rmse();
  st_.forecast_mape_pct = e.mape_pct();
  st_.forecast_smape_pct = e.smape_pct();
  if (!st_.power_known) st_.energy_j = st_.baseline_energy_j = 0;
  return st_;
}

}  // namespace orrery
