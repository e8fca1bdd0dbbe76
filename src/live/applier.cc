// The applier (applier.h): the one journaled apply path, plan -> apply -> confirm.
#include "live/applier.h"

#include <algorithm>
#include <optional>
#include <variant>

#include <fmt/format.h>

namespace orrery::live {

namespace {

std::string JoinedNodeNames(const std::vector<NodeShare>& n) {
  std::string s;
  for (size_t i = 0; i < n.size(); ++i) s += (i ? "," : "") + n[i].node;
  return s;
}

bool IsPowerKind(DecisionKind k) { return k == DecisionKind::kPowerUp || k == DecisionKind::kPowerDown; }

}  // namespace

// The journal record of a scheduler decision; the job's state moves with it (a start pins
// it, a preemption starts a new generation: the scheduler has queued it again).
// Every decision kind is handled here (std::visit over the closed sum type, one lambda per
// kind: a new kind does not compile until it is).
Result<JournalDecision> Applier::Plan(const Decision& d, int64_t cycle, Time now) {
  const uint32_t id = book_->JobAt(SlotOf(d));
  LiveJob* found = book_->Find(id);
  if (!found) return MakeError("applier: a decision for a slot of no job", kExitRuntime);
  LiveJob& lj = *found;
  JournalDecision jd;
  jd.cycle = cycle;
  jd.time = now;
  jd.job = id;
  jd.gen = lj.gen;
  std::visit(Overloaded{
                 [&](const StartDecision& s) {
                   jd.kind = DecisionKind::kStart;
                   jd.key = StartKey(id, lj.gen);
                   jd.nodes = host_->Placement(s);
                   book_->Move(lj, Step::kPlanStart, now);
                   lj.nodes = jd.nodes;
                   lj.started = now;
                 },
                 [&](const PreemptDecision&) {  // the scheduler has queued it again: a new generation
                   jd.kind = DecisionKind::kRequeue;
                   jd.key = fmt::format("requeue/{}/{}", id, lj.gen);
                   jd.nodes = lj.nodes;
                   ++lj.gen;
                   ledger_->gens[id] = lj.gen;
                   book_->Move(lj, Step::kPreempt, now);
                   lj.nodes.clear();
                   lj.started = kNoTime;
                 },
             },
             d);
  return jd;
}

// ---------------------------------------------------------------- the path

Status Applier::ApplyPath(std::vector<JournalDecision> batch, bool planned, Time now, CycleStats* st) {
  if (batch.empty()) return Status::Ok();
  if (!planned) ORR_RETURN_IF_ERROR(PlanBatch(batch));
  // 2. apply, 3. confirm (one transaction; a mark that fails leaves the decision planned).
  ORR_RETURN_IF_ERROR(journal_->Begin());
  Status first = Status::Ok();
  for (JournalDecision& d : batch) {
    Status m = ApplyOne(d, planned, now, st);
    if (!m.ok() && first.ok()) first = m;
  }
  ORR_RETURN_IF_ERROR(journal_->Commit());
  return first;
}

// 1. plan: every decision journaled (one transaction) before Slurm sees any.
Status Applier::PlanBatch(std::vector<JournalDecision>& batch) {
  ORR_RETURN_IF_ERROR(journal_->Begin());
  Status s = Status::Ok();
  for (JournalDecision& d : batch) {
    if (s.ok()) s = journal_->Plan(&d);
    // A preemption starts the job's next generation, recorded with the decision.
    if (s.ok() && d.kind == DecisionKind::kRequeue) s = journal_->SetGen(d.job, d.gen + 1);
    if (s.ok() && IsPowerKind(d.kind)) s = journal_->SetCounter("power", host_->PowerSeq());
  }
  if (s.ok()) return journal_->Commit();
  Status rb = journal_->Rollback();
  if (!rb.ok()) return s.error().With("journal rollback failed too (" + rb.error().message + ")");
  return s;
}

// One decision: checked against Slurm when met again (`retry`), sent, confirmed. Returns
// the journal's error only; a decision that is not settled stays in the ledger's unapplied.
Status Applier::ApplyOne(JournalDecision& d, bool retry, Time now, CycleStats* st) {
  std::string why;
  const bool waits = d.kind == DecisionKind::kStart && AwaitsRequeue(d.job);
  const Verdict v = waits ? Verdict::kWait : retry ? Check(d, &why) : Verdict::kSend;
  DecisionState to = DecisionState::kApplied;
  switch (v) {
    case Verdict::kWait:  // checked again next cycle
      ledger_->unapplied[d.key] = d;
      return Status::Ok();
    case Verdict::kObsolete:
    case Verdict::kReplan:
      to = DecisionState::kSuperseded;
      break;
    case Verdict::kInEffect:
      break;
    case Verdict::kSend: {
      std::optional<DecisionState> sent = SendOrDefer(d, retry, now, st, &why);
      if (!sent) return Status::Ok();
      to = *sent;
      break;
    }
  }
  Status m = journal_->Mark(d.key, to, now, why);
  if (!m.ok()) {  // stays planned: confirmed from what Slurm shows at the next cycle
    ledger_->unapplied[d.key] = d;
    return m;
  }
  ledger_->unapplied.erase(d.key);
  d.state = to;
  if (v == Verdict::kReplan) return Replan(d, why, now);
  if (to != DecisionState::kApplied) return Status::Ok();
  if (v == Verdict::kSend) Applied(d, now, st);
  d.applied_time = now;
  d.detail = why;
  ledger_->Remember(d);
  return Status::Ok();
}

// Sends a decision; the state to mark, or nullopt when it is retried next cycle (a power
// action Slurm refuses is retried once, then failed).
std::optional<DecisionState> Applier::SendOrDefer(const JournalDecision& d, bool retry, Time now, CycleStats* st,
                                                 std::string* why) {
  Status s = Send(d);
  if (s.ok()) {
    *why = !d.detail.empty() ? d.detail : retry ? "applied after a retry" : "";
    return DecisionState::kApplied;
  }
  ++st->apply_errors;
  ++apply_errors_;
  host_->ApplyFailed(s.error().message);
  const bool give_up = retry && IsPowerKind(d.kind);
  events_->Note(now, "error", fmt::format("{}: {} ({})", d.key, s.error().message, give_up ? "not retried" : "retried next cycle"));
  if (!give_up) {
    ledger_->unapplied[d.key] = d;
    return std::nullopt;
  }
  *why = s.error().message;
  return DecisionState::kFailed;
}

// A planned decision met again (next cycle, or after a restart): is it still to be sent?
Verdict Applier::Check(const JournalDecision& d, std::string* why) const {
  switch (d.kind) {
    case DecisionKind::kStart:
      return CheckStart(d, why);
    case DecisionKind::kRequeue:
      return Verdict::kSend;  // idempotent: a job no longer running is not requeued (Send)
    case DecisionKind::kDrain:
    case DecisionKind::kRecover:
    case DecisionKind::kGiveUp:
    case DecisionKind::kUndrain:
      return host_->CheckRecovery(d, why);
    case DecisionKind::kPowerDown:
    case DecisionKind::kPowerUp:
      return host_->CheckPower(d, why);
  }
  return Verdict::kSend;
}

Verdict Applier::CheckStart(const JournalDecision& d, std::string* why) const {
  const LiveJob* found = book_->Find(d.job);
  if (!found) return Verdict::kWait;  // not listed yet (or gone: settled when seen ended)
  const LiveJob& lj = *found;
  if (lj.state() == JobState::kRunning && lj.gen == d.gen) {  // took effect before we could confirm it
    *why = "confirmed: Slurm runs it on " + JoinedNodeNames(lj.nodes);
    return Verdict::kInEffect;
  }
  // Pinned to a node that left (a restarted daemon never modelled it: unplaced). Sent, the
  // release would fail at every cycle.
  const bool waits_here = lj.state() == JobState::kStarting || lj.state() == JobState::kUnplaced;
  if (const NodeShare* gone = waits_here && lj.gen == d.gen ? DepartedNode(d.nodes) : nullptr) {
    *why = gone->node + " left the managed partitions before the start was applied";
    return Verdict::kReplan;
  }
  if (lj.state() != JobState::kStarting || lj.gen != d.gen) {
    *why = "job state changed before the decision was applied";
    return Verdict::kObsolete;
  }
  return Verdict::kSend;
}

const NodeShare* Applier::DepartedNode(const std::vector<NodeShare>& nodes) const {
  for (const NodeShare& n : nodes)
    if (!host_->NodeListed(n.node)) return &n;
  return nullptr;
}

Status Applier::Replan(const JournalDecision& d, const std::string& why, Time now) {
  LiveJob* found = book_->Find(d.job);
  if (!found) return Status::Ok();
  return host_->Replan(*found, why, now);
}

Status Applier::Send(const JournalDecision& d) {
  switch (d.kind) {
    case DecisionKind::kStart:
      return Release(d.job, d.gen, d.nodes);
    case DecisionKind::kRequeue: {
      Status s = slurm_->RequeueHold(d.job);
      // The job ended or is no longer running: nothing left to preempt.
      if (!s.ok() && (s.error().code == ErrorCode::kWrongState || s.error().code == ErrorCode::kNotFound))
        return Status::Ok();
      return s;
    }
    case DecisionKind::kPowerDown:
      return slurm_->PowerDown(d.nodes.at(0).node);
    case DecisionKind::kPowerUp:
      return slurm_->PowerUp(d.nodes.at(0).node);
    case DecisionKind::kDrain:
      return slurm_->Drain(d.nodes.at(0).node, d.detail);  // detail: Slurm's Reason ("orrery: <subtype>")
    case DecisionKind::kRecover:
      return slurm_->RestartHeld(d.job);
    case DecisionKind::kGiveUp:
      return Status::Ok();  // nothing to send: the reason is recorded
    case DecisionKind::kUndrain:
      return slurm_->Undrain(d.nodes.at(0).node);
  }
  return MakeError("applier: unknown decision kind", kExitRuntime);
}

bool Applier::AwaitsRequeue(uint32_t job) const {
  const LiveJob* lj = book_->Find(job);
  return lj && lj->stopping;
}

Status Applier::Release(uint32_t job, uint32_t gen, const std::vector<NodeShare>& nodes) {
  LiveJob* lj = book_->Find(job);
  // Only a job that opted in changes its request; the others are placed as they asked (the
  // shape plugin sees them fixed), so their decision's nodes match it.
  const bool reshape = lj && lj->flex &&
                       (nodes.size() != lj->listed_nodes ||
                        std::any_of(nodes.begin(), nodes.end(),
                                    [&](const NodeShare& n) { return n.gpus != lj->listed_gpus_per_node; }));
  if (reshape) {
    ORR_RETURN_IF_ERROR(slurm_->Reshape(job, nodes));
    lj->listed_nodes = static_cast<uint32_t>(nodes.size());
    lj->listed_gpus_per_node = nodes[0].gpus;
    ++reshapes_;
  }
  return slurm_->StartOn(job, nodes, EligibleNow(gen));
}

// Bookkeeping of a decision Slurm took.
void Applier::Applied(const JournalDecision& d, Time now, CycleStats* st) {
  switch (d.kind) {
    case DecisionKind::kStart:
      ++st->starts;
      ++starts_;
      return;
    case DecisionKind::kRequeue:
      ++st->requeues;
      ++requeues_;
      if (LiveJob* lj = book_->Find(d.job)) lj->stopping = true;  // until Slurm completes it
      return;
    case DecisionKind::kDrain:
    case DecisionKind::kRecover:
    case DecisionKind::kGiveUp:
    case DecisionKind::kUndrain:
      host_->RecoveryApplied(d, now, st);
      return;
    case DecisionKind::kPowerDown:
    case DecisionKind::kPowerUp:
      ++power_actions_;
      ++(d.kind == DecisionKind::kPowerUp ? st->power_ups : st->power_downs);
      host_->PowerActionApplied(d, now, st);
      return;
  }
}

// Planned decisions not yet confirmed (earlier cycles, or before a restart).
Status Applier::RetryUnapplied(Time now, CycleStats* st) {
  if (ledger_->unapplied.empty()) return Status::Ok();
  std::vector<JournalDecision> batch;
  batch.reserve(ledger_->unapplied.size());
  for (const auto& [key, d] : ledger_->unapplied) batch.push_back(d);
  return ApplyPath(std::move(batch), true, now, st);
}

}  // namespace orrery::live
