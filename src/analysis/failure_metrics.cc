#include "analysis/failure_metrics.h"

#include <algorithm>

namespace orrery {

FailureMetrics ComputeFailureMetrics(const Trace& trace, const std::vector<JobOutcome>& outcomes, const AttemptLog& log) {
  FailureMetrics m;
  const size_t n = trace.jobs.size();
  std::vector<int64_t> durable(n, 0);       // steps durable when the job's last attempt ended
  std::vector<Time> failed_at(n, kNoTime);  // end of the job's last failed attempt, until it restarts
  std::vector<uint8_t> failed(n, 0);
  double recover_sum = 0;
  for (const Attempt& a : log.attempts) {
    const uint32_t j = a.job.v;
    if (j >= n) continue;
    const double gpus = a.gpus;
    if (failed_at[j] != kNoTime) {  // the attempt after a failure
      recover_sum += static_cast<double>(a.start - failed_at[j]);
      m.waiting_gpu_hours += gpus * static_cast<double>(a.start - failed_at[j]) / 3600.0;
      ++m.recovered;
      failed_at[j] = kNoTime;
    }
    if (a.cause == EndCause::kFailed) {
      ++m.failed_attempts;
      ++m.by_kind[static_cast<int>(a.failure)];
      const int64_t new_steps = std::max<int64_t>(0, a.steps_done - durable[j]);
      m.lost_work_gpu_hours += gpus * static_cast<double>(a.steps_done - a.steps_durable) / 3600.0;
      m.overhead_gpu_hours += gpus * static_cast<double>(std::max<int64_t>(0, (a.end - a.start) - new_steps)) / 3600.0;
      failed[j] = 1;
      if (a.restartable) failed_at[j] = a.end;
    }
    durable[j] = a.steps_durable;
  }
  double work = 0, wall = 0;
  for (size_t j = 0; j < n && j < outcomes.size(); ++j) {
    if (!failed[j]) continue;
    ++m.jobs_with_failures;
    const JobOutcome& o = outcomes[j];
    if (o.status != OutcomeStatus::kFinished || o.start == kNoTime) continue;
    work += static_cast<double>(trace.jobs[j].gpus) * static_cast<double>(trace.jobs[j].duration);
    wall += static_cast<double>(trace.jobs[j].gpus) * static_cast<double>(o.end - o.start);
  }
  m.mttr_s = m.recovered ? recover_sum / static_cast<double>(m.recovered) : 0;
  m.ettr = wall > 0 ? work / wall : 0;
  return m;
}

}  // namespace orrery
