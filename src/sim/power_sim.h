// The simulator's side of energy saving (docs/energy.md): node power states (on, off,
// booting for the wake-up latency, optional failed resume), the Power extension point's
// control loop, on-demand wake-ups for pending jobs (what Slurm's power saving does when it
// allocates a powered-down node), and energy accounting. Used by Simulate() only when
// SimConfig::energy is set; otherwise nothing here runs.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_set>
#include <vector>

#include "base/rng.h"
#include "config/cluster_config.h"
#include "model/energy.h"
#include "sched/framework/power.h"
#include "sched/framework/internal/scheduler.h"

namespace orrery {

class PowerSim {
 public:
  // node_power: one PowerModel per node (may be empty: no energy figures, states only).
  PowerSim(const Cluster& cluster, std::unique_ptr<PowerPlugin> plugin, std::vector<PowerModel> node_power,
           Duration wake_latency, double resume_failure, uint64_t seed, Time first_submit);

  // Next time something happens by itself: a boot ends or a control step is due (kNoTime-free:
  // INT64_MAX when nothing). Control steps count only while `work_left`.
  Time NextEvent(bool work_left) const;
  bool booting() const { return booting_count_ > 0; }
  uint32_t powered() const { return static_cast<uint32_t>(nodes_.size() - off_count_); }

  // Integrates power and node states over [last, t).
  void Advance(Time last, Time t, uint64_t busy_milli);
  // Boots that end at t: the node joins placement, or (failed resume) goes back off.
  void FinishBoots(Time t, Scheduler& sched);
  // After the scheduling cycle at t: the control step (if due), then wake-ups for pending
  // jobs that find no powered capacity.
  void AfterCycle(Time t, Scheduler& sched);

  // Job bookkeeping (slot = scheduler slot).
  void OnSubmit(const SchedJob& j);
  void OnStart(uint32_t slot, const SchedJob& j, Time submit, Time t);
  void OnStop(uint32_t slot, const SchedJob& j, bool requeued, Time t);  // finished or preempted
  void OnWithdraw(const SchedJob& j);  // left the queue before it started

  EnergyStats Finish(Time first, Time last);

 private:
  struct NodeInfo {
    PowerState state = PowerState::kOn;
    uint32_t jobs = 0;           // running jobs with a slot here
    Time unavailable_since = 0;  // last power-down
    Time ready_at = INT64_MIN;   // last time it became available after a power-down
    Time boot_end = 0;
    Time idle_since = 0;         // last time jobs dropped to 0 (or it came up)
  };
  void PowerUp(NodeId n, Time t, Scheduler& sched, bool demand);
  void PowerDown(NodeId n, Time t, Scheduler& sched);
  void Pending(const SchedJob& j, int sign);
  uint32_t NodesFor(const SchedJob& j) const;

  const Cluster& cluster_;
  std::unique_ptr<PowerPlugin> plugin_;
  std::vector<PowerModel> power_;
  Duration wake_latency_;
  double resume_failure_;
  Rng rng_;
  std::vector<NodeInfo> nodes_;
  std::vector<uint32_t> vc_off_, vc_booting_, vc_used_, vc_used_peak_, vc_demand_wakes_, vc_pending_;
  std::vector<uint64_t> vc_pending_small_milli_, vc_pending_big_nodes_;
  std::vector<uint16_t> vc_gpn_;  // GPUs per node (max) of each VC
  std::vector<Allocation> slot_alloc_;
  std::unordered_set<const JobRequest*> delayed_jobs_;  // jobs counted in jobs_delayed (a restart is not a new job)
  std::vector<std::pair<Time, uint32_t>> boots_;  // (end, node), min-heap
  uint64_t booting_count_ = 0, off_count_ = 0;
  Time next_tick_ = 0;
  double idle_w_powered_ = 0, busy_w_ = 0, idle_w_total_ = 0;
  uint64_t powered_gpus_ = 0;  // GPUs of nodes on or booting
  std::vector<PowerDecision> decisions_;
  PowerSnapshot snap_;
  EnergyStats st_;
};

}  // namespace orrery
