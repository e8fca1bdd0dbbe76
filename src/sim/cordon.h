// Cordoned nodes of a trace run (issue #12, `--recovery acme`): the node an infrastructure
// failure names is drained until its repair ends (the failure model's `repair`): its other
// running jobs go on, no new job is placed there (Scheduler::SetNodeDrained, Slurm's DRAIN).
#pragma once

#include <cstdint>
#include <vector>

#include "sched/framework/scheduler.h"
#include "sim/sim_queue.h"

namespace orrery {

class Cordons {
 public:
  // Node n is cordoned until `until` (a later fault of a still-cordoned node extends it); its
  // repair end is a kRepair event (the event's slot is the node id).
  void Add(NodeId n, Time until, Scheduler& sched, SimQueue& q) {
    if (until_.size() <= n.v) until_.resize(n.v + 1, kNoTime);
    if (until_[n.v] == kNoTime) {
      sched.SetNodeDrained(n, true);
      ++out_;
    }
    if (until_[n.v] == kNoTime || until > until_[n.v]) {
      until_[n.v] = until;
      q.PushJob(until, EventKind::kRepair, n.v, 0);
    }
    ++cordoned_;
  }
  // A repair ends at `now`: the node takes jobs again (unless a later cordon extended it).
  void Repair(NodeId n, Time now, Scheduler& sched) {
    if (n.v >= until_.size() || until_[n.v] != now) return;
    until_[n.v] = kNoTime;
    sched.SetNodeDrained(n, false);
    --out_;
  }
  uint64_t out() const { return out_; }            // nodes cordoned now
  uint64_t cordoned() const { return cordoned_; }  // cordons so far

 private:
  std::vector<Time> until_;  // per node: end of its repair, kNoTime = not cordoned
  uint64_t out_ = 0, cordoned_ = 0;
};

}  // namespace orrery
