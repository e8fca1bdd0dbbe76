// The power loop (docs/live.md#energy): node power states from Slurm -> PowerSnapshot -> the
// PowerPlugin every period, plus wake-ups for pending jobs by the core's one rule
// (DemandWakeups, sched/framework/power.h); every power decision, an operator's too, goes
// through the journaled apply path (applier.h), numbered by the journal counter "power".
//
// It owns the energy policy, the control tick, each node's idle-since, the POWER_UPs Slurm does
// not show yet, the per-VC peaks and demand wake-ups the policy reads, the power counter and
// its counters. The scheduler's model (the cluster, allocations, free GPUs) and the node
// records go through the PowerLoopHost the daemon implements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "live/applier.h"
#include "live/cycle_stats.h"
#include "live/decision_ledger.h"
#include "live/event_log.h"
#include "live/job_book.h"
#include "live/journal.h"
#include "live/slurm_client.h"
#include "model/cluster.h"
#include "sched/framework/power.h"

namespace orrery::live {

class PowerLoopHost {
 public:
  virtual ~PowerLoopHost() = default;
  // --- the scheduler port
  virtual const Cluster* ModelCluster() const = 0;  // the scheduler's cluster (null before the first cycle)
  // Appends the nodes where the snapshot holds an allocation (none before the first cycle).
  virtual void AllocatedNodes(std::vector<std::string>* out) const = 0;
  virtual uint64_t VcFreeGpus(VcId vc) const = 0;  // free GPUs on powered nodes of the VC
  // A node that was up is powering down: unpowered in the snapshot now when it is idle there,
  // else out of placement once its work is gone.
  virtual void PoweringDown(const std::string& node) = 0;
  // --- the node records
  virtual const SlurmNode* NodeOf(const std::string& node) const = 0;  // null: not a managed node
  // The node's record for a change Slurm shows only at a later listing (null: not a managed node).
  virtual SlurmNode* MirrorLocally(const std::string& node) = 0;
  virtual int64_t CycleNumber() const = 0;  // the cycle a decision is journaled with
};

struct PowerLoopOptions {
  size_t vcs = 0;      // managed partitions
  std::string energy;  // MakePowerPlugin spec; empty = no energy policy
  uint64_t seed = 1;
  // Builds the PowerPlugin instead of MakePowerPlugin(energy) (energy must be set).
  std::function<std::unique_ptr<PowerPlugin>()> factory;
};

class PowerLoop {
 public:
  PowerLoop(JobBook* book, DecisionLedger* ledger, Journal* journal, const Clock* clock, EventLog* events,
            Applier* applier, PowerLoopHost* host, PowerLoopOptions opts)
      : book_(book),
        ledger_(ledger),
        journal_(journal),
        clock_(clock),
        events_(events),
        applier_(applier),
        host_(host),
        opts_(std::move(opts)) {}

  // The journal's power counter (after a restart).
  Status Load();
  // The energy policy (none when no spec is configured).
  Status MakePolicy();
  bool on() const { return policy_ != nullptr; }
  // The policy's control step when due, then wake-ups for pending jobs (only with a policy).
  Status Step(Time now, CycleStats* st);
  // An operator's power action: planned now, applied at the next cycle by the apply path's retry.
  Status Request(const std::string& node, bool up, Time now);

  // The applier's side: a power decision met again, and the bookkeeping once Slurm took one.
  Verdict Check(const JournalDecision& d, std::string* why) const;
  void Applied(const JournalDecision& d, Time now, CycleStats* st);
  int64_t seq() const { return seq_; }  // the last power decision's number

  // The node listing's side. A POWER_UP sent shows in sinfo ("#") only at Slurm's next
  // power-thread pass: true while the listed row still says powered down within that grace
  // (the node stays powering up in the daemon's records).
  bool StillBooting(const SlurmNode& listed, const SlurmNode& believed, Time now);
  void FailedResume(const SlurmNode& n, Time now);  // went down while powering up (ResumeTimeout)
  void NodeGone(const std::string& node) { power_up_sent_.erase(node); }

  // By this process (the metrics).
  uint64_t ces_ups() const { return ces_ups_; }
  uint64_t ces_downs() const { return ces_downs_; }
  uint64_t demand_ups() const { return demand_ups_; }
  uint64_t refused() const { return refused_; }
  uint64_t failed_resumes() const { return failed_resumes_; }

 private:
  // One VC's nodes and pending work, as the power loop counts them (as the simulator does).
  struct VcLoad {
    uint32_t used_now = 0, booting = 0, idle_on = 0, off = 0;
    uint32_t pending = 0;
    uint64_t big_nodes = 0, small_milli = 0;
    uint16_t gpn = 1;  // GPUs per node (the VC's largest)
  };
  std::vector<VcLoad> MeasureLoad(Time now, const std::vector<std::string>& busy);
  Status PolicyPower(Time now, const std::vector<std::string>& busy, std::vector<VcLoad>& load, CycleStats* st);
  Status DemandPower(Time now, const std::vector<VcLoad>& load, CycleStats* st);
  Status PlanPower(Time now, const std::vector<std::pair<std::string, bool>>& todo, const char* source,
                   CycleStats* st);
  std::vector<std::string> NodesWithWork() const;  // sorted names: running/starting/pinned jobs
  void PowerApplied(const std::string& node, bool up);  // mirrors an applied power action locally
  void Note(Time now, const std::string& kind, const std::string& detail) { events_->Note(now, kind, detail); }

  JobBook* book_;
  DecisionLedger* ledger_;
  Journal* journal_;
  const Clock* clock_;
  EventLog* events_;
  Applier* applier_;
  PowerLoopHost* host_;
  PowerLoopOptions opts_;
  std::unique_ptr<PowerPlugin> policy_;  // null = no energy policy
  Time next_tick_ = kNoTime;
  std::unordered_map<std::string, Time> idle_since_;  // managed nodes: idle (on, no work) since
  // POWER_UPs sent and not yet shown by Slurm (its power thread shows "#" about 1 s later;
  // until then sinfo still says "idle~"): node -> when sent.
  std::unordered_map<std::string, Time> power_up_sent_;
  std::vector<uint32_t> vc_used_peak_, vc_demand_wakes_;
  PowerSnapshot snap_;
  std::vector<PowerDecision> out_;
  int64_t seq_ = 0;  // last power decision number (journal counter "power")
  uint64_t ces_ups_ = 0, ces_downs_ = 0, demand_ups_ = 0, refused_ = 0, failed_resumes_ = 0;
};

}  // namespace orrery::live
