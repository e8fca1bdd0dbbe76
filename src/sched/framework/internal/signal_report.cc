#include "sched/framework/internal/signal_report.h"

#include <cmath>

#include "sched/framework/internal/scheduler.h"

namespace orrery {

void ReportReading(Scheduler& sched, uint32_t slot, Time now, const SignalReading& r, Time at) {
  if (r.step >= 0) sched.ReportProgress(slot, now, Progress{r.step, r.total, at});
  if (r.eta_s >= 0) {
    const Duration ran = now - sched.view(slot).started;
    sched.UpdateEstimate(slot, now, ran + static_cast<Duration>(std::ceil(r.eta_s)), EstimateSource::kReported);
  }
}

}  // namespace orrery
