// The live driver: one decision cycle = observe Slurm -> reconcile each job's typed state
// (job_state.h) into the scheduler's snapshot (the same Scheduler/ClusterState/SchedJob the
// simulator drives) -> run the policy -> the one journaled apply path (plan -> journal ->
// apply -> confirm) -> the power loop. Time comes from an injected Clock.
//
// Control mechanism (docs/live.md): jobs in the managed partitions are held in Slurm until
// the policy starts them (users submit with --hold; the daemon holds any it finds
// released). A start decision pins the job to the chosen nodes (ReqNodeList) and releases
// it; a preemption is `scontrol requeuehold`. Each decision is journaled as planned before
// it is applied and marked applied after; on restart, what Slurm reports decides whether a
// planned decision took effect (released or running: applied; still held: apply again).
// Slurm wins: a job Slurm runs elsewhere is adopted where it runs, a job Slurm requeued goes
// back to the queue with a new generation.
//
// The code is split by owner (docs/design/components.md): the JobBook (job_book.h: the job
// records, the one place their states change), the Reconciler (reconciler.h: what Slurm lists
// -> each job's state), the Applier (applier.h: the journaled apply path, the only code that
// sends decisions to Slurm, with its counters), the Recoverer (recoverer.h: failed and hung
// jobs, drains, requeues), the PowerLoop (power_loop.h: the energy policy, wake-ups for pending
// jobs), the SignalsLoop (signals_loop.h: the advisor and the progress tracker), the EventLog
// and the DecisionLedger; the daemon is the host of the reconciler, the applier, the recoverer,
// the power loop and the signals loop. And by step: daemon.cc (the cycle, the policy's
// decisions), reconcile.cc (nodes and the scheduler port, the owners' host methods), resync.cc,
// views.cc (API).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "live/applier.h"
#include "live/cycle_stats.h"
#include "live/decision_ledger.h"
#include "live/event_log.h"
#include "live/flex_shape.h"
#include "live/job_book.h"
#include "live/job_state.h"
#include "live/journal.h"
#include "live/live_signals.h"
#include "live/power_loop.h"
#include "live/reconciler.h"
#include "live/recoverer.h"
#include "live/recovery.h"
#include "live/signals_loop.h"
#include "live/slurm_client.h"
#include "logs/diagnose.h"
#include "model/cluster.h"
#include "model/job.h"
#include "sched/framework/power.h"
#include "sched/framework/internal/scheduler.h"
#include "semantic/semantic_estimator.h"
#include "sched/plugins/planner_shape.h"

namespace orrery::live {

struct DaemonOptions {
  std::vector<std::string> partitions;  // managed partitions (VCs), in this order
  std::string policy = "fifo";          // MakePolicy spec (live_policy.h says which are accepted)
  std::string placer = "consolidate";   // MakePlacer name
  // The planner's GPU type of every managed node (shape=goodput: its profile times the jobs
  // that opt in, flex_shape.h); "" = untyped (no shaping).
  std::string gpu_type;
  uint64_t seed = 1;
  Duration default_duration = 3600;  // job duration when there is no hint and no time limit
  bool hold_unheld = true;           // hold pending jobs that were submitted without --hold
  // The rolling resync (docs/design/live-resync.md): with a delta-capable client every job and
  // node row Slurm lists is read and reconciled again within N cycles (1/N of them each cycle);
  // 0: only the rows that changed.
  int full_resync_cycles = 300;
  size_t recent_decisions = 200;     // kept in memory for the API
  // Energy policy: a MakePowerPlugin spec ("ces:period=...", as `orrery simulate --energy`);
  // empty = none (power changes only from operators and Slurm itself). docs/live.md#energy.
  std::string energy;
  // Tests: builds the PowerPlugin instead of MakePowerPlugin(energy) (energy must be set).
  std::function<std::unique_ptr<PowerPlugin>()> power_factory;
  // Semantic signals (live_signals.h, docs/design/live-signals.md): the advisor reads batch
  // scripts for estimator=semantic, the tracker tails running jobs' StdOut.
  SignalsOptions signals;
  // Failed and hung jobs: diagnosis, drains, requeues (live/recovery.h; [recovery] in the config).
  RecoveryOptions recovery;
};

struct QueueEntry {
  uint32_t job;
  JobState state = JobState::kQueued;
  uint32_t gpus, nodes;
  Time submit;
  int64_t position = -1;       // in the policy's queue order (queued jobs)
  std::string why;             // why it is pending
  Time predicted_start = kNoTime;
  // What the predicted start says (PredictionKindName: predicted, running, beyond-horizon,
  // never, oracle-policy, not-copyable); empty for jobs the scheduler does not hold.
  std::string_view prediction;
  std::vector<NodeShare> where;
  Duration estimate = -1;         // the policy's belief of its duration (-1: none)
  EstimateSource estimate_source = EstimateSource::kNone;
  std::optional<ProgressView> progress;  // the tracker's reading (running jobs with [signals] tracker)
  Time as_of = kNoTime;           // the cycle the entry describes (progress.eta_s is as of then)
  FailureRecord failure;  // its last failure (job == 0: none)
  // Its latest input problem (batch script, LLM answer, log), located; "" when none
  // (LiveSignals::InputError).
  std::string input_error;
};

// The cycle-latency histogram's buckets (views.cc): index of `seconds`, and the count.
size_t LatencyBucket(double seconds);
size_t NumLatencyBuckets();

// The daemon is the host of the reconciler, the applier, the recoverer, the power loop and the
// signals loop: the scheduler port, the node records and the other owners' steps.
class Daemon : private ReconcilerHost,
               private ApplierHost,
               private RecovererHost,
               private PowerLoopHost,
               private SignalsHost {
 public:
  Daemon(SlurmClient* slurm, Journal* journal, const Clock* clock, DaemonOptions opts);
  ~Daemon() override;

  // Loads the journal (job generations, decisions planned but not confirmed) and builds
  // the policy (refused with a message when live mode cannot run it). Call once.
  Status Recover();
  // One observe -> decide -> apply cycle. An error (Slurm unreachable, ...) leaves the
  // daemon's state as it was; the next cycle retries.
  Result<CycleStats> Cycle();

  // Operator actions (HTTP API, journaled like decisions).
  Status RequestPower(const std::string& node, bool up);
  void SetPaused(bool paused);
  // Drains over the hourly limit wait for an operator (the Recoverer, recoverer.h): confirm
  // applies the node's awaiting drain at the next cycle; release drops it and returns a node
  // Orrery drained to service. kNotFound when there is nothing to confirm / release.
  Status ConfirmDrain(const std::string& node);
  Status ReleaseDrain(const std::string& node);
  // Views: failures handled (journal, newest first) and drains (awaiting, then the last day's).
  std::vector<FailureRecord> Failures(size_t n) const;
  std::vector<JournalDecision> Drains() const;

  // Views (thread-safe; the HTTP server calls them from its own threads).
  std::vector<QueueEntry> Queue(size_t limit) const;
  std::vector<JournalDecision> RecentDecisions(size_t n) const;
  std::string MetricsText() const;
  struct Health {
    bool ok = true;
    bool paused = false;
    std::string last_error;
    Time last_cycle = kNoTime;
    int64_t cycles = 0;
    size_t nodes_up = 0, nodes_total = 0;
    size_t nodes_powered_down = 0, nodes_booting = 0;  // Slurm's power-saving states (~ % ! / #)
    uint64_t failed_resumes = 0;  // nodes seen going from powering-up to down (ResumeTimeout)
    std::string energy;           // energy policy spec ("" = none)
    std::vector<std::string> events;  // recent node/job events, newest last
  };
  Health GetHealth() const;
  // Tests: the scheduler the daemon drives (null before the first cycle), and its view of
  // a job (nullopt when the job is not in it).
  const Scheduler* scheduler() const { return sched_.get(); }
  std::optional<SchedJob> JobView(uint32_t job) const;
  // Job state changes the tables of job_state.h lack (orrery_illegal_moves_total; always 0).
  uint64_t illegal_moves() const { return book_.illegal_moves(); }

 private:
  // --- the cycle (daemon.cc)
  Status Observe(Time now, CycleStats* st);
  Status DropVanished(const JobListing& listing, Time now);
  Status DropGone(const std::vector<uint32_t>& gone, Time now);
  // --- the rolling resync and rows reconciled again (resync.cc; docs/design/live-resync.md)
  bool FullListingDue(uint64_t cursor) const;
  Sweep SweepDue() const;
  // The listing's rows and the rows to reconcile again (relist_), in job id order.
  Status ReconcileListing(const JobListing& listing, Time now, CycleStats* st);
  Status ReconcileRow(const SlurmJob& sj, Time now);
  // A swept slice: the daemon's jobs / modelled node rows of that slice that Slurm no longer lists.
  Status DropVanishedInSlice(const JobListing& listing, Time now);
  void DropUnlistedInSlice(const NodeListing& listing, Time now);
  void AddJob(std::unique_ptr<LiveJob> lj);
  void EraseJob(uint32_t id);
  void CountListedNode(const std::string& name, int delta);
  bool WaitsForRoom(const LiveJob& lj) const;
  void FinishStats(std::chrono::steady_clock::time_point t0, Time now, CycleStats* st);
  void Note(Time now, const std::string& kind, const std::string& detail);
  int VcOf(const std::string& partition) const;

  // --- observe and reconcile (reconcile.cc)
  // Nodes: only the rows Slurm lists as changed (NodeListing) reach the daemon's records.
  void ObserveNodes(const NodeListing& listing, Time now);
  void ObserveNode(const SlurmNode& n, Time now);
  void Believe(const SlurmNode& n, Time now);
  void NodeGone(const NodeRow& row, Time now);
  void DropUnlisted(const NodeListing& listing, Time now);
  SlurmNode* MirrorLocally(const std::string& node) override;  // the power loop's too
  void ReobserveMirrored(Time now);
  Status SyncNodes(Time now) override;  // the recoverer's too
  bool SetPlaceable(const Node& nd, bool want);
  void RetryOutsiders(Time now);
  Status Reconcile(const SlurmJob& sj, Time now);  // a managed partition's row: the Reconciler's
  void FillJob(LiveJob& lj, const SlurmJob& sj);
  // Shaping (flex_shape.h): the job's #ORRERY line, read once when the policy shapes; and
  // what the shape plugin knows of a job (its model and bounds; none unless it opted in).
  void ReadFlex(LiveJob& lj, Time now);
  ShapeInfo ShapeInfoOf(const JobRequest& job) const;
  void Leave(LiveJob& lj, const SlurmJob* sj, Time now) override;
  // The scheduler port, through the core's lifecycle verbs: a job enters (queued, or
  // running where Slurm has it), goes back to the queue, or leaves.
  enum class Where { kFits, kNoRoom, kOutside };
  Where AllocFor(const LiveJob& lj, Allocation* alloc) const;
  void Attach(LiveJob& lj, Time now) override;
  void Withdraw(LiveJob& lj, Time now) override;
  void BackToQueue(LiveJob& lj, bool held, Time now) override;
  // The rest of the reconciler's host (reconciler.h).
  bool Rebuilding() const override { return need_rebuild_; }
  void RunsWhereSlurmRuns(LiveJob& lj, bool was_pending, Time now) override;
  bool PendingInSnapshot(const LiveJob& lj) const override;
  LiveJob& AddRecord(const SlurmJob& sj) override;  // the recoverer's too
  void EraseRecord(uint32_t id) override { EraseJob(id); }
  void Introduce(LiveJob& lj, Time now) override;
  Status MakeEligible(const LiveJob& lj) override;
  void RecoverLater(uint32_t job, Trigger trigger) override { recoverer_.Later(job, trigger); }
  Status AdoptFailed(const SlurmJob& sj, Time now) override { return recoverer_.AdoptFailed(sj, now); }
  void RequeuedAfterRecovery(LiveJob& lj, Time now) override;
  Status Rebuild(Time now);

  // --- the policy's decisions (daemon.cc), applied by the Applier (applier.h)
  Status Decide(Time now, CycleStats* st);
  // The applier's host (applier.h): the scheduler port, the node records, the other owners'
  // decisions.
  std::vector<NodeShare> Placement(const StartDecision& s) const override;
  bool NodeListed(const std::string& node) const override { return nodes_.count(node) > 0; }
  Status Replan(LiveJob& lj, const std::string& why, Time now) override;
  void RecoveryApplied(const JournalDecision& d, Time now, CycleStats* st) override {
    recoverer_.Applied(d, now, st);
  }
  Verdict CheckRecovery(const JournalDecision& d, std::string* why) const override { return recoverer_.Check(d, why); }
  Verdict CheckPower(const JournalDecision& d, std::string* why) const override { return power_.Check(d, why); }
  void PowerActionApplied(const JournalDecision& d, Time now, CycleStats* st) override { power_.Applied(d, now, st); }
  int64_t PowerSeq() const override { return power_.seq(); }
  void ApplyFailed(const std::string& message) override { last_error_ = message; }

  // --- the signals loop's host (signals_loop.h): the scheduler port (reconcile.cc)
  bool RunsInSnapshot(const LiveJob& lj) const override;
  bool EstimatedByEstimator(const LiveJob& lj) const override;
  void UpdateEstimate(const LiveJob& lj, Duration estimate, Time now) override;
  void Report(const LiveSignals::Report& r, Time now) override;
  void Watch(uint32_t job) override { recoverer_.Watch(job); }
  void FillSignals(const LiveJob& lj, QueueEntry* e) const;  // estimate and progress of an API entry (views.cc)
  void SignalsMetrics(std::string* out) const;                // views.cc
  // --- the recoverer's host (recoverer.h): the scheduler port, the node records, the
  // reconciler's steps (reconcile.cc)
  Time ProgressAt(const LiveJob& lj) const override;
  void GiveUpInCore(LiveJob& lj, FailureKind kind, Time now) override;
  const SlurmNode* NodeOf(const std::string& node) const override;
  void ShowLocally(const std::string& node, NodeAvail avail, const char* state_raw) override;
  Status NewGeneration(LiveJob& lj, Time now, const std::string& why) override {
    return reconciler_.NewGeneration(lj, now, why);
  }
  Status SettleUnapplied(const SlurmJob& sj, Time now) override { return reconciler_.SettleUnapplied(sj, now); }
  int64_t CycleNumber() const override { return cycle_; }

  // --- views (views.cc)
  void QueuedEntries(VcId vc, std::vector<const LiveJob*>& q, Time now, size_t limit,
                     std::vector<QueueEntry>* out) const;
  std::string BootingNodes(VcId vc) const;
  QueueEntry OtherEntry(const LiveJob& lj) const;

  // --- the power loop's host (power_loop.h): the scheduler's model (reconcile.cc)
  const Cluster* ModelCluster() const override { return cluster_.get(); }
  void AllocatedNodes(std::vector<std::string>* out) const override;
  uint64_t VcFreeGpus(VcId vc) const override;
  void PoweringDown(const std::string& node) override;

  SlurmClient* slurm_;
  Journal* journal_;
  const Clock* clock_;
  DaemonOptions opts_;
  mutable std::mutex mu_;
  EventLog events_;
  JobBook book_;  // the live job records; their states change only there
  DecisionLedger ledger_;  // decisions planned and not confirmed, the recent ones, generations
  Reconciler reconciler_;  // what Slurm lists -> each job's state (reconciler.h)
  Applier applier_;        // the journaled apply path: decisions -> Slurm (applier.h)
  Recoverer recoverer_;    // failed and hung jobs: diagnosis, drains, requeues (recoverer.h)
  PowerLoop power_;        // node power: the energy policy, wake-ups for pending jobs (power_loop.h)
  SignalsLoop signals_;    // semantic signals: the advisor, the progress tracker (signals_loop.h)

  std::unique_ptr<Cluster> cluster_;
  std::unique_ptr<Scheduler> sched_;
  std::unordered_map<std::string, NodeId> node_index_;   // up nodes in the model
  std::unordered_map<std::string, SlurmNode> nodes_;       // the daemon's view of every managed node
  // What Slurm listed last for each of them; nodes_ differs from it only for the nodes in
  // mirrored_ (changes the daemon made that Slurm shows at a later listing).
  std::unordered_map<std::string, SlurmNode> listed_;
  std::set<std::string> mirrored_;
  // Rows to reconcile again at the next listing although their bytes may not change: the
  // job's last reconcile left a Slurm command to retry (a hold, a release) or it runs where the
  // snapshot has no room yet (ReconcileRow). What a full listing every cycle would do.
  std::map<uint32_t, SlurmJob> relist_;
  // The rolling resync's slices (SweepDue().of of them): the book's jobs and listed_ per slice.
  std::vector<uint32_t> slice_jobs_, slice_nodes_;
  std::vector<Decision> decisions_;
  uint64_t cursor_ = 0;       // job listing
  uint64_t node_cursor_ = 0;  // node listing
  int64_t cycle_ = 0;
  bool paused_ = false;
  bool need_rebuild_ = true;   // no scheduler yet, or a node changed its GPU count
  bool nodes_dirty_ = false;   // nodes joined, left or changed placeability: SyncNodes
  std::string last_error_;
  Time last_cycle_ = kNoTime;
  // metrics
  uint64_t m_slurm_errors_ = 0, m_completed_ = 0;
  uint64_t m_node_rows_ = 0;  // node rows listed as new, changed or gone
  uint64_t m_flex_errors_ = 0;  // shaping: #ORRERY lines refused
  CycleStats last_stats_;
  std::vector<double> latency_hist_;  // cumulative bucket counts
};

}  // namespace orrery::live
