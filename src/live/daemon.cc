// The cycle: observe -> reconcile -> retry unconfirmed decisions -> signals -> recover ->
// decide -> power loop. The policy's decisions go to the Applier (applier.h); the other steps
// are the owners' (recoverer.h, power_loop.h, signals_loop.h), whose host the daemon is.
#include "live/daemon.h"

#include <algorithm>
#include <chrono>
#include <unordered_set>

#include <fmt/format.h>

namespace orrery::live {

namespace {

double ElapsedMs(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Daemon::Daemon(SlurmClient* slurm, Journal* journal, const Clock* clock, DaemonOptions opts)
    : slurm_(slurm),
      journal_(journal),
      clock_(clock),
      opts_(std::move(opts)),
      events_(journal),
      book_(&events_),
      ledger_(opts_.recent_decisions),
      reconciler_(&book_, &ledger_, slurm, journal, &events_, this, ReconcilerOptions{opts_.hold_unheld}),
      applier_(&book_, &ledger_, slurm, journal, &events_, this),
      recoverer_(&book_, &ledger_, slurm, journal, &events_, &applier_, this, opts_.recovery),
      power_(&book_, &ledger_, journal, clock, &events_, &applier_, this,
             PowerLoopOptions{opts_.partitions.size(), opts_.energy, opts_.seed, opts_.power_factory}),
      signals_(&book_, slurm, journal, &events_, this, opts_.signals),
      latency_hist_(NumLatencyBuckets(), 0) {}

Daemon::~Daemon() = default;

int Daemon::VcOf(const std::string& partition) const {
  for (size_t i = 0; i < opts_.partitions.size(); ++i)
    if (opts_.partitions[i] == partition) return static_cast<int>(i);
  return -1;
}

// An event for the API and the journal's event log (EventLog).
void Daemon::Note(Time now, const std::string& kind, const std::string& detail) { events_.Note(now, kind, detail); }

Status Daemon::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  if (opts_.partitions.empty()) return MakeError("daemon: no managed partition configured");
  ORR_ASSIGN_OR_RETURN(ledger_.gens, journal_->Gens());
  ORR_ASSIGN_OR_RETURN(auto planned, journal_->WithState(DecisionState::kPlanned));
  for (auto& d : planned) ledger_.unapplied[d.key] = d;
  ORR_ASSIGN_OR_RETURN(auto recent, journal_->Recent(opts_.recent_decisions));
  for (auto it = recent.rbegin(); it != recent.rend(); ++it) ledger_.recent.push_back(*it);
  ORR_ASSIGN_OR_RETURN(cycle_, journal_->GetCounter("cycle"));
  ORR_RETURN_IF_ERROR(power_.Load());
  ORR_RETURN_IF_ERROR(signals_.Load());
  ORR_RETURN_IF_ERROR(recoverer_.Load(clock_->Now()), "loading the journal's recoveries");
  ORR_RETURN_IF_ERROR(power_.MakePolicy());
  if (!ledger_.unapplied.empty())
    Note(clock_->Now(), "recover", fmt::format("{} decision(s) planned but not confirmed before the restart", ledger_.unapplied.size()));
  return Status::Ok();
}

// Reads Slurm and reconciles every listed job (one transaction).
Status Daemon::Observe(Time now, CycleStats* st) {
  const Sweep sweep = SweepDue();
  auto listing = slurm_->Jobs(opts_.partitions, FullListingDue(cursor_) ? 0 : cursor_, sweep);
  Result<NodeListing> nodes = NodeListing{};
  if (listing.ok()) nodes = slurm_->NodeChanges(opts_.partitions, FullListingDue(node_cursor_) ? 0 : node_cursor_, sweep);
  if (!listing.ok() || !nodes.ok()) {
    ++m_slurm_errors_;
    const Error& e = listing.ok() ? nodes.error() : listing.error();
    last_error_ = e.message;
    return e;
  }
  ObserveNodes(*nodes, now);
  node_cursor_ = nodes->cursor;
  st->node_rows = nodes->nodes.size() + nodes->gone.size();
  m_node_rows_ += st->node_rows;
  ORR_RETURN_IF_ERROR(journal_->Begin());
  Status s = Status::Ok();
  if (need_rebuild_) {
    s = Rebuild(now);
    st->rebuilt = s.ok();
  } else {
    s = SyncNodes(now);
  }
  if (s.ok()) s = ReconcileListing(*listing, now, st);
  if (s.ok()) s = listing->full ? DropVanished(*listing, now) : DropGone(listing->gone, now);
  if (s.ok()) s = DropVanishedInSlice(*listing, now);
  cursor_ = s.ok() ? listing->cursor : 0;  // a listing not wholly reconciled is read again in full
  if (s.ok()) s = SyncNodes(now);  // nodes whose jobs just left
  if (s.ok()) s = journal_->SetCounter("cycle", cycle_);
  Status c = journal_->Commit();  // what was reconciled is kept even when a later step failed
  ORR_RETURN_IF_ERROR(s);
  return c;
}

// Jobs Slurm no longer reports at all (purged after MinJobAge) are gone: on a full listing,
// every job it lacks.
Status Daemon::DropVanished(const JobListing& listing, Time now) {
  std::unordered_set<uint32_t> seen;
  seen.reserve(listing.jobs.size());
  for (const SlurmJob& sj : listing.jobs) seen.insert(sj.id);
  std::vector<uint32_t> gone;
  for (const auto& [id, lj] : book_)
    if (!seen.count(id)) gone.push_back(id);
  return DropGone(gone, now);
}

// On a delta listing, the jobs it names as no longer listed (unknown ids are skipped).
Status Daemon::DropGone(const std::vector<uint32_t>& gone, Time now) {
  for (uint32_t id : gone) {
    LiveJob* lj = book_.Find(id);
    if (!lj) continue;
    Leave(*lj, nullptr, now);
    EraseJob(id);
  }
  return Status::Ok();
}

Result<CycleStats> Daemon::Cycle() {
  std::lock_guard<std::mutex> lock(mu_);
  auto t0 = std::chrono::steady_clock::now();
  CycleStats st;
  const Time now = clock_->Now();
  st.now = now;
  st.cycle = ++cycle_;
  ORR_RETURN_IF_ERROR(Observe(now, &st), "observing Slurm");
  st.observe_ms = ElapsedMs(t0);
  ORR_RETURN_IF_ERROR(applier_.RetryUnapplied(now, &st), "retrying unconfirmed decisions");
  if (signals_.on()) signals_.Step(now);  // the tracker's readings before the policy runs
  if (!paused_) ORR_RETURN_IF_ERROR(recoverer_.Step(now, &st), "recovering failed jobs");  // they wait while paused
  if (!paused_) ORR_RETURN_IF_ERROR(Decide(now, &st), "deciding");
  if (power_.on() && !paused_) ORR_RETURN_IF_ERROR(power_.Step(now, &st), "planning node power");
  FinishStats(t0, now, &st);
  return st;
}

// The policy's cycle, on the core's cadence (Scheduler::RunCycle): event-driven policies
// decide every daemon cycle, periodic ones (tiresias:preset=lucid) at their decision ticks,
// as in the simulator; a due tick that fell between two daemon cycles (they need not land
// on every second) is run by the core first, at its own time. The decisions are planned and
// applied by the Applier.
Status Daemon::Decide(Time now, CycleStats* st) {
  decisions_.clear();
  auto t0 = std::chrono::steady_clock::now();
  st->decided |= sched_->RunCycle(now, &decisions_).ran;
  st->decide_ms = ElapsedMs(t0);
  if (decisions_.empty()) return Status::Ok();
  auto t1 = std::chrono::steady_clock::now();
  std::vector<JournalDecision> batch;
  batch.reserve(decisions_.size());
  for (const Decision& d : decisions_) {
    ORR_ASSIGN_OR_RETURN(JournalDecision jd, applier_.Plan(d, cycle_, now));
    batch.push_back(std::move(jd));
  }
  ORR_RETURN_IF_ERROR(applier_.ApplyPath(std::move(batch), false, now, st));
  st->apply_ms = ElapsedMs(t1);
  return Status::Ok();
}

// The nodes of a start decision: its slot's allocation in the scheduler's snapshot.
std::vector<NodeShare> Daemon::Placement(const StartDecision& s) const {
  std::vector<NodeShare> nodes;
  for (const Slot& sl : sched_->view(s.slot).alloc) nodes.push_back(NodeShare{cluster_->nodes[sl.node.v].name, sl.gpus});
  return nodes;
}

// A start superseded because a node it pins left: the job goes back to the policy's queue in
// a new generation, with the departed node out of placement first.
Status Daemon::Replan(LiveJob& lj, const std::string& why, Time now) {
  BackToQueue(lj, /*held=*/true, now);  // Slurm still holds it: the release never took
  ORR_RETURN_IF_ERROR(reconciler_.NewGeneration(lj, now, why));
  ORR_RETURN_IF_ERROR(SyncNodes(now));  // the node held this job's GPUs in the snapshot: out of placement now
  Attach(lj, now);  // a job a restarted daemon kept outside (unplaced) enters the queue
  return Status::Ok();
}

void Daemon::FinishStats(std::chrono::steady_clock::time_point t0, Time now, CycleStats* st) {
  st->pending = sched_->pending_total();
  st->running = sched_->running_total();
  st->total_ms = ElapsedMs(t0);
  // Housekeeping after this cycle's decisions are applied (so not in total_ms): fold the
  // write-ahead log into the database once it has grown past ~4 MB.
  auto t2 = std::chrono::steady_clock::now();
  Status ck = journal_->Checkpoint(1000);
  if (!ck.ok()) Note(now, "error", ck.error().message);
  st->housekeeping_ms = ElapsedMs(t2);
  last_stats_ = *st;
  last_cycle_ = now;
  if (st->apply_errors == 0) last_error_.clear();
  latency_hist_[LatencyBucket(st->total_ms / 1000.0)] += 1;
}

Status Daemon::RequestPower(const std::string& node, bool up) {
  std::lock_guard<std::mutex> lock(mu_);
  return power_.Request(node, up, clock_->Now());
}

Status Daemon::ConfirmDrain(const std::string& node) {
  std::lock_guard<std::mutex> lock(mu_);
  return recoverer_.ConfirmDrain(node, clock_->Now());
}

Status Daemon::ReleaseDrain(const std::string& node) {
  std::lock_guard<std::mutex> lock(mu_);
  return recoverer_.ReleaseDrain(node, clock_->Now());
}

std::vector<FailureRecord> Daemon::Failures(size_t n) const {
  std::lock_guard<std::mutex> lock(mu_);
  return recoverer_.Failures(n);
}

std::vector<JournalDecision> Daemon::Drains() const {
  std::lock_guard<std::mutex> lock(mu_);
  return recoverer_.Drains(clock_->Now());
}

void Daemon::SetPaused(bool paused) {
  std::lock_guard<std::mutex> lock(mu_);
  paused_ = paused;
  Note(clock_->Now(), "operator", paused ? "decisions paused" : "decisions resumed");
}

}  // namespace orrery::live
