// The one journaled apply path: plan (journal the batch as planned, one transaction) ->
// apply (send each decision to Slurm) -> confirm (mark each applied, one transaction).
// Decisions of the policy, of the energy loop and of operators all go through ApplyPath;
// a decision that could not be confirmed stays planned (in memory and in the journal) and is
// checked against what Slurm shows before it is sent again (RetryUnapplied), in this
// process or after a restart, so none is lost and none is applied twice.
#include <algorithm>
#include <chrono>
#include <optional>

#include <fmt/format.h>

#include "live/daemon.h"

namespace orrery::live {

namespace {

double MsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

std::string NodeNames(const std::vector<NodeShare>& n) {
  std::string s;
  for (size_t i = 0; i < n.size(); ++i) s += (i ? "," : "") + n[i].node;
  return s;
}

bool IsPower(DecisionKind k) { return k == DecisionKind::kPowerUp || k == DecisionKind::kPowerDown; }

}  // namespace

// ---------------------------------------------------------------- the policy's decisions

// The policy's cycle, on the core's cadence (Scheduler::RunCycle): event-driven policies
// decide every daemon cycle, periodic ones (tiresias:preset=lucid) at their decision ticks,
// as in the simulator; a due tick that fell between two daemon cycles (they need not land
// on every second) is run by the core first, at its own time.
Status Daemon::Decide(Time now, CycleStats* st) {
  decisions_.clear();
  auto t0 = std::chrono::steady_clock::now();
  st->decided |= sched_->RunCycle(now, &decisions_).ran;
  st->decide_ms = MsSince(t0);
  if (decisions_.empty()) return Status::Ok();
  auto t1 = std::chrono::steady_clock::now();
  std::vector<JournalDecision> batch;
  batch.reserve(decisions_.size());
  for (const Decision& d : decisions_) {
    ORR_ASSIGN_OR_RETURN(JournalDecision jd, PlanFor(d, now));
    batch.push_back(std::move(jd));
  }
  ORR_RETURN_IF_ERROR(ApplyPath(std::move(batch), false, now, st));
  st->apply_ms = MsSince(t1);
  return Status::Ok();
}

// The journal record of a scheduler decision; the job's state moves with it (a start pins
// it, a preemption starts a new generation: the scheduler has queued it again).
// Every decision kind is handled here (std::visit over the closed sum type, one lambda per
// kind: a new kind does not compile until it is).
Result<JournalDecision> Daemon::PlanFor(const Decision& d, Time now) {
  const uint32_t id = book_.JobAt(SlotOf(d));
  LiveJob& lj = *book_.Find(id);
  JournalDecision jd;
  jd.cycle = cycle_;
  jd.time = now;
  jd.job = id;
  jd.gen = lj.gen;
  std::visit(Overloaded{
                 [&](const StartDecision& s) {
                   jd.kind = DecisionKind::kStart;
                   jd.key = StartKey(id, lj.gen);
                   for (const Slot& sl : sched_->view(s.slot).alloc)
                     jd.nodes.push_back(NodeShare{cluster_->nodes[sl.node.v].name, sl.gpus});
                   book_.Move(lj, Step::kPlanStart, now);
                   lj.nodes = jd.nodes;
                   lj.started = now;
                 },
                 [&](const PreemptDecision&) {  // the scheduler has queued it again: a new generation
                   jd.kind = DecisionKind::kRequeue;
                   jd.key = fmt::format("requeue/{}/{}", id, lj.gen);
                   jd.nodes = lj.nodes;
                   ++lj.gen;
                   ledger_.gens[id] = lj.gen;
                   book_.Move(lj, Step::kPreempt, now);
                   lj.nodes.clear();
                   lj.started = kNoTime;
                 },
             },
             d);
  return jd;
}

// ---------------------------------------------------------------- the path

Status Daemon::ApplyPath(std::vector<JournalDecision> batch, bool planned, Time now, CycleStats* st) {
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
Status Daemon::PlanBatch(std::vector<JournalDecision>& batch) {
  ORR_RETURN_IF_ERROR(journal_->Begin());
  Status s = Status::Ok();
  for (JournalDecision& d : batch) {
    if (s.ok()) s = journal_->Plan(&d);
    // A preemption starts the job's next generation, recorded with the decision.
    if (s.ok() && d.kind == DecisionKind::kRequeue) s = journal_->SetGen(d.job, d.gen + 1);
    if (s.ok() && IsPower(d.kind)) s = journal_->SetCounter("power", power_seq_);
  }
  if (s.ok()) return journal_->Commit();
  Status rb = journal_->Rollback();
  if (!rb.ok()) return s.error().With("journal rollback failed too (" + rb.error().message + ")");
  return s;
}

// One decision: checked against Slurm when met again (`retry`), sent, confirmed. Returns
// the journal's error only; a decision that is not settled stays in the ledger's unapplied.
Status Daemon::ApplyOne(JournalDecision& d, bool retry, Time now, CycleStats* st) {
  std::string why;
  const bool waits = d.kind == DecisionKind::kStart && AwaitsRequeue(d.job);
  const Verdict v = waits ? Verdict::kWait : retry ? Check(d, &why) : Verdict::kSend;
  DecisionState to = DecisionState::kApplied;
  switch (v) {
    case Verdict::kWait:  // checked again next cycle
      ledger_.unapplied[d.key] = d;
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
    ledger_.unapplied[d.key] = d;
    return m;
  }
  ledger_.unapplied.erase(d.key);
  d.state = to;
  if (v == Verdict::kReplan) return Replan(d, why, now);
  if (to != DecisionState::kApplied) return Status::Ok();
  if (v == Verdict::kSend) Applied(d, now, st);
  d.applied_time = now;
  d.detail = why;
  ledger_.Remember(d);
  return Status::Ok();
}

// Sends a decision; the state to mark, or nullopt when it is retried next cycle (a power
// action Slurm refuses is retried once, then failed).
std::optional<DecisionState> Daemon::SendOrDefer(const JournalDecision& d, bool retry, Time now, CycleStats* st,
                                                 std::string* why) {
  Status s = Send(d);
  if (s.ok()) {
    *why = !d.detail.empty() ? d.detail : retry ? "applied after a retry" : "";
    return DecisionState::kApplied;
  }
  ++st->apply_errors;
  ++m_apply_errors_;
  last_error_ = s.error().message;
  const bool give_up = retry && IsPower(d.kind);
  Note(now, "error", fmt::format("{}: {} ({})", d.key, s.error().message, give_up ? "not retried" : "retried next cycle"));
  if (!give_up) {
    ledger_.unapplied[d.key] = d;
    return std::nullopt;
  }
  *why = s.error().message;
  return DecisionState::kFailed;
}

// A planned decision met again (next cycle, or after a restart): is it still to be sent?
Daemon::Verdict Daemon::Check(const JournalDecision& d, std::string* why) const {
  switch (d.kind) {
    case DecisionKind::kStart: {
      const LiveJob* found = book_.Find(d.job);
      if (!found) return Verdict::kWait;  // not listed yet (or gone: settled when seen ended)
      const LiveJob& lj = *found;
      if (lj.state() == JobState::kRunning && lj.gen == d.gen) {  // took effect before we could confirm it
        *why = "confirmed: Slurm runs it on " + NodeNames(lj.nodes);
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
    case DecisionKind::kRequeue:
      return Verdict::kSend;  // idempotent: a job no longer running is not requeued (Send)
    case DecisionKind::kDrain:
    case DecisionKind::kRecover:
    case DecisionKind::kGiveUp:
    case DecisionKind::kUndrain:
      return CheckRecovery(d, why);  // recovery_loop.cc
    case DecisionKind::kPowerDown:
    case DecisionKind::kPowerUp:
      break;
  }
  if (d.nodes.empty()) {
    *why = "no node";
    return Verdict::kObsolete;
  }
  // Never sent twice: a decision planned before a crash may have reached Slurm; what Slurm
  // shows now tells.
  const std::string& node = d.nodes[0].node;
  auto obs = nodes_.find(node);
  if (obs == nodes_.end()) return Verdict::kSend;
  const bool up = d.kind == DecisionKind::kPowerUp;
  const NodeAvail a = obs->second.avail;
  if ((up && (a == NodeAvail::kPoweringUp || a == NodeAvail::kUp)) || (!up && a == NodeAvail::kPoweredDown)) {
    *why = (d.detail.empty() ? "" : d.detail + "; ") + "confirmed: Slurm shows " + node + " " + obs->second.state_raw;
    return Verdict::kInEffect;
  }
  if (!up && a == NodeAvail::kUp && power_) {
    std::vector<std::string> busy = NodesWithWork();
    if (std::binary_search(busy.begin(), busy.end(), node)) {  // never power down a node with work
      *why = node + " has work now";
      return Verdict::kObsolete;
    }
  }
  return Verdict::kSend;
}

const NodeShare* Daemon::DepartedNode(const std::vector<NodeShare>& nodes) const {
  for (const NodeShare& n : nodes)
    if (!nodes_.count(n.node)) return &n;
  return nullptr;
}

Status Daemon::Replan(const JournalDecision& d, const std::string& why, Time now) {
  LiveJob* found = book_.Find(d.job);
  if (!found) return Status::Ok();
  LiveJob& lj = *found;
  BackToQueue(lj, /*held=*/true, now);  // Slurm still holds it: the release never took
  ORR_RETURN_IF_ERROR(reconciler_.NewGeneration(lj, now, why));
  ORR_RETURN_IF_ERROR(SyncNodes(now));  // the node held this job's GPUs in the snapshot: out of placement now
  Attach(lj, now);  // a job a restarted daemon kept outside (unplaced) enters the queue
  return Status::Ok();
}

Status Daemon::Send(const JournalDecision& d) {
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
  return MakeError("daemon: unknown decision kind", kExitRuntime);
}

bool Daemon::AwaitsRequeue(uint32_t job) const {
  const LiveJob* lj = book_.Find(job);
  return lj && lj->stopping;
}

Status Daemon::Release(uint32_t job, uint32_t gen, const std::vector<NodeShare>& nodes) {
  LiveJob* lj = book_.Find(job);
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
    ++m_reshapes_;
  }
  return slurm_->StartOn(job, nodes, EligibleNow(gen));
}

// Bookkeeping of a decision Slurm took.
void Daemon::Applied(const JournalDecision& d, Time now, CycleStats* st) {
  switch (d.kind) {
    case DecisionKind::kStart:
      ++st->starts;
      ++m_starts_;
      return;
    case DecisionKind::kRequeue:
      ++st->requeues;
      ++m_requeues_;
      if (LiveJob* lj = book_.Find(d.job)) lj->stopping = true;  // until Slurm completes it
      return;
    case DecisionKind::kDrain:
      DrainApplied(d, now, st);
      return;
    case DecisionKind::kRecover:
      RecoverApplied(d, now);
      return;
    case DecisionKind::kGiveUp:
      return;
    case DecisionKind::kUndrain:
      UndrainApplied(d, now);
      return;
    case DecisionKind::kPowerDown:
    case DecisionKind::kPowerUp:
      break;
  }
  const bool up = d.kind == DecisionKind::kPowerUp;
  const std::string& node = d.nodes[0].node;
  ++m_power_;
  ++(up ? st->power_ups : st->power_downs);
  if (d.detail == "ces") ++(up ? m_power_ces_up_ : m_power_ces_down_);
  if (d.detail == "demand") ++m_power_demand_up_;
  PowerApplied(node, up);
  Note(now, "power", fmt::format("{}: {} {}", d.detail.empty() ? "operator" : d.detail, DecisionKindName(d.kind), node));
}

// Planned decisions not yet confirmed (earlier cycles, or before a restart).
Status Daemon::RetryUnapplied(Time now, CycleStats* st) {
  if (ledger_.unapplied.empty()) return Status::Ok();
  std::vector<JournalDecision> batch;
  batch.reserve(ledger_.unapplied.size());
  for (const auto& [key, d] : ledger_.unapplied) batch.push_back(d);
  return ApplyPath(std::move(batch), true, now, st);
}

}  // namespace orrery::live
