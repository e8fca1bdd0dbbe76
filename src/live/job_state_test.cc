// The reconciler's transition table (job_state.h), row by row, and Slurm reply classes.
#include "live/job_state.h"

#include <gtest/gtest.h>

#include "live/slurm_client.h"

namespace orrery::live {
namespace {

using S = JobState;
using O = Seen;
using A = Action;

struct Row {
  S from;
  O seen;
  bool open;  // start decision of the current generation planned, not confirmed
  S to;
  A action;
};

// Every (state, observation) pair the daemon can meet, with the expected move. Where the
// decision's openness matters both rows are listed; elsewhere `open` is false.
const Row kTable[] = {
    // Slurm runs it.
    {S::kUnheld, O::kRunningElsewhere, false, S::kRunning, A::kAdopt},     // released by someone, started
    {S::kQueued, O::kRunningElsewhere, false, S::kRunning, A::kAdopt},     // started without a decision
    {S::kRejected, O::kRunningElsewhere, false, S::kRunning, A::kAdopt},
    {S::kStarting, O::kRunningAsKnown, false, S::kRunning, A::kStarted},   // the decision took effect
    {S::kStarting, O::kRunningAsKnown, true, S::kRunning, A::kStarted},    // ... before it was confirmed
    {S::kStarting, O::kRunningElsewhere, false, S::kRunning, A::kMove},    // Slurm chose other nodes
    {S::kRunning, O::kRunningAsKnown, false, S::kRunning, A::kNone},
    {S::kRunning, O::kRunningElsewhere, false, S::kRunning, A::kMove},
    {S::kUnplaced, O::kRunningAsKnown, false, S::kRunning, A::kNone},      // attach retried
    {S::kUnplaced, O::kRunningElsewhere, false, S::kRunning, A::kMove},
    // Slurm shows it pending.
    {S::kUnheld, O::kHeld, false, S::kQueued, A::kEnqueue},                // our hold shows
    {S::kUnheld, O::kReleased, false, S::kUnheld, A::kHoldAgain},          // our hold did not take: again
    {S::kUnheld, O::kNodesGone, false, S::kUnheld, A::kHoldAgain},
    {S::kQueued, O::kHeld, false, S::kQueued, A::kNone},
    {S::kQueued, O::kReleased, false, S::kUnheld, A::kHoldAgain},          // released by someone else
    {S::kQueued, O::kNodesGone, false, S::kUnheld, A::kHoldAgain},
    {S::kStarting, O::kReleased, false, S::kStarting, A::kNone},           // Slurm has not started it yet
    {S::kStarting, O::kReleased, true, S::kStarting, A::kNone},
    {S::kStarting, O::kHeld, true, S::kStarting, A::kNone},                // not applied yet: the apply path sends it
    {S::kStarting, O::kHeld, false, S::kQueued, A::kTakeBack},             // held again after it was applied
    {S::kStarting, O::kNodesGone, true, S::kStarting, A::kNone},
    {S::kStarting, O::kNodesGone, false, S::kQueued, A::kTakeBack},        // a node went down before the launch
    {S::kRunning, O::kHeld, false, S::kQueued, A::kBackToQueue},           // Slurm requeued it (requeuehold)
    {S::kRunning, O::kReleased, false, S::kQueued, A::kBackToQueue},       // Slurm requeued it (node failure)
    {S::kUnplaced, O::kReleased, false, S::kQueued, A::kBackToQueue},
    {S::kRejected, O::kHeld, false, S::kRejected, A::kNone},               // retried when nodes change
    {S::kRejected, O::kReleased, false, S::kRejected, A::kNone},
    // Recovery (live/recovery.h): Slurm reports it failed, or it stopped making progress.
    {S::kRunning, O::kFailed, false, S::kRecovering, A::kRecover},
    {S::kStarting, O::kFailed, false, S::kRecovering, A::kRecover},       // failed at its launch
    {S::kUnplaced, O::kFailed, false, S::kRecovering, A::kRecover},
    {S::kRecovering, O::kFailed, false, S::kRecovering, A::kNone},        // recovered once
    {S::kFailed, O::kFailed, false, S::kFailed, A::kNone},                // given up, kept for the API
    {S::kQueued, O::kFailed, false, S::kQueued, A::kLeave},               // never ran: an ordinary end
    {S::kUnheld, O::kFailed, false, S::kUnheld, A::kLeave},
    {S::kRecovering, O::kEnded, false, S::kRecovering, A::kLeave},        // cancelled meanwhile
    {S::kFailed, O::kEnded, false, S::kFailed, A::kLeave},
    {S::kRunning, O::kHung, false, S::kRecovering, A::kRecover},
    {S::kRecovering, O::kHeld, false, S::kQueued, A::kEnqueue},           // the recovery's requeue shows
    {S::kRecovering, O::kReleased, false, S::kUnheld, A::kHoldAgain},     // requeued and released by someone
    {S::kRecovering, O::kRunningAsKnown, false, S::kRecovering, A::kNone},  // a hung job until the requeue lands
    {S::kRecovering, O::kRunningElsewhere, false, S::kRunning, A::kAdopt},  // restarted by someone else
    {S::kFailed, O::kHeld, false, S::kQueued, A::kEnqueue},               // requeued by an operator
    {S::kFailed, O::kRunningElsewhere, false, S::kRunning, A::kAdopt},
    // Released after a requeue, Slurm delays it to its begin time.
    {S::kStarting, O::kDelayed, false, S::kStarting, A::kMakeEligible},
    {S::kStarting, O::kDelayed, true, S::kStarting, A::kNone},             // the apply path sends it
    {S::kQueued, O::kDelayed, false, S::kUnheld, A::kHoldAgain},           // released by someone else
    {S::kUnheld, O::kDelayed, false, S::kUnheld, A::kHoldAgain},
    // Preempted by the policy, Slurm still completing the requeue: nothing moves (no adoption),
    // a start decision of the next generation waits (the apply path's AwaitsRequeue).
    {S::kQueued, O::kStopping, false, S::kQueued, A::kNone},
    {S::kStarting, O::kStopping, true, S::kStarting, A::kNone},
    {S::kStarting, O::kStopping, false, S::kStarting, A::kNone},
};

TEST(JobState, TransitionTable) {
  for (const Row& r : kTable) {
    const Transition got = Next(r.from, r.seen, r.open);
    EXPECT_EQ(got, (Transition{r.to, r.action}))
        << JobStateName(r.from) << " + " << SeenName(r.seen) << (r.open ? " (open)" : "") << " -> "
        << JobStateName(got.next) << " / " << ActionName(got.action) << ", expected " << JobStateName(r.to) << " / "
        << ActionName(r.action);
  }
}

// The daemon's own steps: every (state, step) pair, one row each; std::nullopt = the step
// cannot happen from that state (a defect the daemon counts).
constexpr std::optional<S> kNo = std::nullopt;
struct StepRow {
  Step step;
  std::optional<S> after[8];  // from unheld, queued, starting, running, rejected, unplaced, recovering, failed
};
const StepRow kSteps[] = {
    {Step::kPlanStart, {kNo, S::kStarting, kNo, kNo, kNo, kNo, kNo, kNo}},
    {Step::kPreempt, {kNo, kNo, S::kQueued, S::kQueued, kNo, kNo, kNo, kNo}},
    {Step::kNewGeneration, {S::kQueued, kNo, S::kQueued, S::kQueued, S::kQueued, S::kQueued, S::kQueued, S::kQueued}},
    {Step::kOutside, {kNo, kNo, S::kUnplaced, S::kUnplaced, kNo, kNo, kNo, kNo}},
    {Step::kRefuse, {kNo, S::kRejected, kNo, kNo, kNo, kNo, kNo, kNo}},
    {Step::kRetry, {kNo, kNo, kNo, kNo, S::kQueued, S::kRunning, kNo, kNo}},
    {Step::kTakePlacement,
     {S::kRunning, S::kRunning, S::kRunning, S::kRunning, S::kRunning, S::kRunning, S::kRunning, S::kRunning}},
    {Step::kRecoverAgain, {kNo, S::kRecovering, kNo, kNo, kNo, kNo, kNo, kNo}},
    {Step::kGiveUp, {kNo, kNo, kNo, kNo, kNo, kNo, S::kFailed, kNo}},
};

TEST(JobState, StepTable) {
  const S from[8] = {S::kUnheld, S::kQueued, S::kStarting, S::kRunning, S::kRejected, S::kUnplaced, S::kRecovering,
                     S::kFailed};
  for (const StepRow& r : kSteps)
    for (int i = 0; i < 8; ++i) {
      const std::optional<S> got = After(from[i], r.step);
      EXPECT_EQ(got, r.after[i]) << JobStateName(from[i]) << " + " << StepName(r.step) << " -> "
                                 << (got ? JobStateName(*got) : "(none)");
    }
}

TEST(JobState, EveryStateLeavesWhenSlurmEndsIt) {
  for (S s : {S::kUnheld, S::kQueued, S::kStarting, S::kRunning, S::kRejected, S::kUnplaced, S::kRecovering,
              S::kFailed})
    for (bool open : {false, true}) EXPECT_EQ(Next(s, O::kEnded, open).action, A::kLeave) << JobStateName(s);
}

TEST(JobState, OnlyStartingDependsOnTheOpenDecision) {
  // The openness of a start decision matters only while the job is starting: everywhere
  // else Slurm's state alone decides.
  for (S s : {S::kUnheld, S::kQueued, S::kRunning, S::kRejected, S::kUnplaced, S::kRecovering, S::kFailed})
    for (O o : {O::kRunningAsKnown, O::kRunningElsewhere, O::kHeld, O::kReleased, O::kNodesGone, O::kDelayed, O::kFailed, O::kHung, O::kStopping})
      EXPECT_EQ(Next(s, o, false), Next(s, o, true)) << JobStateName(s) << " + " << SeenName(o);
}

TEST(SlurmReplies, ClassifiedByKindNotMatchedByCallers) {
  struct Case {
    const char* text;
    ErrorCode code;
  };
  const Case cases[] = {
      {"scontrol: error: Invalid job id specified", ErrorCode::kNotFound},
      {"slurm: Invalid node name specified: node9", ErrorCode::kNotFound},
      {"slurm_hold error: Job is already held", ErrorCode::kAlreadyDone},  // hold of a held job
      {"Job is not running", ErrorCode::kWrongState},                      // requeue of an ended job
      {"Job is no longer pending execution", ErrorCode::kWrongState},
      {"scontrol: error: Job is not pending (not held)", ErrorCode::kWrongState},
      {"slurm_load_jobs error: Unable to contact slurm controller (connect failure)", ErrorCode::kUnavailable},
      {"Access/permission denied", ErrorCode::kGeneric},
  };
  for (const Case& c : cases) EXPECT_EQ(ClassifySlurmReply(c.text), c.code) << c.text;
  const Error e = SlurmError("slurm: Job is not running");
  EXPECT_EQ(e.code, ErrorCode::kWrongState);
  EXPECT_EQ(e.exit_code, kExitRuntime);
  EXPECT_EQ(e.With("cycle 3").code, ErrorCode::kWrongState);  // context keeps the code
}

}  // namespace
}  // namespace orrery::live
