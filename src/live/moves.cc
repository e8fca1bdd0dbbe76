// The one place a managed job's state changes (job_state.h): a Transition of the reconciler's
// table, a Step of the daemon's own, or a new record's first state.
#include <fmt/format.h>

#include "live/daemon.h"

namespace orrery::live {

void Daemon::Move(LiveJob& lj, Transition tr) { lj.state = tr.next; }

void Daemon::Move(LiveJob& lj, Step step, Time now) {
  const std::optional<JobState> next = After(lj.state, step);
  if (next) {
    lj.state = *next;
    return;
  }
  ++m_illegal_moves_;
  Note(now, "error",
       fmt::format("internal: job {}: step {} from state {} is not in the table", lj.id, StepName(step),
                   JobStateName(lj.state)));
  // Made as asked: the caller's other fields (nodes, generation, decision) already assume it.
  switch (step) {
    case Step::kPlanStart: lj.state = JobState::kStarting; break;
    case Step::kPreempt:
    case Step::kNewGeneration:
    case Step::kRetry: lj.state = JobState::kQueued; break;
    case Step::kOutside: lj.state = JobState::kUnplaced; break;
    case Step::kRefuse: lj.state = JobState::kRejected; break;
    case Step::kTakePlacement: lj.state = JobState::kRunning; break;
    case Step::kRecoverAgain: lj.state = JobState::kRecovering; break;
    case Step::kGiveUp: lj.state = JobState::kFailed; break;
  }
}

void Daemon::Enter(LiveJob& lj, JobState first, Time now) {
  if (lj.entered) {
    ++m_illegal_moves_;
    Note(now, "error", fmt::format("internal: job {}: entered twice (as {}, then {})", lj.id, JobStateName(lj.state),
                                   JobStateName(first)));
  }
  lj.entered = true;
  lj.state = first;
}

}  // namespace orrery::live
