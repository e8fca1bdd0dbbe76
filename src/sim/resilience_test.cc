// Failure model, checkpoint plans and the training-run simulator, by hand arithmetic.
#include <gtest/gtest.h>

#include "model/trace.h"
#include "sim/checkpoint_plan.h"
#include "sim/failure_inject.h"
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
            "unknown checkpoint plan 'lazy' (choices: none, sync, async, memory)");
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

TEST(Checkpoint, MemoryPlanReplicatesThenPersistsEveryMth) {
  // memory, every 100 s, 1-s snapshot, replicated 1 s later, every 300 s of training one copy
  // also to storage (120-s write): cycles of 101 s; m = round(300 / 100) = 3 (>= ceil(120 /
  // 101) = 2). At wall 700: 6 cycles (606 s) + 94 s of training -> work 694, stalls 6.
  // Copies 1..6 replicated at j x 101 + 1 <= 700 -> memory mark 600. Storage copies j = 3, 6
  // written at 3 x 101 + 120 = 423 and 6 x 101 + 120 = 726 > 700 -> storage mark 300.
  const CheckpointPlan p = Plan("memory:every=100,snapshot=1,replicate=1,persist_every=300,write=120");
  EXPECT_EQ(StorageEvery(p, 100), 3);
  const CheckpointProgress x = RunWithCheckpoints(p, 100, 0, 700);
  EXPECT_EQ(x.work, 694);
  EXPECT_EQ(x.stall, 6);
  EXPECT_EQ(x.durable_memory, 600);
  EXPECT_EQ(x.durable, 300);
  // Restarted from a memory copy at 5,000 whose storage mark is 4,800: 250 s in, copies 1, 2
  // replicated (103 s, 203 s), none on storage yet -> storage mark stays 4,800.
  const CheckpointProgress y = RunWithCheckpoints(p, 100, 5000, 250, 4800);
  EXPECT_EQ(y.durable_memory, 5200);
  EXPECT_EQ(y.durable, 4800);
  // Young/Daly from the 1-s snapshot: sqrt(2 x 1 x 11,134) = 149.2 -> 149 s; write 120 s and
  // persist_every 1 h: m = round(3600 / 149) = 24.
  const CheckpointPlan yd = Plan("memory:every=young-daly,snapshot=1");
  EXPECT_EQ(IntervalFor(yd, 11134), 149);
  EXPECT_EQ(StorageEvery(yd, 149), 24);
  // A storage write longer than m cycles stretches m: write 500 s, cycles of 101 s -> m = 5.
  EXPECT_EQ(StorageEvery(Plan("memory:every=100,snapshot=1,persist_every=100,write=500"), 100), 5);
}

TEST(Checkpoint, RestoreTierByFault) {
  const CheckpointPlan peer = Plan("memory:every=100"), local = Plan("memory:every=100,peers=0");
  const CheckpointPlan async = Plan("async:every=100");
  struct Row {
    const CheckpointPlan* plan;
    FaultCause cause;
    bool replaced;
    RestoreTier want;
  } rows[] = {
      {&peer, FaultCause::kGpu, true, RestoreTier::kMemory},          // a peer holds the node's copy
      {&peer, FaultCause::kHost, true, RestoreTier::kMemory},
      {&peer, FaultCause::kLossSpike, false, RestoreTier::kStorage},  // rolls back past the copies
      {&local, FaultCause::kGpu, true, RestoreTier::kStorage},        // the copy left with the node
      {&local, FaultCause::kGpu, false, RestoreTier::kMemory},        // same node, host memory kept
      {&local, FaultCause::kHost, false, RestoreTier::kStorage},      // rebooted: host memory lost
      {&local, FaultCause::kFramework, false, RestoreTier::kMemory},
      {&async, FaultCause::kFramework, false, RestoreTier::kStorage},
  };
  for (const Row& r : rows)
    EXPECT_EQ(TierAfter(*r.plan, r.cause, r.replaced), r.want) << FaultCauseName(r.cause) << " " << r.replaced;
  EXPECT_EQ(MakeCheckpointPlan("memory:every=1h,peers=x").error().message,
            "checkpoint plan key 'peers': expected an integer in [0, 64], got \"x\"");
  EXPECT_EQ(MakeCheckpointPlan("async:every=1h,peers=1").error().message,
            "checkpoint plan 'async': unknown key 'peers' (keys: every, write, snapshot, restore, init)");
}

// Framework faults only (no node named, nothing cordoned): every gap between two attempts is
// the restart's cost, and every attempt loses only the training since its last replicated copy.
TrainingRunResult FrameworkFaultsOnly(const std::string& recovery, const std::string& plan) {
  FailureModel m;
  m.framework_per_node_hour = 0.05;  // 4 nodes: one fault per 5 h
  TrainingRunSpec spec;
  spec.nodes = 4;
  spec.horizon = 20 * 86400;
  Result<TrainingRunResult> r = SimulateTrainingRun(spec, m, Plan(plan), Policy(recovery), 11);
  EXPECT_TRUE(r.ok());
  return r.ok() ? *r : TrainingRunResult{};
}

TEST(TrainingRun, RestoreFromPeerMemoryCostAndStepsLost) {
  const std::string plan = "memory:every=100,snapshot=1,replicate=1";
  struct Row {
    const char* recovery;
    Duration gap;  // fault -> next attempt's start
  } rows[] = {
      // in-job, overlap: detect 4 + max(diagnose 60, reinit 150) + restore_memory 1 = 155.
      {"acme:spares=2,restart=in-job,overlap=true,detect=4s", 155},
      // in-job, no overlap: 4 + 60 + 150 + 1 = 215.
      {"acme:spares=2,restart=in-job,detect=4s", 215},
      // job restart: 4 + 60 + swap 30 + restore 300 (the relaunch) = 394; overlap: 4 + 60 + 300.
      {"acme:spares=2,detect=4s", 394},
      {"acme:spares=2,overlap=true,detect=4s", 364},
  };
  for (const Row& row : rows) {
    const TrainingRunResult r = FrameworkFaultsOnly(row.recovery, plan);
    const auto& at = r.attempts.attempts;
    ASSERT_GT(at.size(), 50u) << row.recovery;
    EXPECT_EQ(r.memory_restores, at.size()) << row.recovery;
    for (size_t i = 0; i + 1 < at.size(); ++i) {
      ASSERT_EQ(at[i + 1].start - at[i].end, row.gap) << row.recovery << " attempt " << i;
      // Lost: the training since the last copy replicated 1 s after its snapshot. Cycles of
      // 101 s: at e s into an attempt the last replicated copy covers 100 x floor((e - 1) / 101)
      // more training than its start; lost = work - that, less than 100 + 1 + 1 s.
      const Duration e = at[i].end - at[i].start, k = e / 101;
      const Duration work = k * 100 + std::min<Duration>(e - k * 101, 100);
      const Duration copies = e >= 1 ? std::min(k, (e - 1) / 101) : 0;
      EXPECT_EQ(at[i].steps_done - at[i].steps_durable, work - copies * 100) << row.recovery << " attempt " << i;
    }
    EXPECT_EQ(r.time.total(), 20 * 86400) << row.recovery;
  }
  // The in-job rows restart every time in the job (no node replaced: no spare needed).
  EXPECT_EQ(FrameworkFaultsOnly(rows[0].recovery, plan).in_job_restarts,
            FrameworkFaultsOnly(rows[0].recovery, plan).restarts);
}

TEST(TrainingRun, InJobRestartNeedsASpareForANodeFault) {
  // Node faults only; no spares: every restart relaunches the job on a cold node (600 s).
  FailureModel m;
  m.node_per_hour[static_cast<int>(FaultCause::kGpu)] = 0.05;
  TrainingRunSpec spec;
  spec.nodes = 4;
  spec.horizon = 10 * 86400;
  spec.cold_nodes = 64;
  const std::string plan = "memory:every=100,snapshot=1,replicate=1";
  Result<TrainingRunResult> none =
      SimulateTrainingRun(spec, m, Plan(plan), Policy("acme:restart=in-job,overlap=true,detect=4s"), 3);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none->in_job_restarts, 0u);
  // 4 + 60 + cold node 600 + restore 300 = 964 s per fault (overlap credit min(60, 600) = 60).
  const auto& a = none->attempts.attempts;
  ASSERT_GT(a.size(), 3u);
  EXPECT_EQ(a[1].start - a[0].end, 4 + 600 + 300);
  // 64 spares: a warm spare takes the ranks: 4 + max(60, 150) + 1 = 155 s.
  Result<TrainingRunResult> spares =
      SimulateTrainingRun(spec, m, Plan(plan), Policy("acme:spares=64,restart=in-job,overlap=true,detect=4s"), 3);
  ASSERT_TRUE(spares.ok());
  EXPECT_EQ(spares->in_job_restarts, spares->restarts);
  EXPECT_EQ(spares->attempts.attempts[1].start - spares->attempts.attempts[0].end, 155);
  // Local copies only (peers=0): the replaced node's copy is gone, storage (hourly) it is.
  Result<TrainingRunResult> local = SimulateTrainingRun(
      spec, m, Plan(plan + ",peers=0"), Policy("acme:spares=64,restart=in-job,overlap=true,detect=4s"), 3);
  ASSERT_TRUE(local.ok());
  EXPECT_EQ(local->memory_restores, 0u);
  EXPECT_GT(local->time.lost_work, 3 * spares->time.lost_work);
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

TEST(TrainingRun, InMemoryInJobRunsAreDeterministic) {
  TrainingRunSpec spec;
  spec.nodes = 1024;
  spec.horizon = 5 * 86400;
  const auto run = [&](uint64_t seed) {
    return *SimulateTrainingRun(spec, Model("llama3:persist=0.5,loss_spikes_per_day=1"),
                                Plan("memory:every=young-daly,snapshot=1"),
                                Policy("acme:spares=2,restart=in-job,overlap=true,detect=4s"), seed);
  };
  const TrainingRunResult a = run(5), b = run(5), c = run(6);
  ASSERT_EQ(a.attempts.attempts.size(), b.attempts.attempts.size());
  for (size_t i = 0; i < a.attempts.attempts.size(); ++i) {
    EXPECT_EQ(a.attempts.attempts[i].end, b.attempts.attempts[i].end);
    EXPECT_EQ(a.attempts.attempts[i].steps_durable, b.attempts.attempts[i].steps_durable);
  }
  EXPECT_EQ(a.time.productive, b.time.productive);
  EXPECT_EQ(a.in_job_restarts, b.in_job_restarts);
  EXPECT_NE(a.time.productive, c.time.productive);
  EXPECT_EQ(a.time.total(), spec.horizon);
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

// Trace runs take the training runs' decision: a recorded NODE_FAIL under acme holds the GPUs
// for the diagnosis (60 s; the recorded end is the detection) and cordons the node for the
// model's repair (1 day) or reboot (1 h), whichever stream failures/repair draws (seed 1: its
// first uniform is 0.411 < repair_share 0.54: a repair); under requeue it is retried at once,
// nothing cordoned; under none it is not retried.
TEST(TraceFailures, RecordedFailuresTakeThePolicysDelaysAndCordon) {
  Trace t;
  Job j;
  j.id = JobId(0);
  j.gpus = 16;
  j.duration = 5000;
  j.state = JobState::kNodeFail;
  t.jobs.push_back(j);
  struct Row {
    const char* recovery;
    bool retried;
    Duration hold, cordon;
  } rows[] = {{"acme", true, 60, 86400}, {"requeue", true, 0, 0}, {"none", false, 0, 0}};
  for (const Row& row : rows) {
    InjectedSummary sum;
    const std::vector<InjectedFailure> f = RecordedFailures(t, AcmeModel(), Policy(row.recovery), 8, 1, &sum);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].after, 4999);
    EXPECT_EQ(f[0].restartable, row.retried) << row.recovery;
    EXPECT_EQ(f[0].hold, row.hold) << row.recovery;
    EXPECT_EQ(f[0].cordon_for, row.cordon) << row.recovery;
    EXPECT_DOUBLE_EQ(sum.held_gpu_seconds, row.hold * 16.0) << row.recovery;
  }
  // Drawn faults are detected too: acme holds 10 + 60 s for a node fault of a 2-node job.
  FailureModel gpu_only;
  gpu_only.node_per_hour[static_cast<int>(FaultCause::kGpu)] = 10;  // ~ one per 3 min per node
  const std::vector<InjectedFailure> d = DrawFailures(t, gpu_only, Policy("acme"), 8, 1, 8, nullptr);
  ASSERT_FALSE(d.empty());
  for (const InjectedFailure& f : d) {
    EXPECT_EQ(f.hold, 70);
    EXPECT_TRUE(f.cordon_for == gpu_only.repair || f.cordon_for == gpu_only.reboot) << f.cordon_for;
  }
}

// A cordoned node needs a repair with probability repair_share, else a reboot. Hand cases: share
// 0 and 1 are certain; the published default (0.54, repair 1 day, reboot 1 h) gives a mean of
// 0.54 × 24 h + 0.46 × 1 h = 13.42 node-hours per cordon. Over 10,000 draws the standard error
// is sqrt(0.54 × 0.46) × 23 h / 100 = 0.115 h; the seed is fixed, the bound is 4 of them.
TEST(TraceFailures, CordonIsARepairOrAReboot) {
  FailureModel m = AcmeModel();
  EXPECT_EQ(m.repair, 86400);
  EXPECT_EQ(m.reboot, 3600);
  EXPECT_DOUBLE_EQ(m.repair_share, 0.54);
  Rng rng(1, "failures/repair");
  m.repair_share = 0;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(CordonDuration(m, rng), 3600);
  m.repair_share = 1;
  for (int i = 0; i < 100; ++i) EXPECT_EQ(CordonDuration(m, rng), 86400);
  m.repair_share = 0.54;
  double hours = 0;
  int repairs = 0;
  for (int i = 0; i < 10000; ++i) {
    const Duration d = CordonDuration(m, rng);
    hours += static_cast<double>(d) / 3600.0;
    repairs += d == 86400;
  }
  EXPECT_NEAR(hours / 10000, 13.42, 4 * 0.115);
  EXPECT_NEAR(repairs / 10000.0, 0.54, 4 * 0.005);  // sqrt(0.54 × 0.46 / 10,000) = 0.005
  // The keys override them; a share outside [0, 1] is refused.
  Result<FailureModel> k = MakeFailureModel("acme:repair=3d,repair_share=0.25,reboot=30m");
  ASSERT_TRUE(k.ok()) << k.error().message;
  EXPECT_EQ(k->repair, 3 * 86400);
  EXPECT_EQ(k->reboot, 1800);
  EXPECT_DOUBLE_EQ(k->repair_share, 0.25);
  EXPECT_EQ(MakeFailureModel("acme:repair_share=2").error().message,
            "failure model key 'repair_share': expected a number in [0.000000, 1.000000], got \"2\"");
}

}  // namespace
}  // namespace orrery
