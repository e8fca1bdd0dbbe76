// The job reconciler (reconciler.h): what Slurm lists becomes each job's typed state.
#include "live/reconciler.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

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

// On nodes in Slurm as the daemon believes (a hung job being recovered still runs there).
bool Placed(JobState s) {
  return s == JobState::kStarting || s == JobState::kRunning || s == JobState::kUnplaced || s == JobState::kRecovering;
}

void TakeNodes(LiveJob& lj, const SlurmJob& sj) {
  for (const auto& n : sj.nodes) lj.nodes.push_back(NodeShare{n, static_cast<uint16_t>(sj.gpus_per_node)});
}

}  // namespace

std::string StartKey(uint32_t job, uint32_t gen) { return fmt::format("start/{}/{}", job, gen); }

Seen Reconciler::Classify(const LiveJob& lj, const SlurmJob& sj) {
  if (lj.stopping) return Seen::kStopping;  // (only while Slurm lists it completing: Reconcile)
  if (IsTerminal(sj.state)) return sj.state == SlurmJobState::kFailed ? Seen::kFailed : Seen::kEnded;
  if (sj.state == SlurmJobState::kRunning)
    return Placed(lj.state()) && SameNodes(lj.nodes, sj.nodes) ? Seen::kRunningAsKnown : Seen::kRunningElsewhere;
  if (sj.held) return Seen::kHeld;
  if (WaitsForUnavailableNodes(sj)) return Seen::kNodesGone;
  return WaitsForBeginTime(sj) ? Seen::kDelayed : Seen::kReleased;
}

Status Reconciler::Reconcile(const SlurmJob& sj, Time now) {
  LiveJob* found = book_->Find(sj.id);
  if (!found) return NewJob(sj, now);
  LiveJob& lj = *found;
  lj.held = sj.held;
  lj.listed_nodes = sj.num_nodes;
  lj.listed_gpus_per_node = sj.gpus_per_node;
  lj.stopping = lj.stopping && Completing(sj);  // pending: the requeue completed; anything else: Slurm decided
  const Reading r = JobBook::Read(lj, Classify(lj, sj), ledger_->StartOpen(lj.id, lj.gen));
  ORR_RETURN_IF_ERROR(Execute(lj, r, sj, now));
  if (r.tr.action == Action::kLeave) {
    host_->EraseRecord(sj.id);
    return Status::Ok();
  }
  if (!host_->Rebuilding()) host_->Attach(lj, now);  // idempotent: (re)enters the snapshot when it can
  return Status::Ok();
}

// The reading's action, then its move (the table's next state). Where the action takes the job
// to its next state by a step of its own (a placement taken, a new generation), the reading's
// move is not made again; a Slurm command that must be retried leaves the job where it was.
Status Reconciler::Execute(LiveJob& lj, const Reading& r, const SlurmJob& sj, Time now) {
  switch (r.tr.action) {
    case Action::kNone:
      break;
    case Action::kEnqueue:  // Attach follows
      if (lj.state() == JobState::kRecovering) host_->RequeuedAfterRecovery(lj, now);
      break;
    case Action::kLeave:
      host_->Leave(lj, &sj, now);
      return SettleUnapplied(sj, now);
    case Action::kStarted:
      lj.started = sj.start == kNoTime ? now : sj.start;
      break;
    case Action::kMakeEligible: {
      // Only a job the daemon saw requeued (a later generation): a first start keeps any
      // begin time its user asked for. Idempotent (the same nodes, already released).
      Status st = host_->MakeEligible(lj);
      retry_row_ |= !st.ok();
      if (!st.ok()) Note(now, "error", fmt::format("cannot make job {} eligible now: {}", lj.id, st.error().message));
      break;
    }
    case Action::kRecover:  // diagnosed and acted on after Observe (Recoverer::Step)
      host_->RecoverLater(lj.id, sj.state == SlurmJobState::kRunning ? Trigger::kHang : TriggerOf(sj.failure));
      break;
    case Action::kAdopt:
      ++adopted_;
      Note(now, "adopt", fmt::format("job {} started in Slurm on {} without an Orrery decision", lj.id,
                                     fmt::format("{}", fmt::join(sj.nodes, ","))));
      TakeSlurmPlacement(lj, sj, now);  // running, as the reading says
      return Status::Ok();
    case Action::kMove:
      TakeSlurmPlacement(lj, sj, now);
      return Status::Ok();
    case Action::kBackToQueue: {
      ++slurm_requeued_;
      const bool held = sj.held || HoldInSlurm(lj, now);
      host_->BackToQueue(lj, held, now);
      return NewGeneration(lj, now, "Slurm requeued it (" + sj.reason + ")");
    }
    case Action::kTakeBack:
      return TakeBack(lj, sj, now);
    case Action::kHoldAgain:  // released by someone else: out of the queue until held again
      host_->Withdraw(lj, now);
      book_->Move(lj, r, now);
      HoldInSlurm(lj, now);
      return Status::Ok();
  }
  book_->Move(lj, r, now);
  return Status::Ok();
}

// Its start decision will not take effect (held again, or its nodes went away before the
// launch): superseded, held, queued again in a new generation.
Status Reconciler::TakeBack(LiveJob& lj, const SlurmJob& sj, Time now) {
  if (!sj.held) {
    Status hold = slurm_->Hold(sj.id);
    if (!hold.ok()) {  // still released: tried again next cycle, the job stays starting
      retry_row_ = true;
      Note(now, "error", fmt::format("cannot hold job {}: {}", sj.id, hold.error().message));
      return Status::Ok();
    }
  }
  const std::string why =
      sj.held ? "held again after its start decision" : "its nodes became unavailable before it started (" + sj.reason + ")";
  ORR_RETURN_IF_ERROR(Supersede(lj.id, lj.gen, now, sj.held ? "job held again in Slurm" : "Slurm: " + sj.reason));
  host_->BackToQueue(lj, true, now);
  return NewGeneration(lj, now, why);
}

// Slurm runs the job where the daemon did not put it. A queued job is started there in
// the scheduler (it keeps its slot); a job the snapshot had elsewhere is taken out and
// attached again where Slurm runs it.
void Reconciler::TakeSlurmPlacement(LiveJob& lj, const SlurmJob& sj, Time now) {
  const bool was_pending = host_->PendingInSnapshot(lj);
  book_->Move(lj, Step::kTakePlacement, now);
  lj.started = sj.start == kNoTime ? now : sj.start;
  lj.nodes.clear();
  TakeNodes(lj, sj);
  host_->RunsWhereSlurmRuns(lj, was_pending, now);
}

// Holds a pending job the daemon found released; true when it is held now (a hold that
// fails is reported and tried again at the next listing: its row is reconciled again, resync.cc).
bool Reconciler::HoldInSlurm(LiveJob& lj, Time now) {
  if (!opts_.hold_unheld) return false;
  Status st = slurm_->Hold(lj.id);
  if (!st.ok()) Note(now, "error", fmt::format("cannot hold job {}: {}", lj.id, st.error().message));
  retry_row_ |= !st.ok();
  return st.ok();
}

// The job went back to pending in Slurm (requeued by Slurm, or its start taken back): a
// new generation, queued (entering the policy's queue once held).
Status Reconciler::NewGeneration(LiveJob& lj, Time now, const std::string& why) {
  ++lj.gen;
  ledger_->gens[lj.id] = lj.gen;
  ORR_RETURN_IF_ERROR(journal_->SetGen(lj.id, lj.gen));
  book_->Move(lj, Step::kNewGeneration, now);
  lj.nodes.clear();
  lj.started = kNoTime;
  Note(now, "requeue", fmt::format("job {} back in the queue (generation {}): {}", lj.id, lj.gen, why));
  return Status::Ok();
}

Status Reconciler::Supersede(uint32_t job, uint32_t gen, Time now, const std::string& why) {
  const std::string key = StartKey(job, gen);
  Status st = journal_->Mark(key, DecisionState::kSuperseded, now, why);
  if (!st.ok() && st.error().code != ErrorCode::kNotFound) return st;
  ledger_->unapplied.erase(key);
  return Status::Ok();
}

// A job ended in Slurm: its decisions not yet confirmed are settled from what Slurm
// reports: applied when it ran where the decision put it, else superseded.
Status Reconciler::SettleUnapplied(const SlurmJob& sj, Time now) {
  auto& unapplied = ledger_->unapplied;
  for (auto u = unapplied.begin(); u != unapplied.end();) {
    if (u->second.job != sj.id || IsRecoveryDecision(u->second.kind)) {  // recovery's are checked by the apply path
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
      ledger_->Remember(u->second);
    }
    u = unapplied.erase(u);
  }
  return Status::Ok();
}

// First sight of a job (new, or after a restart): its state from Slurm and the journal.
Status Reconciler::NewJob(const SlurmJob& sj, Time now) {
  if (sj.state == SlurmJobState::kFailed) return host_->AdoptFailed(sj, now);
  if (IsTerminal(sj.state)) return SettleUnapplied(sj, now);  // ended before we saw it
  LiveJob& lj = host_->AddRecord(sj);
  lj.gen = ledger_->GenOf(sj.id);
  lj.held = sj.held;
  ORR_RETURN_IF_ERROR(ResumeDecision(lj, sj, now));
  host_->Introduce(lj, now);
  if (lj.state() == JobState::kUnheld) HoldInSlurm(lj, now);
  if (!host_->Rebuilding()) host_->Attach(lj, now);
  return Status::Ok();
}

// The state of a job seen for the first time, from what Slurm shows and the start decision
// of its generation (planned or applied before a restart). Decisions are made only for
// jobs seen held, and the release is the last step of applying one: released means applied
// (confirm it); still held means not applied (the apply path applies it again, on a job that
// cannot have started meanwhile); held after it was applied means someone held it again.
Status Reconciler::ResumeDecision(LiveJob& lj, const SlurmJob& sj, Time now) {
  if (sj.state == SlurmJobState::kRunning) return ResumeRunning(lj, sj, now);
  const std::string key = StartKey(sj.id, lj.gen);
  auto un = ledger_->unapplied.find(key);
  const bool planned = un != ledger_->unapplied.end();
  Result<JournalDecision> known = planned ? Result<JournalDecision>(un->second) : journal_->Get(key);
  if (!known.ok() && known.error().code != ErrorCode::kNotFound) return known.error();
  const bool live_decision =
      known.ok() && known->state != DecisionState::kSuperseded && known->state != DecisionState::kFailed;
  if (!live_decision) {
    book_->Enter(lj, sj.held ? JobState::kQueued : JobState::kUnheld, now);
    return Status::Ok();
  }
  if (sj.held && known->state == DecisionState::kApplied) {  // Slurm wins: it is queued anew
    ORR_RETURN_IF_ERROR(Supersede(sj.id, lj.gen, now, "job held again in Slurm"));
    return NewGeneration(lj, now, "held again after its start decision");
  }
  book_->Enter(lj, JobState::kStarting, now);
  lj.nodes = known->nodes;
  if (!sj.held && planned) {
    ORR_RETURN_IF_ERROR(journal_->Mark(key, DecisionState::kApplied, now, "confirmed after restart: Slurm shows it released"));
    un->second.state = DecisionState::kApplied;
    ledger_->Remember(un->second);
    ledger_->unapplied.erase(un);
  }
  return Status::Ok();
}

// Seen running for the first time: its start decision confirmed, or adopted without one.
Status Reconciler::ResumeRunning(LiveJob& lj, const SlurmJob& sj, Time now) {
  const std::string key = StartKey(sj.id, lj.gen);
  auto un = ledger_->unapplied.find(key);
  const bool planned = un != ledger_->unapplied.end();
  Result<JournalDecision> known = planned ? Result<JournalDecision>(un->second) : journal_->Get(key);
  if (!known.ok() && known.error().code != ErrorCode::kNotFound) return known.error();
  book_->Enter(lj, JobState::kRunning, now);
  lj.started = sj.start == kNoTime ? now : sj.start;
  TakeNodes(lj, sj);
  if (planned) {
    ORR_RETURN_IF_ERROR(journal_->Mark(key, DecisionState::kApplied, now,
                                       "confirmed after restart: Slurm runs it on " + NodeNames(lj.nodes)));
    ledger_->unapplied.erase(un);
  } else if (!known.ok()) {
    ++adopted_;
    Note(now, "adopt", fmt::format("job {} runs on {} without an Orrery decision (adopted)", sj.id, NodeNames(lj.nodes)));
  }
  return Status::Ok();
}

}  // namespace orrery::live
