// Cordoned nodes of a trace run (`--recovery acme`): the node an infrastructure
// failure names is drained until its repair ends (the failure model's `repair`): its other
// running jobs go on, no new job is placed there (Scheduler::SetNodeDrained, Slurm's DRAIN).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "sched/framework/internal/scheduler.h"
#include "sim/sim_queue.h"

namespace orrery {

class Cordons {
 public:
  // Node n is cordoned until `until` (a later fault of a still-cordoned node extends it); its
  // repair end is a kRepair event (the event's slot is the node id).
  // `now` is the fault's time, `gpus` the node's (for the capacity the cordon takes).
  void Add(NodeId n, Time now, Time until, uint32_t gpus, Scheduler& sched, SimQueue& q) {
    if (until_.size() <= n.v) until_.resize(n.v + 1, kNoTime), since_.resize(n.v + 1, kNoTime), gpus_.resize(n.v + 1, 0);
    if (until_[n.v] == kNoTime) {
      sched.SetNodeDrained(n, true);
      ++out_;
      since_[n.v] = now;
      gpus_[n.v] = gpus;
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
    closed_.push_back({since_[n.v], now, gpus_[n.v]});
  }
  uint64_t out() const { return out_; }            // nodes cordoned now
  uint64_t cordoned() const { return cordoned_; }  // cordons so far
  // Node-seconds and GPU-seconds spent cordoned up to `end` (a cordon still open counts until
  // `end`; time after `end` does not count).
  std::pair<double, double> Seconds(Time end) const {
    double node = 0, gpu = 0;
    auto add = [&](Time a, Time b, uint32_t g) {
      const double d = static_cast<double>(std::max<Time>(0, std::min(b, end) - a));
      node += d, gpu += d * g;
    };
    for (const Interval& c : closed_) add(c.from, c.to, c.gpus);
    for (size_t i = 0; i < until_.size(); ++i)
      if (until_[i] != kNoTime) add(since_[i], until_[i], gpus_[i]);
    return {node, gpu};
  }

 private:
  struct Interval {
    Time from, to;
    uint32_t gpus;
  };
  std::vector<Time> until_;  // per node: end of its repair, kNoTime = not cordoned
  std::vector<Time> since_;  // per node: start of its current cordon
  std::vector<uint32_t> gpus_;
  std::vector<Interval> closed_;  // cordons that ended
  uint64_t out_ = 0, cordoned_ = 0;
};

}  // namespace orrery
