#include "sim/truth.h"

#include <algorithm>

namespace orrery {

void SimTruth::Submitted(uint32_t slot, const Job& job, Time) {
  if (jobs_.size() <= slot) jobs_.resize(slot + 1);
  jobs_[slot] = Entry{job.duration, kNoTime, 0, job.gpus};
}

void SimTruth::Stopped(uint32_t slot, Time now, EndCause cause) {
  Entry& e = at(slot);
  e.restart_cost = 0;
  switch (cause) {
    case EndCause::kFinished:
    case EndCause::kWithdrawn:
    case EndCause::kUnfinished:
      e.remaining = 0;
      return;
    case EndCause::kPreempted:  // checkpointed on preemption: no work lost, restart charged
      e.restart_cost = overhead_(e.gpus);
      e.remaining = (e.started + e.remaining - now) + e.restart_cost;
      return;
    case EndCause::kRequeued:  // handed over with its work (e.g. from Lucid's profiler)
      e.remaining = std::max<Duration>(0, e.remaining - (now - e.started));
      return;
    case EndCause::kFailed:
    case EndCause::kNodeLost:  // not announced: no checkpoint, the attempt's work is lost
      return;
  }
}

}  // namespace orrery
