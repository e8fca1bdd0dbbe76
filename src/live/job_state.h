// The reconciler's job states and transitions (docs/live.md#reconciler). Every cycle each
// managed job Slurm lists is classified (Seen) and moved by Next(): a pure function of the
// job's state, what Slurm shows and whether its start decision is still unconfirmed, so the
// whole table is unit-tested (job_state_test.cc) and the daemon only executes the Action.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace orrery::live {

enum class JobState : uint8_t {
  kUnheld,    // pending in Slurm and not held: outside the policy's queue until Slurm shows it held
  kQueued,    // pending and held: in the policy's queue
  kStarting,  // a start decision pinned it to nodes (released or about to be); Slurm has not started it
  kRunning,   // Slurm runs it (in the scheduler's snapshot when its nodes are modelled and have room)
  kRejected,  // held, but the policy can never place it (admission refused); retried when nodes change
  kUnplaced,  // Slurm runs it on nodes outside the model (down, powered off)
  kRecovering,  // failed or hung: its recovery (diagnosis, drain, requeue) is planned, Slurm does not show it requeued yet
  kFailed,      // failed and not retried (the diagnosis says why); out of the scheduler, kept until Slurm forgets it
};
std::string_view JobStateName(JobState s);  // "unheld", "queued", "starting", ...

// What the latest listing says about a job the daemon knows.
enum class Seen : uint8_t {
  kEnded,             // terminal (completed, failed, cancelled, ...)
  kRunningAsKnown,    // running on exactly the nodes the daemon has for it
  kRunningElsewhere,  // running on other nodes, or started without a decision
  kHeld,              // pending, held
  kReleased,          // pending, not held
  kNodesGone,         // pending, released, waiting with ReqNodeNotAvail (its pinned nodes went away)
  kDelayed,           // pending, released, waiting for its begin time (Slurm's delay after a requeue)
  kFailed,            // terminal with a failure state (FAILED, NODE_FAIL, TIMEOUT, OUT_OF_MEMORY, BOOT_FAIL)
  kHung,              // running, but no progress (heartbeat, reported progress) for the configured time
                      // (not from the listing: the recovery step checks every running job)
  kStopping,          // completing after the daemon's preemption (requeuehold applied): Slurm has not
                      // finished the requeue; it is neither adopted nor started again meanwhile
};
std::string_view SeenName(Seen s);

// What the daemon does on a transition.
enum class Action : uint8_t {
  kNone,
  kLeave,        // out of the scheduler (finish, fail or withdraw as Slurm says); decisions settled
  kStarted,      // Slurm started it where the decision put it
  kAdopt,        // Slurm runs a job the policy did not start: take Slurm's placement
  kMove,         // Slurm runs it elsewhere than the daemon has it: take Slurm's placement
  kBackToQueue,  // Slurm requeued a running job: new generation, held, queued again
  kTakeBack,     // its start decision will not take effect: superseded, held, queued again
  kHoldAgain,    // released by someone else while queued: out of the queue, held again
  kEnqueue,      // now held: into the policy's queue
  kRecover,      // it failed or hung: diagnose its log and plan the recovery (live/recovery.h)
  kMakeEligible, // started after a requeue, but Slurm delays it to its begin time: eligible now
};
std::string_view ActionName(Action a);

struct Transition {
  JobState next;
  Action action;
  bool operator==(const Transition& o) const { return next == o.next && action == o.action; }
};

// `decision_open`: the start decision of the job's current generation is planned and not
// yet confirmed (the apply path retries it; Slurm's state does not override it yet).
Transition Next(JobState s, Seen seen, bool decision_open);

// What the daemon itself does to a job (its decisions and the scheduler port's outcomes): the
// other half of the table, next to what Slurm shows (Next). After() is the table: the state a
// step leads to from `s`, or nullopt where the step cannot happen. A job's state changes only
// through JobBook::Move (a Reading of Next, or a Step) and JobBook::Enter (a new record's
// first state), in job_book.cc; scripts/check-deps.sh refuses any other write. A step the
// table lacks is a defect: it is counted (orrery_illegal_moves_total) and reported as an
// event, and made as asked, since the caller's other fields already assume it.
enum class Step : uint8_t {
  kPlanStart,      // queued -> starting: a start decision pins it to nodes
  kPreempt,        // starting | running -> queued: the policy queued it again (a new generation)
  kNewGeneration,  // -> queued: back in the queue in a new generation (requeued by Slurm, a start
                   //    taken back, a recovery's requeue, a held job at restart); not from queued
  kOutside,        // starting | running -> unplaced: runs where the policy cannot place it
  kRefuse,         // queued -> rejected: the policy can never place it (admission refused)
  kRetry,          // rejected -> queued, unplaced -> running: placed again (nodes changed, a rebuild)
  kTakePlacement,  // -> running: Slurm runs it where it chose (adopted or moved), from any state
  kRecoverAgain,   // queued -> recovering: the failure belongs to the next generation
  kGiveUp,         // recovering -> failed: the recovery gives up
};
std::string_view StepName(Step s);
std::optional<JobState> After(JobState s, Step step);

}  // namespace orrery::live
