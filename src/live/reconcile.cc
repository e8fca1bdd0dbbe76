// Observe and reconcile: what Slurm lists becomes each job's typed state (job_state.h) and
// the scheduler's snapshot. Slurm wins: the daemon's belief follows what Slurm reports.
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "live/daemon.h"
#include "live/slurm_cluster.h"
#include "live/live_policy.h"
#include "sched/plugins/placers.h"

namespace orrery::live {

namespace {

std::string NodeNames(const std::vector<NodeShare>& n) {
  std::string s;
  for (size_t i = 0; i < n.size(); ++i) s += (i ? "," : "") + n[i].node;
  return s;
}

bool SameNodes(const std::vector<NodeShare>& a, const std::vector<std::string>& b) {
  if (a.size() != b.size()) return false;
  std::vector<std::string> x;
  for (const auto& s : a) x.push_back(s.node);
  std::vector<std::string> y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

// Energy: which managed nodes are in the scheduler's cluster. Down/drained nodes are not;
// powered-down (~ % !) and powering-up (#) nodes are, as unpowered nodes (ClusterState power
// states, as in the simulator): placers never see them, the PowerPlugin sees them as
// powerable, admission counts their GPUs.
bool InModel(NodeAvail a) { return a != NodeAvail::kDown; }
constexpr Duration kPowerUpGrace = 10;

bool Placed(JobState s) { return s == JobState::kStarting || s == JobState::kRunning || s == JobState::kUnplaced; }

}  // namespace

// ---------------------------------------------------------------- nodes

Status Daemon::ObserveNodes(const std::vector<SlurmNode>& nodes, bool* changed) {
  // O(nodes) with no allocation in the steady state: update the known records in place;
  // the snapshot is rebuilt only when the set of schedulable nodes or their GPUs change.
  Time now = clock_->Now();
  *changed = false;
  size_t seen = 0;
  for (const SlurmNode& n : nodes) {
    if (VcOf(n.partition) < 0) continue;
    auto it = nodes_.find(n.name);
    if (it == nodes_.end()) {
      nodes_.emplace(n.name, n);
      *changed = true;
      ++seen;
      continue;
    }
    SlurmNode& old = it->second;
    if (old.partition != n.partition) continue;  // listed again for a second managed partition
    ++seen;
    if (!power_up_sent_.empty()) {
      // Energy: a POWER_UP we sent shows in sinfo ("#") only at Slurm's next power-thread
      // pass; until then (at most kPowerUpGrace s) keep the node as powering up.
      auto sent = power_up_sent_.find(n.name);
      if (sent != power_up_sent_.end()) {
        if (n.avail == NodeAvail::kPoweredDown && old.avail == NodeAvail::kPoweringUp && now - sent->second < kPowerUpGrace)
          continue;
        power_up_sent_.erase(sent);
      }
    }
    if (old.avail != n.avail) {
      Note(now, "node", fmt::format("{} {} -> {} ({})", n.name, NodeAvailName(old.avail), NodeAvailName(n.avail),
                                    n.state_raw));
      // The snapshot changes when a node becomes (un)schedulable or enters/leaves the model
      // (down nodes are outside it; powered-down and booting ones inside, unpowered).
      // powered-down <-> powering-up changes nothing the placers see.
      if (old.avail == NodeAvail::kUp || n.avail == NodeAvail::kUp || InModel(old.avail) != InModel(n.avail))
        *changed = true;
      if (old.avail == NodeAvail::kPoweringUp && n.avail == NodeAvail::kDown) {
        // Slurm marks a node DOWN when it misses ResumeTimeout after a POWER_UP.
        ++m_failed_resumes_;
        Note(now, "power", fmt::format("failed resume: {} went down while powering up ({})", n.name, n.state_raw));
      }
    }
    if (old.gpus != n.gpus) *changed = true;
    if (old.avail != n.avail || old.state_raw != n.state_raw || old.gpus != n.gpus) old = n;
  }
  if (seen != nodes_.size()) {  // nodes left the managed partitions
    std::set<std::string> present;
    for (const SlurmNode& n : nodes)
      if (VcOf(n.partition) >= 0) present.insert(n.name);
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      if (!present.count(it->first)) {
        Note(now, "node", it->first + " left the managed partitions");
        it = nodes_.erase(it);
        *changed = true;
      } else {
        ++it;
      }
    }
  }
  return Status::Ok();
}

Status Daemon::Rebuild(Time now) {
  // Detach every job from the old scheduler (its slots die with it).
  for (auto& [id, lj] : jobs_) {
    lj->slot = UINT32_MAX;
    if (lj->state == JobState::kRejected) lj->state = JobState::kQueued;
    if (lj->state == JobState::kUnplaced) lj->state = JobState::kRunning;
  }
  std::vector<const SlurmNode*> model;
  for (const auto& [name, n] : nodes_)
    if (n.avail == NodeAvail::kUp || (power_ && InModel(n.avail))) model.push_back(&n);
  SlurmCluster built = ClusterFromSinfo(opts_.partitions, std::move(model));
  ORR_ASSIGN_OR_RETURN(PolicyParts policy, MakeLivePolicy(opts_.policy, opts_.seed));
  ORR_ASSIGN_OR_RETURN(auto placer, MakePlacer(opts_.placer, opts_.seed));
  sched_.reset();
  cluster_ = std::make_unique<Cluster>(std::move(built.cluster));
  sched_ = std::make_unique<Scheduler>(*cluster_, false, false, std::move(policy), std::move(placer));
  node_index_ = std::move(built.index);
  // Energy: powered-down and booting nodes are in the cluster but unpowered (no free GPU
  // for placement), before any job is attached (a job Slurm runs there stays outside).
  if (power_)
    for (const Node& nd : cluster_->nodes)
      if (nodes_.at(nd.name).avail != NodeAvail::kUp) sched_->SetNodePowered(nd.id, false);
  slot_job_.clear();
  std::vector<uint32_t> ids;
  for (const auto& [id, lj] : jobs_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (uint32_t id : ids) Attach(*jobs_[id], now);
  need_rebuild_ = false;
  return Status::Ok();
}

// ---------------------------------------------------------------- the scheduler port

void Daemon::FillJob(LiveJob& lj, const SlurmJob& sj) {
  Job& j = lj.job;
  j.id = JobId(sj.id);
  j.submit = sj.submit == kNoTime ? clock_->Now() : sj.submit;
  Duration hint = DurationHint(sj.comment);
  j.walltime = sj.time_limit;
  j.duration = hint >= 0 ? hint : (sj.time_limit > 0 ? sj.time_limit : opts_.default_duration);
  j.gpus = sj.gpus_per_node * sj.num_nodes;
  j.gpu_milli = 1000;
  j.nodes = static_cast<uint16_t>(sj.num_nodes > 1 ? sj.num_nodes : 0);
  lj.partition = sj.partition;
  int vc = VcOf(sj.partition);
  j.vc = VcId(static_cast<uint16_t>(std::max(vc, 0)));
}

// Puts a job into the scheduler according to its state. Jobs running on nodes outside
// the model (down, powered off) are not attached: their GPUs are not in the snapshot.
void Daemon::Attach(LiveJob& lj, Time now) {
  if (!sched_ || lj.slot != UINT32_MAX) return;
  Allocation alloc;
  const bool active = lj.state == JobState::kStarting || lj.state == JobState::kRunning;
  if (active) {
    for (const NodeShare& s : lj.nodes) {
      auto it = node_index_.find(s.node);
      if (it == node_index_.end()) {
        lj.state = JobState::kUnplaced;
        return;
      }
      alloc.push_back(Slot{it->second, s.gpus, 1000, 0, 0, 0});
    }
    // Slurm wins: a job that runs (or was released) where the snapshot has no room (e.g.
    // Slurm started a job before the daemon could hold it, on GPUs a decision also took)
    // stays outside the snapshot until its GPUs are free there; no invariant is broken.
    for (const Slot& sl : alloc)
      if (sched_->cluster_state().free_gpus(sl.node) < sl.gpus) return;
  }
  // A queued job enters the policy's queue only once Slurm has shown it held: a start
  // decision updates its ReqNodeList, which on a job that Slurm has meanwhile started
  // would resize the running job. A held job cannot start behind our back.
  if (!active && (lj.state != JobState::kQueued || !lj.held)) return;
  auto slot = sched_->Submit(&lj.job, lj.job.vc, 0, lj.id, now);
  if (!slot.ok()) {
    if (active) {  // runs in Slurm although the policy would never place it: keep it outside
      lj.state = JobState::kUnplaced;
      return;
    }
    lj.state = JobState::kRejected;
    lj.reason = slot.error().message;
    Note(now, "reject", fmt::format("job {}: {} (kept held; retried when nodes change)", lj.id, lj.reason));
    return;
  }
  lj.slot = *slot;
  if (slot_job_.size() <= lj.slot) slot_job_.resize(lj.slot + 1, 0);
  slot_job_[lj.slot] = lj.id;
  if (active) sched_->Adopt(lj.slot, std::move(alloc), lj.started == kNoTime ? now : lj.started);
}

void Daemon::Detach(LiveJob& lj, Time now) {
  if (!sched_ || lj.slot == UINT32_MAX) return;
  if (!sched_->view(lj.slot).running) sched_->Adopt(lj.slot, Allocation{}, now);  // withdraw from the queue
  sched_->Finish(lj.slot, now);
  sched_->Release(lj.slot);
  lj.slot = UINT32_MAX;
}

// The job left Slurm's queue (ended, or purged): out of the scheduler.
void Daemon::Leave(LiveJob& lj, const SlurmJob* sj, Time now) {
  (void)sj;
  Detach(lj, now);
  ++m_completed_;
}

// ---------------------------------------------------------------- jobs

Seen Daemon::Classify(const LiveJob& lj, const SlurmJob& sj) const {
  if (IsTerminal(sj.state)) return Seen::kEnded;
  if (sj.state == SlurmJobState::kRunning)
    return Placed(lj.state) && SameNodes(lj.nodes, sj.nodes) ? Seen::kRunningAsKnown : Seen::kRunningElsewhere;
  if (sj.held) return Seen::kHeld;
  return WaitsForUnavailableNodes(sj) ? Seen::kNodesGone : Seen::kReleased;
}

Status Daemon::Reconcile(const SlurmJob& sj, Time now) {
  if (VcOf(sj.partition) < 0) return Status::Ok();
  auto it = jobs_.find(sj.id);
  if (it == jobs_.end()) return NewJob(sj, now);
  LiveJob& lj = *it->second;
  lj.held = sj.held;
  const bool open = unapplied_.count(StartKey(lj.id, lj.gen)) > 0;
  const Transition tr = Next(lj.state, Classify(lj, sj), open);
  ORR_RETURN_IF_ERROR(Execute(lj, tr, sj, now));
  if (tr.action == Action::kLeave) {
    jobs_.erase(it);
    return Status::Ok();
  }
  if (!need_rebuild_) Attach(lj, now);  // idempotent: (re)enters the snapshot when it can
  return Status::Ok();
}

Status Daemon::Execute(LiveJob& lj, Transition tr, const SlurmJob& sj, Time now) {
  switch (tr.action) {
    case Action::kNone:
    case Action::kEnqueue:  // Attach follows
      break;
    case Action::kLeave:
      Leave(lj, &sj, now);
      return SettleUnapplied(sj, now);
    case Action::kStarted:
      lj.started = sj.start == kNoTime ? now : sj.start;
      break;
    case Action::kAdopt:
      ++m_adopted_;
      Note(now, "adopt", fmt::format("job {} started in Slurm on {} without an Orrery decision", lj.id,
                                     fmt::format("{}", fmt::join(sj.nodes, ","))));
      TakeSlurmPlacement(lj, sj, now);
      break;
    case Action::kMove:
      TakeSlurmPlacement(lj, sj, now);
      break;
    case Action::kBackToQueue:
      ++m_slurm_requeued_;
      ORR_RETURN_IF_ERROR(NewGeneration(lj, now, "Slurm requeued it (" + sj.reason + ")"));
      if (!sj.held) return HoldInSlurm(lj, now);
      break;
    case Action::kTakeBack: {
      if (!sj.held) {
        Status hold = slurm_->Hold(sj.id);
        if (!hold.ok()) {  // still released: tried again next cycle, the job stays starting
          Note(now, "error", fmt::format("cannot hold job {}: {}", sj.id, hold.error().message));
          return Status::Ok();
        }
      }
      const std::string why = sj.held ? "held again after its start decision"
                                      : "its nodes became unavailable before it started (" + sj.reason + ")";
      ORR_RETURN_IF_ERROR(Supersede(lj.id, lj.gen, now, sj.held ? "job held again in Slurm" : "Slurm: " + sj.reason));
      return NewGeneration(lj, now, why);
    }
    case Action::kHoldAgain:  // released by someone else: out of the queue until held again
      Detach(lj, now);
      lj.state = tr.next;
      return HoldInSlurm(lj, now);
  }
  lj.state = tr.next;
  return Status::Ok();
}

void Daemon::TakeSlurmPlacement(LiveJob& lj, const SlurmJob& sj, Time now) {
  Detach(lj, now);
  lj.state = JobState::kRunning;
  lj.started = sj.start == kNoTime ? now : sj.start;
  lj.nodes.clear();
  for (const auto& n : sj.nodes) lj.nodes.push_back(NodeShare{n, static_cast<uint16_t>(sj.gpus_per_node)});
}

// Holds a pending job the daemon found released (a hold that fails is reported and tried
// again when the next listing still shows the job released).
Status Daemon::HoldInSlurm(LiveJob& lj, Time now) {
  if (!opts_.hold_unheld) return Status::Ok();
  Status st = slurm_->Hold(lj.id);
  if (!st.ok()) Note(now, "error", fmt::format("cannot hold job {}: {}", lj.id, st.error().message));
  return Status::Ok();
}

// The job went back to pending in Slurm (requeued by Slurm, or its start taken back): a
// new generation, queued (entering the policy's queue once held).
Status Daemon::NewGeneration(LiveJob& lj, Time now, const std::string& why) {
  Detach(lj, now);
  ++lj.gen;
  gens_[lj.id] = lj.gen;
  ORR_RETURN_IF_ERROR(journal_->SetGen(lj.id, lj.gen));
  lj.state = JobState::kQueued;
  lj.nodes.clear();
  lj.started = kNoTime;
  Note(now, "requeue", fmt::format("job {} back in the queue (generation {}): {}", lj.id, lj.gen, why));
  return Status::Ok();
}

Status Daemon::Supersede(uint32_t job, uint32_t gen, Time now, const std::string& why) {
  const std::string key = StartKey(job, gen);
  Status st = journal_->Mark(key, DecisionState::kSuperseded, now, why);
  if (!st.ok() && st.error().code != ErrorCode::kNotFound) return st;
  unapplied_.erase(key);
  return Status::Ok();
}

// A job ended in Slurm: its decisions not yet confirmed are settled from what Slurm
// reports: applied when it ran where the decision put it, else superseded.
Status Daemon::SettleUnapplied(const SlurmJob& sj, Time now) {
  for (auto u = unapplied_.begin(); u != unapplied_.end();) {
    if (u->second.job != sj.id) {
      ++u;
      continue;
    }
    const bool ran_there =
        u->second.kind == DecisionKind::kStart && sj.start != kNoTime && SameNodes(u->second.nodes, sj.nodes);
    const DecisionState state = ran_there ? DecisionState::kApplied : DecisionState::kSuperseded;
    ORR_RETURN_IF_ERROR(journal_->Mark(u->first, state, now,
                                       std::string(ran_there ? "confirmed: Slurm ran it there, " : "job ended in Slurm: ") +
                                           sj.state_raw));
    if (ran_there) {
      u->second.state = state;
      Remember(u->second);
    }
    u = unapplied_.erase(u);
  }
  return Status::Ok();
}

// First sight of a job (new, or after a restart): its state from Slurm and the journal.
Status Daemon::NewJob(const SlurmJob& sj, Time now) {
  if (IsTerminal(sj.state)) return SettleUnapplied(sj, now);  // ended before we saw it
  auto owned = std::make_unique<LiveJob>();
  LiveJob& lj = *owned;
  lj.id = sj.id;
  FillJob(lj, sj);
  auto g = gens_.find(sj.id);
  lj.gen = g == gens_.end() ? 0 : g->second;
  lj.held = sj.held;
  jobs_[sj.id] = std::move(owned);
  ORR_RETURN_IF_ERROR(ResumeDecision(lj, sj, now));
  if (lj.state == JobState::kUnheld) ORR_RETURN_IF_ERROR(HoldInSlurm(lj, now));
  if (!need_rebuild_) Attach(lj, now);
  return Status::Ok();
}

// The state of a job seen for the first time, from what Slurm shows and the start decision
// of its generation (planned or applied before a restart). Decisions are made only for
// jobs seen held, and the release is the last step of applying one: released means applied
// (confirm it); still held means not applied (the apply path applies it again, on a job that
// cannot have started meanwhile); held after it was applied means someone held it again.
Status Daemon::ResumeDecision(LiveJob& lj, const SlurmJob& sj, Time now) {
  const std::string key = StartKey(sj.id, lj.gen);
  auto un = unapplied_.find(key);
  const bool planned = un != unapplied_.end();
  Result<JournalDecision> known = planned ? Result<JournalDecision>(un->second) : journal_->Get(key);
  if (!known.ok() && known.error().code != ErrorCode::kNotFound) return known.error();
  if (sj.state == SlurmJobState::kRunning) {
    lj.state = JobState::kRunning;
    lj.started = sj.start == kNoTime ? now : sj.start;
    for (const auto& n : sj.nodes) lj.nodes.push_back(NodeShare{n, static_cast<uint16_t>(sj.gpus_per_node)});
    if (planned) {
      ORR_RETURN_IF_ERROR(journal_->Mark(key, DecisionState::kApplied, now,
                                         "confirmed after restart: Slurm runs it on " + NodeNames(lj.nodes)));
      unapplied_.erase(un);
    } else if (!known.ok()) {
      ++m_adopted_;
      Note(now, "adopt", fmt::format("job {} runs on {} without an Orrery decision (adopted)", sj.id, NodeNames(lj.nodes)));
    }
    return Status::Ok();
  }
  const bool live_decision =
      known.ok() && known->state != DecisionState::kSuperseded && known->state != DecisionState::kFailed;
  if (!live_decision) {
    lj.state = sj.held ? JobState::kQueued : JobState::kUnheld;
    return Status::Ok();
  }
  if (sj.held && known->state == DecisionState::kApplied) {  // Slurm wins: it is queued anew
    ORR_RETURN_IF_ERROR(Supersede(sj.id, lj.gen, now, "job held again in Slurm"));
    return NewGeneration(lj, now, "held again after its start decision");
  }
  lj.state = JobState::kStarting;
  lj.nodes = known->nodes;
  if (!sj.held && planned) {
    ORR_RETURN_IF_ERROR(journal_->Mark(key, DecisionState::kApplied, now, "confirmed after restart: Slurm shows it released"));
    un->second.state = DecisionState::kApplied;
    Remember(un->second);
    unapplied_.erase(un);
  }
  return Status::Ok();
}

}  // namespace orrery::live
