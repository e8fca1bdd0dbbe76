// Phases, checkpoints, failures and attempts (docs/design/job-model.md): the simulator's
// truth (SimTruth) by hand arithmetic, then whole runs with attempts recorded.
#include <gtest/gtest.h>

#include "sched/framework/internal/scheduler.h"
#include "sched/framework/test_util.h"
#include "sim/simulator.h"
#include "sim/truth.h"

namespace orrery {
namespace {

using testing::AddVc;
using testing::JobSpec;
using testing::MakeTrace;

// One train phase of 1000 steps at 1 step/s, a checkpoint every 100 steps costing `cost` s,
// restored in 10 s; a preemption is not announced (on_preempt = false).
WorkSpec Periodic(Duration cost) {
  Phase p;
  p.kind = PhaseKind::kTrain;
  p.steps = 1000;
  p.demand.gpus = 4;
  p.checkpoint.every_steps = 100;
  p.checkpoint.cost = cost;
  p.checkpoint.restore = 10;
  p.checkpoint.on_preempt = false;
  return WorkSpec{{p}};
}

Job TraceJob(uint32_t gpus, Duration duration) {
  Job j;
  j.id = JobId(0);
  j.gpus = gpus;
  j.duration = duration;
  return j;
}

TEST(SimTruth, PreemptedJobLosesOnlyTheStepsSinceItsLastCheckpoint) {
  const std::vector<WorkSpec> work{Periodic(0)};
  SimTruth truth(&PreemptionOverhead, &work);
  truth.Submitted(0, TraceJob(4, 1000), 0);
  EXPECT_EQ(truth.Remaining(0), 1000);  // 1000 steps × 1 s, free checkpoints
  truth.Started(0, 0);
  truth.Stopped(0, 250, EndCause::kPreempted);
  // 250 steps done; the last checkpoint covers 200; the 50 after it are lost.
  EXPECT_EQ(truth.steps_done(0), 250);
  EXPECT_EQ(truth.steps_durable(0), 200);
  // Restart: restore 10 s + the 800 steps from 200.
  EXPECT_EQ(truth.Remaining(0), 10 + 800);
  truth.Started(0, 300);
  EXPECT_EQ(truth.TrueEnd(0), 300 + 810);
}

TEST(SimTruth, CheckpointCostsStallTheJob) {
  const std::vector<WorkSpec> work{Periodic(5)};
  SimTruth truth(&PreemptionOverhead, &work);
  truth.Submitted(0, TraceJob(4, 1000), 0);
  // 1000 s of steps + 9 checkpoints (after steps 100..900; none at the phase end) × 5 s.
  EXPECT_EQ(truth.Remaining(0), 1000 + 9 * 5);
  truth.Started(0, 0);
  truth.Stopped(0, 250, EndCause::kPreempted);
  // 0-100 steps, 100-105 ckpt (durable 100), 105-205 steps, 205-210 ckpt (durable 200),
  // 210-250: 40 more steps → 240 done, 200 durable.
  EXPECT_EQ(truth.steps_done(0), 240);
  EXPECT_EQ(truth.steps_durable(0), 200);
  // restore 10 + 800 steps + checkpoints after 300..900 (7) × 5.
  EXPECT_EQ(truth.Remaining(0), 10 + 800 + 7 * 5);
}

// A trace job checkpoints when preempted: nothing is lost, the policy's overhead is charged
// and a later preemption during that overhead keeps the unfinished part of it.
TEST(SimTruth, TraceJobPreemptionChargesTheOverheadAndLosesNoWork) {
  SimTruth truth([](uint32_t) -> Duration { return 30; }, nullptr);
  truth.Submitted(0, TraceJob(4, 100), 0);
  truth.Started(0, 0);
  truth.Stopped(0, 40, EndCause::kPreempted);
  EXPECT_EQ(truth.Remaining(0), 60 + 30);  // (100 − 40) left + 30 s overhead
  EXPECT_EQ(truth.steps_durable(0), 40);
  EXPECT_EQ(truth.RestartCost(0), 30);
  truth.Started(0, 50);
  truth.Stopped(0, 60, EndCause::kPreempted);  // 10 s into the 30-s overhead: no step done
  EXPECT_EQ(truth.steps_done(0), 40);
  EXPECT_EQ(truth.Remaining(0), 90 - 10 + 30);
  // A failure (not announced) loses the attempt's steps: from 40 again, restart cost pending.
  truth.Started(0, 100);
  truth.Stopped(0, 200, EndCause::kFailed);  // 50 s of overhead, then 50 steps, lost
  EXPECT_EQ(truth.steps_done(0), 90);
  EXPECT_EQ(truth.steps_durable(0), 40);
  EXPECT_EQ(truth.Remaining(0), 60);  // overhead paid; 60 steps from 40
}

// One 4-GPU node; the job of Periodic(0) fails (restartable) 250 s into its first attempt:
// attempt 0 = [0, 250) failed at 250 steps, 200 durable; attempt 1 starts at once and needs
// 10 + 800 s: ends 1060.
TEST(SimJobModel, RestartableFailureRestartsFromTheLastCheckpoint) {
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({JobSpec{.submit = 0, .duration = 1000, .gpus = 4}});
  t.work = {Periodic(0)};
  SimConfig cfg;
  cfg.policy = "fifo";
  cfg.record_attempts = true;
  cfg.failures = {InjectedFailure{0, 0, 250, FailureKind::kHardware, true}};
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(CheckConservation(t, *r).ok());
  const JobOutcome& o = r->outcomes[0];
  EXPECT_EQ(o.status, OutcomeStatus::kFinished);
  EXPECT_EQ(o.start, 0);
  EXPECT_EQ(o.end, 1060);
  EXPECT_EQ(o.run, 1060);
  ASSERT_EQ(r->attempts.attempts.size(), 2u);
  const Attempt &a0 = r->attempts.attempts[0], &a1 = r->attempts.attempts[1];
  EXPECT_EQ(a0.cause, EndCause::kFailed);
  EXPECT_EQ(a0.failure, FailureKind::kHardware);
  EXPECT_TRUE(a0.restartable);
  EXPECT_EQ(a0.start, 0);
  EXPECT_EQ(a0.end, 250);
  EXPECT_EQ(a0.steps_done, 250);
  EXPECT_EQ(a0.steps_durable, 200);
  EXPECT_EQ(a0.node_count, 1);
  EXPECT_EQ(a1.index, 1);
  EXPECT_EQ(a1.cause, EndCause::kFinished);
  EXPECT_EQ(a1.start, 250);
  EXPECT_EQ(a1.end, 1060);
  EXPECT_EQ(a1.steps_done, 1000);
}

// The same failure with a 70-s hold (detection 10 + diagnosis 60, acme): the attempt makes
// no progress after 250 but keeps the node until 320: attempt 0 = [0, 320), 250 steps done,
// 200 durable; attempt 1 starts at 320 and needs 10 + 800 s: ends 1130.
TEST(SimJobModel, HeldFailureKeepsTheGpusUntilTheDecision) {
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({JobSpec{.submit = 0, .duration = 1000, .gpus = 4}});
  t.work = {Periodic(0)};
  SimConfig cfg;
  cfg.policy = "fifo";
  cfg.record_attempts = true;
  InjectedFailure f{0, 0, 250, FailureKind::kHardware, true};
  f.hold = 70;
  cfg.failures = {f};
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(CheckConservation(t, *r).ok());
  EXPECT_EQ(r->outcomes[0].end, 1130);
  ASSERT_EQ(r->attempts.attempts.size(), 2u);
  const Attempt& a0 = r->attempts.attempts[0];
  EXPECT_EQ(a0.end, 320);
  EXPECT_EQ(a0.steps_done, 250);
  EXPECT_EQ(a0.steps_durable, 200);
  EXPECT_EQ(r->attempts.attempts[1].start, 320);
  // A hold longer than the work left: the completion (at 1000) is cancelled, the failure
  // decides at 990 + 70 = 1060; restart from 900 (+10 restore): 1060 + 110 = 1170.
  cfg.failures[0].after = 990;
  auto late = Simulate(t, c, cfg);
  ASSERT_TRUE(late.ok()) << late.error().message;
  EXPECT_EQ(late->attempts.attempts[0].end, 1060);
  EXPECT_EQ(late->attempts.attempts[0].steps_done, 990);
  EXPECT_EQ(late->outcomes[0].end, 1170);
}

// Two 4-GPU nodes. Job 0 (100 s) fails 30 s in and its node is cordoned for `cordon_for`; job 1
// holds the other node until 200. No cordon: job 0 restarts at once on its node (30..130);
// cordoned 100 s: back at 130, runs 130..230; cordoned 1000 s: waits for job 1's node (200..300).
TEST(SimJobModel, CordonedNodeLeavesPlacementUntilItsRepair) {
  Cluster c;
  AddVc(&c, "a", 2, 4);
  const Trace t = MakeTrace({JobSpec{.submit = 0, .duration = 100, .gpus = 4}, JobSpec{.submit = 0, .duration = 200, .gpus = 4}});
  struct Row {
    Duration cordon_for;
    Time end;
    uint64_t cordoned;
  } rows[] = {{0, 130, 0}, {100, 230, 1}, {1000, 300, 1}};
  for (const Row& row : rows) {
    SimConfig cfg;
    cfg.policy = "fifo";
    InjectedFailure f{0, 0, 30, FailureKind::kHardware, true};
    f.cordon_for = row.cordon_for;
    cfg.failures = {f};
    auto r = Simulate(t, c, cfg);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(CheckConservation(t, *r).ok());
    EXPECT_EQ(r->outcomes[0].end, row.end) << row.cordon_for;
    EXPECT_EQ(r->cordoned_nodes, row.cordoned) << row.cordon_for;
  }
  SimConfig energy;
  energy.energy = "ces";
  InjectedFailure f{0, 0, 30, FailureKind::kHardware, true};
  f.cordon_for = 10;
  energy.failures = {f};
  EXPECT_EQ(Simulate(t, c, energy).error().message,
            "cordoning failed nodes (recovery acme) cannot be combined with energy saving (--energy)");
}

// One 8-GPU node shared by job 0 (4 GPUs, fails at 30, its node cordoned 50 s) and job 1
// (4 GPUs, 0..200): the node is drained -- job 1 runs on, but job 0's freed GPUs take no job
// until the repair ends at 80: job 0 restarts then, 80..180. Job 2 (8 GPUs, submitted at 150)
// starts when both have ended, at 200. (Undrained, job 0 would restart at 30.)
TEST(SimJobModel, DrainedNodeKeepsItsJobsAndTakesNoNewOnes) {
  Cluster c;
  AddVc(&c, "a", 1, 8);
  const Trace t = MakeTrace({JobSpec{.submit = 0, .duration = 100, .gpus = 4}, JobSpec{.submit = 0, .duration = 200, .gpus = 4},
                             JobSpec{.submit = 150, .duration = 10, .gpus = 8}});
  SimConfig cfg;
  cfg.policy = "fifo";
  InjectedFailure f{0, 0, 30, FailureKind::kHardware, true};
  f.cordon_for = 50;
  cfg.failures = {f};
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(CheckConservation(t, *r).ok());
  EXPECT_EQ(r->outcomes[0].start, 0);
  EXPECT_EQ(r->outcomes[0].end, 180);
  EXPECT_EQ(r->outcomes[1].end, 200);
  EXPECT_EQ(r->outcomes[2].start, 200);
  EXPECT_EQ(r->outcomes[2].end, 210);
  EXPECT_EQ(r->cordoned_nodes, 1u);
}

TEST(SimJobModel, NonRestartableFailureEndsTheJob) {
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({JobSpec{.submit = 0, .duration = 100, .gpus = 4}, JobSpec{.submit = 10, .duration = 50, .gpus = 4}});
  SimConfig cfg;
  cfg.policy = "fifo";
  cfg.record_attempts = true;
  cfg.failures = {InjectedFailure{0, 0, 30, FailureKind::kUser, false}};
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(CheckConservation(t, *r).ok());
  EXPECT_EQ(r->outcomes[0].status, OutcomeStatus::kFailed);
  EXPECT_EQ(r->outcomes[0].end, 30);
  // Job 1 takes the node when job 0 fails: 30..80.
  EXPECT_EQ(r->outcomes[1].start, 30);
  EXPECT_EQ(r->outcomes[1].end, 80);
  ASSERT_EQ(r->attempts.attempts.size(), 2u);
  EXPECT_FALSE(r->attempts.attempts[0].restartable);
}

// Progress reports from a job with phases reach the scheduler as its believed end.
TEST(SimJobModel, ProgressReportsUpdateTheBelievedEnd) {
  Cluster c;
  AddVc(&c, "a", 1, 4);
  Trace t = MakeTrace({JobSpec{.submit = 0, .duration = 1000, .gpus = 4}});
  t.work = {Periodic(0)};
  SimConfig cfg;
  cfg.policy = "fifo";
  cfg.progress_report = 100;
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->outcomes[0].end, 1000);  // reports change beliefs, never the truth
}

}  // namespace
}  // namespace orrery
