// Elastic resize of running planner-described jobs (docs/design/planner.md, "Elastic
// resize"): a Reschedule plugin beside GoodputShape that, at each cycle of a VC,
//   * shrinks: while jobs wait, a running job holding more GPUs than it requested is stopped
//     (checkpointed) so that it restarts at most at its request, when the surplus of such jobs
//     plus the free GPUs reaches what the first waiting job needs (its request / shrink);
//     largest surplus first, only as many as that needs;
//   * grows: while nothing waits, the one running job whose GoodputShape choice on its own
//     GPUs plus the free ones is the fastest relative to its current step (at least
//     `min_gain` faster) and that has run `cooldown` seconds since its start is stopped, and
//     restarts at that count in the same cycle.
// A resize is a checkpoint and a restart (Preempt): the job keeps its work (its phase's
// checkpoint.on_preempt) and pays its phase's checkpoint.restore at the restart (the
// simulator's truth). GoodputShape is told, per cycle, whether two or more jobs were waiting
// when the cycle began or a job was just shrunk (SetCrowded): then no start grows past its
// request (one job alone may: nothing else waits for the free GPUs). A job is resized at
// most once per instant.
#pragma once

#include <cstdint>
#include <vector>

#include "model/job.h"
#include "sched/framework/api/policy_parts.h"
#include "sched/plugins/planner_shape.h"

namespace orrery {

struct ElasticOptions {
  Duration cooldown = 1800;  // s a job runs (since its start) before it may be grown
};

class ElasticResize final : public ReschedulePlugin {
 public:
  // shape: the policy's GoodputShape (owned by the same PolicyParts); requests: the trace's
  // jobs (a running job's request, by Job::id); null in live mode, where CheckLiveSupport
  // refuses the plugin (resizes_jobs) before it runs.
  ElasticResize(GoodputShape* shape, const std::vector<Job>* requests, ElasticOptions o)
      : shape_(shape), requests_(requests), o_(o) {}
  std::string_view name() const override { return "elastic"; }
  bool resizes_jobs() const override { return true; }
  Next Run(SchedulerHandle& h, VcId vc, PluginStatus* block) override;
  void JobStarted(SchedulerHandle& h, uint32_t slot) override;
  void JobStopped(SchedulerHandle& h, uint32_t slot, EndCause cause, bool requeued) override;

 private:
  bool Shrink(SchedulerHandle& h, VcId vc, uint32_t first);  // whether it stopped any job
  void Grow(SchedulerHandle& h, VcId vc);
  // The request of a running job (the trace's job; its shaped copy while it runs).
  const JobRequest& Request(const SchedJob& j) const { return (*requests_)[j.job->id.v]; }
  // GPUs a waiting job needs to start (GoodputShape's smallest count for described jobs).
  uint64_t NeedOf(const JobRequest& job) const;

  GoodputShape* shape_;
  const std::vector<Job>* requests_;
  ElasticOptions o_;
  std::vector<std::vector<uint32_t>> running_;  // per VC: running slots in start order
};

}  // namespace orrery
