// Stopgap for the live driver until `orrery serve` refuses oracle policies
// (CheckLiveSupport, sched/framework/scheduler.h; issue #11 item 9): the durations jobs
// declare (their comment's duration hint, else their time limit: Daemon::FillJob) stand in
// for the truth, so `sjf`/`srtf` keep ordering by declared duration as before. Preemption
// keeps the declared work left plus the policy's restart overhead, as the core charged it.
#pragma once

#include <algorithm>
#include <vector>

#include "sched/framework/oracle.h"
#include "sched/framework/scheduler.h"

namespace orrery {

class DeclaredTruth final : public TruthModel {
 public:
  explicit DeclaredTruth(Duration (*overhead)(uint32_t)) : overhead_(overhead ? overhead : &PreemptionOverhead) {}
  Duration Remaining(uint32_t slot) const override { return jobs_[slot].remaining; }
  Time TrueEnd(uint32_t slot) const override { return jobs_[slot].started + jobs_[slot].remaining; }
  Duration RestartCost(uint32_t slot) const override { return jobs_[slot].restart; }
  void Submitted(uint32_t slot, const Job& job, Time) override {
    if (jobs_.size() <= slot) jobs_.resize(slot + 1);
    jobs_[slot] = Entry{std::max<Duration>(0, job.duration), kNoTime, 0, job.gpus};
  }
  void Started(uint32_t slot, Time now) override { jobs_[slot].started = now; }
  void Stopped(uint32_t slot, Time now, EndCause cause) override {
    Entry& e = jobs_[slot];
    e.restart = cause == EndCause::kPreempted ? overhead_(e.gpus) : 0;
    if (cause == EndCause::kPreempted) e.remaining = std::max<Duration>(0, e.started + e.remaining - now) + e.restart;
  }

 private:
  struct Entry {
    Duration remaining = 0;
    Time started = kNoTime;
    Duration restart = 0;
    uint32_t gpus = 0;
  };
  Duration (*overhead_)(uint32_t);
  std::vector<Entry> jobs_;
};

}  // namespace orrery
