// Semantic signals in the simulator: what a running job shows about its
// progress, as a tracker reading its log would see it. The simulator asks a JobSignals
// source at each progress report of a running trace job and hands the answer to the policy
// through the core's verbs (Scheduler::ReportProgress, then UpdateEstimate with the ETA).
// The simulator knows only this interface; the implementation that writes framework log lines
// and reads them back with the real tracker lives above it (src/signals/, injected by cli).
#pragma once

#include <cstdint>

#include "base/time.h"
#include "model/job.h"
#include "sched/framework/internal/signal_report.h"  // SignalReading

namespace orrery {

class JobSignals {
 public:
  virtual ~JobSignals() = default;
  // Seconds between two reads of a running job's log (the first read comes that long after
  // its start); ≥ 1.
  virtual Duration Interval() const = 0;
  // Attempt `attempt` (0-based) of trace job `job` (index) starts at `now` with `done_s`
  // seconds of its work already done (a resumed attempt): a new log begins.
  virtual void AttemptStarted(uint32_t job, const Job& j, uint16_t attempt, Time now, Duration done_s) = 0;
  // The log read at `now`, when the job has done `done_s` seconds of its work in total.
  virtual SignalReading Read(uint32_t job, Time now, Duration done_s) = 0;
  // The attempt ended (its log is closed; per-attempt state may be dropped).
  virtual void AttemptEnded(uint32_t job) = 0;
};

}  // namespace orrery
