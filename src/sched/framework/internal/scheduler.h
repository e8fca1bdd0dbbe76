// The decision core. One Scheduler serves both drivers: the simulator feeds it
// submissions and completions and applies its decisions in simulated time; the live
// daemon does the same against Slurm. It keeps the pending queues (one per VC,
// ordered by the QueueSort key) and the running sets, and runs a cycle over each VC
// touched since the last cycle:
//
//   walk the queue in order → Place → on success Start
//                          → on failure PostFilter (backfill or preemption), then
//                             stop (blocking policies) or go on (greedy policies)
//
// Pending jobs are kept per size class, so a cycle visits only jobs of sizes that can fit
// (or that a PostFilter can make room for); work per cycle is also bounded (max_examined).
//
// Drivers speak to it only through the lifecycle verbs (Submit, Adopt = start, Finish,
// Fail, Requeue, Withdraw, ReportProgress, UpdateEstimate, Resize, AddNode,
// SetNodePowered) and the cadence (NextDecisionTime, RunCycle), and handle every
// Decision kind (decision.h). The truth of a simulated run is attached with AttachTruth
// (oracle.h); a live run has none. docs/design/job-model.md draws the job lifecycle.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <memory_resource>
#include <optional>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

#include "base/node_pool.h"
#include "base/result.h"
#include "base/weighted_order.h"
#include "model/attempt.h"
#include "predict/interference.h"
#include "sched/framework/api/decision.h"
#include "sched/framework/api/extension_points.h"
#include "sched/framework/api/handle.h"
#include "sched/framework/api/oracle.h"
#include "sched/framework/api/plugin.h"
#include "sched/framework/api/policy_parts.h"
#include "sched/framework/api/prediction.h"
#include "sched/framework/api/reserve.h"
#include "sched/framework/api/shape.h"

namespace orrery {

class Scheduler;

// The optimised queue walk's pruners (Scheduler::CycleExclusive; docs/design/components.md,
// "The cycle's contract"). The meaning of a walk is the plain walk (Scheduler::PlainWalk):
// pending jobs in queue order, Place, on failure the PostFilter, then stop or go on. Each
// pruner skips only work the plain walk would do without effect, under the contract it names,
// and each can be switched off (SchedulerOptions::pruners); a dev-checks build compares the
// two walks' decisions (Scheduler::CheckWalks).
enum class Pruner : uint8_t {
  // Plain blocking walks (no PostFilter, Reschedule, sharing or reservation) with a pure
  // placer and no shapes: a head that failed at an unchanged VC version is not placed again
  // (PlacePlugin::pure: it would fail the same way).
  kBlockedHead,
  // Greedy walks visit only the size classes whose jobs could fit the free resources
  // (FittingClasses) or whose head the PostFilter may place although it does not fit
  // (MayPlaceUnfitting, asked once per head and VC version): another class's job fails Place,
  // and Run leaves it pending and changes nothing.
  kFittingClasses,
  // MayPlaceUnfitting answered by comparing keys with PostFilter::UnfitKeyBound.
  kUnfitKeyBound,
  // Greedy walks pass a job that surely does not fit (SurelyUnfit) and that the PostFilter
  // Rejects, without Place and Run (Run would leave it pending and change nothing). Needs
  // kFittingClasses.
  kRejects,
  // After a rejection in a single-node class, the rest of that class at that VC version
  // (PostFilter::rejects_along_class). Needs kRejects.
  kRejectsAlongClass,
  // A walk of a VC that settled (its last greedy walk ran out of jobs without a preemption)
  // passes the jobs the VC held then, while only arrivals and plain starts changed it
  // (PostFilter::failures_persist, a pure placer). Needs kRejects.
  kSettledWalk,
};
inline constexpr uint32_t kPrunerCount = 6;
using PrunerSet = uint32_t;  // bit i: Pruner i
constexpr PrunerSet PrunerBit(Pruner p) { return PrunerSet{1} << static_cast<uint32_t>(p); }
constexpr bool HasPruner(PrunerSet set, Pruner p) { return (set & PrunerBit(p)) != 0; }
inline constexpr PrunerSet kAllPruners = (PrunerSet{1} << kPrunerCount) - 1;
std::string_view PrunerName(Pruner p);
std::string PrunerNames(PrunerSet set);  // comma-separated, in enum order; "none"

// Whether a cycle ran at an instant (RunCycle), whether it was a decision tick, and the
// due tick that fell between this call and the previous one and was run first.
struct CycleRun {
  bool ran = false;
  bool at_tick = false;
  Time caught_up = kNoTime;  // kNoTime: none
};

struct SchedulerOptions {
  size_t max_examined = 100000;  // pending jobs examined per VC per cycle (greedy policies)
  // The predicted start's dry run stops after this much simulated time or this many
  // instants (kBeyondHorizon for the jobs it has not started by then).
  Duration predict_horizon = 90 * 86400;
  size_t predict_max_instants = 1000000;
  // The pruners the queue walk applies (Pruner); one left out costs time, never a decision.
  PrunerSet pruners = kAllPruners;
};

class Scheduler final : private SchedulerHandle {
 public:
  Scheduler(const Cluster& cluster, bool track_gpus, bool model_cpu_mem, PolicyParts policy,
            std::unique_ptr<PlacePlugin> placer, SchedulerOptions opts = {});
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // A job arrives. Returns its slot, or UnschedulableForever (never enqueued) with the reason.
  Result<uint32_t> Submit(const Job* job, VcId vc, GpuTypeMask types, uint32_t seq, Time now);
  // Same, but the job is queued in `stage` first (admission is checked against `vc`).
  Result<uint32_t> SubmitStaged(const Job* job, VcId vc, VcId stage, GpuTypeMask types, uint32_t seq, Time now);
  // A staged running job leaves its staging VC (resources freed, work done so far kept) and
  // is queued in its home VC.
  void Handover(uint32_t slot, Time now);
  // --- lifecycle verbs (both drivers). A job that leaves (Finish, a non-restartable Fail,
  // Withdraw) keeps its slot until the driver has recorded it and calls Release.
  // A running job finished its work (the driver decides when). Frees its resources; the only
  // verb that teaches the estimator (the attempt's duration).
  void Finish(uint32_t slot, Time now);
  // A running job failed. Restartable: it waits again (attained service, estimate and
  // attempts kept); else it leaves. Never teaches the estimator.
  void Fail(uint32_t slot, Time now, FailureKind kind, bool restartable);
  // A running job goes back to the queue for `cause` (kPreempted by the resource manager,
  // kNodeLost, kRequeued); attained service kept. No decision is emitted.
  void Requeue(uint32_t slot, Time now, EndCause cause);
  // A pending or running job leaves (cancelled): resources freed, nothing learned.
  void Withdraw(uint32_t slot, Time now);
  // Observed progress; with steps_total known and the job running, the believed end
  // becomes now + (its time so far) × (steps left / steps done), as UpdateEstimate.
  void ReportProgress(uint32_t slot, Time now, Progress p);
  // New belief of the job's total duration (seconds from its first start of this attempt
  // for running jobs): re-keys everything ordered by believed end, bumps the VC's version
  // (invalidating per-state caches such as EASY's shadow time), re-sorts a pending job.
  void UpdateEstimate(uint32_t slot, Time now, Duration estimate, EstimateSource source);
  // A running job's allocation changes (elastic shapes): `alloc` replaces its own.
  void Resize(uint32_t slot, Allocation alloc, Time now);
  // A node joins the cluster (its id must be the next one; its VC must exist). Queues,
  // running jobs, estimators and the policy's state are kept (no rebuild).
  Status AddNode(const Node& node);

  // --- cadence: one rule for both drivers (PolicyParts::tick, ReschedulePlugin::NextWakeup)
  // The earliest time after `last` at which a cycle is due with no event (a decision tick
  // while jobs are pending, or the policy's wake-up), kNoTime if none.
  Time NextDecisionTime(Time last) {
    return policy_.tick <= 0 && !policy_.reschedule ? kNoTime : NextDecisionTimeSlow(last);
  }
  // Called once per instant after its events were fed: runs the cycle if due at `now`
  // (periodic policies: at ticks, or also at events with tick_and_events; others: always).
  // A due tick (the next tick after the previous call, jobs waiting then) that fell between
  // that call and `now` runs first, at its own time, its decisions ahead of now's
  // (CycleRun::caught_up); later ticks of the same gap are folded into now. It sees the
  // queue as fed by now (a driver feeds events before it calls). The simulator calls at
  // every due tick, so it never catches up; a daemon whose cycles miss a tick does.
  CycleRun RunCycle(Time now, std::vector<Decision>* out) {
    if (policy_.tick > 0) return RunPeriodicCycle(now, out);
    Schedule(now, out);
    return CycleRun{true, false};
  }
  // Runs a cycle over every VC touched since the last call; appends decisions (prefer
  // RunCycle, which honours the policy's cadence).
  void Schedule(Time now, std::vector<Decision>* out);

  // --- answers
  // The predicted start of every active job (index: slot), from one dry run of the policy:
  // a copy of the scheduler (queues, running jobs, cluster state, the policy's plugins with
  // their state) run forward from `now` with no new arrivals, each running job ending at its
  // believed end (est_end; observed progress re-keys it) and each pending job running for its
  // believed duration (BelievedDuration, frozen at the copy) plus the policy's restart
  // overhead per preemption, through the same RunCycle (decision ticks, EASY's reservation
  // and backfill, Tiresias' attained service, demotions and preemptions). Cached until the
  // next lifecycle verb or cycle (or another `now`). Never reads the truth: the copy has none.
  const std::vector<StartPrediction>& Forecast(Time now) const;
  // One job's entry of Forecast(now).
  StartPrediction PredictStart(uint32_t slot, Time now) const;
  // Simulator only, before the first Submit: the truth the oracle view reads.
  void AttachTruth(TruthModel* truth);
  const OracleView* oracle() const override { return truth_; }

  const SchedJob& view(uint32_t slot) const { return pool_[slot]; }
  const ClusterState& cluster_state() const { return state_; }
  size_t pending(VcId vc) const { return vcs_[vc.v].size; }
  size_t pending_total() const { return pending_total_; }
  uint64_t pending_gpu_milli() const { return pending_milli_; }
  size_t running_total() const { return running_total_; }
  const PolicyParts& policy() const { return policy_; }
  // Why the head of `vc`'s queue is waiting (last cycle's placement result).
  PluginStatus last_block(VcId vc) const { return vcs_[vc.v].last_block; }
  // Frees a finished job's slot once the driver has recorded its outcome (slots are reused).
  void Release(uint32_t slot);
  // Marks every VC with pending jobs for the next Schedule (periodic decisions, wakeups).
  void MarkPendingVcsDirty();
  // Explain: notes about `job` from the framework and plugins go to *sink (null = off).
  void Watch(const Job* job, std::vector<ExplainNote>* sink) { watch_job_ = job; watch_sink_ = sink; }
  // Policy explanation of a job's current state (its queue, priority...): plugins' Describe.
  void Describe(uint32_t slot, Time now, std::vector<ExplainNote>* out) const;
  // Energy saving: powers node n down (it must be idle) or makes it available again (boot
  // finished). Marks its VC for the next cycle.
  void SetNodePowered(NodeId n, bool on);
  // A cordoned node is drained (its running jobs go on, no new job is placed there) or
  // returns (ClusterState::SetDrained). Marks its VC for the next cycle.
  void SetNodeDrained(NodeId n, bool on);
  // --- walk checks (docs/design/components.md, "The cycle's contract"). Every `every`-th
  // queue walk first runs the plain walk (PlainWalk) on a copy of the scheduler taken then,
  // then the optimised walk, and compares their decisions (starts and preemptions, in order).
  // A difference aborts the process with a message naming the VC, the time, the first
  // differing decision and the pruners active (abort), or the first is kept (walk_difference).
  // A build with ORRERY_DEV_CHECKS turns them on in every scheduler (every
  // ORRERY_DEV_CHECKS_EVERY-th walk, aborting); the copies a forecast runs are not checked.
  // Policies whose plugins or truth cannot be copied (Clone returns null) are not compared.
  struct WalkCheck {
    uint32_t every = 1;
    bool abort = true;
  };
  struct WalkCheckCounts {
    uint64_t compared = 0;
    uint64_t not_copyable = 0;  // walks of a policy or truth that cannot be copied
    uint64_t capped = 0;        // walks whose plain walk reached max_examined
  };
  void CheckWalks(WalkCheck check);
  const std::string& walk_difference() const { return walk_check_->difference; }
  WalkCheckCounts walk_check_counts() const { return walk_check_ ? walk_check_->counts : WalkCheckCounts{}; }
  // Live driver: pending job `slot` already runs where the resource manager put it (found
  // running after a restart, started outside the policy, or a decision awaiting Slurm's
  // confirmation). Like a Start at `started` with `alloc`, but no decision is emitted. An
  // empty allocation is refused (use Withdraw).
  void Adopt(uint32_t slot, Allocation alloc, Time started);

 private:
  void MarkNodeVcDirty(NodeId n);  // a node of the VC changed (power, drain): re-decide there
  // A copy of `o` with cloned plugins, no estimator (nothing is submitted or learnt) and no
  // explain watch. kForecast: the dry run's copy (Forecast): no truth, each pending job's
  // belief frozen. kWalkCheck: a checked walk's copy (CheckedWalk): `truth` (o's copied), the
  // orders by true end and the evaluation reservation kept, beliefs as they are.
  enum class CopyFor { kForecast, kWalkCheck };
  Scheduler(const Scheduler& o, PolicyParts policy, std::unique_ptr<PlacePlugin> placer, CopyFor purpose,
            std::unique_ptr<TruthModel> truth = nullptr);
  // Copies of the policy's plugins, or the kind of why not (kOraclePolicy, kNotCopyable).
  PredictionKind ClonePolicy(PolicyParts* out, std::unique_ptr<PlacePlugin>* placer, std::string_view* who) const;
  // The copying itself; inner_placer: the policy's placer inside the reservation's wrapper.
  bool CopyPlugins(PolicyParts* out, std::unique_ptr<PlacePlugin>* placer, std::string_view* who,
                   bool inner_placer) const;
  void DryRun(Time now, std::vector<StartPrediction>* out) const;
  void NoteAhead(std::vector<StartPrediction>* out) const;
  using QEntry = PendingEntry;
  struct REntry {
    Time end;
    uint32_t seq, slot;
    bool operator<(const REntry& o) const {
      if (end != o.end) return end < o.end;
      return seq < o.seq;
    }
  };
  // The head of a plain blocking walk that a pure placer could not place at VC version
  // `version` (memo_blocked_): while the version is unchanged, placing it would fail again
  // the same way, so the walk stops there without asking the placer.
  struct BlockedHead {
    uint32_t slot = kNoSlot;
    const JobRequest* job = nullptr;
    uint64_t version = 0;
    PluginStatus status;
    bool Holds(uint32_t s, const JobRequest* j, uint64_t v) const { return slot == s && job == j && version == v; }
  };
  // The first entry of a non-empty size class.
  struct ClassHead {
    QEntry key;
    size_t cls;
  };
  // Pending jobs are kept in one ordered set per size class (class 0: fractional and
  // CPU-only jobs; 1..G: whole-GPU single-node jobs of that many GPUs; G+1: larger jobs),
  // so a cycle visits only jobs of sizes that can fit, in global key order (k-way merge).
  struct VcQueues {
    std::vector<std::pmr::set<QEntry>> classes;
    // The non-empty classes' first entries, sorted by key, kept on every insert and erase
    // (InsertPending, ErasePending): ForEachPending's merge (3.5M calls at 1M Tiresias jobs)
    // and MinPendingKey start from it without reading the classes' tree nodes or sorting.
    std::vector<ClassHead> heads;
    using Pos = std::pmr::set<QEntry>::iterator;
    Pos InsertPending(size_t c, const QEntry& e);
    void ErasePending(size_t c, Pos at);  // an entry of class c
    void RefreshHead(size_t c);                   // after class c's first entry changed
    size_t size = 0;
    std::pmr::set<REntry> running_est;   // by est_end
    std::pmr::set<REntry> running_true;  // by true end (oracle; true_end_order_ only)
    std::vector<uint32_t> fresh;
    uint64_t version = 0;
    // Preemptive oracle policies: busy nodes (earliest true end of their jobs, node), each of
    // weight 1, so that the whole-node queries count the nodes ending after t (SumAfter).
    // Sorted blocks, not a tree: a node's earliest end changes about twice per job, and a
    // block insert or erase moves a few hundred contiguous bytes where an order-statistics
    // tree (pbds, earlier) allocated a node and descended through cache misses.
    WeightedOrder<std::pair<Time, uint32_t>> busy_by_min_end;
    uint64_t partial_slots = 0;  // running slots (busy_by_min_end's) that hold no whole GPU
    bool dirty = false;
    PluginStatus last_block;
    BlockedHead blocked;  // memo_blocked_ only
    // The version at the end of this VC's last greedy walk when that walk settled it: it ran
    // out of jobs to examine without a preemption (PostFilter failures_persist, SettlingWalks),
    // so every job still pending then would be left pending again at that state. Cleared by
    // Rekey. kNoVersion: not settled.
    uint64_t settled = kNoVersion;
  };

  struct Feasibility {
    uint64_t gpus = 0;
    uint16_t max_node = 0;
    uint32_t max_cpu = 0;
    bool type_ok = false;
  };
  const Feasibility& FeasibilityOf(VcId vc, GpuTypeMask types);
  void Enqueue(uint32_t slot, Time now);
  void CycleVc(VcId vc);
  void StopToQueue(uint32_t slot, Time now, EndCause cause, bool emit);
  void NoteStopped(uint32_t slot, Time now, EndCause cause);
  void ResizeClasses(VcId vc);  // after a node changed the VC's largest node
  void CycleExclusive(VcId vc, bool blocking);  // walk the queue: Place, PostFilter
  // The cycle's queue walk: the optimised walk, checked against the plain one while walk
  // checks are on (CheckWalks).
  void Walk(VcId vc, bool blocking) {
    if (walk_check_) return CheckedWalk(vc, blocking);
    CycleExclusive(vc, blocking);
  }
  // The reference walk (walk.cc), what CycleExclusive must decide; true if it stopped at
  // max_examined.
  bool PlainWalk(VcId vc, bool blocking);
  void CheckedWalk(VcId vc, bool blocking);
  PrunerSet ActivePruners(bool blocking) const;  // those CycleExclusive applies to a walk
  bool CopyForCheck(PolicyParts* parts, std::unique_ptr<PlacePlugin>* placer, std::unique_ptr<TruthModel>* truth) const;
  void CopyCheckState(const Scheduler& o, std::unique_ptr<TruthModel> truth);
  std::string DescribeDecision(const Decision& d) const;
  std::string FirstDifference(VcId vc, bool blocking, size_t from, const std::vector<Decision>& plain) const;
  struct WalkCheckState {
    WalkCheck check;
    uint64_t walks = 0;
    WalkCheckCounts counts;
    std::string difference;
  };
  std::unique_ptr<WalkCheckState> walk_check_;  // null: walks unchecked
  std::unique_ptr<TruthModel> own_truth_;       // a walk-check copy's truth
  // The size classes whose jobs could fit a VC's free resources now (FittingClasses): class 0
  // always (fractional and CPU-only jobs), 1..max_free (a node has that many wholly free GPUs),
  // and G + 1 while a node is wholly idle. Two bounds, not a bit mask: classes go up to
  // G + 1 for nodes of any size (a GB200 NVL72 rack exported as one node has 72 GPUs).
  struct FitClasses {
    size_t max_free = 0;  // the most wholly free GPUs on one node (class 0 only: 0)
    size_t larger = 0;    // G + 1 while an idle node exists, else 0 (class 0, in anyway)
    bool Has(size_t c) const { return c <= max_free || c == larger; }
    static FitClasses All() { return FitClasses{SIZE_MAX, 0}; }
  };
  // Whether pending `j` (of size class `c`, in a VC whose largest node has `g` GPUs) cannot
  // fit the free resources whatever the placer: c is not in `fit` (FittingClasses) and each
  // of its parts needs a node with that many free GPUs.
  static bool SurelyUnfit(const SchedJob& j, size_t c, uint16_t g, FitClasses fit);
  // Whether a greedy walk passes pending `slot` of class `c` as rejected by the PostFilter
  // (SurelyUnfit and Rejects, or an earlier rejection in c at this version: rejected_at_).
  bool PassesRejected(const VcQueues& q, size_t c, uint16_t g, FitClasses fit, uint32_t slot);
  // Settled walks: whether greedy walks may pass the jobs a settled VC already held (the
  // PostFilter's failures_persist, a pure placer whose failures persist on fewer free
  // resources: no CPU/memory modelling, no evaluation lane, no sharing, no shapes).
  bool SettlingWalks() const;
  // The walk's fresh entries (q.fresh, sorted) for PassesSettled; a walk on a settled VC starts
  // so. Whether `e` is an entry the VC held when it settled, while the walk is still settled.
  void BeginSettledWalk(const VcQueues& q);
  bool PassesSettled(const QEntry& e) const {
    return walk_settled_ && !std::binary_search(fresh_keys_.begin(), fresh_keys_.end(), e);
  }
  // Passes at once, class by class, the held entries the walk would pass one by one before the
  // next fresh entry after the picked one (the state unchanged, so the walk visits them in key
  // order: a class's entries up to that entry, or up to the key bound where its size does not
  // fit); `examined` and the last passed job as the walk's. False (pass entry by entry) where
  // the walk's cap may fall among them or eligibility is asked per head.
  bool SkipSettled(const VcQueues& q, int pick, FitClasses fit, size_t* examined, uint32_t* rejected);
  // Whether the walk stays settled after the VC's version changed by a plain start: the
  // PostFilter's key bound did not rise (a stuck class's head may not become eligible).
  static bool BoundHeld(const std::optional<SortKey>& before, const std::optional<SortKey>& after);
  // Plain blocking walks (nothing but Start changes the queues or the state during one):
  // place the global head until one does not fit.
  bool PlainBlockingWalk(bool blocking) const;
  void CyclePlainBlocking(VcQueues& q);
  // Whether plain blocking walks may skip re-placing a head that failed in an unchanged VC
  // state: no shapes (a shaped placement reads the planner) and a pure placer.
  bool CanMemoBlockedHead() const;
  // The blocking reason of the last job the PostFilter rejected (Rejects) without a Place
  // call: that call, on the state it was rejected in. Clears *rejected.
  void NoteRejected(VcQueues& q, uint32_t* rejected);
  bool MayPlaceUnfittingMemo(const VcQueues& q, size_t c, const QEntry& head);
  // CycleExclusive's cursors (cycle_cursors_, one per class) and the classes whose cursor is
  // not at its end (cycle_live_, ascending): rebuilt, one advanced, the class to examine next.
  void LiveCursors(const VcQueues& q);
  void AdvanceCursor(const VcQueues& q, int c);
  int PickClass(const VcQueues& q, FitClasses fit, bool blocking);

  // SchedulerHandle
  Time now() const override { return now_; }
  ClusterState& state() override { return state_; }
  PlacePlugin& placer() override { return *placer_; }
  SchedJob& job(uint32_t slot) override { return pool_[slot]; }
  void PendingAfter(VcId vc, uint32_t slot, size_t limit, std::vector<uint32_t>* out) override;
  void ForEachRunningByEstEnd(VcId vc, const std::function<bool(uint32_t)>& fn) override;
  void ForEachRunningByEstEndDesc(VcId vc, const std::function<bool(uint32_t, Time)>& fn) override;
  void ForEachRunningByTrueEndDesc(VcId vc, const std::function<bool(uint32_t, Time)>& fn) override;
  Duration BelievedDuration(const SchedJob& j) const override;
  void Start(uint32_t slot, Allocation alloc) override;
  void StartShared(uint32_t slot, uint32_t partner) override;
  void ForEachPendingOfSize(VcId vc, uint32_t gpus, const std::function<bool(const PendingEntry&)>& fn) override;
  void MarkRunning(uint32_t slot);  // bookkeeping shared by Start and StartShared
  // Bookkeeping shared by every way a running job stops: resources, running sets, counters.
  void DetachRunning(uint32_t slot, EndCause cause, Time now);
  void RemovePending(uint32_t slot);
  PluginStatus PlaceShaped(uint32_t slot);  // PolicyParts::shape
  // The running orders (by believed end; by true end and per-node true ends for oracles).
  void InsertRunningOrder(uint32_t slot) {
    if (track_running_ || true_end_order_ || track_node_ends_) UpdateRunningOrder(slot, true);
  }
  void EraseRunningOrder(uint32_t slot) {
    if (track_running_ || true_end_order_ || track_node_ends_) UpdateRunningOrder(slot, false);
  }
  void UpdateRunningOrder(uint32_t slot, bool insert);
  Time NextDecisionTimeSlow(Time last);
  CycleRun RunPeriodicCycle(Time now, std::vector<Decision>* out);
  void RunTick(Time t, std::vector<Decision>* out);  // a decision tick at t: every pending VC
  void EmitOrAdopt(uint32_t slot);
  void Preempt(uint32_t slot) override;
  void PreemptAndCancel(uint32_t slot) override;
  DurationEstimator* estimator() override { return policy_.estimator.get(); }
  const std::vector<uint32_t>& fresh(VcId vc) override { return vcs_[vc.v].fresh; }
  uint64_t NodesIdleIfPreemptedAfter(VcId vc, Time t) override;
  std::optional<uint64_t> BusyNodesEmptiedIfPreemptedAfter(VcId vc, Time t) override;
  static uint64_t BusyEndingAfter(const VcQueues& q, Time t);  // busy nodes whose jobs all end after t
  void TrackNodeEnds(const SchedJob& j, bool add);
  void ExplainEstimate(uint32_t slot, Time now);
  uint64_t version(VcId vc) const override { return vcs_[vc.v].version; }
  void ForEachPending(VcId vc, const std::function<int64_t(const PendingEntry&)>& fn) override;
  bool MinPendingKey(VcId vc, SortKey* out) const override;
  size_t pending_count(VcId vc) const override { return vcs_[vc.v].size; }
  void Rekey(uint32_t slot) override;
  void MarkDirty(VcId vc) override {
    if (vcs_[vc.v].dirty) return;
    vcs_[vc.v].dirty = true;
    dirty_list_.push_back(vc.v);
  }
  bool watched(uint32_t slot) const override { return watch_job_ && pool_[slot].job == watch_job_; }
  bool watching() const override { return watch_job_ != nullptr; }
  void Note(uint32_t slot, ExplainNote note) override {
    if (watched(slot) && watch_sink_) watch_sink_->push_back(std::move(note));
  }

  size_t ClassOf(const SchedJob& j) const;
  // The whole Job behind a job's request, for the core's own calls that take one (the
  // estimator -- of which only an oracle reads the duration -- and its explanation). Every
  // request the core holds is a Job's: Submit takes Jobs, shaped copies are Jobs (shaped_).
  static const Job& WholeJob(const SchedJob& j) { return static_cast<const Job&>(*j.job); }
  // The classes whose jobs could fit the VC's current free resources.
  FitClasses FittingClasses(VcId vc) const;
  QEntry KeyOf(uint32_t slot) const {
    const SchedJob& j = pool_[slot];
    return QEntry{j.key1, j.key2, j.seq, slot, j.job->gpu_milli_total()};
  }

  // Node pool for the queue and running sets: millions of inserts/erases without malloc.
  std::unique_ptr<NodePool> pool_resource_ = std::make_unique<NodePool>();
  Cluster cluster_;  // the scheduler's own copy (AddNode grows it)
  ClusterState state_;
  PolicyParts policy_;
  std::unique_ptr<PlacePlugin> placer_;
  // Evaluation reservation (PolicyParts::reserve): the ledger and the placer wrapping the
  // policy's (placer_ points to it then); null when off.
  std::unique_ptr<ReservationLedger> ledger_;
  ReservingPlacer* reserving_ = nullptr;
  SchedulerOptions opts_;
  std::vector<SchedJob> pool_;
  std::vector<uint32_t> free_slots_;
  std::vector<VcQueues> vcs_;
  std::vector<uint16_t> dirty_list_;
  std::vector<Decision>* out_ = nullptr;
  Time now_ = 0;
  size_t pending_total_ = 0, running_total_ = 0;
  uint64_t pending_milli_ = 0;
  Allocation scratch_;
  bool track_running_ = true;
  bool true_end_order_ = false;   // running_true kept (oracle PostFilters, truth attached)
  bool track_node_ends_ = false;
  bool adopting_ = false;         // Adopt: starts emit no decision
  // Per node: the true ends of its running jobs, unordered. A node holds a few jobs (≤ its
  // GPUs when every slot is whole), so a scan for the earliest beats a tree and allocates
  // only while a node's count grows past what it held before.
  std::vector<std::vector<Time>> node_ends_;
  // Per slot: its entry in running_true, so that an erase needs no search.
  std::vector<std::pmr::set<REntry>::iterator> true_pos_;
  // Per pending slot: its entry in its class's queue, so that a start, withdrawal or rekey
  // erases it without a search (a descent of compares through the tree's nodes).
  std::vector<VcQueues::Pos> pending_pos_;
  void IndexPending();  // pending_pos_ of every queued entry (after the queues were rebuilt)
  bool memo_blocked_ = false;     // CanMemoBlockedHead()
  TruthModel* truth_ = nullptr;
  // Shape: per slot, the shaped copy a running job uses and the request it reverts to.
  std::vector<std::unique_ptr<Job>> shaped_;
  std::vector<const Job*> requested_;
  Job shaped_job_;
  bool shaping_ = false;
  std::vector<Time> true_end_;    // per slot: the truth's end at its start (oracle orders only)
  Time next_tick_ = kNoTime;
  std::vector<std::pmr::set<QEntry>::iterator> cursors_, cycle_cursors_;
  // ForEachPending's k-way merge: the next entry of each non-empty size class, kept sorted
  // by key (a copy of the entry, compared without reading the tree node).
  struct PendingHead {
    QEntry key;
    std::pmr::set<QEntry>::const_iterator it, end;
    size_t cls;
  };
  std::vector<PendingHead> heads_;
  std::vector<uint32_t> cycle_live_;  // class indices: up to vc_max_node_gpus + 1 = 65,536 (uint16_t GPUs per node)
  std::vector<uint16_t> cycle_list_;
  std::vector<std::pair<bool, QEntry>> saved_;
  // Inserts into and erases from the pending queues: after a PostFilter that changed none,
  // CycleExclusive keeps its cursors instead of re-seeking them.
  uint64_t queue_edits_ = 0;
  struct UnfitMemo {
    uint32_t slot = kNoSlot;
    uint64_t version = 0;
    bool may = false;
  };
  std::vector<UnfitMemo> unfit_memo_;  // per class, during one CycleExclusive
  // During one greedy CycleExclusive: the PostFilter's UnfitKeyBound at the VC's version
  // (asked again when the version changes); nullopt: ask MayPlaceUnfitting per head.
  std::optional<SortKey> unfit_bound_;
  // Per class, during one CycleExclusive: the VC version at which the PostFilter rejected a
  // job of that single-node class (kNoVersion: none), for PostFilters whose rejections run
  // along a class (rejects_along_class): the rest of the class is passed at that version
  // without a call (most jobs a loaded SRTF cycle visits are such rejections).
  static constexpr uint64_t kNoVersion = UINT64_MAX;
  std::vector<uint64_t> rejected_at_;
  bool along_class_ = false;  // during one greedy CycleExclusive: the kRejectsAlongClass pruner applies
  // During one greedy CycleExclusive: whether the VC is still as its settled walk left it but
  // for arrivals (fresh_keys_) and plain starts (PassesSettled); fresh_keys_ sorted.
  bool walk_settled_ = false;
  std::vector<QEntry> fresh_keys_;
  std::unordered_map<uint64_t, Feasibility> feasibility_;
  VcId staging_;  // set during SubmitStaged
  const Job* watch_job_ = nullptr;
  std::vector<ExplainNote>* watch_sink_ = nullptr;
  // Forecast cache: valid while epoch_ (bumped by every verb and cycle) and now are unchanged.
  Time last_cycle_ = kNoTime;  // the last Schedule call's time
  uint64_t epoch_ = 0;
  mutable uint64_t forecast_epoch_ = UINT64_MAX;
  mutable Time forecast_now_ = kNoTime;
  mutable std::vector<StartPrediction> forecast_;
};

}  // namespace orrery
