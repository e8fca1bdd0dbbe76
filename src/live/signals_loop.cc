// Semantic signals in the cycle (docs/design/live-signals.md): the advisor's launch files for
// the policy's `semantic` estimator, and the tracker's readings of running jobs' logs into
// the core (ReportReading: steps, then the ETA as the believed duration), journaled so that a
// restarted daemon keeps each job's last reading and when its step was reached.
#include "live/daemon.h"
#include "sched/framework/signal_report.h"

namespace orrery::live {

semantic::SchemaSource Daemon::LaunchSchemas() {
  if (!signals_ || !opts_.signals.advisor) return {};
  return [this](const Job& job) { return signals_->LaunchSchemaOf(job.id.v); };  // called inside the cycle (mu_ held)
}

// Jobs whose launch schema the LLM's answer completed: a pending job whose estimate is still
// the estimator's is estimated again (a hint or a report keeps its own); running ones keep theirs.
void Daemon::Reestimate(const std::vector<uint32_t>& jobs, Time now) {
  if (!advisor_ || !sched_) return;
  for (uint32_t id : jobs) {
    const LiveJob* found = book_.Find(id);
    if (!found || found->state() != JobState::kQueued || found->slot == kNoSlot) continue;
    const LiveJob& lj = *found;
    if (sched_->view(lj.slot).est_source != EstimateSource::kEstimator) continue;
    advisor_->Refresh(lj.job);
    sched_->UpdateEstimate(lj.slot, now, advisor_->Estimate(lj.job, now), EstimateSource::kEstimator);
  }
}

void Daemon::SignalsStep(Time now) {
  std::vector<uint32_t> improved;
  signals_->AdvisorStep(&improved);  // never waits: answers that arrived, questions sent in the background
  Reestimate(improved, now);
  std::vector<LiveSignals::RunningJob> running;
  for (const auto& [id, lj] : book_)
    if (lj->state() == JobState::kRunning && lj->slot != UINT32_MAX && sched_->view(lj->slot).running)
      running.push_back({id, lj->gen, lj->slot});
  reports_.clear();
  progress_rows_.clear();
  signals_->Poll(std::move(running), now, &reports_, &progress_rows_);
  for (const LiveSignals::Report& r : reports_) {
    ReportReading(*sched_, r.slot, now, r.reading, r.at);
    recoverer_.Watch(r.job);  // a job with progress can hang
  }
  if (signals_->last_error() != signals_error_) {
    signals_error_ = signals_->last_error();
    if (!signals_error_.empty()) Note(now, "signals", signals_error_);
  }
  std::vector<uint32_t> dropped;
  ForgetLeftJobs(&dropped);
  JournalProgressRows(dropped, now);
}

// Jobs that left the daemon leave the signals too (their journal rows with them).
void Daemon::ForgetLeftJobs(std::vector<uint32_t>* dropped) {
  for (uint32_t id : signals_->Known()) {
    if (book_.Has(id)) continue;
    signals_->Forget(id);
    dropped->push_back(id);
  }
}

// One transaction for the cycle's new readings and the rows of jobs that left. A failed
// write is counted and noted; it never stops the cycle (the readings are re-derived from the
// logs; only when a step was reached would be lost across a restart).
void Daemon::JournalProgressRows(const std::vector<uint32_t>& dropped, Time now) {
  if (progress_rows_.empty() && dropped.empty()) return;
  Status s = journal_->Begin();
  for (const JournalProgress& p : progress_rows_)
    if (s.ok()) s = journal_->SetProgress(p);
  for (uint32_t id : dropped)
    if (s.ok()) s = journal_->DropProgress(id);
  if (s.ok()) s = journal_->Commit();
  if (!s.ok()) {
    Status rb = journal_->Rollback();
    events_.JournalFailed();
    Note(now, "error", "journal: progress: " + s.error().message + (rb.ok() ? "" : "; rollback: " + rb.error().message));
  }
}

void Daemon::FillSignals(const LiveJob& lj, QueueEntry* e) const {
  if (sched_ && lj.slot != UINT32_MAX) {
    const SchedJob& v = sched_->view(lj.slot);
    e->estimate = v.estimate;
    e->estimate_source = v.est_source;
  }
  if (!signals_) return;
  if (const ProgressView* p = signals_->View(lj.id); p && lj.state() == JobState::kRunning) e->progress = *p;
  e->input_error = signals_->InputError(lj.id);
}

}  // namespace orrery::live
