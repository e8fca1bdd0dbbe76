// Failure model, checkpoint plans and the training-run simulator (issue #12), by hand arithmetic.
#include <gtest/gtest.h>

#include "model/trace.h"
#include "sim/checkpoint_plan.h"
#include "sim/failure_model.h"
#include "sim/training_run.h"

namespace orrery {
namespace {

CheckpointPlan Plan(const std::string& spec) {
  Result<CheckpointPlan> p = MakeCheckpointPlan(spec);
  EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().message);
  return p.ok() ? *p : CheckpointPlan{};
}
RecoveryPolicy Policy(const std::string& spec) {
  Result<RecoveryPolicy> p = MakeRecovery(spec);
  EXPECT_TRUE(p.ok());
  return p.ok() ? *p : RecoveryPolicy{};
}
FailureModel Model(const std::string& spec) {
  Result<FailureModel> m = MakeFailureModel(spec);
  EXPECT_TRUE(m.ok()) << (m.ok() ? "" : m.error().message);
  return m.ok() ? *m : FailureModel{};
}

TEST(FailureModel, Llama3RatesGiveItsInterruptionCount) {
  const FailureModel m = Llama3Model();
  // 2,048 nodes for 54 x 24 = 1,296 h: 419 unexpected interruptions, 78 % hardware.
  const double hours = 54 * 24, nodes = 2048;
  EXPECT_NEAR((m.NodePerHour() * nodes + m.JobPerHour(nodes)) * hours, 419, 1e-6);
  EXPECT_NEAR(m.NodePerHour() * nodes * hours, 0.78 * 419, 1e-6);
  EXPECT_NEAR(m.node_per_hour[static_cast<int>(FaultCause::kGpu)] * nodes * hours, 0.301 * 419, 1e-6);
  // MTBF of the gang: 1296 h / 419 = 3.093 h.
  EXPECT_NEAR(1.0 / (m.NodePerHour() * nodes + m.JobPerHour(nodes)), 3.093, 1e-3);
}

TEST(FailureModel, SpecErrors) {
  EXPECT_EQ(MakeFailureModel("meta").error().message, "unknown failure model 'meta' (choices: llama3, acme)");
  EXPECT_EQ(MakeFailureModel("llama3:persist=2").error().message,
            "failure model key 'persist': expected a number in [0.000000, 1.000000], got \"2\"");
  EXPECT_NEAR(Model("llama3:scale=2").NodePerHour(), 2 * Llama3Model().NodePerHour(), 1e-15);
  EXPECT_NEAR(Model("llama3:loss_spikes_per_day=2").loss_spike_per_hour, 2.0 / 24, 1e-15);
}

TEST(FailureModel, AttributionByCompetingHazards) {
  const FailureModel m = AcmeModel();
  Job big;
  big.gpus = 1024;
  big.duration = 36000;
  big.state = JobState::kFailed;
  // 128 nodes at 10 h: infra 5.623e-3 x 128 = 0.71974, software 1e-3 x 128 = 0.128, script
  // 0.010772 x 0.2 x 10^-0.8 = 3.4148e-4 per hour -> P(infra) = 0.71974 / 0.84808 = 0.84867.
  EXPECT_NEAR(CategoryPosterior(m, big, 8)[0], 0.84867, 1e-4);
  Job tiny;
  tiny.gpus = 1;
  tiny.duration = 30;
  tiny.state = JobState::kFailed;
  // 1 node at 1/120 h: script 0.0021544 x 120^0.8 = 0.099227, infra 0.005623, software 0.001
  // -> P(script) = 0.099227 / 0.10585 = 0.93743.
  EXPECT_NEAR(CategoryPosterior(m, tiny, 8)[2], 0.93743, 1e-4);
  tiny.state = JobState::kNodeFail;  // the trace says so: infrastructure
  EXPECT_EQ(CategoryPosterior(m, tiny, 8)[0], 1.0);
}

TEST(Checkpoint, YoungDalyInterval) {
  EXPECT_EQ(YoungDalyInterval(200, 10000), 2000);  // sqrt(2 x 200 x 10000) = sqrt(4e6)
  EXPECT_EQ(YoungDalyInterval(120, 11124), 1634);  // sqrt(2,669,760) = 1633.9
  // Async: the stall is the 5-s snapshot: sqrt(2 x 5 x 1000) = 100, but a checkpoint cannot
  // start before the previous one persisted (write = 120 s): 120.
  EXPECT_EQ(IntervalFor(Plan("async:every=young-daly,snapshot=5,write=120"), 1000), 120);
  EXPECT_EQ(IntervalFor(Plan("sync:every=young-daly,write=200"), 10000), 2000);
  EXPECT_EQ(IntervalFor(Plan("sync:every=3h"), 10000), 10800);
  EXPECT_EQ(IntervalFor(Plan("none"), 10000), 0);
  const CheckpointPolicy core = ToCheckpointPolicy(Plan("sync:every=young-daly,write=200,restore=60"), 10000);
  EXPECT_EQ(core.every_seconds, 2000);
  EXPECT_EQ(core.cost, 200);
  EXPECT_EQ(core.restore, 60);
}

TEST(Checkpoint, PlanErrors) {
  EXPECT_EQ(MakeCheckpointPlan("sync").error().message,
            "checkpoint plan 'sync': needs every=DURATION or every=young-daly");
  EXPECT_EQ(MakeCheckpointPlan("lazy:every=1h").error().message,
            "unknown checkpoint plan 'lazy' (choices: none, sync, async)");
}

TEST(Checkpoint, LostWorkSyncVersusAsync) {
  // Sync, every 600 s, 60-s write: cycles of 660 s. A failure 1500 s in: 2 cycles + 180 s of
  // training: work 1380, stalls 120, durable 1200 -> 180 s lost.
  const CheckpointProgress s = RunWithCheckpoints(Plan("sync:every=600,write=60"), 600, 0, 1500);
  EXPECT_EQ(s.work, 1380);
  EXPECT_EQ(s.stall, 120);
  EXPECT_EQ(s.durable, 1200);
  // Async, 5-s snapshot, persisted 120 s later: cycles of 605 s. At 1500: work 1200 + 290,
  // stalls 10; checkpoint 2 (snapshot done at 1210) durable at 1330 <= 1500 -> lost 290.
  const CheckpointPlan a = Plan("async:every=600,snapshot=5,write=120");
  const CheckpointProgress x = RunWithCheckpoints(a, 600, 0, 1500);
  EXPECT_EQ(x.work, 1490);
  EXPECT_EQ(x.stall, 10);
  EXPECT_EQ(x.durable, 1200);
  // At 1300 checkpoint 2 is still persisting (until 1330): durable 600, lost 1290 - 600 = 690.
  const CheckpointProgress y = RunWithCheckpoints(a, 600, 0, 1300);
  EXPECT_EQ(y.work, 1290);
  EXPECT_EQ(y.durable, 600);
  // From a restored checkpoint at 5000 the durable mark starts there.
  EXPECT_EQ(RunWithCheckpoints(a, 600, 5000, 1500).durable, 6200);
}

TEST(TrainingRun, EttrWithoutFailuresIsTheStallShare) {
  FailureModel none;  // no hazards
  TrainingRunSpec spec;
  spec.nodes = 4;
  spec.horizon = 10000;
  // Sync every 900 s, 100-s write: 10 cycles of 1000 s -> 9000 productive, 1000 stalled.
  Result<TrainingRunResult> r =
      SimulateTrainingRun(spec, none, Plan("sync:every=900,write=100"), Policy("acme"), 1);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->ettr, 0.9);
  EXPECT_EQ(r->time.stall, 1000);
  EXPECT_EQ(r->restarts, 0u);
}

TEST(TrainingRun, EveryWallSecondInOneBucket) {
  TrainingRunSpec spec;
  spec.nodes = 256;
  spec.horizon = 20 * 86400;
  for (const char* rec : {"none", "requeue:from=scratch", "requeue", "acme", "acme:spares=4"}) {
    Result<TrainingRunResult> r = SimulateTrainingRun(spec, Model("llama3:loss_spikes_per_day=1,persist=0.5"),
                                                      Plan("async:every=young-daly"), Policy(rec), 7);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->time.total(), spec.horizon) << rec;
    EXPECT_GT(r->restarts, 5u) << rec;
    EXPECT_EQ(r->attempts.attempts.size(), r->by_category[0] + r->by_category[1] + r->by_category[2]) << rec;
  }
}

TEST(TrainingRun, CordonedNodesAreNotReused) {
  // Every node fault persists and makes its node fault 1000x as often until repaired.
  TrainingRunSpec spec;
  spec.nodes = 512;
  spec.horizon = 10 * 86400;
  const FailureModel m = Model("llama3:persist=1,recur=1000");
  Result<TrainingRunResult> acme = SimulateTrainingRun(spec, m, Plan("async:every=young-daly"), Policy("acme:spares=8"), 3);
  Result<TrainingRunResult> rq = SimulateTrainingRun(spec, m, Plan("async:every=young-daly"), Policy("requeue"), 3);
  ASSERT_TRUE(acme.ok() && rq.ok());
  uint32_t node_faults = 0;
  for (int c = 0; c < kNumNodeCauses; ++c) node_faults += acme->faults[c];
  EXPECT_EQ(acme->cordoned, node_faults);  // every faulty node taken out ...
  EXPECT_EQ(acme->flaky_faults, 0u);       // ... so none faults again before its repair
  EXPECT_GT(acme->spares_used, 0u);
  EXPECT_GT(rq->flaky_faults, rq->restarts / 2);  // requeue keeps restarting on the bad node
  EXPECT_GT(acme->ettr, rq->ettr);
}

TEST(TrainingRun, SameSeedSameRunOtherSeedOtherRun) {
  TrainingRunSpec spec;
  spec.nodes = 1024;
  spec.horizon = 5 * 86400;
  const auto run = [&](uint64_t seed) {
    return *SimulateTrainingRun(spec, Llama3Model(), Plan("async:every=young-daly"), Policy("acme:spares=2"), seed);
  };
  const TrainingRunResult a = run(5), b = run(5), c = run(6);
  ASSERT_EQ(a.attempts.attempts.size(), b.attempts.attempts.size());
  for (size_t i = 0; i < a.attempts.attempts.size(); ++i) {
    EXPECT_EQ(a.attempts.attempts[i].end, b.attempts.attempts[i].end);
    EXPECT_EQ(a.attempts.attempts[i].steps_durable, b.attempts.attempts[i].steps_durable);
  }
  EXPECT_EQ(a.time.productive, b.time.productive);
  EXPECT_NE(a.time.productive, c.time.productive);
}

TEST(TrainingRun, AttributeTraceCountsFailedJobs) {
  Trace t;
  for (int i = 0; i < 3; ++i) {
    Job j;
    j.id = JobId(i);
    j.gpus = 8;
    j.duration = 100;
    j.state = i == 0 ? JobState::kCompleted : i == 1 ? JobState::kNodeFail : JobState::kFailed;
    t.jobs.push_back(j);
  }
  const FailureBreakdown b = AttributeTrace(t, AcmeModel(), 8, 1);
  EXPECT_EQ(b.jobs, 3u);
  EXPECT_EQ(b.failed, 2u);
  EXPECT_EQ(b.failed_gpu_seconds, 1600);
  EXPECT_GE(b.by_category[0], 1u);  // the NODE_FAIL job
  EXPECT_NEAR(b.expected_jobs[0] + b.expected_jobs[1] + b.expected_jobs[2], 2.0, 1e-12);
}

}  // namespace
}  // namespace orrery
