// The recoverer (recoverer.h): failed and hung jobs diagnosed from the tail of their output,
// journaled with their decisions, applied through the one apply path; the drain limit and the
// operators' confirmations.
#include <algorithm>

#include <fmt/format.h>

#include "live/recoverer.h"
#include "live/log_tail.h"

namespace orrery::live {

namespace {

constexpr Duration kDrainWindow = 3600;

std::string RecoverKey(uint32_t job, uint32_t gen) { return fmt::format("recover/{}/{}", job, gen); }

bool ShowsDrain(const SlurmNode& n) { return n.state_raw.find("drain") != std::string::npos; }

std::string JoinWith(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? sep : "") + v[i];
  return s;
}

}  // namespace

// ---------------------------------------------------------------- state after a restart

Status Recoverer::Load(Time now) {
  ORR_ASSIGN_OR_RETURN(policy_, MakeRecovery(opts_.policy));
  ORR_ASSIGN_OR_RETURN(auto drains, journal_->OfKind(DecisionKind::kDrain, now - kDrainWindow));
  for (const JournalDecision& d : drains)
    if (d.state == DecisionState::kPlanned || d.state == DecisionState::kApplied) drain_times_.push_back(d.time);
  ORR_ASSIGN_OR_RETURN(auto awaiting, journal_->WithState(DecisionState::kAwaiting));
  for (JournalDecision& d : awaiting) awaiting_[d.key] = std::move(d);
  ORR_ASSIGN_OR_RETURN(restarts_, journal_->Restarts());
  ORR_ASSIGN_OR_RETURN(undrain_seq_, journal_->GetCounter("undrain"));
  return Status::Ok();
}

// A failed job seen for the first time (after a restart, or it failed before a listing showed
// it running): recovered when this generation ran under the daemon (its start decision is
// journaled) and no recovery was decided for it yet; its recovery waits for the apply path
// when one is planned; otherwise it stays listed as failed, out of the scheduler.
Status Recoverer::AdoptFailed(const SlurmJob& sj, Time now) {
  auto g = ledger_->gens.find(sj.id);
  const uint32_t gen = g == ledger_->gens.end() ? 0 : g->second;
  const std::string key = RecoverKey(sj.id, gen);
  Result<JournalDecision> known = journal_->Get(key);
  if (!known.ok() && known.error().code != ErrorCode::kNotFound) return known.error();
  const bool ran_here = known.ok() || journal_->Has(StartKey(sj.id, gen));
  LiveJob& lj = host_->AddRecord(sj);
  lj.gen = gen;
  lj.started = sj.start;
  for (const auto& n : sj.nodes) lj.nodes.push_back(NodeShare{n, static_cast<uint16_t>(sj.gpus_per_node)});
  if (!ran_here) {
    book_->Enter(lj, JobState::kFailed, now);
    lj.reason = fmt::format("failed in Slurm ({}) outside Orrery's management: not recovered", sj.state_raw);
  } else if (!known.ok()) {
    book_->Enter(lj, JobState::kRecovering, now);
    todo_.emplace_back(sj.id, TriggerOf(sj.failure));
  } else if (ledger_->unapplied.count(key)) {
    book_->Enter(lj, JobState::kRecovering, now);  // the apply path sends its requeue
    lj.reason = known->detail;
  } else {
    book_->Enter(lj, JobState::kFailed, now);
    lj.reason = known->detail;
  }
  if (known.ok()) {  // the queue shows its failure again
    auto rec = journal_->FailureOf(sj.id, gen);
    if (rec.ok()) lj.failure = std::move(*rec);
  }
  return host_->SettleUnapplied(sj, now);
}

// ---------------------------------------------------------------- hangs

// Watched jobs only: those that declare a heartbeat file (the restart contract) or report
// progress to the core (the signals loop); the clock starts at the job's start.
bool Recoverer::Hung(const LiveJob& lj, Time now) const {
  if (lj.state() != JobState::kRunning || lj.started == kNoTime) return false;
  const Duration after = lj.hang_after > 0 ? lj.hang_after : opts_.hang_after;
  if (after <= 0) return false;
  bool watched = false;
  Time last = lj.started;
  if (!lj.heartbeat.empty()) {
    watched = true;
    last = std::max(last, LastBeat(lj.heartbeat));
  }
  const Time reported = host_->ProgressAt(lj);
  if (reported != kNoTime) {
    watched = true;
    last = std::max(last, reported);
  }
  return watched && now - last >= after;
}

// Every running job, whether or not this cycle's listing showed it (a delta listing shows
// only jobs that changed), in id order.
// O(watched jobs), not O(jobs): only a watched job can hang (Hung), and every job that
// declares a heartbeat or had a progress report is in watched_ (Watch).
void Recoverer::FindHangs(Time now) {
  std::vector<uint32_t> hung;
  for (auto it = watched_.begin(); it != watched_.end();) {
    const LiveJob* lj = book_->Find(*it);
    if (!lj) {  // left the daemon
      it = watched_.erase(it);
      continue;
    }
    if (Hung(*lj, now)) hung.push_back(*it);
    ++it;
  }
  for (uint32_t id : hung) {  // ascending ids (watched_ is ordered)
    LiveJob& lj = *book_->Find(id);
    const Reading r = JobBook::Read(lj, Seen::kHung, false);
    book_->Move(lj, r, now);
    if (r.tr.action == Action::kRecover) todo_.emplace_back(id, Trigger::kHang);
  }
}

// ---------------------------------------------------------------- the step

Status Recoverer::Step(Time now, CycleStats* st) {
  FindHangs(now);
  if (todo_.empty()) return Status::Ok();
  std::vector<std::pair<uint32_t, Trigger>> todo;
  todo.swap(todo_);
  Status first = Status::Ok();
  for (const auto& [job, trigger] : todo) {
    Status s = RecoverOne(job, trigger, now, st);
    if (s.ok()) continue;
    // Nothing was planned (Slurm or the journal refused): tried again next cycle.
    todo_.emplace_back(job, trigger);
    Note(now, "error", fmt::format("recovery of job {}: {} (retried next cycle)", job, s.error().message));
    if (first.ok()) first = s;
  }
  Status sync = host_->SyncNodes(now);  // drained nodes leave placement before the policy decides
  return first.ok() ? sync : first;
}

Status Recoverer::RecoverOne(uint32_t job, Trigger trigger, Time now, CycleStats* st) {
  LiveJob* found = book_->Find(job);
  if (!found || found->state() != JobState::kRecovering) return Status::Ok();
  LiveJob& lj = *found;
  // A generation whose recovery was decided already (a requeue Slurm took while the daemon
  // was away, seen as a held job): this failure is the next generation's.
  if (!ledger_->unapplied.count(RecoverKey(job, lj.gen)) && journal_->Has(RecoverKey(job, lj.gen))) {
    std::vector<NodeShare> ran_on = lj.nodes;  // NewGeneration forgets them
    ORR_RETURN_IF_ERROR(host_->NewGeneration(lj, now, "a recovery of this generation was decided before"));
    lj.nodes = std::move(ran_on);
    book_->Move(lj, Step::kRecoverAgain, now);
  }
  std::string files;
  auto paths = slurm_->Files(job);
  if (!paths.ok() && paths.error().code != ErrorCode::kNotFound) return paths.error();
  std::string tail;
  const logs::Diagnosis d = DiagnoseOutput(paths.ok() ? *paths : JobFiles{}, &files, &tail, now);
  Incident inc;
  inc.log = tail;
  inc.trigger = trigger;
  for (const NodeShare& n : lj.nodes) inc.nodes.push_back(n.node);
  inc.restarts = restarts_[job];
  const RecoveryVerdict v = Judge(policy_, d, inc, opts_.max_restarts);
  FailureRecord rec{job,      lj.gen, now,      trigger, d.category, trigger == Trigger::kHang ? "hang" : d.subtype,
                    v.suspect, v.step, v.reason, JoinWith(d.evidence, "\n"), files};
  ORR_RETURN_IF_ERROR(journal_->RecordFailure(rec));
  std::vector<JournalDecision> batch = Decisions(lj, v, rec.subtype, now);
  ORR_RETURN_IF_ERROR(applier_->PlanBatch(batch));
  lj.failure = rec;
  lj.reason = v.reason;
  if (v.step != RecoveryStep::kGiveUp) ++restarts_[job];
  ++recoveries_;
  ++st->recoveries;
  if (trigger == Trigger::kHang) ++hangs_;
  if (v.step == RecoveryStep::kGiveUp) ++give_ups_;
  Note(now, "recover", fmt::format("job {} {}: {}", job, TriggerName(trigger), v.reason));
  TellCore(lj, v, now);
  std::vector<JournalDecision> send;
  for (JournalDecision& x : batch) {
    if (x.state == DecisionState::kAwaiting) {
      Note(now, "drain", fmt::format("{}: over the limit of {} drains per hour; awaits an operator "
                                     "(POST /api/v1/drains/{}/confirm or /release)",
                                     x.key, opts_.max_drains_per_hour, x.nodes[0].node));
      awaiting_[x.key] = x;
      continue;
    }
    if (x.kind == DecisionKind::kDrain) drain_times_.push_back(now);
    send.push_back(std::move(x));
  }
  return applier_->ApplyPath(std::move(send), /*planned=*/true, now, st);
}

// StdOut, then StdErr (once when they are the same file): the last log_tail_bytes of each.
logs::Diagnosis Recoverer::DiagnoseOutput(const JobFiles& paths, std::string* files, std::string* text_out,
                                          Time now) {
  std::string& text = *text_out;
  std::vector<std::string> read;
  for (const std::string* p : {&paths.stdout_path, &paths.stderr_path}) {
    if (p->empty() || std::find(read.begin(), read.end(), *p) != read.end()) continue;
    auto tail = ReadLastLines(*p, opts_.log_tail_bytes);  // log_tail.h
    if (!tail.ok()) {
      Note(now, "error", "recovery: " + tail.error().message);
      continue;
    }
    text += *tail;
    if (!text.empty() && text.back() != '\n') text += '\n';
    read.push_back(*p);
  }
  *files = JoinWith(read, ",");
  return diagnoser_.Diagnose(text);
}

std::vector<JournalDecision> Recoverer::Decisions(const LiveJob& lj, const RecoveryVerdict& v,
                                                 const std::string& subtype, Time now) {
  auto base = [&](DecisionKind kind, std::string key) {
    JournalDecision d;
    d.kind = kind;
    d.key = std::move(key);
    d.cycle = host_->CycleNumber();
    d.time = now;
    d.job = lj.id;
    d.gen = lj.gen;
    return d;
  };
  std::vector<JournalDecision> out;
  const SlurmNode* node = host_->NodeOf(v.suspect);
  if (v.step == RecoveryStep::kDrainRequeue && node != nullptr) {
    JournalDecision d = base(DecisionKind::kDrain, fmt::format("drain/{}/{}/{}", v.suspect, lj.id, lj.gen));
    d.nodes = {NodeShare{v.suspect, node->gpus}};
    d.detail = "orrery: " + subtype;  // Slurm's Reason= for the node
    if (DrainsThisHour(now) >= static_cast<size_t>(opts_.max_drains_per_hour))
      d.state = DecisionState::kAwaiting;
    out.push_back(std::move(d));
  }
  JournalDecision r = base(v.step == RecoveryStep::kGiveUp ? DecisionKind::kGiveUp : DecisionKind::kRecover,
                           RecoverKey(lj.id, lj.gen));
  r.nodes = lj.nodes;
  r.detail = v.reason;
  out.push_back(std::move(r));
  return out;
}

// The diagnosed kind is kept for the core's Fail. A job given up leaves the core now
// (RecovererHost::GiveUpInCore); a job that is requeued keeps its place there until Slurm
// lists it pending and held (ReconcilerHost::RequeuedAfterRecovery).
void Recoverer::TellCore(LiveJob& lj, const RecoveryVerdict& v, Time now) {
  lj.fail_kind = v.kind;
  if (v.step != RecoveryStep::kGiveUp) return;
  host_->GiveUpInCore(lj, v.kind, now);
  book_->Move(lj, Step::kGiveUp, now);
}

size_t Recoverer::DrainsThisHour(Time now) {
  while (!drain_times_.empty() && drain_times_.front() <= now - kDrainWindow) drain_times_.pop_front();
  return drain_times_.size();
}

// ---------------------------------------------------------------- the applier's side

// Bookkeeping of a recovery decision Slurm took (the applier's host).
void Recoverer::Applied(const JournalDecision& d, Time now, CycleStats* st) {
  switch (d.kind) {
    case DecisionKind::kDrain:
      DrainApplied(d, now, st);
      return;
    case DecisionKind::kRecover:
      RecoverApplied(d, now);
      return;
    case DecisionKind::kUndrain:
      UndrainApplied(d, now);
      return;
    case DecisionKind::kGiveUp:
    case DecisionKind::kStart:
    case DecisionKind::kRequeue:
    case DecisionKind::kPowerDown:
    case DecisionKind::kPowerUp:
      return;
  }
}

Verdict Recoverer::Check(const JournalDecision& d, std::string* why) const {
  const std::string node = d.nodes.empty() ? "" : d.nodes[0].node;
  const SlurmNode* obs = host_->NodeOf(node);
  switch (d.kind) {
    case DecisionKind::kDrain:
      if (obs != nullptr && ShowsDrain(*obs)) {  // never drained twice
        *why = d.detail + "; confirmed: Slurm shows " + node + " " + obs->state_raw;
        return Verdict::kInEffect;
      }
      return Verdict::kSend;
    case DecisionKind::kUndrain:
      if (obs == nullptr || !ShowsDrain(*obs)) {
        *why = "confirmed: Slurm shows " + node + (obs == nullptr ? " gone" : " " + obs->state_raw);
        return Verdict::kInEffect;
      }
      return Verdict::kSend;
    case DecisionKind::kRecover: {
      const LiveJob* found = book_->Find(d.job);
      if (!found) {
        *why = "Slurm no longer lists the job";
        return Verdict::kObsolete;
      }
      const LiveJob& lj = *found;
      if (lj.gen == d.gen && lj.state() == JobState::kRecovering) return Verdict::kSend;
      *why = d.detail + "; confirmed: Slurm shows it requeued";  // never requeued twice
      return Verdict::kInEffect;
    }
    case DecisionKind::kGiveUp:
      *why = d.detail;
      return Verdict::kInEffect;
    case DecisionKind::kStart:
    case DecisionKind::kRequeue:
    case DecisionKind::kPowerDown:
    case DecisionKind::kPowerUp:
      break;
  }
  return Verdict::kSend;
}

// Slurm took the requeue: the next generation. The job stays kRecovering (and, in the core,
// where it was) until a listing shows it pending and held (RequeuedAfterRecovery).
void Recoverer::RecoverApplied(const JournalDecision& d, Time now) {
  LiveJob* found = book_->Find(d.job);
  if (!found) return;
  LiveJob& lj = *found;
  if (lj.gen != d.gen || lj.state() != JobState::kRecovering) return;
  ++lj.gen;
  ledger_->gens[lj.id] = lj.gen;
  Status s = journal_->SetGen(lj.id, lj.gen);
  if (!s.ok()) Note(now, "error", s.error().message);
  Note(now, "requeue", fmt::format("job {} requeued by recovery (generation {})", lj.id, lj.gen));
}

void Recoverer::DrainApplied(const JournalDecision& d, Time now, CycleStats* st) {
  ++drains_;
  ++st->drains;
  const std::string& node = d.nodes.at(0).node;
  const SlurmNode* n = host_->NodeOf(node);
  if (n != nullptr && n->avail == NodeAvail::kUp)  // out of placement now, as Slurm has it
    host_->ShowLocally(node, NodeAvail::kDown, "draining");
  Note(now, "drain", fmt::format("{} drained ({}) for job {}", node, d.detail, d.job));
}

void Recoverer::UndrainApplied(const JournalDecision& d, Time now) {
  ++undrains_;
  const std::string& node = d.nodes.at(0).node;
  const SlurmNode* n = host_->NodeOf(node);
  if (n != nullptr && ShowsDrain(*n))  // back in placement now, as Slurm has it
    host_->ShowLocally(node, NodeAvail::kUp, "idle");
  Note(now, "drain", node + " returned to service by an operator");
}

// ---------------------------------------------------------------- operators

Status Recoverer::ConfirmDrain(const std::string& node, Time now) {
  for (auto it = awaiting_.begin(); it != awaiting_.end(); ++it) {
    if (it->second.nodes.at(0).node != node) continue;
    JournalDecision d = it->second;
    ORR_RETURN_IF_ERROR(journal_->Mark(d.key, DecisionState::kPlanned, now, d.detail));
    d.state = DecisionState::kPlanned;
    ledger_->unapplied[d.key] = d;  // applied at the next cycle (RetryUnapplied)
    awaiting_.erase(it);
    drain_times_.push_back(now);
    Note(now, "operator", "drain of " + node + " confirmed (" + d.key + ")");
    return Status::Ok();
  }
  return MakeError("no drain of '" + node + "' awaits confirmation", kExitBadInput, ErrorCode::kNotFound);
}

Status Recoverer::ReleaseDrain(const std::string& node, Time now) {
  bool done = false;
  for (auto it = awaiting_.begin(); it != awaiting_.end();) {
    if (it->second.nodes.at(0).node != node) {
      ++it;
      continue;
    }
    ORR_RETURN_IF_ERROR(journal_->Mark(it->first, DecisionState::kSuperseded, now, "released by an operator"));
    Note(now, "operator", "awaiting drain " + it->first + " released: " + node + " stays in service");
    it = awaiting_.erase(it);
    done = true;
  }
  const SlurmNode* obs = host_->NodeOf(node);
  if (obs != nullptr && ShowsDrain(*obs)) {
    JournalDecision d;
    d.kind = DecisionKind::kUndrain;
    d.key = fmt::format("undrain/{}/{}", node, undrain_seq_ + 1);
    d.cycle = host_->CycleNumber();
    d.time = now;
    d.nodes = {NodeShare{node, obs->gpus}};
    d.detail = "operator";
    ORR_RETURN_IF_ERROR(journal_->Begin());
    Status s = journal_->Plan(&d);
    if (s.ok()) s = journal_->SetCounter("undrain", undrain_seq_ + 1);
    if (!s.ok()) {
      Status rb = journal_->Rollback();
      return rb.ok() ? s : s.error().With("journal rollback failed too (" + rb.error().message + ")");
    }
    ORR_RETURN_IF_ERROR(journal_->Commit());
    ++undrain_seq_;
    ledger_->unapplied[d.key] = d;  // applied at the next cycle
    Note(now, "operator", node + " returned to service (" + d.key + ")");
    done = true;
  }
  if (done) return Status::Ok();
  return MakeError("'" + node + "' is neither drained nor awaiting a drain", kExitBadInput, ErrorCode::kNotFound);
}

std::vector<FailureRecord> Recoverer::Failures(size_t n) const {
  auto f = journal_->Failures(n);
  return f.ok() ? std::move(*f) : std::vector<FailureRecord>{};
}

std::vector<JournalDecision> Recoverer::Drains(Time now) const {
  std::vector<JournalDecision> out;
  for (const auto& [key, d] : awaiting_) out.push_back(d);
  auto recent = journal_->OfKind(DecisionKind::kDrain, now - 24 * kDrainWindow);
  if (recent.ok())
    for (JournalDecision& d : *recent)
      if (d.state != DecisionState::kAwaiting) out.push_back(std::move(d));
  return out;
}

}  // namespace orrery::live
