// The simulator's truth about each active job (sched/framework/oracle.h): its true
// remaining work and when it really ends, kept current by the scheduler's lifecycle
// callbacks. Restart physics live here: a preempted trace job (one generic phase,
// checkpointed when preempted) loses no work and is charged the policy's restart overhead.
#pragma once

#include <cstdint>
#include <vector>

#include "sched/framework/oracle.h"

namespace orrery {

class SimTruth final : public TruthModel {
 public:
  // overhead: restart cost charged per preemption (PolicyParts::preempt_overhead).
  explicit SimTruth(Duration (*overhead)(uint32_t gpus)) : overhead_(overhead) {}

  // Pending: the work left at its next start. Running: the work left when it started.
  Duration Remaining(uint32_t slot) const override { return at(slot).remaining; }
  Time TrueEnd(uint32_t slot) const override { return at(slot).started + at(slot).remaining; }
  Duration RestartCost(uint32_t slot) const override { return at(slot).restart_cost; }

  void Submitted(uint32_t slot, const Job& job, Time now) override;
  void Started(uint32_t slot, Time now) override { at(slot).started = now; }
  void Stopped(uint32_t slot, Time now, EndCause cause) override;

 private:
  struct Entry {
    Duration remaining = 0;
    Time started = kNoTime;
    Duration restart_cost = 0;
    uint32_t gpus = 0;
  };
  Entry& at(uint32_t slot) { return jobs_[slot]; }
  const Entry& at(uint32_t slot) const { return jobs_[slot]; }

  Duration (*overhead_)(uint32_t gpus);
  std::vector<Entry> jobs_;
};

}  // namespace orrery
