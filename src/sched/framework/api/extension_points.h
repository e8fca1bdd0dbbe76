// The extension points a policy adds to the queue walk: PostFilter (backfill, preemption),
// Reschedule (whole-VC decisions, Tiresias) and Share (GPU sharing, Lucid). Admit, QueueSort
// and Place are in plugin.h. Part of the core's contract with plugins.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "sched/framework/api/handle.h"
#include "sched/framework/api/plugin.h"

namespace orrery {

class PostFilterPlugin : public virtual Plugin {
 public:
  enum class Next { kStop, kContinue };
  // Called when pending job `slot` cannot be placed now. May start other jobs (backfill) or
  // preempt running ones and start `slot` (*placed = true).
  virtual Next Run(SchedulerHandle& h, uint32_t slot, bool* placed) = 0;
  // Whether Run could place `slot` although it does not fit the free resources (e.g. by
  // preempting). Greedy cycles skip jobs of sizes that cannot fit unless this says yes.
  // The answer may depend only on the job and its VC's state (SchedulerHandle::version):
  // a cycle asks once per queue head and VC version.
  virtual bool MayPlaceUnfitting(SchedulerHandle& h, uint32_t slot) { return false; }
  // MayPlaceUnfitting as a bound on the QueueSort key, where it is one: at the VC's current
  // version and instant it says yes exactly for pending jobs of `vc` whose key is below the
  // bound (SRTF: the queue is by remaining time, and only jobs shorter than the longest
  // running one may preempt). A greedy walk then compares keys instead of asking per job.
  virtual std::optional<SortKey> UnfitKeyBound(SchedulerHandle& h, VcId vc) { return std::nullopt; }
  // Whether Run would leave pending `slot`, which cannot fit the free resources now, pending
  // and change nothing (e.g. SRTF: preempting every longer job would not make room). A greedy
  // walk asks it, in its order and in place of Place and Run, for each job whose size cannot
  // fit whatever the placer (Scheduler::SurelyUnfit), and passes the job when it says yes;
  // when it says no, Place and Run follow on the same state (Run may reuse what it computed).
  virtual bool Rejects(SchedulerHandle& h, uint32_t slot) { return false; }
  // Whether Rejects runs along a single-node size class: at one VC version and instant, once
  // it rejects a job of c whole GPUs on one node, it rejects every later such job in queue
  // order (SRTF: a later job has a longer remaining time, so fewer victims). A greedy walk
  // then passes the rest of that class at that version without asking again.
  virtual bool rejects_along_class() const { return false; }
  // Whether the jobs Run leaves pending stay so while nothing but time and plain starts
  // change the VC: a job it leaves pending (Rejects, or Place and Run failing) at one VC state
  // and instant, it leaves pending at every later instant with the VC at the same version, and
  // after starts of other jobs on free resources (Place + Start, no preemption) that raise
  // neither the fitting classes nor UnfitKeyBound, given a pure placer that fails on fewer free
  // resources when it failed on more (SRTF: a waiting job's remaining time is fixed, running
  // jobs' only falls, so the victims only shrink; a start turns free GPUs into GPUs that
  // preempting frees at most). A greedy walk then passes, without asking, the jobs that were
  // already pending at the end of a settled walk (VcQueues::settled).
  virtual bool failures_persist() const { return false; }
  // Whether Run visits running jobs by true end (ForEachRunningByTrueEndDesc: an oracle).
  virtual bool needs_true_end_order() const { return false; }
  // Whether it visits running jobs by believed end (ForEachRunningByEstEnd, ...Desc). The
  // core keeps that order (a tree insert and erase per start) only for PostFilters that do.
  virtual bool reads_running_by_est_end() const { return true; }
  // Whether Run decides by believed durations (BelievedDuration, est_end: EASY's
  // reservation). Without an estimator the belief is the truth in the simulator, so such a
  // policy is an oracle policy (PolicyParts::belief_is_truth).
  virtual bool reads_believed_durations() const { return false; }
  virtual std::unique_ptr<PostFilterPlugin> Clone(PluginCopies& copies) const { return nullptr; }  // QueueSortPlugin's
};

// Whole-VC decisions at each cycle of a VC, before (or instead of) the framework's queue
// walk: multi-level feedback queues whose running jobs' priorities change with attained
// service (Tiresias) re-decide which running jobs keep their GPUs. Run may Preempt and Start
// jobs through the handle; *block receives the reason the first job left pending waits.
class ReschedulePlugin : public virtual Plugin {
 public:
  enum class Next { kStop, kWalk };  // kWalk: the framework's queue walk follows
  virtual Next Run(SchedulerHandle& h, VcId vc, PluginStatus* block) = 0;
  // Called once at the start of every Schedule call, before the VCs to cycle are chosen:
  // process time-driven changes due by h.now() (e.g. queue demotions, starvation
  // promotions) and MarkDirty the VCs whose decisions they may change.
  virtual void Advance(SchedulerHandle& h) {}
  // Lifecycle hooks (every start, preemption and completion, whoever decided it). The
  // handle's ForEachRunning* visit nothing unless the policy also has a PostFilter: a
  // Reschedule plugin keeps its own view of the running jobs through these hooks.
  // JobStopped: `cause` says why (only kFinished may teach); `requeued`: the job waits again
  // (kPreempted, kRequeued, kNodeLost, a restartable kFailed), else it leaves.
  virtual void JobStarted(SchedulerHandle& h, uint32_t slot) {}
  virtual void JobStopped(SchedulerHandle& h, uint32_t slot, EndCause cause, bool requeued) {}
  // Earliest time at which Run would decide differently without any arrival or
  // completion (e.g. a running job crossing a queue threshold), or kNoTime. An
  // event-driven driver calls Schedule then (Advance marks the VCs concerned).
  virtual Time NextWakeup() const { return kNoTime; }
  // Whether it changes running jobs' GPU counts (elastic resize: checkpoint and restart at
  // another count), which live mode cannot do yet (CheckLiveSupport).
  virtual bool resizes_jobs() const { return false; }
  virtual std::unique_ptr<ReschedulePlugin> Clone(PluginCopies& copies) const { return nullptr; }  // QueueSortPlugin's
};

// Optional GPU sharing (Lucid's packing; at most two jobs per GPU). While Active() says so,
// a cycle is greedy (a job that cannot be placed is skipped, never blocks) and is framed by
// packing passes (Pack) that may start pending jobs on a running partner's GPUs: such a job
// takes no new GPUs, and both run at the speeds the driver's interference truth gives.
// While inactive, the policy's blocking setting applies and nothing is packed.
class SharePlugin : public virtual Plugin {
 public:
  virtual bool Active(SchedulerHandle& h) = 0;
  // The packing pass of a cycle of `vc` (run before and after exclusive placement while
  // Active): starts pending jobs on running partners' GPUs through h.StartShared.
  virtual void Pack(SchedulerHandle& h, VcId vc) = 0;
  // Notifications: a job was submitted (with its slot); a job started (exclusively or
  // packed) or stopped running.
  virtual void OnSubmit(const SchedJob& j, uint32_t slot, Time now) {}
  virtual void OnRunning(SchedulerHandle& h, uint32_t slot, bool running) {}
  // Why `job` was or was not packed (one line; empty if never considered). The hook
  // `orrery explain` and the simulator's packing.csv read.
  virtual std::string Explain(JobId job) const { return {}; }
  virtual std::unique_ptr<SharePlugin> Clone(PluginCopies& copies) const { return nullptr; }  // QueueSortPlugin's
};

}  // namespace orrery
