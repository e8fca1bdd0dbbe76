// What a plugin may see and do during a cycle: the scheduler's handle (Kubernetes'
// framework.Handle) and the pending entries its queue walks hand out. Part of the core's
// contract with plugins (sched/framework/api/; the engine itself, scheduler.h, is not).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "sched/framework/api/oracle.h"
#include "sched/framework/api/plugin.h"
#include "sched/framework/cluster_state.h"

namespace orrery {

// A pending job as its VC's queue holds it: the QueueSort key, the tie order, the slot and
// the GPU demand (milli, the request's gpu_milli_total(); fixed while the job waits). Queue
// walks (SchedulerHandle::ForEachPending) hand this out so that a visitor need not read the
// job's records: on 1M-job runs those are cache misses, the queue's nodes are walked anyway.
struct PendingEntry {
  int64_t k1, k2;
  uint32_t seq, slot;
  uint64_t gpu_milli;
  bool operator<(const PendingEntry& o) const {  // queue order: key, then tie order
    if (k1 != o.k1) return k1 < o.k1;
    if (k2 != o.k2) return k2 < o.k2;
    return seq < o.seq;
  }
};

// What a PostFilter plugin may see and do during a cycle (Kubernetes' framework.Handle).
class SchedulerHandle {
 public:
  virtual ~SchedulerHandle() = default;
  virtual Time now() const = 0;
  virtual ClusterState& state() = 0;  // tentative Release/Apply must be undone before returning
  virtual PlacePlugin& placer() = 0;
  virtual SchedJob& job(uint32_t slot) = 0;
  // Pending jobs of `vc` after `slot` in queue order that could fit the VC's free GPUs now
  // (jobs of sizes that cannot fit are not visited), at most `limit`.
  virtual void PendingAfter(VcId vc, uint32_t slot, size_t limit, std::vector<uint32_t>* out) = 0;
  // Visits running jobs of `vc` by est_end ascending until fn returns false.
  virtual void ForEachRunningByEstEnd(VcId vc, const std::function<bool(uint32_t)>& fn) = 0;
  // By est_end descending until fn(slot, est_end) returns false (belief-driven preemption:
  // the longest believed remaining first).
  virtual void ForEachRunningByEstEndDesc(VcId vc, const std::function<bool(uint32_t, Time)>& fn) = 0;
  // The truth (simulator only; null live). Oracle plugins read it; others must not.
  virtual const OracleView* oracle() const = 0;
  // Oracle only (oracle() != null and the PostFilter's needs_true_end_order()): running
  // jobs of `vc` by true end descending until fn(slot, true end) returns false.
  virtual void ForEachRunningByTrueEndDesc(VcId vc, const std::function<bool(uint32_t, Time)>& fn) = 0;
  // The one belief of a job's duration: its estimate, else (simulator) the oracle's
  // remaining work, else its walltime request, else 0.
  virtual Duration BelievedDuration(const SchedJob& j) const = 0;
  virtual void Start(uint32_t slot, Allocation alloc) = 0;
  // Starts pending `slot` on the GPUs of running `partner` (GPU sharing; see SharePlugin).
  virtual void StartShared(uint32_t slot, uint32_t partner) = 0;
  // Pending single-node whole-GPU jobs of `vc` with exactly `gpus` GPUs, in queue order,
  // until fn returns false. The entry carries the job's queue keys, so the visitor need not
  // read the job (a walk may pass thousands of them).
  virtual void ForEachPendingOfSize(VcId vc, uint32_t gpus, const std::function<bool(const PendingEntry&)>& fn) = 0;
  virtual void Preempt(uint32_t slot) = 0;
  // Stops running `slot` for good (a preemption that cancels it, Slurm's PreemptMode=CANCEL):
  // it is not requeued; the driver ends it as preempted (OutcomeStatus::kPreempted). Only for
  // policies with PolicyParts::cancels set (simulator only).
  virtual void PreemptAndCancel(uint32_t slot) = 0;
  virtual DurationEstimator* estimator() = 0;
  // Nodes of `vc` that are idle now or would be if every running job ending after `t`
  // were preempted (O(log n); maintained only for preemptive policies).
  virtual uint64_t NodesIdleIfPreemptedAfter(VcId vc, Time t) = 0;
  // Busy nodes of `vc` that preempting every running job ending (truly) after `t` would leave
  // with every GPU wholly free, where the same index counts them exactly and they are all
  // the VC's free GPUs hold besides its wholly free nodes: every node of the VC has its
  // largest GPU count, none is drained, and every running slot holds whole GPUs (no CPU-only
  // or shared slot); else nullopt. O(log n); maintained only for preemptive oracle policies.
  virtual std::optional<uint64_t> BusyNodesEmptiedIfPreemptedAfter(VcId vc, Time t) = 0;
  // Jobs enqueued since this VC's last cycle (new arrivals and requeued jobs).
  virtual const std::vector<uint32_t>& fresh(VcId vc) = 0;
  // Counter bumped by every Apply/Release in the VC (lets plugins cache per state).
  virtual uint64_t version(VcId vc) const = 0;
  // --- for Reschedule plugins (whole-VC decisions, e.g. Tiresias)
  // Visits pending jobs of `vc` in queue order. fn(entry) returns the largest whole-GPU
  // count still worth visiting (jobs of larger size classes are skipped from then on;
  // fractional and CPU-only jobs are always visited) or -1 to stop.
  virtual void ForEachPending(VcId vc, const std::function<int64_t(const PendingEntry&)>& fn) = 0;
  // The smallest pending key of `vc`, or false when nothing is pending.
  virtual bool MinPendingKey(VcId vc, SortKey* out) const = 0;
  // How many jobs of `vc` are pending (a bound on the entries one ForEachPending visits).
  virtual size_t pending_count(VcId vc) const = 0;
  // Recomputes a pending job's QueueSort key (after the policy changed what the key reads).
  virtual void Rekey(uint32_t slot) = 0;
  // Asks for a cycle of `vc` in the current (when called from Advance) or next Schedule.
  virtual void MarkDirty(VcId vc) = 0;
  // Explain support: whether `slot` is the job being explained, and a note about it.
  virtual bool watched(uint32_t slot) const = 0;
  virtual bool watching() const = 0;  // whether any job is being explained (a walk asks once)
  virtual void Note(uint32_t slot, ExplainNote note) = 0;
};

}  // namespace orrery
