// The signals loop (signals_loop.h): the advisor's answers and the tracker's readings, each
// cycle, into the core through the host, and the readings journaled.
#include "live/signals_loop.h"

namespace orrery::live {

Status SignalsLoop::Load() {
  if (!opts_.any()) return Status::Ok();
  signals_ = std::make_unique<LiveSignals>(opts_, slurm_);
  ORR_ASSIGN_OR_RETURN(auto progress, journal_->AllProgress());
  for (const JournalProgress& p : progress) signals_->Restore(p);
  return Status::Ok();
}

semantic::SchemaSource SignalsLoop::LaunchSchemas() {
  if (!signals_ || !opts_.advisor) return {};
  return [this](const Job& job) { return signals_->LaunchSchemaOf(job.id.v); };  // called inside the cycle (mu_ held)
}

void SignalsLoop::Introduce(uint32_t job) {
  if (signals_ && opts_.advisor) signals_->ReadLaunchFile(job);
}

// Jobs whose launch schema the LLM's answer completed: a pending job whose estimate is still
// the estimator's is estimated again (a hint or a report keeps its own); running ones keep theirs.
void SignalsLoop::Reestimate(const std::vector<uint32_t>& jobs, Time now) {
  if (!advisor_) return;
  for (uint32_t id : jobs) {
    const LiveJob* found = book_->Find(id);
    if (!found || found->state() != JobState::kQueued || found->slot == kNoSlot) continue;
    const LiveJob& lj = *found;
    if (!host_->EstimatedByEstimator(lj)) continue;
    advisor_->Refresh(lj.job);
    host_->UpdateEstimate(lj, advisor_->Estimate(lj.job, now), now);
  }
}

void SignalsLoop::Step(Time now) {
  std::vector<uint32_t> improved;
  signals_->AdvisorStep(&improved);  // never waits: answers that arrived, questions sent in the background
  Reestimate(improved, now);
  std::vector<LiveSignals::RunningJob> running;
  for (const auto& [id, lj] : *book_)
    if (lj->state() == JobState::kRunning && lj->slot != UINT32_MAX && host_->RunsInSnapshot(*lj))
      running.push_back({id, lj->gen, lj->slot});
  reports_.clear();
  progress_rows_.clear();
  signals_->Poll(std::move(running), now, &reports_, &progress_rows_);
  for (const LiveSignals::Report& r : reports_) {
    host_->Report(r, now);
    host_->Watch(r.job);  // a job with progress can hang
  }
  if (signals_->last_error() != error_) {
    error_ = signals_->last_error();
    if (!error_.empty()) Note(now, "signals", error_);
  }
  std::vector<uint32_t> dropped;
  ForgetLeftJobs(&dropped);
  JournalProgressRows(dropped, now);
}

// Jobs that left the daemon leave the signals too (their journal rows with them).
void SignalsLoop::ForgetLeftJobs(std::vector<uint32_t>* dropped) {
  for (uint32_t id : signals_->Known()) {
    if (book_->Has(id)) continue;
    signals_->Forget(id);
    dropped->push_back(id);
  }
}

// One transaction for the cycle's new readings and the rows of jobs that left. A failed
// write is counted and noted; it never stops the cycle (the readings are re-derived from the
// logs; only when a step was reached would be lost across a restart).
void SignalsLoop::JournalProgressRows(const std::vector<uint32_t>& dropped, Time now) {
  if (progress_rows_.empty() && dropped.empty()) return;
  Status s = journal_->Begin();
  for (const JournalProgress& p : progress_rows_)
    if (s.ok()) s = journal_->SetProgress(p);
  for (uint32_t id : dropped)
    if (s.ok()) s = journal_->DropProgress(id);
  if (s.ok()) s = journal_->Commit();
  if (!s.ok()) {
    Status rb = journal_->Rollback();
    events_->JournalFailed();
    Note(now, "error", "journal: progress: " + s.error().message + (rb.ok() ? "" : "; rollback: " + rb.error().message));
  }
}

}  // namespace orrery::live
