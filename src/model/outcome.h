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
};

struct JobOutcome {
  JobId job;
  VcId vc;               // the VC it ran in (cluster's VC id)
  uint32_t gpus = 0;
  uint16_t gpu_milli = 1000;
  Time submit = 0;
  Time start = kNoTime;  // first start
  Time end = kNoTime;
  Duration run = 0;      // seconds actually running (sum over segments, incl. checkpoint overheads)
  Duration wait = 0;     // seconds pending (sum over all pending periods) = queueing delay
  uint32_t preemptions = 0;
  OutcomeStatus status = OutcomeStatus::kFinished;
  uint8_t reject_reason = 0;  // index into the run's reason table when rejected
};

// The cluster at one instant of a run (sampled every SimConfig::sample_interval seconds).
struct TimeSample {
  Time t = 0;
  uint64_t busy_gpu_milli = 0;   // allocated GPU share (milli-GPUs)
  uint32_t running = 0;
  uint32_t pending = 0;
  uint64_t pending_gpu_milli = 0;
};

}  // namespace orrery
