#include "sched/framework/internal/scheduler.h"

#include <algorithm>
#include <cmath>

namespace orrery {

namespace {
constexpr const char* kTooLargeForVc = "job needs more GPUs than its VC has";
constexpr const char* kNoTypeInVc = "no node in the VC has an accepted GPU type";
constexpr const char* kTooLargeForNode = "fractional or per-node demand exceeds every node";
constexpr const char* kNoCpuMemNode = "no node in the VC has enough CPU/memory";
}  // namespace

Duration PreemptionOverhead(uint32_t gpus) { return gpus <= 1 ? 7 : (gpus <= 8 ? 30 : 60); }

namespace {
Time CeilTo(Time x, Duration tick) {
  const Time m = x % tick;
  return m == 0 ? x : x + (m < 0 ? -m : tick - m);
}
}  // namespace

PolicyParts::OverheadFn PolicyParts::restart_overhead() const {
  return preempt_overhead ? preempt_overhead : &PreemptionOverhead;
}

bool PolicyParts::reads_oracle() const {
  return (estimator && estimator->is_oracle()) || (sort && sort->wants_oracle()) ||
         (post && post->needs_true_end_order()) || belief_is_truth();
}

Status CheckLiveSupport(const PolicyParts& p) {
  const std::string who = "policy '" + p.name + "': ";
  if (p.sort && p.sort->wants_oracle())
    return MakeError(who + "its queue order '" + std::string(p.sort->name()) +
                     "' reads true job durations (an oracle), which only `orrery simulate` knows");
  if (p.post && p.post->needs_true_end_order())
    return MakeError(who + "'" + std::string(p.post->name()) +
                     "' orders running jobs by their true ends (an oracle), which only `orrery simulate` knows");
  if (p.belief_is_truth())
    return MakeError(who + "'" + std::string(p.post->name()) +
                     "' reserves by believed durations and the policy has no estimator, so they are the true "
                     "remaining work (an oracle), which only `orrery simulate` knows; use policy 'easy' "
                     "(the same backfill with walltime estimates) for live mode");
  if (p.estimator && p.estimator->is_oracle())
    return MakeError(who + "estimator '" + std::string(p.estimator->name()) +
                     "' reads true job durations (an oracle); choose another estimator=... for live mode");
  if (p.cancels)
    return MakeError(who + "a preemption that cancels jobs (Slurm's PreemptMode=CANCEL) ends them for good, "
                           "which only `orrery simulate` does; use PreemptMode=REQUEUE live");
  if (p.profiler.enabled)
    return MakeError(who + "Lucid's profiler stage needs a staging partition only the simulator models; "
                     "add profiler=false to run it live");
  // Shapes are applied live only to jobs that opt in (their batch script declares the GPU
  // counts its launcher accepts, docs/formats/flex-shape.md; the daemon updates the held job's
  // request before releasing it). Resizing a running job would be a checkpoint-requeue at
  // another world size, which the daemon does not do yet.
  if (p.reschedule && p.reschedule->resizes_jobs())
    return MakeError(who + "'" + std::string(p.reschedule->name()) +
                     "' resizes running jobs (a checkpoint and a restart at another GPU count), which orrery serve "
                     "does not do yet; drop elastic=true: shape=goodput alone shapes the jobs that opt in when they start");
  if (p.reserve.active())
    return MakeError(who + "eval_share reserves GPUs for evaluation jobs, but live mode does not know which Slurm "
                     "jobs are evaluations (no job kind): it would only cap every job; drop eval_share for live mode");
  return Status::Ok();
}

Shape RequestedShape(const JobRequest& job) {
  Shape s;
  s.gpus = job.gpus;
  s.nodes = job.nodes;
  s.layout.dp = static_cast<uint16_t>(std::max<uint32_t>(1, std::min<uint32_t>(job.gpus, UINT16_MAX)));
  return s;
}

Scheduler::Scheduler(const Cluster& cluster, bool track_gpus, bool model_cpu_mem, PolicyParts policy,
                     std::unique_ptr<PlacePlugin> placer, SchedulerOptions opts)
    : cluster_(cluster),
      state_(cluster_, track_gpus, model_cpu_mem),
      policy_(std::move(policy)),
      placer_(std::move(placer)),
      opts_(opts),
      vcs_() {
  vcs_.reserve(cluster.vcs.size());
  for (size_t v = 0; v < cluster.vcs.size(); ++v) {
    vcs_.emplace_back();
    vcs_.back().running_est = std::pmr::set<REntry>(pool_resource_.get());
    vcs_.back().running_true = std::pmr::set<REntry>(pool_resource_.get());
  }
  // Running sets ordered by believed end are needed only by PostFilter plugins that read
  // them (a Reschedule plugin tracks the running jobs it needs through its JobStarted/
  // JobStopped hooks).
  track_running_ = policy_.post != nullptr && policy_.post->reads_running_by_est_end();
  ORR_CHECK(!(policy_.share && policy_.preemptive));
  if (policy_.reserve.active()) {
    ledger_ = std::make_unique<ReservationLedger>(cluster_, policy_.reserve);
    auto wrapped = std::make_unique<ReservingPlacer>(std::move(placer_), ledger_.get());
    reserving_ = wrapped.get();
    placer_ = std::move(wrapped);
  }
  for (size_t v = 0; v < vcs_.size(); ++v) {
    size_t k = static_cast<size_t>(state_.vc_max_node_gpus(VcId(static_cast<uint16_t>(v)))) + 2;
    for (size_t c = 0; c < k; ++c) vcs_[v].classes.emplace_back(pool_resource_.get());
  }
  memo_blocked_ = CanMemoBlockedHead();
#ifdef ORRERY_DEV_CHECKS
  CheckWalks(WalkCheck{ORRERY_DEV_CHECKS_EVERY, true});
#endif
}

bool Scheduler::PlainBlockingWalk(bool blocking) const {
  return blocking && !policy_.post && !policy_.reschedule && !policy_.share && !reserving_;
}

bool Scheduler::CanMemoBlockedHead() const {
  return PlainBlockingWalk(policy_.blocking) && !policy_.shape && placer_->pure() &&
         HasPruner(opts_.pruners, Pruner::kBlockedHead);
}

void Scheduler::AttachTruth(TruthModel* truth) {
  ORR_CHECK(pool_.empty());
  truth_ = truth;
  policy_.sort->BindOracle(truth);
  true_end_order_ = truth && policy_.post && policy_.post->needs_true_end_order();
  track_node_ends_ = truth && true_end_order_ && policy_.preemptive;
  if (track_node_ends_) node_ends_.resize(cluster_.nodes.size());
}

void Scheduler::TrackNodeEnds(const SchedJob& j, bool add) {
  if (!track_node_ends_) return;
  VcQueues& q = vcs_[j.vc.v];
  const Time end = true_end_[j.slot];
  auto earliest = [](const std::vector<Time>& ends) {
    return ends.empty() ? kNoTime : *std::min_element(ends.begin(), ends.end());
  };
  for (const Slot& sl : j.alloc) {
    if (sl.gpus == 0 || sl.milli != 1000) add ? ++q.partial_slots : --q.partial_slots;
    std::vector<Time>& ends = node_ends_[sl.node.v];
    const Time before = earliest(ends);
    if (add) {
      ends.push_back(end);
    } else {
      auto it = std::find(ends.begin(), ends.end(), end);
      ORR_CHECK(it != ends.end());
      *it = ends.back();
      ends.pop_back();
    }
    const Time after = earliest(ends);
    if (after == before) continue;  // the node's key in busy_by_min_end is unchanged
    if (before != kNoTime) {
      const bool erased = q.busy_by_min_end.Erase({before, sl.node.v});
      ORR_CHECK(erased);
    }
    if (after != kNoTime) q.busy_by_min_end.Insert({after, sl.node.v}, 1);
  }
}

uint64_t Scheduler::NodesIdleIfPreemptedAfter(VcId vc, Time t) {
  const VcQueues& q = vcs_[vc.v];
  const uint64_t busy = q.busy_by_min_end.size();
  return (state_.vc_nodes(vc).size() - busy) + BusyEndingAfter(q, t);
}

std::optional<uint64_t> Scheduler::BusyNodesEmptiedIfPreemptedAfter(VcId vc, Time t) {
  if (!track_node_ends_) return std::nullopt;
  const VcQueues& q = vcs_[vc.v];
  const bool uniform = state_.vc_total_gpus(vc) == state_.vc_nodes(vc).size() * state_.vc_max_node_gpus(vc);
  if (!uniform || q.partial_slots != 0 || state_.vc_drained_nodes(vc) != 0) return std::nullopt;
  // Whole-GPU slots only: a busy node empties iff each of its jobs ends after t.
  return BusyEndingAfter(q, t);
}

uint64_t Scheduler::BusyEndingAfter(const VcQueues& q, Time t) {
  // Keys after (t, UINT32_MAX) are those whose earliest end is after t (no node has that id).
  return static_cast<uint64_t>(q.busy_by_min_end.SumAfter({t, UINT32_MAX}));
}

[[gnu::always_inline]] inline size_t Scheduler::ClassOf(const SchedJob& j) const {
  const JobRequest& job = *j.job;
  if (job.gpus == 0 || job.is_fractional()) return 0;
  uint16_t g = state_.vc_max_node_gpus(j.vc);
  if (job.nodes > 1 || job.gpus > g) return static_cast<size_t>(g) + 1;
  return job.gpus;
}

Scheduler::FitClasses Scheduler::FittingClasses(VcId vc) const {
  const uint16_t g = state_.vc_max_node_gpus(vc);
  FitClasses fit;  // class 0: fractional / CPU-only jobs are always examined
  if (state_.vc_free_gpus(vc) == 0) return fit;
  for (int k = g; k > 0; --k) {
    if (state_.bucket(vc, static_cast<uint16_t>(k)).Any()) {
      fit.max_free = static_cast<size_t>(k);
      break;
    }
  }
  if (fit.max_free == g) fit.larger = static_cast<size_t>(g) + 1;  // an idle node exists: larger jobs may fit
  return fit;
}

Result<uint32_t> Scheduler::SubmitStaged(const Job* job, VcId vc, VcId stage, GpuTypeMask types, uint32_t seq,
                                         Time now) {
  staging_ = stage;
  auto r = Submit(job, vc, types, seq, now);
  staging_ = VcId();
  return r;
}

void Scheduler::Handover(uint32_t slot, Time now) {
  SchedJob& j = pool_[slot];
  ORR_CHECK(j.running && j.home_vc.valid() && j.partner == kNoSlot);
  DetachRunning(slot, EndCause::kRequeued, now);
  j.alloc.clear();
  j.vc = j.home_vc;
  j.home_vc = VcId();
  Enqueue(slot, now);
}

[[gnu::flatten]] Result<uint32_t> Scheduler::Submit(const Job* job, VcId vc, GpuTypeMask types, uint32_t seq, Time now) {
  // Admission: may this job ever run in its VC? Capacities per (VC, type mask) are
  // computed once and cached, so admission costs O(1) per job.
  const Feasibility& fz = FeasibilityOf(vc, types);
  if (!fz.type_ok) return MakeError(kNoTypeInVc);
  if (fz.gpus < job->gpus) return MakeError(kTooLargeForVc);
  if (job->gpus > 0 && job->nodes > 1 && job->gpus % job->nodes == 0 && job->gpus / job->nodes > fz.max_node)
    return MakeError(kTooLargeForNode);
  if (job->gpus == 1 && fz.max_node == 0) return MakeError(kTooLargeForNode);
  if (state_.models_cpu_mem() && job->cpu_milli > 0 && fz.max_cpu > 0 &&
      fz.max_cpu < job->cpu_milli / std::max<uint32_t>(1, std::max<uint32_t>(job->nodes, (job->gpus + 7) / 8)))
    return MakeError(kNoCpuMemNode);
  if (policy_.admit) {
    SchedJob probe;
    probe.job = job;
    probe.vc = vc;
    probe.types = types;
    probe.seq = seq;
    probe.slot = kNoSlot;
    const PluginStatus st = policy_.admit->Admit(probe, state_);
    if (!st.ok()) return MakeError(st.reason);
  }

  uint32_t slot;
  if (!free_slots_.empty()) {
    slot = free_slots_.back();
    free_slots_.pop_back();
    pool_[slot] = SchedJob{};
  } else {
    slot = static_cast<uint32_t>(pool_.size());
    pool_.emplace_back();
  }
  SchedJob& j = pool_[slot];
  j.job = job;
  j.slot = slot;
  j.vc = vc;
  if (staging_.valid()) {
    j.home_vc = vc;
    j.vc = staging_;
  }
  j.types = types;
  j.seq = seq;
  if (truth_) truth_->Submitted(slot, *job, now);
  if (policy_.estimator) {
    j.estimate = policy_.estimator->Estimate(*job, now);
    j.est_source = policy_.estimator->is_oracle() ? EstimateSource::kOracle : EstimateSource::kEstimator;
  }
  if (policy_.estimator && watched(slot)) ExplainEstimate(slot, now);
  if (policy_.share) policy_.share->OnSubmit(j, slot, now);
  Enqueue(slot, now);
  return slot;
}

const Scheduler::Feasibility& Scheduler::FeasibilityOf(VcId vc, GpuTypeMask types) {
  uint64_t key = (static_cast<uint64_t>(vc.v) << 32) | types;
  auto it = feasibility_.find(key);
  if (it != feasibility_.end()) return it->second;
  Feasibility fz;
  fz.type_ok = types == 0;
  for (NodeId n : state_.vc_nodes(vc)) {
    const Node& nd = state_.cluster().nodes[n.v];
    bool t = types == 0 || (nd.gpu_type.valid() && ((types >> nd.gpu_type.v) & 1));
    if (!t) continue;
    fz.type_ok = true;
    fz.gpus += nd.gpus;
    fz.max_node = std::max(fz.max_node, nd.gpus);
    fz.max_cpu = std::max(fz.max_cpu, nd.cpu_milli);
  }
  return feasibility_.emplace(key, fz).first->second;
}

void Scheduler::Enqueue(uint32_t slot, Time now) {
  SchedJob& j = pool_[slot];
  SortKey k = policy_.sort->Key(j, now);
  j.key1 = k.k1;
  j.key2 = k.k2;
  j.enqueued = now;
  j.running = false;
  ++epoch_;
  VcQueues& q = vcs_[j.vc.v];
  if (pending_pos_.size() <= slot) pending_pos_.resize(pool_.size());
  pending_pos_[slot] = q.InsertPending(ClassOf(j), KeyOf(slot));
  ++queue_edits_;
  ++q.size;
  q.fresh.push_back(slot);
  ++pending_total_;
  pending_milli_ += j.job->gpu_milli_total();
  if (!q.dirty) {
    q.dirty = true;
    dirty_list_.push_back(j.vc.v);
  }
}

void Scheduler::DetachRunning(uint32_t slot, EndCause cause, Time now) {
  SchedJob& j = pool_[slot];
  ORR_CHECK(j.running);
  ++epoch_;
  if (policy_.share) policy_.share->OnRunning(*this, slot, false);  // sees the partner link
  if (j.partner != kNoSlot) {  // the partner keeps the GPUs (and now holds them)
    SchedJob& p = pool_[j.partner];
    p.partner = kNoSlot;
    if (j.owns_gpus) p.owns_gpus = true;
    j.partner = kNoSlot;
  } else {
    state_.Release(j.alloc);
  }
  if (ledger_) ledger_->Refund(slot);
  j.owns_gpus = true;
  EraseRunningOrder(slot);
  if (!shaped_.empty() && slot < shaped_.size() && shaped_[slot]) {  // back to the shape it asked for
    j.job = requested_[slot];
    shaped_[slot].reset();
  }
  ++vcs_[j.vc.v].version;
  --running_total_;
  j.running = false;
  if (truth_) truth_->Stopped(slot, now, cause);
  MarkDirty(j.vc);
}

// flatten (Submit and Start too: the verbs every job goes through once): the shared
// bookkeeping is inlined into them only, no call per job on 1M-job runs; the other callers
// keep the out-of-line copy.
[[gnu::flatten]] void Scheduler::Finish(uint32_t slot, Time now) {
  now_ = std::max(now_, now);
  DetachRunning(slot, EndCause::kFinished, now);
  SchedJob& j = pool_[slot];
  if (policy_.estimator) policy_.estimator->Observe(WholeJob(j), now - j.started);
  if (policy_.reschedule) policy_.reschedule->JobStopped(*this, slot, EndCause::kFinished, false);
}

void Scheduler::Fail(uint32_t slot, Time now, FailureKind kind, bool restartable) {
  now_ = std::max(now_, now);
  SchedJob& j = pool_[slot];
  ++j.failures;
  if (watched(slot))
    Note(slot, ExplainNote{now, "scheduler", "failed",
                           std::string("failed (") + std::string(FailureKindName(kind)) + ")" +
                               (restartable ? "; requeued" : "; leaves"),
                           {}});
  if (restartable) {
    StopToQueue(slot, now, EndCause::kFailed, false);
    return;
  }
  DetachRunning(slot, EndCause::kFailed, now);
  if (policy_.reschedule) policy_.reschedule->JobStopped(*this, slot, EndCause::kFailed, false);
}

void Scheduler::Requeue(uint32_t slot, Time now, EndCause cause) {
  ORR_CHECK(cause == EndCause::kPreempted || cause == EndCause::kNodeLost || cause == EndCause::kRequeued);
  now_ = std::max(now_, now);
  StopToQueue(slot, now, cause, false);
}

void Scheduler::Withdraw(uint32_t slot, Time now) {
  now_ = std::max(now_, now);
  SchedJob& j = pool_[slot];
  if (j.running) {
    DetachRunning(slot, EndCause::kWithdrawn, now);
    if (policy_.reschedule) policy_.reschedule->JobStopped(*this, slot, EndCause::kWithdrawn, false);
    return;
  }
  RemovePending(slot);
  ++epoch_;
  if (truth_) truth_->Stopped(slot, now, EndCause::kWithdrawn);
  MarkDirty(j.vc);
}

void Scheduler::RemovePending(uint32_t slot) {
  SchedJob& j = pool_[slot];
  VcQueues& q = vcs_[j.vc.v];
  ORR_CHECK(pending_pos_[slot]->slot == slot);
  q.ErasePending(ClassOf(j), pending_pos_[slot]);
  ++queue_edits_;
  --q.size;
  --pending_total_;
  pending_milli_ -= j.job->gpu_milli_total();
}

void Scheduler::ReportProgress(uint32_t slot, Time now, Progress p) {
  SchedJob& j = pool_[slot];
  const Progress before = j.progress;
  j.progress = p;
  if (!j.running || p.steps_total <= 0 || p.steps_done <= 0 || now <= j.started) return;
  // Rate over this attempt: since the previous report of this attempt, else since its start.
  const bool same_attempt = before.at != kNoTime && before.at > j.started && before.steps_done >= 0;
  const double steps = static_cast<double>(p.steps_done - (same_attempt ? before.steps_done : 0));
  const double secs = static_cast<double>(now - (same_attempt ? before.at : j.started));
  if (steps <= 0 || secs <= 0) return;
  const double left = static_cast<double>(std::max<int64_t>(0, p.steps_total - p.steps_done));
  const Time end = now + static_cast<Time>(std::ceil(left * secs / steps));
  UpdateEstimate(slot, now, end - j.started, EstimateSource::kReported);
}

void Scheduler::UpdateEstimate(uint32_t slot, Time now, Duration estimate, EstimateSource source) {
  now_ = std::max(now_, now);
  SchedJob& j = pool_[slot];
  ++epoch_;
  j.estimate = estimate;
  j.est_source = source;
  if (!j.running) {
    Rekey(slot);
    MarkDirty(j.vc);
    return;
  }
  VcQueues& q = vcs_[j.vc.v];
  if (track_running_) q.running_est.erase(REntry{j.est_end, j.seq, slot});
  j.est_end = j.started + std::max<Duration>(1, estimate);
  if (track_running_) q.running_est.insert(REntry{j.est_end, j.seq, slot});
  ++q.version;  // per-state caches (EASY's shadow time) read the believed ends
  MarkDirty(j.vc);
}

void Scheduler::Resize(uint32_t slot, Allocation alloc, Time now) {
  now_ = std::max(now_, now);
  SchedJob& j = pool_[slot];
  ORR_CHECK(j.running && j.partner == kNoSlot && !alloc.empty());
  ++epoch_;
  EraseRunningOrder(slot);
  state_.Release(j.alloc);
  state_.Apply(alloc);
  j.alloc = std::move(alloc);
  if (ledger_) {
    ledger_->Refund(slot);
    ledger_->Charge(slot, *j.job, j.vc, AllocatedMilli(j.alloc));
  }
  InsertRunningOrder(slot);
  ++vcs_[j.vc.v].version;
  MarkDirty(j.vc);
}

Status Scheduler::AddNode(const Node& node) {
  if (node.id.v != cluster_.nodes.size())
    return MakeError("AddNode: node id " + std::to_string(node.id.v) + " is not the next id " +
                     std::to_string(cluster_.nodes.size()));
  if (!node.vc.valid() || node.vc.v >= cluster_.vcs.size())
    return MakeError("AddNode: node '" + node.name + "' names no VC of the cluster");
  std::vector<NodeId> off;
  for (const Node& n : cluster_.nodes)
    if (!state_.powered(n.id)) off.push_back(n.id);
  cluster_.nodes.push_back(node);
  cluster_.vcs[node.vc.v].nodes.push_back(node.id);
  cluster_.vcs[node.vc.v].gpus += node.gpus;
  state_ = ClusterState(cluster_, state_.tracks_gpus(), state_.models_cpu_mem());
  for (const SchedJob& j : pool_)
    if (j.job && j.running && j.owns_gpus) state_.Apply(j.alloc);
  for (NodeId n : off) state_.SetPowered(n, false);
  ++epoch_;
  if (track_node_ends_) node_ends_.resize(cluster_.nodes.size());
  feasibility_.clear();
  if (ledger_) ledger_->SetCaps(cluster_);
  ResizeClasses(node.vc);
  for (size_t v = 0; v < vcs_.size(); ++v) {
    ++vcs_[v].version;
    MarkDirty(VcId(static_cast<uint16_t>(v)));
  }
  return Status::Ok();
}

// Hinted at the end: under arrival-ordered keys (FIFO) a new job is its class's last, placed
// without a descent through the tree; any other key costs one comparison more.
Scheduler::VcQueues::Pos Scheduler::VcQueues::InsertPending(size_t c, const QEntry& e) {
  auto& cls = classes[c];
  const auto it = cls.insert(cls.end(), e);
  if (it == cls.begin()) RefreshHead(c);  // (begin() read after the insert)
  return it;
}

void Scheduler::VcQueues::ErasePending(size_t c, Pos at) {
  auto& cls = classes[c];
  const bool head = at == cls.begin();
  cls.erase(at);
  if (head) RefreshHead(c);
}

void Scheduler::IndexPending() {
  pending_pos_.resize(pool_.size());
  for (VcQueues& q : vcs_)
    for (auto& cls : q.classes)
      for (auto it = cls.begin(); it != cls.end(); ++it) pending_pos_[it->slot] = it;
}

// Class c's entry is updated in place and moved to where its key belongs (a few classes:
// a linear search and adjacent swaps move less than an erase and a sorted insert).
void Scheduler::VcQueues::RefreshHead(size_t c) {
  auto at = std::find_if(heads.begin(), heads.end(), [c](const ClassHead& h) { return h.cls == c; });
  if (classes[c].empty()) {
    if (at != heads.end()) heads.erase(at);
    return;
  }
  if (at == heads.end()) at = heads.insert(heads.end(), ClassHead{*classes[c].begin(), c});
  else at->key = *classes[c].begin();
  for (; at != heads.begin() && at->key < std::prev(at)->key; --at) std::iter_swap(at, std::prev(at));
  for (; std::next(at) != heads.end() && std::next(at)->key < at->key; ++at) std::iter_swap(at, std::next(at));
}

void Scheduler::ResizeClasses(VcId vc) {
  VcQueues& q = vcs_[vc.v];
  const size_t k = static_cast<size_t>(state_.vc_max_node_gpus(vc)) + 2;
  if (q.classes.size() == k) return;
  std::vector<QEntry> all;
  for (auto& cls : q.classes) {
    all.insert(all.end(), cls.begin(), cls.end());
    cls.clear();
  }
  q.heads.clear();
  while (q.classes.size() < k) q.classes.emplace_back(pool_resource_.get());
  for (const QEntry& e : all) pending_pos_[e.slot] = q.InsertPending(ClassOf(pool_[e.slot]), e);
  ++queue_edits_;
}

void Scheduler::SetNodeDrained(NodeId n, bool on) {
  state_.SetDrained(n, on);
  MarkNodeVcDirty(n);
}

void Scheduler::SetNodePowered(NodeId n, bool on) {
  state_.SetPowered(n, on);
  MarkNodeVcDirty(n);
}

void Scheduler::MarkNodeVcDirty(NodeId n) {
  ++epoch_;
  const VcId vc = state_.cluster().nodes[n.v].vc;
  VcQueues& q = vcs_[vc.v];
  ++q.version;
  if (!q.dirty) {
    q.dirty = true;
    dirty_list_.push_back(vc.v);
  }
}

void Scheduler::Release(uint32_t slot) {
  pool_[slot].alloc.clear();
  pool_[slot].alloc.shrink_to_fit();
  pool_[slot].job = nullptr;
  free_slots_.push_back(slot);
}

[[gnu::flatten]] void Scheduler::Start(uint32_t slot, Allocation alloc) {
  SchedJob& j = pool_[slot];
  RemovePending(slot);
  if (shaping_) {  // PlaceShaped chose another shape: the job runs in it until it stops
    shaped_[slot] = std::make_unique<Job>(shaped_job_);
    j.job = shaped_[slot].get();
    shaping_ = false;
  }
  state_.Apply(alloc);
  j.alloc = std::move(alloc);
  if (ledger_) ledger_->Charge(slot, *j.job, j.vc, AllocatedMilli(j.alloc));
  MarkRunning(slot);
}

void Scheduler::StartShared(uint32_t slot, uint32_t partner) {
  SchedJob& j = pool_[slot];
  SchedJob& p = pool_[partner];
  ORR_CHECK(p.running && p.partner == kNoSlot && p.vc == j.vc && !j.running);
  RemovePending(slot);
  j.alloc = p.alloc;  // the same GPUs; the ClusterState is unchanged
  j.owns_gpus = false;
  j.partner = partner;
  p.partner = slot;
  if (ledger_) ledger_->Charge(slot, *j.job, j.vc, 0);  // the partner's GPUs: nothing new taken
  MarkRunning(slot);
}

void Scheduler::ForEachPendingOfSize(VcId vc, uint32_t gpus, const std::function<bool(const PendingEntry&)>& fn) {
  VcQueues& q = vcs_[vc.v];
  const uint16_t g = state_.vc_max_node_gpus(vc);
  const size_t c = gpus <= g ? gpus : static_cast<size_t>(g) + 1;
  if (gpus == 0 || c >= q.classes.size()) return;
  // Class c ≤ g holds exactly the whole-GPU single-node jobs of c GPUs (ClassOf); only the
  // class of larger jobs mixes sizes and needs each job read.
  const bool mixed = c > g;
  for (auto it = q.classes[c].begin(); it != q.classes[c].end();) {
    const PendingEntry e = *it;
    ++it;  // fn may start (erase) the job
    if (mixed) {
      const JobRequest& job = *pool_[e.slot].job;
      if (job.gpus != gpus || job.is_fractional()) continue;
    }
    if (!fn(e)) return;
  }
}

void Scheduler::MarkRunning(uint32_t slot) {
  SchedJob& j = pool_[slot];
  VcQueues& q = vcs_[j.vc.v];
  ++q.version;
  j.running = true;
  j.started = now_;
  if (j.attempts < UINT16_MAX) ++j.attempts;
  if (truth_) truth_->Started(slot, now_);
  if (true_end_order_) {
    if (true_end_.size() <= slot) true_end_.resize(pool_.size());
    if (true_pos_.size() <= slot) true_pos_.resize(pool_.size());
    true_end_[slot] = truth_->TrueEnd(slot);
  }
  Duration est = BelievedDuration(j);
  if (j.preemptions > 0 && j.est_source == EstimateSource::kOracle) est = truth_->Remaining(slot);
  j.est_end = now_ + std::max<Duration>(1, est);
  InsertRunningOrder(slot);
  ++running_total_;
  if (!adopting_) out_->push_back(StartDecision{slot});
  if (policy_.reschedule) policy_.reschedule->JobStarted(*this, slot);
  if (watched(slot)) Note(slot, ExplainNote{now_, "scheduler", "started", "started", {{"gpus", j.job->gpus}}});
  if (policy_.share) policy_.share->OnRunning(*this, slot, true);
}

void Scheduler::UpdateRunningOrder(uint32_t slot, bool insert) {
  const SchedJob& j = pool_[slot];
  VcQueues& q = vcs_[j.vc.v];
  TrackNodeEnds(j, insert);
  const REntry est{j.est_end, j.seq, slot};
  if (track_running_) {
    if (insert)
      q.running_est.insert(est);
    else
      q.running_est.erase(est);
  }
  if (!true_end_order_) return;
  if (insert)
    true_pos_[slot] = q.running_true.insert(REntry{true_end_[slot], j.seq, slot}).first;
  else
    q.running_true.erase(true_pos_[slot]);
}

// Shape: the ShapePlugin's choice for pending `slot`; a shape other than the request is
// placed as a shaped copy of the job (kept by Start while it runs).
PluginStatus Scheduler::PlaceShaped(uint32_t slot) {
  SchedJob& j = pool_[slot];
  const Shape s = policy_.shape->Choose(j, state_);
  shaping_ = s != RequestedShape(*j.job);
  if (!shaping_) return placer_->Place(j, state_, nullptr, &scratch_);
  shaped_job_ = WholeJob(j);
  shaped_job_.gpus = s.gpus;
  shaped_job_.nodes = s.nodes;
  if (requested_.size() <= slot) requested_.resize(pool_.size(), nullptr);
  if (shaped_.size() <= slot) shaped_.resize(pool_.size());
  requested_[slot] = &WholeJob(j);
  SchedJob probe = j;
  probe.job = &shaped_job_;
  if (s.type.valid()) probe.types = GpuTypeMask{1} << s.type.v;
  PluginStatus st = placer_->Place(probe, state_, nullptr, &scratch_);
  if (!st.ok()) shaping_ = false;
  return st;
}

Duration Scheduler::BelievedDuration(const SchedJob& j) const {
  if (j.estimate >= 0) return j.estimate;
  if (truth_) return truth_->Remaining(j.slot);
  return std::max<Duration>(0, j.job->walltime);
}

void Scheduler::Adopt(uint32_t slot, Allocation alloc, Time started) {
  ORR_CHECK(!pool_[slot].running && !alloc.empty());
  ++epoch_;
  const Time saved_now = now_;
  adopting_ = true;
  now_ = started;
  Start(slot, std::move(alloc));
  adopting_ = false;
  now_ = saved_now;
}

void Scheduler::Preempt(uint32_t slot) {
  ORR_CHECK(pool_[slot].partner == kNoSlot);  // sharing policies are not preemptive
  StopToQueue(slot, now_, EndCause::kPreempted, true);
}

void Scheduler::PreemptAndCancel(uint32_t slot) {
  ORR_CHECK(policy_.cancels && pool_[slot].partner == kNoSlot);
  DetachRunning(slot, EndCause::kPreempted, now_);
  SchedJob& j = pool_[slot];
  j.alloc.clear();
  ++j.preemptions;
  out_->push_back(PreemptDecision{slot, true});
  if (policy_.reschedule) policy_.reschedule->JobStopped(*this, slot, EndCause::kPreempted, false);
  if (watched(slot)) Note(slot, ExplainNote{now_, "scheduler", "preempted", "preempted and cancelled: it leaves", {}});
}

// A running job goes back to its queue: the attempt's service is kept (attained), the
// truth charges its restart physics (TruthModel::Stopped).
void Scheduler::StopToQueue(uint32_t slot, Time now, EndCause cause, bool emit) {
  SchedJob& j = pool_[slot];
  const Duration ran = now - j.started;
  DetachRunning(slot, cause, now);
  j.alloc.clear();
  j.attained += ran * j.job->gpus;
  // A preemption loses no believed work but costs a restart: a believed (non-oracle)
  // duration becomes the believed remaining work plus the policy's restart overhead, so the
  // next start's believed end is its start + what was left + the restart (the oracle's is
  // re-read at Start). Failures and lost nodes keep the estimate (work lost).
  if (cause == EndCause::kPreempted && j.estimate >= 0 && j.est_source != EstimateSource::kOracle)
    j.estimate = std::max<Duration>(1, j.est_end - now) + policy_.restart_overhead()(j.job->gpus);
  if (cause == EndCause::kPreempted) ++j.preemptions;
  if (emit) out_->push_back(PreemptDecision{slot});
  if (policy_.reschedule) policy_.reschedule->JobStopped(*this, slot, cause, true);
  if (watched(slot)) NoteStopped(slot, now, cause);
  Enqueue(slot, now);
}

void Scheduler::NoteStopped(uint32_t slot, Time now, EndCause cause) {
  if (!truth_) {
    Note(slot, ExplainNote{now, "scheduler", std::string(EndCauseName(cause)), std::string(EndCauseName(cause)), {}});
    return;
  }
  Note(slot, ExplainNote{now, "scheduler", std::string(EndCauseName(cause)),
                         std::string(EndCauseName(cause)) + "; restart overhead charged",
                         {{"overhead_s", static_cast<double>(truth_->RestartCost(slot))},
                          {"remaining_s", static_cast<double>(truth_->Remaining(slot))}}});
}

void Scheduler::ExplainEstimate(uint32_t slot, Time now) {
  const SchedJob& j = pool_[slot];
  ExplainNote n{now, std::string(policy_.estimator->name()), "estimate",
                "estimated duration " + std::to_string(j.estimate) + " s by " + std::string(policy_.estimator->name()),
                {{"estimate_s", static_cast<double>(j.estimate)}}};
  EstimateExplanation ex;
  if (policy_.estimator->Explain(WholeJob(j), now, &ex)) {
    n.text += " = exp(" + std::string(ex.scale == "log-seconds" ? "" : ex.scale + ": ") + "base + sum of terms)";
    if (!ex.note.empty()) n.text += "; " + ex.note;
    n.fields.push_back({"base", ex.base});
    for (auto& [name, v] : ex.terms) n.fields.push_back({name, v});
  }
  Note(slot, std::move(n));
}

void Scheduler::MarkPendingVcsDirty() {
  for (size_t v = 0; v < vcs_.size(); ++v) {
    VcQueues& q = vcs_[v];
    if (q.size == 0 || q.dirty) continue;
    q.dirty = true;
    dirty_list_.push_back(static_cast<uint16_t>(v));
  }
}

void Scheduler::Describe(uint32_t slot, Time now, std::vector<ExplainNote>* out) const {
  const SchedJob& j = pool_[slot];
  policy_.sort->Describe(j, now, out);
  if (policy_.post) policy_.post->Describe(j, now, out);
  if (policy_.reschedule) policy_.reschedule->Describe(j, now, out);
  if (policy_.share) policy_.share->Describe(j, now, out);
}

void Scheduler::ForEachPending(VcId vc, const std::function<int64_t(const PendingEntry&)>& fn) {
  VcQueues& q = vcs_[vc.v];
  const int64_t g = state_.vc_max_node_gpus(vc);
  int64_t budget = INT64_MAX;
  // Class c (1..g) holds jobs of c GPUs, class g+1 larger ones, class 0 fractional/CPU-only.
  auto visible = [&](size_t c) { return c == 0 || (c <= static_cast<size_t>(g) ? static_cast<int64_t>(c) <= budget : budget > g); };
  auto by_key = [](const PendingHead& a, const PendingHead& b) { return a.key < b.key; };
  heads_.clear();
  for (const ClassHead& h : q.heads) heads_.push_back({h.key, q.classes[h.cls].begin(), q.classes[h.cls].end(), h.cls});
  while (true) {
    // The smallest head of a visible class: heads_ is sorted, so the first visible one.
    size_t i = 0;
    while (i < heads_.size() && !visible(heads_[i].cls)) ++i;
    if (i == heads_.size()) return;
    const QEntry visit = heads_[i].key;
    // Its class's next entry takes its place, moved right to where its key belongs.
    if (++heads_[i].it == heads_[i].end) {
      heads_.erase(heads_.begin() + static_cast<ptrdiff_t>(i));
    } else {
      heads_[i].key = *heads_[i].it;
      for (size_t m = i; m + 1 < heads_.size() && by_key(heads_[m + 1], heads_[m]); ++m) std::swap(heads_[m], heads_[m + 1]);
    }
    budget = fn(visit);
    if (budget < 0) return;
  }
}

bool Scheduler::MinPendingKey(VcId vc, SortKey* out) const {
  const VcQueues& q = vcs_[vc.v];
  if (q.heads.empty()) return false;
  *out = SortKey{q.heads.front().key.k1, q.heads.front().key.k2};
  return true;
}

void Scheduler::Rekey(uint32_t slot) {
  SchedJob& j = pool_[slot];
  ORR_CHECK(!j.running);
  VcQueues& q = vcs_[j.vc.v];
  const size_t c = ClassOf(j);
  q.ErasePending(c, pending_pos_[slot]);
  q.settled = kNoVersion;  // a job moved in the queue: its failure was not judged there
  SortKey k = policy_.sort->Key(j, now_);
  j.key1 = k.k1;
  j.key2 = k.k2;
  pending_pos_[slot] = q.InsertPending(c, KeyOf(slot));
  ++queue_edits_;
}

void Scheduler::PendingAfter(VcId vc, uint32_t slot, size_t limit, std::vector<uint32_t>* out) {
  out->clear();
  VcQueues& q = vcs_[vc.v];
  const size_t k = q.classes.size();
  const FitClasses fit = FittingClasses(vc);
  QEntry from = KeyOf(slot);
  cursors_.resize(k);
  for (size_t c = 0; c < k; ++c) cursors_[c] = q.classes[c].upper_bound(from);
  while (out->size() < limit) {
    int best = -1;
    for (size_t c = 0; c < k; ++c) {
      if (!fit.Has(c) || cursors_[c] == q.classes[c].end()) continue;
      if (best < 0 || *cursors_[c] < *cursors_[best]) best = static_cast<int>(c);
    }
    if (best < 0) break;
    out->push_back(cursors_[best]->slot);
    ++cursors_[best];
  }
}

void Scheduler::ForEachRunningByEstEnd(VcId vc, const std::function<bool(uint32_t)>& fn) {
  ORR_CHECK(track_running_ || !policy_.post);  // a PostFilter that reads it says so
  for (const REntry& e : vcs_[vc.v].running_est)
    if (!fn(e.slot)) return;
}

void Scheduler::ForEachRunningByEstEndDesc(VcId vc, const std::function<bool(uint32_t, Time)>& fn) {
  ORR_CHECK(track_running_ || !policy_.post);
  const auto& r = vcs_[vc.v].running_est;
  for (auto it = r.rbegin(); it != r.rend(); ++it)
    if (!fn(it->slot, it->end)) return;
}

void Scheduler::ForEachRunningByTrueEndDesc(VcId vc, const std::function<bool(uint32_t, Time)>& fn) {
  ORR_CHECK(truth_ && true_end_order_);
  const auto& r = vcs_[vc.v].running_true;
  for (auto it = r.rbegin(); it != r.rend(); ++it)
    if (!fn(it->slot, it->end)) return;
}

void Scheduler::Schedule(Time now, std::vector<Decision>* out) {
  now_ = now;
  out_ = out;
  last_cycle_ = now;
  ++epoch_;
  if (policy_.reschedule) policy_.reschedule->Advance(*this);
  // Deterministic VC order: ascending VC id.
  std::sort(dirty_list_.begin(), dirty_list_.end());
  cycle_list_.swap(dirty_list_);  // VCs dirtied during the cycles go to the next call
  dirty_list_.clear();
  for (uint16_t v : cycle_list_) {
    vcs_[v].dirty = false;
    CycleVc(VcId(v));
    vcs_[v].fresh.clear();
  }
  out_ = nullptr;
}

void Scheduler::CycleVc(VcId vc) {
  VcQueues& q = vcs_[vc.v];
  q.last_block = PluginStatus::Ok();
  if (policy_.reschedule) {
    // Runs even with an empty queue: it tracks running jobs' priorities.
    PluginStatus block = PluginStatus::Ok();
    ReschedulePlugin::Next next = policy_.reschedule->Run(*this, vc, &block);
    if (!block.ok()) {
      if (block.plugin.empty()) block.plugin = policy_.reschedule->name();
      q.last_block = block;
    }
    if (next == ReschedulePlugin::Next::kStop) return;
  }
  if (q.size == 0) return;
  // While sharing is active: a packing pass, then greedy exclusive placement, then another
  // packing pass for partners started meanwhile (packing takes no GPUs, so it never makes
  // room for an exclusive placement).
  const bool sharing = policy_.share && policy_.share->Active(*this);
  const bool blocking = policy_.blocking && !sharing;
  if (sharing) {
    policy_.share->Pack(*this, vc);
    Walk(vc, blocking);
    policy_.share->Pack(*this, vc);
    return;
  }
  Walk(vc, blocking);
}

bool Scheduler::MayPlaceUnfittingMemo(const VcQueues& q, size_t c, const QEntry& head) {
  if (unfit_bound_) return head.k1 < unfit_bound_->k1 || (head.k1 == unfit_bound_->k1 && head.k2 < unfit_bound_->k2);
  const uint32_t slot = head.slot;
  UnfitMemo& m = unfit_memo_[c];
  if (m.slot != slot || m.version != q.version) m = UnfitMemo{slot, q.version, policy_.post->MayPlaceUnfitting(*this, slot)};
  return m.may;
}

namespace {
// The smallest entry over the heads of `classes` (the global queue head), or null when all
// are empty; ties (none: sequences differ) would go to the lowest class.
template <class Classes>
auto GlobalHead(const Classes& classes) -> const typename Classes::value_type::value_type* {
  const typename Classes::value_type::value_type* head = nullptr;
  for (const auto& c : classes)
    if (!c.empty() && (head == nullptr || *c.begin() < *head)) head = &*c.begin();
  return head;
}
}  // namespace

// A plain blocking walk (no PostFilter, Reschedule, sharing or evaluation lane: nothing but
// Start changes the queues during it) places the global head until one does not fit: the
// cursor walk of CycleExclusive without cursors (Start erases the head, so the next is again
// a minimum of class heads). A head that failed is remembered (memo_blocked_): arrivals
// behind it, which change no state, do not place it again (on a loaded cluster most instants
// are such arrivals, and a blocked multi-node head costs a scan of every node).
void Scheduler::CyclePlainBlocking(VcQueues& q) {
  for (size_t examined = 0; examined < opts_.max_examined; ++examined) {
    const QEntry* head = GlobalHead(q.classes);
    if (head == nullptr) return;
    const uint32_t slot = head->slot;
    const SchedJob& j = pool_[slot];
    if (memo_blocked_ && q.blocked.Holds(slot, j.job, q.version)) {
      q.last_block = q.blocked.status;
      return;
    }
    PluginStatus st = policy_.shape ? PlaceShaped(slot) : placer_->Place(j, state_, nullptr, &scratch_);
    if (!st.ok()) {
      st.plugin = placer_->name();
      q.last_block = st;
      if (memo_blocked_) q.blocked = BlockedHead{slot, j.job, q.version, st};
      return;
    }
    Start(slot, std::move(scratch_));
    scratch_.clear();
  }
}

namespace {
// Ends a walk's evaluation lane however the walk returns.
struct LaneOffAtExit {
  ReservingPlacer* p;
  ~LaneOffAtExit() {
    if (p) p->set_lane_only(false);
  }
};
}  // namespace

void Scheduler::CycleExclusive(VcId vc, bool blocking) {
  VcQueues& q = vcs_[vc.v];
  if (q.size == 0) return;
  if (PlainBlockingWalk(blocking)) return CyclePlainBlocking(q);
  const size_t k = q.classes.size();
  const uint16_t g = state_.vc_max_node_gpus(vc);
  auto& cur = cycle_cursors_;  // member scratch: no allocation per cycle
  cur.resize(k);
  for (size_t c = 0; c < k; ++c) cur[c] = q.classes[c].begin();
  LiveCursors(q);
  // Blocking policies look only at the global head: no need for the fitting classes.
  const bool by_fit = !blocking && HasPruner(opts_.pruners, Pruner::kFittingClasses);
  FitClasses fit = by_fit ? FittingClasses(vc) : FitClasses::All();
  uint64_t fit_version = q.version;
  // MayPlaceUnfitting per class head, asked once per (head, VC version) (its contract:
  // scheduler.h), or the PostFilter's key bound for it.
  if (!blocking && policy_.post) unfit_memo_.assign(k, UnfitMemo{});
  const bool by_bound = by_fit && policy_.post && HasPruner(opts_.pruners, Pruner::kUnfitKeyBound);
  unfit_bound_ = by_bound ? policy_.post->UnfitKeyBound(*this, vc) : std::nullopt;
  size_t examined = 0;
  // Greedy walks pass jobs the PostFilter rejects without placing them (PassesRejected).
  const bool may_reject = by_fit && policy_.post && !policy_.shape && HasPruner(opts_.pruners, Pruner::kRejects);
  along_class_ = may_reject && HasPruner(opts_.pruners, Pruner::kRejectsAlongClass) &&
                 policy_.post->rejects_along_class();
  if (may_reject) rejected_at_.assign(k, kNoVersion);
  uint32_t rejected = kNoSlot;  // the last job passed so, while no other followed it
  // Settled walks pass the jobs the VC held when it settled (PassesSettled) as rejected: at an
  // arrival, only the new jobs are judged (most of a loaded SRTF queue waits for room that no
  // arrival makes). A preemption unsettles the walk and the VC.
  const bool may_settle = may_reject && HasPruner(opts_.pruners, Pruner::kSettledWalk) && SettlingWalks();
  walk_settled_ = may_settle && q.settled == q.version;
  if (walk_settled_) BeginSettledWalk(q);
  q.settled = kNoVersion;
  bool preempted = false, exhausted = false;
  // Evaluation reservation: once a blocking walk's head (an other job) waits, evaluation jobs
  // behind it may still start inside the reserve (reserve.h); the walk is then in the lane.
  bool lane = false;
  const LaneOffAtExit lane_off{reserving_};
  while (examined < opts_.max_examined) {
    if (by_fit && q.version != fit_version) {
      fit = FittingClasses(vc);  // after a start (the walk's only change while settled): no larger
      fit_version = q.version;
      if (policy_.post) {
        std::optional<SortKey> bound = by_bound ? policy_.post->UnfitKeyBound(*this, vc) : std::nullopt;
        walk_settled_ = walk_settled_ && BoundHeld(unfit_bound_, bound);
        unfit_bound_ = bound;
      }
    }
    const int pick = PickClass(q, fit, blocking);
    if (pick < 0) {
      exhausted = true;
      break;
    }
    if (PassesSettled(*cur[pick]) && SkipSettled(q, pick, fit, &examined, &rejected)) continue;
    ++examined;
    QEntry here = *cur[pick];
    uint32_t slot = here.slot;
    SchedJob& j = pool_[slot];
    if (lane && !IsEvaluation(*j.job)) {
      AdvanceCursor(q, pick);
      continue;
    }
    if (may_reject && (PassesSettled(here) || PassesRejected(q, static_cast<size_t>(pick), g, fit, slot))) {
      AdvanceCursor(q, pick);  // nothing changed: every cursor is where it was
      rejected = slot;
      continue;
    }
    NoteRejected(q, &rejected);
    PluginStatus st = policy_.shape ? PlaceShaped(slot) : placer_->Place(j, state_, nullptr, &scratch_);
    if (st.ok()) {
      AdvanceCursor(q, pick);  // Start erases the current entry
      Start(slot, std::move(scratch_));
      scratch_.clear();
      if (lane && ledger_->reserve_full(vc)) return;
      continue;
    }
    if (lane) return;  // the lane blocks at its own head
    st.plugin = placer_->name();
    q.last_block = st;
    // A blocking walk whose head (an other job) waits goes on in the evaluation lane, after
    // the PostFilter (e.g. EASY's backfill) has had its turn.
    const bool to_lane = blocking && reserving_ && !IsEvaluation(*j.job) && !ledger_->reserve_full(vc);
    if (policy_.post) {
      // The plugin may start (erase) or requeue jobs: remember each cursor's key and re-seek.
      saved_.resize(k);
      for (size_t c = 0; c < k; ++c) {
        saved_[c].first = cur[c] != q.classes[c].end();
        if (saved_[c].first) saved_[c].second = *cur[c];
      }
      bool placed = false;
      const uint64_t edits = queue_edits_;
      const PostFilterPlugin::Next next = policy_.post->Run(*this, slot, &placed);
      if (placed || queue_edits_ != edits) {  // SRTF places only by preempting: resources freed
        walk_settled_ = false;
        preempted = true;
      }
      if (next == PostFilterPlugin::Next::kStop && (placed || !to_lane)) return;
      if (queue_edits_ == edits) {
        AdvanceCursor(q, pick);  // no queue changed (nothing started): every cursor is where it was
      } else {
        for (size_t c = 0; c < k; ++c) {
          if (static_cast<int>(c) == pick) cur[c] = q.classes[c].upper_bound(here);
          else cur[c] = saved_[c].first ? q.classes[c].lower_bound(saved_[c].second) : q.classes[c].end();
        }
        LiveCursors(q);
        if (placed) continue;
      }
    } else {
      AdvanceCursor(q, pick);
    }
    if (!blocking) continue;
    if (!to_lane) return;
    lane = true;
    reserving_->set_lane_only(true);
  }
  NoteRejected(q, &rejected);
  walk_settled_ = false;
  if (may_settle && exhausted && !preempted) q.settled = q.version;
}

bool Scheduler::SettlingWalks() const {
  return policy_.post->failures_persist() && placer_->pure() && !state_.models_cpu_mem() && !reserving_ &&
         !policy_.share;
}

void Scheduler::BeginSettledWalk(const VcQueues& q) {
  fresh_keys_.clear();
  for (uint32_t slot : q.fresh)
    if (pool_[slot].job && !pool_[slot].running) fresh_keys_.push_back(KeyOf(slot));  // a stale slot: one key too many
  std::sort(fresh_keys_.begin(), fresh_keys_.end());
}

bool Scheduler::SkipSettled(const VcQueues& q, int pick, FitClasses fit, size_t* examined, uint32_t* rejected) {
  if (*examined + q.size >= opts_.max_examined) return false;  // the walk's cap may fall among them
  auto below_bound = [&](const QEntry& e) {
    return e.k1 < unfit_bound_->k1 || (e.k1 == unfit_bound_->k1 && e.k2 < unfit_bound_->k2);
  };
  for (const uint16_t c : cycle_live_)
    if (!fit.Has(c) && !unfit_bound_) return false;  // eligibility asked per head: entry by entry
  // The next fresh entry after the picked (old) one: the walk judges it on this state.
  const QEntry& at = *cycle_cursors_[static_cast<size_t>(pick)];
  const auto next = std::upper_bound(fresh_keys_.begin(), fresh_keys_.end(), at);
  size_t passed = 0;
  const QEntry* last = nullptr;
  for (const uint16_t c : cycle_live_) {
    auto& it = cycle_cursors_[c];
    const auto end = q.classes[c].end();
    const bool by_fit = fit.Has(c);
    for (; it != end && (next == fresh_keys_.end() || *it < *next) && (by_fit || below_bound(*it)); ++it, ++passed)
      if (last == nullptr || *last < *it) last = &*it;
  }
  *examined += passed;
  *rejected = last->slot;
  LiveCursors(q);
  return true;
}

bool Scheduler::BoundHeld(const std::optional<SortKey>& before, const std::optional<SortKey>& after) {
  if (!before || !after) return false;  // MayPlaceUnfitting per head: a stuck head may now be eligible
  return after->k1 < before->k1 || (after->k1 == before->k1 && after->k2 <= before->k2);
}

void Scheduler::LiveCursors(const VcQueues& q) {
  cycle_live_.clear();
  for (size_t c = 0; c < q.classes.size(); ++c)
    if (cycle_cursors_[c] != q.classes[c].end()) cycle_live_.push_back(static_cast<uint32_t>(c));
}

void Scheduler::AdvanceCursor(const VcQueues& q, int c) {
  if (++cycle_cursors_[c] != q.classes[c].end()) return;
  cycle_live_.erase(std::find(cycle_live_.begin(), cycle_live_.end(), static_cast<uint32_t>(c)));
}

// Blocking walks consider only the global head (smallest key over all classes). Greedy ones
// take the smallest key among classes whose head may fit the free resources or that a
// PostFilter plugin could make room for (e.g. by preemption); later jobs of a class that is
// neither cannot be placed either (same size, larger key). -1: none.
int Scheduler::PickClass(const VcQueues& q, FitClasses fit, bool blocking) {
  const auto& cur = cycle_cursors_;
  int pick = -1;
  for (const uint32_t c : cycle_live_) {
    if (pick >= 0 && !(*cur[c] < *cur[pick])) continue;
    const bool eligible = blocking || fit.Has(c) || (policy_.post && MayPlaceUnfittingMemo(q, c, *cur[c]));
    if (eligible) pick = c;
  }
  return pick;
}

bool Scheduler::SurelyUnfit(const SchedJob& j, size_t c, uint16_t g, FitClasses fit) {
  if (c == 0 || fit.Has(c)) return false;
  if (c <= g) return true;  // one node with c free GPUs, and none has them
  // Class g + 1 without an idle node: only a job whose every node takes all g GPUs (other
  // large shapes may still fit). (A product, not gpus % nodes and gpus / nodes: no division
  // on the walk's most frequent path.)
  const JobRequest& job = *j.job;
  return job.nodes > 1 && job.gpus == static_cast<uint32_t>(job.nodes) * g;
}

bool Scheduler::PassesRejected(const VcQueues& q, size_t c, uint16_t g, FitClasses fit, uint32_t slot) {
  if (rejected_at_[c] == q.version) return true;
  if (!SurelyUnfit(pool_[slot], c, g, fit) || !policy_.post->Rejects(*this, slot)) return false;
  if (c >= 1 && c <= g && along_class_) rejected_at_[c] = q.version;  // single-node class
  return true;
}

void Scheduler::NoteRejected(VcQueues& q, uint32_t* rejected) {
  if (*rejected == kNoSlot) return;
  PluginStatus st = placer_->Place(pool_[*rejected], state_, nullptr, &scratch_);
  ORR_CHECK(!st.ok());
  st.plugin = placer_->name();
  q.last_block = st;
  *rejected = kNoSlot;
}

}  // namespace orrery

namespace orrery {

Time Scheduler::NextDecisionTimeSlow(Time last) {
  const Duration tick = policy_.tick;
  if (tick > 0) {
    if (pending_total_ == 0) return next_tick_ = kNoTime;  // not due: nothing to catch up
    if (next_tick_ == kNoTime || next_tick_ <= last) next_tick_ = CeilTo(last + 1, tick);
    return next_tick_;
  }
  if (!policy_.reschedule || pending_total_ == 0) return kNoTime;
  const Time wake = policy_.reschedule->NextWakeup();
  return wake != kNoTime && (last == kNoTime || wake > last) ? wake : kNoTime;
}

CycleRun Scheduler::RunPeriodicCycle(Time now, std::vector<Decision>* out) {
  CycleRun run{true, false};
  const Duration tick = policy_.tick;
  if (next_tick_ != kNoTime && next_tick_ < now) {  // a due tick between two calls: at its own time
    run.caught_up = next_tick_;
    RunTick(next_tick_, out);
  }
  if (next_tick_ == kNoTime || next_tick_ < now) next_tick_ = CeilTo(now, tick);
  run.at_tick = next_tick_ == now;
  if (run.at_tick)
    RunTick(now, out);
  else if (policy_.tick_and_events)
    Schedule(now, out);
  run.ran = run.at_tick || policy_.tick_and_events || run.caught_up != kNoTime;
  if (pending_total_ == 0) next_tick_ = kNoTime;  // the next tick is due only while jobs wait
  return run;
}

void Scheduler::RunTick(Time t, std::vector<Decision>* out) {
  MarkPendingVcsDirty();
  next_tick_ = t + policy_.tick;
  Schedule(t, out);
}

}  // namespace orrery
