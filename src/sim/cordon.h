// Cordoned nodes of a trace run (issue #12, `--recovery acme`): the node an infrastructure
// failure names leaves placement until its repair ends (the failure model's `repair`). A node
// that still runs other jobs is drained: it leaves once idle (checked before every scheduling
// cycle); until then its free GPUs can still take jobs (the core has no drain state: Slurm's
// DRAINING would refuse them; documented in docs/design/failures.md). A node is taken out
// through the core's power state (Scheduler::SetNodePowered), so cordoning and energy saving
// are not combined (Simulate refuses it).
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sched/framework/scheduler.h"
#include "sim/sim_queue.h"

namespace orrery {

class Cordons {
 public:
  // Node n is cordoned until `until` (a later cordon of a draining node extends it).
  void Add(NodeId n, Time until) {
    ++cordoned_;
    for (auto& [node, t] : draining_)
      if (node.v == n.v) {
        t = std::max(t, until);
        return;
      }
    draining_.push_back({n, until});
  }
  // Takes the draining nodes that are idle at `now` out of placement; their repair ends are
  // pushed as kRepair events (the event's slot is the node id). A node whose repair time
  // passed while it drained is not taken out (the cordon is over).
  void TakeOutIdle(Scheduler& sched, SimQueue& q, Time now) {
    size_t keep = 0;
    for (const auto& [node, until] : draining_) {
      if (until <= now) continue;
      if (!sched.cluster_state().idle(node)) {
        draining_[keep++] = {node, until};
        continue;
      }
      sched.SetNodePowered(node, false);
      q.PushJob(until, EventKind::kRepair, node.v, 0);
      ++out_;
    }
    draining_.resize(keep);
  }
  // A repair ended: the node takes jobs again.
  void Repair(NodeId n, Scheduler& sched) {
    sched.SetNodePowered(n, true);
    --out_;
  }
  bool draining() const { return !draining_.empty(); }
  uint64_t out() const { return out_; }            // nodes out of placement now
  uint64_t cordoned() const { return cordoned_; }  // cordons so far

 private:
  std::vector<std::pair<NodeId, Time>> draining_;
  uint64_t out_ = 0, cordoned_ = 0;
};

}  // namespace orrery
