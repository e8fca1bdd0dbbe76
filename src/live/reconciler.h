// The job reconciler: each managed job Slurm lists is classified (Seen) and moved by the
// reconciler's table (job_state.h) through the JobBook, and the transition's action is
// executed: Slurm wins (a job Slurm runs elsewhere is adopted where it runs, a job Slurm
// requeued goes back to the queue in a new generation, a released job is held again), and the
// start decisions Slurm shows in effect or obsolete are settled in the journal.
//
// It owns no scheduler: what a transition does to the policy's snapshot, and the steps that
// belong to the other owners (a release by the apply path, a recovery), go through the
// ReconcilerHost the daemon implements.
#pragma once

#include <cstdint>
#include <string>

#include "base/result.h"
#include "base/time.h"
#include "live/decision_ledger.h"
#include "live/event_log.h"
#include "live/job_book.h"
#include "live/journal.h"
#include "live/recovery.h"
#include "live/slurm_client.h"

namespace orrery::live {

class ReconcilerHost {
 public:
  virtual ~ReconcilerHost() = default;
  // --- the scheduler port (the policy's snapshot)
  virtual bool Rebuilding() const = 0;  // the scheduler is rebuilt this cycle: jobs attach then
  virtual void Attach(LiveJob& lj, Time now) = 0;  // into the snapshot as its state says (idempotent)
  virtual void Withdraw(LiveJob& lj, Time now) = 0;
  virtual void Leave(LiveJob& lj, const SlurmJob* sj, Time now) = 0;  // ended in Slurm
  virtual void BackToQueue(LiveJob& lj, bool held, Time now) = 0;
  // Slurm runs the job on lj.nodes (just taken from its listing): started there in the
  // snapshot when it was pending there, else withdrawn (Attach follows).
  virtual void RunsWhereSlurmRuns(LiveJob& lj, bool was_pending, Time now) = 0;
  virtual bool PendingInSnapshot(const LiveJob& lj) const = 0;
  // --- records
  virtual LiveJob& AddRecord(const SlurmJob& sj) = 0;  // a new record filled from the row
  virtual void EraseRecord(uint32_t id) = 0;
  virtual void Introduce(LiveJob& lj, Time now) = 0;  // read its launch file and shape line before the policy sees it
  // --- the other owners
  // The apply path's release of a job it saw requeued (eligible now; a first start keeps any
  // begin time its user asked for: nothing is sent).
  virtual Status MakeEligible(const LiveJob& lj) = 0;
  virtual void RequeuedAfterRecovery(LiveJob& lj, Time now) = 0;
  virtual void RecoverLater(uint32_t job, Trigger trigger) = 0;
  virtual Status AdoptFailed(const SlurmJob& sj, Time now) = 0;  // first sight of a failed job
};

struct ReconcilerOptions {
  bool hold_unheld = true;  // hold pending jobs that were submitted without --hold
};

class Reconciler {
 public:
  Reconciler(JobBook* book, DecisionLedger* ledger, SlurmClient* slurm, Journal* journal, EventLog* events,
             ReconcilerHost* host, ReconcilerOptions opts)
      : book_(book), ledger_(ledger), slurm_(slurm), journal_(journal), events_(events), host_(host), opts_(opts) {}

  // One listed row of a managed partition: a new record, or the table's move of a known one.
  Status Reconcile(const SlurmJob& sj, Time now);
  // What the row says of a job the daemon knows (pure).
  static Seen Classify(const LiveJob& lj, const SlurmJob& sj);

  // Steps the other owners take too.
  bool HoldInSlurm(LiveJob& lj, Time now);  // true when held now; a refusal is retried (retry_row)
  Status NewGeneration(LiveJob& lj, Time now, const std::string& why);
  Status Supersede(uint32_t job, uint32_t gen, Time now, const std::string& why);
  Status SettleUnapplied(const SlurmJob& sj, Time now);

  // The row's reconcile left a Slurm command to retry (a hold, a release): reconciled again
  // at the next listing. Cleared before each row.
  bool retry_row() const { return retry_row_; }
  void ClearRetry() { retry_row_ = false; }

  uint64_t adopted() const { return adopted_; }
  uint64_t slurm_requeued() const { return slurm_requeued_; }

 private:
  Status Execute(LiveJob& lj, const Reading& r, const SlurmJob& sj, Time now);
  Status TakeBack(LiveJob& lj, const SlurmJob& sj, Time now);
  Status NewJob(const SlurmJob& sj, Time now);
  Status ResumeDecision(LiveJob& lj, const SlurmJob& sj, Time now);
  Status ResumeRunning(LiveJob& lj, const SlurmJob& sj, Time now);
  void TakeSlurmPlacement(LiveJob& lj, const SlurmJob& sj, Time now);
  void Note(Time now, const std::string& kind, const std::string& detail) { events_->Note(now, kind, detail); }

  JobBook* book_;
  DecisionLedger* ledger_;
  SlurmClient* slurm_;
  Journal* journal_;
  EventLog* events_;
  ReconcilerHost* host_;
  ReconcilerOptions opts_;
  bool retry_row_ = false;
  uint64_t adopted_ = 0, slurm_requeued_ = 0;
};

}  // namespace orrery::live
