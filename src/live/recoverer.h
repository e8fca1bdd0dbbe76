// The recoverer: failed and hung jobs (the rules: live/recovery.h). The reconciler moves a job
// Slurm reports failed, or a running job without progress, to kRecovering (job_state.h) and
// lists it (Later); after Observe, Step diagnoses each from the tail of its output, journals a
// failure record and its decisions (drain, recover = requeue held, or give-up) before any
// reaches Slurm, tells the core (Fail with the diagnosed kind, restartable when it is
// requeued) and applies them through the one apply path (applier.h), which checks a decision
// met again after a crash against what Slurm shows (Check): a node is never drained twice and a
// planned requeue is never lost. Drains beyond the hourly limit are journaled as awaiting an
// operator (ConfirmDrain / ReleaseDrain, the HTTP API).
//
// It owns the recovery policy, the diagnoser, the jobs to recover this cycle, the drain limit's
// window, the drains awaiting an operator, each job's restarts, the jobs that can hang and its
// counters. The scheduler, the node records and the reconciler's steps go through the
// RecovererHost the daemon implements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "live/applier.h"
#include "live/cycle_stats.h"
#include "live/decision_ledger.h"
#include "live/event_log.h"
#include "live/job_book.h"
#include "live/journal.h"
#include "live/recovery.h"
#include "live/slurm_client.h"
#include "logs/diagnose.h"

namespace orrery::live {

class RecovererHost {
 public:
  virtual ~RecovererHost() = default;
  // --- the scheduler port
  // When the core last heard of the job's progress (kNoTime: never, or not in the snapshot).
  virtual Time ProgressAt(const LiveJob& lj) const = 0;
  // A job given up leaves the core now (failed, not restartable; withdrawn when it was pending).
  virtual void GiveUpInCore(LiveJob& lj, FailureKind kind, Time now) = 0;
  // --- the node records
  virtual const SlurmNode* NodeOf(const std::string& node) const = 0;  // null: not a managed node
  // The node as Slurm shows it at a later listing (a drain, an undrain Slurm took), placement
  // following at the next SyncNodes.
  virtual void ShowLocally(const std::string& node, NodeAvail avail, const char* state_raw) = 0;
  virtual Status SyncNodes(Time now) = 0;  // nodes that left or joined placement, into the snapshot
  // --- records and the reconciler's steps
  virtual LiveJob& AddRecord(const SlurmJob& sj) = 0;  // a new record filled from the row
  virtual Status NewGeneration(LiveJob& lj, Time now, const std::string& why) = 0;
  virtual Status SettleUnapplied(const SlurmJob& sj, Time now) = 0;
  virtual int64_t CycleNumber() const = 0;  // the cycle a decision is journaled with
};

class Recoverer {
 public:
  Recoverer(JobBook* book, DecisionLedger* ledger, SlurmClient* slurm, Journal* journal, EventLog* events,
            Applier* applier, RecovererHost* host, RecoveryOptions opts)
      : book_(book),
        ledger_(ledger),
        slurm_(slurm),
        journal_(journal),
        events_(events),
        applier_(applier),
        host_(host),
        opts_(std::move(opts)) {}

  // The policy, and the journal's state after a restart: the last hour's drains, the drains
  // awaiting an operator, each job's restarts, the undrain counter. Call once.
  Status Load(Time now);
  // A job the reconciler moved to kRecovering: handled at the next Step.
  void Later(uint32_t job, Trigger trigger) { todo_.emplace_back(job, trigger); }
  // A job that can hang (a heartbeat file, or a progress report): checked by every Step.
  void Watch(uint32_t job) { watched_.insert(job); }
  // A failed job seen for the first time (the reconciler's new record).
  Status AdoptFailed(const SlurmJob& sj, Time now);
  // Hangs, then every job to recover: diagnosed, journaled, applied. A job whose recovery
  // could not be planned is tried again at the next Step.
  Status Step(Time now, CycleStats* st);

  // The applier's side: a recovery decision met again, and the bookkeeping once Slurm took one.
  Verdict Check(const JournalDecision& d, std::string* why) const;
  void Applied(const JournalDecision& d, Time now, CycleStats* st);

  // Operators: confirm applies the node's awaiting drain at the next cycle; release drops it
  // and returns a node Orrery drained to service. kNotFound when there is nothing to do.
  Status ConfirmDrain(const std::string& node, Time now);
  Status ReleaseDrain(const std::string& node, Time now);
  // Views: failures handled (journal, newest first) and drains (awaiting, then the last day's).
  std::vector<FailureRecord> Failures(size_t n) const;
  std::vector<JournalDecision> Drains(Time now) const;

  // By this process (the metrics).
  uint64_t recoveries() const { return recoveries_; }
  uint64_t drains() const { return drains_; }
  uint64_t give_ups() const { return give_ups_; }
  uint64_t hangs() const { return hangs_; }
  uint64_t undrains() const { return undrains_; }
  size_t awaiting() const { return awaiting_.size(); }

 private:
  Status RecoverOne(uint32_t job, Trigger trigger, Time now, CycleStats* st);
  logs::Diagnosis DiagnoseOutput(const JobFiles& paths, std::string* files, std::string* text, Time now);
  std::vector<JournalDecision> Decisions(const LiveJob& lj, const RecoveryVerdict& v, const std::string& subtype,
                                         Time now);
  void TellCore(LiveJob& lj, const RecoveryVerdict& v, Time now);
  bool Hung(const LiveJob& lj, Time now) const;
  void FindHangs(Time now);
  size_t DrainsThisHour(Time now);
  void RecoverApplied(const JournalDecision& d, Time now);
  void DrainApplied(const JournalDecision& d, Time now, CycleStats* st);
  void UndrainApplied(const JournalDecision& d, Time now);
  void Note(Time now, const std::string& kind, const std::string& detail) { events_->Note(now, kind, detail); }

  JobBook* book_;
  DecisionLedger* ledger_;
  SlurmClient* slurm_;
  Journal* journal_;
  EventLog* events_;
  Applier* applier_;
  RecovererHost* host_;
  RecoveryOptions opts_;
  RecoveryPolicy policy_;
  logs::Diagnoser diagnoser_;
  std::vector<std::pair<uint32_t, Trigger>> todo_;  // failed/hung this cycle, handled after Observe
  std::deque<Time> drain_times_;                    // drains planned (not awaiting) in the last hour
  std::map<std::string, JournalDecision> awaiting_;  // drains over the limit: key -> decision
  std::unordered_map<uint32_t, int> restarts_;       // recoveries that requeued each job
  std::set<uint32_t> watched_;  // jobs that can hang: a heartbeat file or a progress report (may hold departed ids)
  int64_t undrain_seq_ = 0;     // journal counter "undrain"
  uint64_t recoveries_ = 0, drains_ = 0, give_ups_ = 0, hangs_ = 0, undrains_ = 0;
};

}  // namespace orrery::live
