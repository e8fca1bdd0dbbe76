// A running job's reading of its own output (a metric tracker on its log), and the one rule
// by which both drivers hand it to the core (docs/design/signals.md).
#pragma once

#include <cstdint>

#include "base/time.h"

namespace orrery {

class Scheduler;

// The latest reading of a job's log.
struct SignalReading {
  int64_t step = -1;   // optimizer steps done (-1: the log shows none yet)
  int64_t total = -1;  // planned steps (-1: unknown)
  double eta_s = -1;   // tracker's remaining time (-1: none yet)
};

// Its steps go to ReportProgress (as of `at`, when they were reached), then its ETA to
// UpdateEstimate as the belief of the attempt's duration: the time run so far + ⌈ETA⌉
// (kReported; after ReportProgress, so the tracker's smoothed ETA, not the core's own rate
// rule, is the belief). The job must be running in `slot`.
void ReportReading(Scheduler& sched, uint32_t slot, Time now, const SignalReading& r, Time at);

}  // namespace orrery
