// A policy as the core runs it: the plugins at each extension point and the settings that
// go with them, and which of them a live driver can run. Part of the core's contract.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "predict/interference.h"
#include "sched/framework/api/extension_points.h"
#include "sched/framework/api/reserve.h"
#include "sched/framework/api/shape.h"

namespace orrery {

// A staging partition (Lucid's profiler): jobs of at most `max_gpus` GPUs first run there for
// up to `time_limit` seconds; a job that ends within it is done, the others are handed over
// to their own VC with the work done so far kept. The driver carves `nodes` nodes out of the
// cluster (one from each of `donor_vcs`, default: the VCs with the most nodes).
struct ProfilerSpec {
  bool enabled = false;
  int nodes = 2;
  Duration time_limit = 200;
  uint32_t max_gpus = 8;
  std::vector<std::string> donor_vcs;
};

struct PolicyParts {
  std::string name;                        // as requested, e.g. "easy"
  // May be null. Refuses a job at submission, after the core's own feasibility checks (a
  // site's submission and per-job limits, the slurm policy). Not copied into the predicted
  // start's dry run, which submits nothing.
  std::unique_ptr<AdmitPlugin> admit;
  std::unique_ptr<QueueSortPlugin> sort;
  // May be empty. The policy's own placement (a Python policy's place()): given the run's
  // placer, which it may defer to (e.g. for fractional jobs), the placer the run uses instead.
  std::function<std::unique_ptr<PlacePlugin>(std::unique_ptr<PlacePlugin> run_placer)> placer;
  std::unique_ptr<PostFilterPlugin> post;  // may be null
  std::unique_ptr<ReschedulePlugin> reschedule;  // may be null
  // Periodic decisions: > 0 = the driver runs cycles only every `tick` seconds (at
  // multiples of tick, over every VC with pending jobs), plus at events if tick_and_events.
  Duration tick = 0;
  bool tick_and_events = false;
  // Checkpoint/restart overhead per preemption that the policy's paper assumes (null =
  // PreemptionOverhead below); read through restart_overhead(). The simulator's truth
  // charges it (restart physics); the core's belief adds it to a preempted job's believed
  // remaining work.
  Duration (*preempt_overhead)(uint32_t gpus) = nullptr;
  std::unique_ptr<DurationEstimator> estimator;  // may be null
  bool blocking = true;                    // stop at the first job that cannot be placed
  bool preemptive = false;
  // Whether the policy may end jobs by a preemption that cancels them
  // (SchedulerHandle::PreemptAndCancel; Slurm's PreemptMode=CANCEL): simulator only.
  bool cancels = false;
  std::unique_ptr<SharePlugin> share;      // GPU sharing (may be null; never with preemptive)
  // Interference data for sharing policies: the driver reads the true co-located speeds here.
  std::shared_ptr<const ColocationContext> colocation;
  ProfilerSpec profiler;
  std::unique_ptr<ShapePlugin> shape;      // null = every job runs in the shape it asked for
  EvalReservation reserve;                 // GPUs reserved for evaluation jobs (reserve.h); off by default
  // What building the policy has to tell about its inputs ("warning: site.conf:3:1: key 'X' is
  // not modelled; ignored"): printed by the command after its results.
  std::vector<std::string> notes;
  // Policies whose code can fail while it runs (Python policies, docs/python.md): the first
  // failure, Ok while none; the driver returns it as the run's error. Empty = cannot fail.
  std::function<Status()> fault;
  // Whether the policy reads the truth (an oracle sort, estimator or PostFilter, or
  // belief_is_truth).
  bool reads_oracle() const;
  // Whether the PostFilter decides by believed durations while the policy has no estimator:
  // BelievedDuration then falls back to the truth's remaining work (simulator only).
  bool belief_is_truth() const { return !estimator && post && post->reads_believed_durations(); }
  // The one rule for a preemption's restart overhead: preempt_overhead, else PreemptionOverhead.
  using OverheadFn = Duration (*)(uint32_t gpus);
  OverheadFn restart_overhead() const;
};

// Whether a live driver (no truth, no staging partition) can run this policy: an error
// naming the reason for oracle policies (SJF, SRTF, oracle estimators) and for Lucid's
// profiler stage (simulator only; `lucid:profiler=false` runs live).
Status CheckLiveSupport(const PolicyParts& policy);

// Checkpoint/restart overhead charged to a preempted job (Helios SRTF): 7 s for 1 GPU,
// 30 s for ≤ 8 GPUs, 60 s above.
Duration PreemptionOverhead(uint32_t gpus);

}  // namespace orrery
