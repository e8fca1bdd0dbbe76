#include "live/job_state.h"

namespace orrery::live {

std::string_view JobStateName(JobState s) {
  switch (s) {
    case JobState::kUnheld: return "unheld";
    case JobState::kQueued: return "queued";
    case JobState::kStarting: return "starting";
    case JobState::kRunning: return "running";
    case JobState::kRejected: return "rejected";
    case JobState::kUnplaced: return "unplaced";
    case JobState::kRecovering: return "recovering";
    case JobState::kFailed: return "failed";
  }
  return "?";
}

std::string_view SeenName(Seen s) {
  switch (s) {
    case Seen::kEnded: return "ended";
    case Seen::kRunningAsKnown: return "running-as-known";
    case Seen::kRunningElsewhere: return "running-elsewhere";
    case Seen::kHeld: return "held";
    case Seen::kReleased: return "released";
    case Seen::kNodesGone: return "nodes-gone";
    case Seen::kDelayed: return "delayed";
    case Seen::kFailed: return "failed";
    case Seen::kHung: return "hung";
    case Seen::kStopping: return "stopping";
  }
  return "?";
}

std::string_view ActionName(Action a) {
  switch (a) {
    case Action::kNone: return "none";
    case Action::kLeave: return "leave";
    case Action::kStarted: return "started";
    case Action::kAdopt: return "adopt";
    case Action::kMove: return "move";
    case Action::kBackToQueue: return "back-to-queue";
    case Action::kTakeBack: return "take-back";
    case Action::kHoldAgain: return "hold-again";
    case Action::kEnqueue: return "enqueue";
    case Action::kRecover: return "recover";
    case Action::kMakeEligible: return "make-eligible";
  }
  return "?";
}

namespace {

// Slurm runs it.
Transition OnRunning(JobState s, bool as_known) {
  switch (s) {
    case JobState::kUnheld:
    case JobState::kQueued:
    case JobState::kRejected:
    case JobState::kFailed:  // restarted in Slurm by someone else
      return {JobState::kRunning, Action::kAdopt};
    case JobState::kRecovering:  // a hung job runs on until Slurm takes its requeue; elsewhere: restarted by someone
      return as_known ? Transition{s, Action::kNone} : Transition{JobState::kRunning, Action::kAdopt};
    case JobState::kStarting:
      return {JobState::kRunning, as_known ? Action::kStarted : Action::kMove};
    case JobState::kRunning:
    case JobState::kUnplaced:
      return {JobState::kRunning, as_known ? Action::kNone : Action::kMove};
  }
  return {s, Action::kNone};
}

// Slurm shows it pending.
Transition OnPending(JobState s, Seen seen, bool decision_open) {
  const bool held = seen == Seen::kHeld;
  switch (s) {
    case JobState::kUnheld:  // still released: the hold did not take (refused), sent again
      return held ? Transition{JobState::kQueued, Action::kEnqueue} : Transition{s, Action::kHoldAgain};
    case JobState::kRecovering:  // Slurm shows the recovery's requeue (held), or someone requeued it
    case JobState::kFailed:
      return held ? Transition{JobState::kQueued, Action::kEnqueue} : Transition{JobState::kUnheld, Action::kHoldAgain};
    case JobState::kQueued:
      return held ? Transition{s, Action::kNone} : Transition{JobState::kUnheld, Action::kHoldAgain};
    case JobState::kStarting:
      // Released after a requeue, Slurm holding it back to its begin time: eligible now.
      if (seen == Seen::kDelayed) return {s, decision_open ? Action::kNone : Action::kMakeEligible};
      // Held again by someone, or its nodes went away, after the decision took effect.
      if (!decision_open && seen != Seen::kReleased) return {JobState::kQueued, Action::kTakeBack};
      return {s, Action::kNone};
    case JobState::kRunning:
    case JobState::kUnplaced:
      return {JobState::kQueued, Action::kBackToQueue};
    case JobState::kRejected:
      return {s, Action::kNone};
  }
  return {s, Action::kNone};
}

// Slurm reports it failed: a job that ran is recovered (once: a recovering or failed job
// stays); one that never ran under the daemon leaves as an ordinary end.
Transition OnFailed(JobState s) {
  switch (s) {
    case JobState::kStarting:
    case JobState::kRunning:
    case JobState::kUnplaced:
      return {JobState::kRecovering, Action::kRecover};
    case JobState::kRecovering:
    case JobState::kFailed:
      return {s, Action::kNone};
    case JobState::kUnheld:
    case JobState::kQueued:
    case JobState::kRejected:
      return {s, Action::kLeave};
  }
  return {s, Action::kNone};
}

}  // namespace

Transition Next(JobState s, Seen seen, bool decision_open) {
  switch (seen) {
    case Seen::kEnded:
      return {s, Action::kLeave};
    case Seen::kFailed:
      return OnFailed(s);
    case Seen::kStopping:  // the daemon's preemption in progress: its decisions wait for the requeue
      return {s, Action::kNone};
    case Seen::kHung:  // (Classify reports it only for a running job)
      return s == JobState::kRunning ? Transition{JobState::kRecovering, Action::kRecover} : OnRunning(s, true);
    case Seen::kRunningAsKnown:
    case Seen::kRunningElsewhere:
      return OnRunning(s, seen == Seen::kRunningAsKnown);
    case Seen::kHeld:
    case Seen::kReleased:
    case Seen::kNodesGone:
    case Seen::kDelayed:
      return OnPending(s, seen, decision_open);
  }
  return {s, Action::kNone};
}

std::string_view StepName(Step s) {
  switch (s) {
    case Step::kPlanStart: return "plan-start";
    case Step::kPreempt: return "preempt";
    case Step::kNewGeneration: return "new-generation";
    case Step::kOutside: return "outside";
    case Step::kRefuse: return "refuse";
    case Step::kRetry: return "retry";
    case Step::kTakePlacement: return "take-placement";
    case Step::kRecoverAgain: return "recover-again";
    case Step::kGiveUp: return "give-up";
  }
  return "?";
}

std::optional<JobState> After(JobState s, Step step) {
  using S = JobState;
  const bool active = s == S::kStarting || s == S::kRunning;
  switch (step) {
    case Step::kPlanStart:
      if (s == S::kQueued) return S::kStarting;
      break;
    case Step::kPreempt:
      if (active) return S::kQueued;
      break;
    case Step::kNewGeneration:
      if (s != S::kQueued) return S::kQueued;
      break;
    case Step::kOutside:
      if (active) return S::kUnplaced;
      break;
    case Step::kRefuse:
      if (s == S::kQueued) return S::kRejected;
      break;
    case Step::kRetry:
      if (s == S::kRejected) return S::kQueued;
      if (s == S::kUnplaced) return S::kRunning;
      break;
    case Step::kTakePlacement:  // from any state, a failed one too (restarted by someone else)
      return S::kRunning;
    case Step::kRecoverAgain:
      if (s == S::kQueued) return S::kRecovering;
      break;
    case Step::kGiveUp:
      if (s == S::kRecovering) return S::kFailed;
      break;
  }
  return std::nullopt;
}

}  // namespace orrery::live
