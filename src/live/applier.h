// The applier: the one journaled apply path. Plan (journal the batch as planned, one
// transaction) -> apply (send each decision to Slurm) -> confirm (mark each applied, one
// transaction). Decisions of the policy, of the energy loop, of recovery and of operators all
// go through ApplyPath; a decision that could not be confirmed stays planned (in the ledger and
// in the journal) and is checked against what Slurm shows before it is sent again
// (RetryUnapplied), in this process or after a restart, so none is lost and none is applied twice.
//
// It owns no scheduler and no node records: the placement of a start, the nodes Slurm lists,
// the re-planning of a start whose node left, and the checks and bookkeeping of the other
// owners' decisions (recovery, power) go through the ApplierHost the daemon implements.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "live/cycle_stats.h"
#include "live/decision_ledger.h"
#include "live/event_log.h"
#include "live/job_book.h"
#include "live/journal.h"
#include "live/slurm_client.h"
#include "sched/framework/api/decision.h"

namespace orrery::live {

// A planned decision met again (next cycle, or after a restart): what to do with it.
// kReplan: a start that can no longer take effect (a node it pins left Slurm's managed
// partitions): superseded, and the job re-planned (ApplierHost::Replan).
enum class Verdict { kSend, kInEffect, kObsolete, kWait, kReplan };

class ApplierHost {
 public:
  virtual ~ApplierHost() = default;
  // --- the scheduler port and the node records
  // The nodes the scheduler placed start decision `s` on (its slot's allocation).
  virtual std::vector<NodeShare> Placement(const StartDecision& s) const = 0;
  virtual bool NodeListed(const std::string& node) const = 0;  // a managed node Slurm lists
  // The job of a start superseded because its node left: back to the policy's queue in a new
  // generation, the departed node out of placement first.
  virtual Status Replan(LiveJob& lj, const std::string& why, Time now) = 0;
  // --- the other owners' decisions: recovery (drain, recover, give-up, undrain) and power
  virtual Verdict CheckRecovery(const JournalDecision& d, std::string* why) const = 0;
  virtual Verdict CheckPower(const JournalDecision& d, std::string* why) const = 0;
  virtual void RecoveryApplied(const JournalDecision& d, Time now, CycleStats* st) = 0;
  virtual void PowerActionApplied(const JournalDecision& d, Time now, CycleStats* st) = 0;
  virtual int64_t PowerSeq() const = 0;  // the last power decision's number (journal counter "power")
  // --- the daemon's health
  virtual void ApplyFailed(const std::string& message) = 0;  // the last error the API shows
};

class Applier {
 public:
  Applier(JobBook* book, DecisionLedger* ledger, SlurmClient* slurm, Journal* journal, EventLog* events,
          ApplierHost* host)
      : book_(book), ledger_(ledger), slurm_(slurm), journal_(journal), events_(events), host_(host) {}

  // The journal record of a scheduler decision; the job's state moves with it (a start pins
  // it, a preemption starts a new generation: the scheduler has queued it again).
  Result<JournalDecision> Plan(const Decision& d, int64_t cycle, Time now);
  // Plans `batch` (one transaction, unless already planned), then applies and confirms each
  // (one transaction). The only code that sends decisions to Slurm.
  Status ApplyPath(std::vector<JournalDecision> batch, bool planned, Time now, CycleStats* st);
  // The plan step alone: every decision of `batch` journaled as planned (one transaction; a
  // preemption with its job's next generation, a power action with the power counter). For
  // decisions applied later (planned=true), or that wait for an operator.
  Status PlanBatch(std::vector<JournalDecision>& batch);
  // Planned decisions not yet confirmed (earlier cycles, or before a restart).
  Status RetryUnapplied(Time now, CycleStats* st);
  // A planned decision met again: is it still to be sent?
  Verdict Check(const JournalDecision& d, std::string* why) const;
  // The release of a start decision, the one place that sends it: a job that opted in is first
  // given the decision's shape (Reshape) when Slurm's request differs; a job of a later
  // generation is made eligible now (EligibleNow).
  Status Release(uint32_t job, uint32_t gen, const std::vector<NodeShare>& nodes);
  // The reconciler's make-eligible: the release of a job it saw requeued (a first start keeps
  // any begin time its user asked for: nothing is sent).
  Status MakeEligible(const LiveJob& lj) { return EligibleNow(lj.gen) ? Release(lj.id, lj.gen, lj.nodes) : Status::Ok(); }
  // Slurm 22.05 pushes a requeued job's begin time ~2 minutes ahead when the requeue
  // completes; every release of a job the daemon saw requeued (a later generation: a
  // preemption, a recovery, a requeue by Slurm) clears it (StartTime=now).
  static bool EligibleNow(uint32_t gen) { return gen > 0; }

  // Applied by this process (the metrics).
  uint64_t starts() const { return starts_; }
  uint64_t requeues() const { return requeues_; }
  uint64_t power_actions() const { return power_actions_; }
  uint64_t apply_errors() const { return apply_errors_; }  // refused by Slurm (retried, or failed)
  uint64_t reshapes() const { return reshapes_; }

 private:
  Status ApplyOne(JournalDecision& d, bool retry, Time now, CycleStats* st);
  std::optional<DecisionState> SendOrDefer(const JournalDecision& d, bool retry, Time now, CycleStats* st,
                                           std::string* why);
  Verdict CheckStart(const JournalDecision& d, std::string* why) const;
  // The first of `nodes` that is no longer a managed node Slurm lists (null: none).
  const NodeShare* DepartedNode(const std::vector<NodeShare>& nodes) const;
  Status Replan(const JournalDecision& d, const std::string& why, Time now);
  Status Send(const JournalDecision& d);
  // A start decision of a job whose requeue Slurm has not completed waits (Verdict::kWait):
  // released now, it would be pushed to Slurm's begin time when the requeue completes.
  bool AwaitsRequeue(uint32_t job) const;
  void Applied(const JournalDecision& d, Time now, CycleStats* st);

  JobBook* book_;
  DecisionLedger* ledger_;
  SlurmClient* slurm_;
  Journal* journal_;
  EventLog* events_;
  ApplierHost* host_;
  uint64_t starts_ = 0, requeues_ = 0, power_actions_ = 0, apply_errors_ = 0, reshapes_ = 0;
};

}  // namespace orrery::live
