// What happened to a job in a simulation or live run: the record every metric,
// report and differential test is computed from (docs/formats/sim-output.md).
#pragma once

#include <cstdint>

#include "base/ids.h"
#include "base/time.h"

namespace orrery {

enum class OutcomeStatus : uint8_t {
  kFinished = 0,    // ran to completion
  kUnfinished,      // still pending or running when the run stopped (horizon)
  kRejected,        // can never run on this cluster (too large, no matching GPU type, ...)
  kSkipped,         // not simulated: the trace lacks its duration
  kFailed,          // its last attempt failed and was not restartable (attempts.csv says how)
  kWithdrawn,       // cancelled by its user while pending (SimConfig::renege): start = end = the cancel time, run 0
  kPreempted,       // ended by a preemption that cancels it (Slurm's PreemptMode=CANCEL): end = the preemption,
                    // run = the time it ran in all its attempts
};

// 48 bytes: the simulator keeps one per trace job. The submit time is the trace's
// (Job::submit); JCT = wait + run = end − submit for finished jobs.
struct JobOutcome {
  JobId job;
  uint32_t gpus = 0;
  VcId vc;               // the VC it ran in (cluster's VC id)
  uint16_t gpu_milli = 1000;
  uint16_t preemptions = 0;   // saturates at 65,535
  OutcomeStatus status = OutcomeStatus::kFinished;
  uint8_t reject_reason = 0;  // index into the run's reason table when rejected/skipped
  Time start = kNoTime;  // first start
  Time end = kNoTime;
  Duration run = 0;      // seconds actually running (sum over segments, incl. checkpoint overheads)
  Duration wait = 0;     // seconds pending (sum over all pending periods) = queueing delay
  Duration jct() const { return wait + run; }
};
static_assert(sizeof(JobOutcome) == 48);

// The cluster at one instant of a run (sampled every SimConfig::sample_interval seconds).
struct TimeSample {
  Time t = 0;
  uint64_t busy_gpu_milli = 0;   // allocated GPU share (milli-GPUs)
  uint32_t running = 0;
  uint32_t pending = 0;
  uint64_t pending_gpu_milli = 0;
};

}  // namespace orrery
