// Failure metrics of a simulated run from its attempts (summary.json "failure_metrics",
// docs/formats/resilience.md): ETTR, GPU-hours lost by cause, failures by kind, mean time to
// recover. Only meaningful for runs with failures; computed from JobOutcome + AttemptLog.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "model/attempt.h"
#include "model/outcome.h"
#include "model/trace.h"

namespace orrery {

struct FailureMetrics {
  uint64_t jobs_with_failures = 0;
  uint64_t failed_attempts = 0, recovered = 0;  // recovered: a failed attempt followed by another attempt
  std::array<uint64_t, kNumFailureKinds> by_kind{};
  // GPU-hours of failed attempts: work lost (steps after the last durable checkpoint, 1 step = 1 s
  // at the requested shape), overhead (their running beyond their new steps: restore, checkpoint
  // stalls); waiting for nodes: pending time between a failure and the job's next start.
  double lost_work_gpu_hours = 0, overhead_gpu_hours = 0, waiting_gpu_hours = 0;
  double mttr_s = 0;  // mean failure -> next start of the same job
  // Over the jobs that failed at least once and then finished: GPU time of their work (trace
  // duration) / GPU time from their first start to their end.
  double ettr = 0;
};

FailureMetrics ComputeFailureMetrics(const Trace& trace, const std::vector<JobOutcome>& outcomes, const AttemptLog& log);

}  // namespace orrery
