// Failure metrics from attempts (analysis/failure_metrics.h), by hand arithmetic.
#include "analysis/failure_metrics.h"

#include <gtest/gtest.h>

namespace orrery {
namespace {

Attempt MakeAttempt(Time start, Time end, int64_t done, int64_t durable, EndCause cause) {
  Attempt a;
  a.job = JobId(0);
  a.start = start;
  a.end = end;
  a.steps_done = done;
  a.steps_durable = durable;
  a.gpus = 8;
  a.cause = cause;
  if (cause == EndCause::kFailed) {
    a.failure = FailureKind::kHardware;
    a.restartable = true;
  }
  return a;
}

TEST(FailureMetrics, OneFailureByHand) {
  // A 200-s, 8-GPU job: fails at 100 s with its checkpoint at step 60, waits 30 s, restarts at
  // 130, restores 10 s and runs the 140 steps left: ends at 280.
  Trace t;
  Job j;
  j.id = JobId(0);
  j.gpus = 8;
  j.duration = 200;
  t.jobs.push_back(j);
  std::vector<JobOutcome> out(1);
  out[0].start = 0;
  out[0].end = 280;
  out[0].status = OutcomeStatus::kFinished;
  AttemptLog log;
  log.Add(MakeAttempt(0, 100, 100, 60, EndCause::kFailed), nullptr, 0);
  log.Add(MakeAttempt(130, 280, 200, 200, EndCause::kFinished), nullptr, 0);
  const FailureMetrics m = ComputeFailureMetrics(t, out, log);
  EXPECT_EQ(m.jobs_with_failures, 1u);
  EXPECT_EQ(m.failed_attempts, 1u);
  EXPECT_EQ(m.recovered, 1u);
  EXPECT_EQ(m.by_kind[static_cast<int>(FailureKind::kHardware)], 1u);
  EXPECT_DOUBLE_EQ(m.lost_work_gpu_hours, 8.0 * 40 / 3600);  // steps 60..100 redone
  EXPECT_DOUBLE_EQ(m.overhead_gpu_hours, 0);                 // the failed attempt ran only steps
  EXPECT_DOUBLE_EQ(m.waiting_gpu_hours, 8.0 * 30 / 3600);
  EXPECT_DOUBLE_EQ(m.mttr_s, 30);
  EXPECT_DOUBLE_EQ(m.ettr, 200.0 / 280.0);
}

}  // namespace
}  // namespace orrery
