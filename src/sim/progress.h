// How fast a running job progresses: the simulator integrates each job's work (seconds of
// running alone at its requested shape, SimTruth) at the speed a ProgressModel gives.
// Default: speed 1 (one step per second for trace jobs). GPU co-location is one model (the
// interference truth of the two jobs sharing GPUs); the planner-aware model (speed from the
// planner's step time on the allocation a job got) is sim/planner_progress.h.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "predict/interference.h"
#include "sched/framework/internal/scheduler.h"

namespace orrery {

class ProgressModel {
 public:
  virtual ~ProgressModel() = default;
  // Speed of running job `slot` now, relative to running alone at its requested shape.
  virtual float Speed(const Scheduler& sched, uint32_t slot) const = 0;
  // Whether a job's speed can change while it runs (then the simulator re-times it when
  // the jobs it depends on start or stop). False: a job ends at start + its remaining work.
  virtual bool dynamic() const = 0;
};

class SoloProgress final : public ProgressModel {
 public:
  float Speed(const Scheduler&, uint32_t) const override { return 1.0f; }
  bool dynamic() const override { return false; }
};

// Two jobs sharing GPUs run at the co-location truth's speeds (Lucid's table).
// slot_job: the simulator's slot -> trace job index map (the truth is per trace job).
class ColocationProgress final : public ProgressModel {
 public:
  ColocationProgress(std::shared_ptr<const ColocationContext> c, const std::vector<uint32_t>* slot_job)
      : c_(std::move(c)), slot_job_(slot_job) {}
  float Speed(const Scheduler& sched, uint32_t slot) const override {
    const SchedJob& j = sched.view(slot);
    if (j.partner == kNoSlot) return 1.0f;
    return c_->TrueSpeed(c_->workload(JobId((*slot_job_)[slot])), c_->workload(JobId((*slot_job_)[j.partner])));
  }
  bool dynamic() const override { return true; }

 private:
  std::shared_ptr<const ColocationContext> c_;
  const std::vector<uint32_t>* slot_job_;
};

}  // namespace orrery
