// Observe and reconcile: what Slurm lists of the nodes becomes the scheduler's cluster, and the
// scheduler port through which each job's state (the Reconciler's, reconciler.h) reaches the
// snapshot. Slurm wins: the daemon's belief follows what Slurm reports.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "live/daemon.h"
#include "live/slurm_cluster.h"
#include "live/live_policy.h"
#include "sched/framework/internal/signal_report.h"
#include "sched/plugins/placers.h"

namespace orrery::live {

// ---------------------------------------------------------------- nodes

// O(rows listed) with the delta listings of NodeChanges: only the new, changed and gone rows
// reach the node records, plus the nodes the daemon changed itself since Slurm last listed
// them. SyncNodes follows only when a node joined, left or changed whether it is placeable.
void Daemon::ObserveNodes(const NodeListing& listing, Time now) {
  for (const SlurmNode& n : listing.nodes) ObserveNode(n, now);
  if (listing.full) {
    DropUnlisted(listing, now);
  } else {
    for (const NodeRow& row : listing.gone) NodeGone(row, now);
    DropUnlistedInSlice(listing, now);
  }
  ReobserveMirrored(now);
}

// One listed row. A node is modelled in the first managed partition it was listed in; its
// rows for other partitions are ignored.
void Daemon::ObserveNode(const SlurmNode& n, Time now) {
  if (VcOf(n.partition) < 0) return;
  auto [it, fresh] = listed_.try_emplace(n.name, n);
  if (fresh) CountListedNode(n.name, 1);
  if (!fresh) {
    if (it->second.partition != n.partition) return;  // listed again for a second managed partition
    it->second = n;
  }
  Believe(n, now);
}

namespace {

bool SameState(const SlurmNode& a, const SlurmNode& b) {
  return a.avail == b.avail && a.state_raw == b.state_raw && a.gpus == b.gpus;
}

}  // namespace

// What Slurm lists for a node becomes the daemon's view of it (Slurm wins): events for a
// change of availability, SyncNodes for a change of placeability, a rebuild for a changed GPU
// count (also of a node that comes back with another count than it left with).
void Daemon::Believe(const SlurmNode& n, Time now) {
  auto it = nodes_.find(n.name);
  if (it == nodes_.end()) {
    auto id = node_index_.find(n.name);
    if (id != node_index_.end() && cluster_ && cluster_->nodes[id->second.v].gpus != n.gpus) {
      Note(now, "node", fmt::format("{} came back with {} GPUs instead of {}: the scheduler is rebuilt", n.name, n.gpus,
                                    cluster_->nodes[id->second.v].gpus));
      need_rebuild_ = true;
    }
    nodes_.emplace(n.name, n);
    nodes_dirty_ = true;
    return;
  }
  SlurmNode& old = it->second;
  // Energy: a POWER_UP sent shows in sinfo ("#") only at Slurm's next power-thread pass;
  // until then the node stays powering up.
  if (power_.StillBooting(n, old, now)) return;
  if (old.avail != n.avail) {
    Note(now, "node", fmt::format("{} {} -> {} ({})", n.name, NodeAvailName(old.avail), NodeAvailName(n.avail),
                                  n.state_raw));
    // Placeable exactly while up: powered-down <-> powering-up changes nothing placers see.
    if (old.avail == NodeAvail::kUp || n.avail == NodeAvail::kUp) nodes_dirty_ = true;
    if (old.avail == NodeAvail::kPoweringUp && n.avail == NodeAvail::kDown) power_.FailedResume(n, now);
  }
  if (old.gpus != n.gpus) {
    Note(now, "node", fmt::format("{} changed from {} to {} GPUs: the scheduler is rebuilt", n.name, old.gpus, n.gpus));
    need_rebuild_ = true;
  }
  if (!SameState(old, n)) old = n;
}

// A managed node's row is no longer listed: the node left the managed partitions (its
// scheduler node stays, out of placement, so that node ids are stable; SyncNodes).
void Daemon::NodeGone(const NodeRow& row, Time now) {
  auto it = listed_.find(row.name);
  if (it == listed_.end() || it->second.partition != row.partition) return;  // not the row the node is modelled by
  listed_.erase(it);
  CountListedNode(row.name, -1);
  nodes_.erase(row.name);
  mirrored_.erase(row.name);
  power_.NodeGone(row.name);
  Note(now, "node", row.name + " left the managed partitions");
  nodes_dirty_ = true;
}

// A full listing: the modelled nodes whose row it lacks are gone (ascending names).
void Daemon::DropUnlisted(const NodeListing& listing, Time now) {
  std::set<std::pair<std::string_view, std::string_view>> rows;
  for (const SlurmNode& n : listing.nodes) rows.emplace(n.name, n.partition);
  std::vector<NodeRow> gone;
  for (const auto& [name, n] : listed_)
    if (!rows.count({n.name, n.partition})) gone.push_back(NodeRow{n.name, n.partition});
  std::sort(gone.begin(), gone.end(), [](const NodeRow& a, const NodeRow& b) { return a.name < b.name; });
  for (const NodeRow& row : gone) NodeGone(row, now);
}

// The node's record for a change the daemon made that Slurm shows only at a later listing
// (a drain, a power action); nullptr when it is not a managed node. Until Slurm's listing
// agrees, the node is compared with what Slurm listed last at every cycle, as a full listing
// would compare it: Slurm wins.
SlurmNode* Daemon::MirrorLocally(const std::string& node) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return nullptr;
  mirrored_.insert(node);
  return &it->second;
}

const SlurmNode* Daemon::NodeOf(const std::string& node) const {
  auto it = nodes_.find(node);
  return it == nodes_.end() ? nullptr : &it->second;
}

void Daemon::ShowLocally(const std::string& node, NodeAvail avail, const char* state_raw) {
  SlurmNode* n = MirrorLocally(node);
  if (n == nullptr) return;
  n->avail = avail;
  n->state_raw = state_raw;
  nodes_dirty_ = true;
}

void Daemon::ReobserveMirrored(Time now) {
  for (auto it = mirrored_.begin(); it != mirrored_.end();) {
    auto listed = listed_.find(*it);
    if (listed != listed_.end()) Believe(listed->second, now);
    const bool agree = listed == listed_.end() || SameState(nodes_.at(*it), listed->second);
    it = agree ? mirrored_.erase(it) : std::next(it);
  }
}

// The scheduler and its cluster from every managed node Slurm lists (ascending names:
// deterministic node ids). Done once; afterwards nodes join (AddNode) and leave placement
// (SetNodePowered) without a rebuild, so the policy's state (attained service, learned
// estimates) is kept. Only a node whose GPU count changes forces a rebuild.
Status Daemon::Rebuild(Time now) {
  for (auto& [id, lj] : book_) {  // their slots die with the old scheduler
    lj->slot = UINT32_MAX;
    if (lj->state() == JobState::kRejected || lj->state() == JobState::kUnplaced) book_.Move(*lj, Step::kRetry, now);
  }
  std::vector<const SlurmNode*> model;
  for (const auto& [name, n] : nodes_) model.push_back(&n);
  SlurmCluster built = ClusterFromSinfo(opts_.partitions, std::move(model));
  auto cluster = std::make_unique<Cluster>(std::move(built.cluster));
  SetGpuType(cluster.get(), opts_.gpu_type);
  const LiveShape shape{cluster.get(), [this](const JobRequest& job) { return ShapeInfoOf(job); }};
  ORR_ASSIGN_OR_RETURN(PolicyParts policy, MakeLivePolicy(opts_.policy, opts_.seed, signals_.LaunchSchemas(), shape));
  ORR_ASSIGN_OR_RETURN(std::unique_ptr<PlacePlugin> placer, MakePlacer(opts_.placer, opts_.seed));
  if (policy.placer) placer = policy.placer(std::move(placer));  // the policy's own place()
  // The policy's estimator when it is the advisor's (owned by the scheduler below).
  signals_.SetAdvisor(dynamic_cast<semantic::SemanticEstimator*>(policy.estimator.get()));
  sched_.reset();
  cluster_ = std::move(cluster);
  sched_ = std::make_unique<Scheduler>(*cluster_, false, false, std::move(policy), std::move(placer));
  node_index_ = std::move(built.index);
  // Nodes that are not schedulable now are in the cluster but unpowered (no free GPU for
  // placement), before any job is attached (a job Slurm runs there stays outside).
  for (const Node& nd : cluster_->nodes)
    if (nodes_.at(nd.name).avail != NodeAvail::kUp) sched_->SetNodePowered(nd.id, false);
  book_.ClearSlots();
  for (uint32_t id : book_.SortedIds()) Attach(*book_.Find(id), now);
  need_rebuild_ = false;
  nodes_dirty_ = false;
  return Status::Ok();
}

// Brings the scheduler's cluster in line with the nodes Slurm lists: new nodes join,
// a node is placeable exactly while Slurm shows it up (down, drained, powered-down, booting
// and departed nodes are unpowered; one that still holds work in the snapshot is drained
// there at once, so that its free GPUs are offered to no job, and unpowered once its jobs are
// gone). Rejected and unplaced jobs are retried when the placeable set grew.
Status Daemon::SyncNodes(Time now) {
  if (!nodes_dirty_) return Status::Ok();
  nodes_dirty_ = false;
  bool grew = false;
  std::vector<const SlurmNode*> joined;
  for (const auto& [name, n] : nodes_)
    if (!node_index_.count(name)) joined.push_back(&n);
  std::sort(joined.begin(), joined.end(), [](const SlurmNode* a, const SlurmNode* b) { return a->name < b->name; });
  for (const SlurmNode* np : joined) {  // ascending names: deterministic node ids
    const SlurmNode& n = *np;
    const std::string& name = n.name;
    Node nd;
    nd.id = NodeId(static_cast<uint32_t>(cluster_->nodes.size()));
    nd.vc = VcId(static_cast<uint16_t>(VcOf(n.partition)));
    nd.gpus = n.gpus;
    nd.name = name;
    if (cluster_->gpu_types.size() > 0) nd.gpu_type = GpuTypeId(0);  // [policy] gpu_type (SetGpuType)
    ORR_RETURN_IF_ERROR(sched_->AddNode(nd));
    cluster_->vcs[nd.vc.v].nodes.push_back(nd.id);
    cluster_->vcs[nd.vc.v].gpus += nd.gpus;
    cluster_->nodes.push_back(nd);
    node_index_.emplace(name, nd.id);
    Note(now, "node", fmt::format("{} joined the cluster ({} GPUs)", name, nd.gpus));
    grew = true;
  }
  for (const Node& nd : cluster_->nodes) {
    auto it = nodes_.find(nd.name);
    grew |= SetPlaceable(nd, it != nodes_.end() && it->second.avail == NodeAvail::kUp);
  }
  if (grew) RetryOutsiders(now);
  return Status::Ok();
}

// One scheduler node placeable (`want`) or not; true when it became placeable. The daemon is
// the only user of the scheduler's drain in live mode: a drained node is one on its way out.
bool Daemon::SetPlaceable(const Node& nd, bool want) {
  const ClusterState& cs = sched_->cluster_state();
  if (want) {
    const bool was = cs.powered(nd.id) && !cs.drained(nd.id);
    if (cs.drained(nd.id)) sched_->SetNodeDrained(nd.id, false);
    if (!cs.powered(nd.id)) sched_->SetNodePowered(nd.id, true);
    return !was;
  }
  if (!cs.powered(nd.id)) return false;
  if (cs.free_gpus(nd.id) == nd.gpus) {
    if (cs.drained(nd.id)) sched_->SetNodeDrained(nd.id, false);
    sched_->SetNodePowered(nd.id, false);
  } else {
    if (!cs.drained(nd.id)) sched_->SetNodeDrained(nd.id, true);  // its free GPUs: out of placement now
    nodes_dirty_ = true;  // unpowered once its work is gone
  }
  return false;
}

void Daemon::RetryOutsiders(Time now) {
  for (auto& [id, lj] : book_) {
    if (lj->slot != UINT32_MAX) continue;
    if (lj->state() == JobState::kRejected || lj->state() == JobState::kUnplaced) book_.Move(*lj, Step::kRetry, now);
    Attach(*lj, now);
  }
}

// ---------------------------------------------------------------- the scheduler port

void Daemon::FillJob(LiveJob& lj, const SlurmJob& sj) {
  Job& j = lj.job;
  j.id = JobId(sj.id);
  j.submit = sj.submit == kNoTime ? clock_->Now() : sj.submit;
  const Duration hint = DurationHint(sj.comment);
  lj.hint = hint;
  j.walltime = sj.time_limit;
  lj.declared = hint >= 0 ? hint : (sj.time_limit > 0 ? sj.time_limit : opts_.default_duration);
  j.gpus = sj.gpus_per_node * sj.num_nodes;
  j.gpu_milli = 1000;
  j.nodes = static_cast<uint16_t>(sj.num_nodes > 1 ? sj.num_nodes : 0);
  lj.partition = sj.partition;
  lj.listed_nodes = sj.num_nodes;
  lj.listed_gpus_per_node = sj.gpus_per_node;
  lj.heartbeat = HeartbeatPath(sj.comment, sj.id);
  if (!lj.heartbeat.empty()) recoverer_.Watch(sj.id);
  lj.hang_after = HangAfter(sj.comment);
  int vc = VcOf(sj.partition);
  j.vc = VcId(static_cast<uint16_t>(std::max(vc, 0)));
}

// Where Slurm has an active job, as the snapshot's allocation. kOutside: a node is not
// placeable (down, powered off, departed); kNoRoom: the snapshot has no room there now.
Daemon::Where Daemon::AllocFor(const LiveJob& lj, Allocation* alloc) const {
  alloc->clear();
  const ClusterState& cs = sched_->cluster_state();
  for (const NodeShare& s : lj.nodes) {
    auto it = node_index_.find(s.node);
    if (it == node_index_.end() || !cs.powered(it->second)) return Where::kOutside;
    alloc->push_back(Slot{it->second, s.gpus, 1000, 0, 0, 0});
  }
  // Slurm wins: a job that runs (or was released) where the snapshot has no room (e.g.
  // Slurm started a job before the daemon could hold it, on GPUs a decision also took)
  // stays outside the snapshot until its GPUs are free there; no invariant is broken.
  for (const Slot& sl : *alloc)
    if (cs.free_gpus(sl.node) < sl.gpus) return Where::kNoRoom;
  return Where::kFits;
}

// Puts a job into the scheduler according to its state (idempotent).
void Daemon::Attach(LiveJob& lj, Time now) {
  if (!sched_ || lj.slot != UINT32_MAX) return;
  Allocation alloc;
  const bool active = lj.state() == JobState::kStarting || lj.state() == JobState::kRunning;
  if (active) {
    switch (AllocFor(lj, &alloc)) {
      case Where::kOutside:
        book_.Move(lj, Step::kOutside, now);
        return;
      case Where::kNoRoom:
        return;
      case Where::kFits:
        break;
    }
  }
  // A queued job enters the policy's queue only once Slurm has shown it held: a start
  // decision updates its ReqNodeList, which on a job that Slurm has meanwhile started
  // would resize the running job. A held job cannot start behind our back.
  if (!active && (lj.state() != JobState::kQueued || !lj.held)) return;
  auto slot = sched_->Submit(&lj.job, lj.job.vc, 0, lj.id, now);
  if (!slot.ok()) {
    if (active) {  // runs in Slurm although the policy would never place it: keep it outside
      book_.Move(lj, Step::kOutside, now);
      return;
    }
    book_.Move(lj, Step::kRefuse, now);
    lj.reason = slot.error().message;
    Note(now, "reject", fmt::format("job {}: {} (kept held; retried when nodes change)", lj.id, lj.reason));
    return;
  }
  book_.Bind(lj, *slot);
  // What the job and Slurm declare: its comment's duration hint overrides the policy's
  // estimate; without one, a job the policy has no estimate for is believed to run its time
  // limit, else the configured default (LiveJob::declared, FillJob).
  if (lj.hint >= 0 || sched_->view(lj.slot).estimate < 0)
    sched_->UpdateEstimate(lj.slot, now, lj.declared, EstimateSource::kReported);
  if (active) sched_->Adopt(lj.slot, std::move(alloc), lj.started == kNoTime ? now : lj.started);
}

// Out of the scheduler without teaching anything (cancelled, released by someone else,
// purged from Slurm's listing, moved by Slurm).
void Daemon::Withdraw(LiveJob& lj, Time now) {
  if (!sched_ || lj.slot == UINT32_MAX) return;
  sched_->Withdraw(lj.slot, now);
  sched_->Release(lj.slot);
  lj.slot = UINT32_MAX;
}

// The job left Slurm's queue: out of the scheduler by how it ended. Only a job Slurm
// reports completed teaches the estimators; one that vanished from the listing (purged
// before the daemon saw its end) is withdrawn.
void Daemon::Leave(LiveJob& lj, const SlurmJob* sj, Time now) {
  ++m_completed_;
  if (!sched_ || lj.slot == UINT32_MAX) return;
  const uint32_t slot = lj.slot;
  const bool running = sched_->view(slot).running;
  const SlurmJobState end = sj && running ? sj->state : SlurmJobState::kCancelled;
  switch (end) {
    case SlurmJobState::kFinished:
      sched_->Finish(slot, now);
      break;
    case SlurmJobState::kFailed:  // (a job that ran is recovered instead: recoverer.h)
      sched_->Fail(slot, now, FailureKindOf(sj->failure), /*restartable=*/false);
      break;
    case SlurmJobState::kCancelled:
    case SlurmJobState::kPending:  // (not an end: never passed here)
    case SlurmJobState::kRunning:
      sched_->Withdraw(slot, now);
      break;
  }
  sched_->Release(slot);
  lj.slot = UINT32_MAX;
}

// A running (or starting) job is pending again in Slurm: back to the policy's queue with its
// attained service. It stays there only while the daemon can keep it held.
void Daemon::BackToQueue(LiveJob& lj, bool held, Time now) {
  if (!sched_ || lj.slot == UINT32_MAX) return;
  if (sched_->view(lj.slot).running) sched_->Requeue(lj.slot, now, EndCause::kRequeued);
  if (!held) Withdraw(lj, now);  // re-enters when Slurm shows it held
}

// ---------------------------------------------------------------- jobs

// A row of a managed partition goes to the Reconciler; the others are not the daemon's.
Status Daemon::Reconcile(const SlurmJob& sj, Time now) {
  if (VcOf(sj.partition) < 0) return Status::Ok();
  return reconciler_.Reconcile(sj, now);
}

// ---------------------------------------------------------------- the reconciler's host

bool Daemon::PendingInSnapshot(const LiveJob& lj) const {
  return sched_ && lj.slot != kNoSlot && !sched_->view(lj.slot).running;
}

// Slurm runs the job on lj.nodes: a job pending in the snapshot starts there (it keeps its
// slot) when it fits; otherwise it is taken out and attached again where Slurm runs it.
void Daemon::RunsWhereSlurmRuns(LiveJob& lj, bool was_pending, Time now) {
  Allocation alloc;
  if (was_pending && AllocFor(lj, &alloc) == Where::kFits) {
    sched_->Adopt(lj.slot, std::move(alloc), lj.started);
    return;
  }
  Withdraw(lj, now);  // Attach follows
}

LiveJob& Daemon::AddRecord(const SlurmJob& sj) {
  auto owned = std::make_unique<LiveJob>();
  LiveJob& lj = *owned;
  lj.id = sj.id;
  FillJob(lj, sj);
  AddJob(std::move(owned));
  return lj;
}

// Before the policy sees a new job: its launch file for the advisor (the estimator), its
// shape line for the shape plugin.
void Daemon::Introduce(LiveJob& lj, Time now) {
  signals_.Introduce(lj.id);
  ReadFlex(lj, now);
}

Status Daemon::MakeEligible(const LiveJob& lj) { return applier_.MakeEligible(lj); }

// ---------------------------------------------------------------- the signals loop's scheduler port

bool Daemon::RunsInSnapshot(const LiveJob& lj) const { return sched_ && sched_->view(lj.slot).running; }

bool Daemon::EstimatedByEstimator(const LiveJob& lj) const {
  return sched_ && sched_->view(lj.slot).est_source == EstimateSource::kEstimator;
}

void Daemon::UpdateEstimate(const LiveJob& lj, Duration estimate, Time now) {
  sched_->UpdateEstimate(lj.slot, now, estimate, EstimateSource::kEstimator);
}

void Daemon::Report(const LiveSignals::Report& r, Time now) { ReportReading(*sched_, r.slot, now, r.reading, r.at); }

// ---------------------------------------------------------------- the power loop's scheduler port

void Daemon::AllocatedNodes(std::vector<std::string>* out) const {
  if (!sched_) return;
  for (const Node& n : cluster_->nodes)
    if (sched_->cluster_state().powered(n.id) && sched_->cluster_state().free_gpus(n.id) != n.gpus)
      out->push_back(n.name);
}

uint64_t Daemon::VcFreeGpus(VcId vc) const { return sched_->cluster_state().vc_free_gpus(vc); }

void Daemon::PoweringDown(const std::string& node) {
  auto id = node_index_.find(node);
  if (!sched_ || id == node_index_.end()) return;
  const ClusterState& cs = sched_->cluster_state();
  if (cs.powered(id->second) && cs.free_gpus(id->second) == cluster_->nodes[id->second.v].gpus)
    sched_->SetNodePowered(id->second, false);
  else
    nodes_dirty_ = true;  // (an operator's power-down of a busy node) out of placement once idle
}

// ---------------------------------------------------------------- the recoverer's scheduler port

Time Daemon::ProgressAt(const LiveJob& lj) const {
  if (!sched_ || lj.slot == UINT32_MAX) return kNoTime;
  return sched_->view(lj.slot).progress.at;
}

// The core hears of the failure through its lifecycle verb, with the diagnosed kind. A job
// given up leaves now. A job that is requeued keeps its GPUs in the snapshot until Slurm
// lists it pending and held (a requeued running job is COMPLETING meanwhile, on its nodes):
// then Fail(kind, restartable) puts it back in the policy's queue with its attained service,
// attempts and failures (RequeuedAfterRecovery), so the policy never starts a job whose
// requeue Slurm has not finished.
void Daemon::GiveUpInCore(LiveJob& lj, FailureKind kind, Time now) {
  if (!sched_ || lj.slot == UINT32_MAX) return;
  if (sched_->view(lj.slot).running) {
    sched_->Fail(lj.slot, now, kind, /*restartable=*/false);
    sched_->Release(lj.slot);
    lj.slot = UINT32_MAX;
  } else {
    Withdraw(lj, now);
  }
}

// Slurm shows the recovery's requeue done (pending, held): the failed attempt ends in the
// core, the job waits again.
void Daemon::RequeuedAfterRecovery(LiveJob& lj, Time now) {
  if (sched_ && lj.slot != UINT32_MAX && sched_->view(lj.slot).running)
    sched_->Fail(lj.slot, now, lj.fail_kind, /*restartable=*/true);
  lj.nodes.clear();
  lj.started = kNoTime;
}

// ---------------------------------------------------------------- shaping (flex_shape.h)

// A job enters the shape plugin's view only through its #ORRERY line; a script that cannot be
// read or whose line is wrong leaves the job at its request, with the reason as an event.
void Daemon::ReadFlex(LiveJob& lj, Time now) {
  if (!sched_ || !sched_->policy().shape) return;
  Result<std::string> script = slurm_->BatchScript(lj.id);
  if (!script.ok()) {
    if (script.error().code != ErrorCode::kNotFound)
      Note(now, "shape", fmt::format("job {}: batch script not read ({}): it keeps its request", lj.id,
                                     script.error().message));
    return;
  }
  Result<std::optional<FlexSpec>> flex = ParseFlexLine(*script, fmt::format("job {}'s batch script", lj.id));
  if (!flex.ok()) {
    ++m_flex_errors_;
    Note(now, "shape", flex.error().message + " (the job keeps its request)");
    return;
  }
  lj.flex = *flex;
  if (lj.flex)
    Note(now, "shape", fmt::format("job {} opted in to shaping: {}-{} GPUs", lj.id, lj.flex->min_gpus, lj.flex->max_gpus));
}

ShapeInfo Daemon::ShapeInfoOf(const JobRequest& job) const {
  ShapeInfo info;
  const LiveJob* lj = book_.Find(job.id.v);
  if (!lj || !lj->flex) return info;
  const FlexSpec& f = *lj->flex;
  info.model = &f.model;
  info.min_gpus = f.min_gpus;
  info.max_gpus = f.max_gpus;
  return info;
}

}  // namespace orrery::live
