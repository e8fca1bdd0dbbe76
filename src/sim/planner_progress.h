// Planner-aware progress (docs/design/planner.md, "Scheduler integration"): a job whose
// training phase describes its model (model/work.h TrainModel) runs at
//   speed = seconds_per_step / PlannerCost::Best(model, allocation).seconds
// where the allocation is where it was actually placed: the GPU type of its nodes, its GPU
// count and the number of distinct nodes (GPUs per node < 8 puts more of its collectives on
// the inter-node tables; a mixed allocation runs at its slowest type). seconds_per_step is the
// step time at the requested shape on one compact allocation (the generator sets it so), hence
// speed 1 there. Jobs without a described model, or whose allocation no plan fits, run at 1.
// The speed is fixed for an attempt (it depends only on the job's own allocation).
#pragma once

#include <memory>
#include <vector>

#include "model/cluster.h"
#include "model/work.h"
#include "sched/plugins/planner_shape.h"
#include "sim/progress.h"

namespace orrery {

class PlannerProgress final : public ProgressModel {
 public:
  // work: per trace job index; slot_job: the simulator's slot -> trace job index map.
  PlannerProgress(std::shared_ptr<const PlannerCost> cost, const Cluster* cluster, const std::vector<WorkSpec>* work,
                  const std::vector<uint32_t>* slot_job)
      : cost_(std::move(cost)), cluster_(cluster), work_(work), slot_job_(slot_job) {}
  float Speed(const Scheduler& sched, uint32_t slot) const override {
    const uint32_t idx = (*slot_job_)[slot];
    if (idx >= work_->size()) return 1.0f;
    const Phase* p = DescribedPhase((*work_)[idx]);
    if (p == nullptr) return 1.0f;
    Result<PlannedStep> s = cost_->Best(p->model, GroupsOf(sched.view(slot).alloc, *cluster_));
    if (!s.ok() || s->seconds <= 0) return 1.0f;
    return static_cast<float>(p->seconds_per_step / s->seconds);
  }
  bool dynamic() const override { return false; }

 private:
  std::shared_ptr<const PlannerCost> cost_;
  const Cluster* cluster_;
  const std::vector<WorkSpec>* work_;
  const std::vector<uint32_t>* slot_job_;
};

}  // namespace orrery
