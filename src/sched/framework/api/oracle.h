// Belief vs truth. Plugins see only what a live scheduler could know (SchedJob: the
// request, estimates with their source, observed progress, attempts so far). What only a
// simulator knows -- a job's true remaining work and when it really ends -- is behind
// OracleView, which only the simulator supplies (Scheduler::AttachTruth). Oracle policies
// (SJF, SRTF, the oracle estimators) read it; live mode has none and refuses them
// (CheckLiveSupport, scheduler.h).
#pragma once

#include <cstdint>
#include <memory>

#include "base/time.h"
#include "model/attempt.h"
#include "model/job.h"

namespace orrery {

class OracleView {
 public:
  virtual ~OracleView() = default;
  // True seconds of work left for active job `slot` if it ran alone from now on its
  // requested shape, restart overheads already charged (pending jobs: at its next start).
  virtual Duration Remaining(uint32_t slot) const = 0;
  // When running job `slot` really ends if nothing changes (its start + Remaining at start).
  virtual Time TrueEnd(uint32_t slot) const = 0;
};

// The simulator's truth: an OracleView the scheduler keeps current by telling it, at the
// moment they happen, what the lifecycle did to each job. Restart physics (checkpoint and
// restore costs, lost steps) live in the implementation, not in the core.
class TruthModel : public OracleView {
 public:
  virtual void Submitted(uint32_t slot, const Job& job, Time now) = 0;
  virtual void Started(uint32_t slot, Time now) = 0;
  // The attempt that ran since the last Started ended for `cause` (kFinished, kPreempted,
  // kRequeued, kFailed, kWithdrawn, kNodeLost). Also called for a pending job withdrawn.
  virtual void Stopped(uint32_t slot, Time now, EndCause cause) = 0;
  // The restart cost charged at the last stop of `slot` (explain notes).
  virtual Duration RestartCost(uint32_t slot) const = 0;
  // A copy with the same state, for a copy of the scheduler that runs a walk beside the real
  // one (Scheduler::CheckWalks); null when it cannot be copied (the walk is then unchecked).
  virtual std::unique_ptr<TruthModel> Clone() const { return nullptr; }
};

}  // namespace orrery
