// Harvest of idle rollout GPUs in whole runs (sim/harvest.h): an RL job lends the GPUs of its
// idle rollout workers each step, a queued job borrows them and is preempted at the phase
// boundary; the figures are worked by hand below. Conservation holds with lending on, under
// blocking, backfilling and preemptive policies.
#include <gtest/gtest.h>

#include "base/rng.h"
#include "sched/framework/api/plugin.h"
#include "sched/framework/test_util.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

using testing::AddVc;
using testing::JobSpec;
using testing::MakeTrace;

Cluster OneNode(int nodes = 1) {
  Cluster c;
  c.name = "8gpu";
  c.single_pool = true;
  AddVc(&c, "a", nodes, 8, "H100");
  return c;
}

// Marks trace job `job` as an RL job: one rollout phase of `steps` steps of `step_s` seconds,
// checkpointed when preempted (rl/jobs.cc's core job).
void MakeRl(Trace* t, uint32_t job, int64_t steps, double step_s) {
  t->work.resize(t->jobs.size());
  Phase p;
  p.kind = PhaseKind::kRollout;
  p.steps = steps;
  p.seconds_per_step = step_s;
  p.demand = DemandOf(t->jobs[job]);
  p.checkpoint.on_preempt = true;
  t->work[job] = WorkSpec{{p}};
}

Result<SimResult> RunWith(const Trace& t, const Cluster& c, const std::string& policy, std::vector<HarvestPlan> plans,
                      std::vector<ExplainNote>* notes = nullptr, int64_t watch = -1) {
  SimConfig cfg;
  cfg.policy = policy;
  cfg.sample_interval = 0;
  cfg.harvest = std::move(plans);
  cfg.watch_job = watch;
  cfg.watch_notes = notes;
  return Simulate(t, c, cfg);
}

// One 8-GPU node. Job 0: RL, 8 GPUs at 0, 2 steps of 200 s (2 rollout workers of 4 GPUs; one
// goes idle 40 s into the rollout, which ends at 100; the return wait is 30 s, so the lent
// GPUs are back 130 s into a step). Job 1: 4 GPUs, 140 s of work, submitted at 10.
//   step 1 [0, 200):   at 40 the RL job lends 4 GPUs; job 1 (waiting since 10) starts on them;
//                      at 130 it is preempted after 90 s (90 s of work done, checkpointed; its
//                      restart costs 30 s, PreemptionOverhead(4)), the RL job has 8 GPUs again.
//   step 2 [200, 400): at 240 the RL job lends again; job 1 restarts: 30 + (140 − 90) = 80 s,
//                      it ends at 320, before the return at 330 (nothing to preempt then).
// Job 1: wait (40 − 10) + (240 − 130) = 140, run 90 + 80 = 170, JCT 320 − 10 = 310.
// Lent: 4 GPUs × (130 − 40) + 4 × (330 − 240) = 720 GPU-s; harvested: 4 × 90 + 4 × 80 = 680.
// Without harvest job 1 waits for the RL job's end: it runs [400, 540), JCT 530.
TEST(Harvest, BorrowerStartsOnLentGpusAndIsPreemptedAtTheReturn) {
  const Cluster c = OneNode();
  Trace t = MakeTrace({JobSpec{0, 400, 8}, JobSpec{10, 140, 4}});
  MakeRl(&t, 0, 2, 200);
  const HarvestPlan plan{0, 200, 100 + 30, {HarvestRelease{40, 4}}};
  std::vector<ExplainNote> notes;
  auto r = RunWith(t, c, "fifo", {plan}, &notes, 1);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(CheckConservation(t, *r).ok()) << CheckConservation(t, *r).error().message;
  const JobOutcome& rl = r->outcomes[0];
  EXPECT_EQ(rl.start, 0);
  EXPECT_EQ(rl.end, 400);  // its steps are unchanged: 2 × 200 s
  EXPECT_EQ(rl.preemptions, 0);
  const JobOutcome& b = r->outcomes[1];
  EXPECT_EQ(b.start, 40);
  EXPECT_EQ(b.end, 320);
  EXPECT_EQ(b.wait, 140);
  EXPECT_EQ(b.run, 170);
  EXPECT_EQ(b.preemptions, 1);
  const HarvestStats& h = r->harvest;
  EXPECT_EQ(h.lends, 2u);
  EXPECT_EQ(h.returns, 2u);
  EXPECT_EQ(h.borrower_starts, 2u);
  EXPECT_EQ(h.borrower_preemptions, 1u);
  EXPECT_DOUBLE_EQ(h.lent_gpu_seconds, 720);
  EXPECT_DOUBLE_EQ(h.harvested_gpu_seconds, 680);
  // Busy GPU-seconds: 8 GPUs held all along but [320, 330) (4): 400 × 8 − 10 × 4 = 3160.
  EXPECT_DOUBLE_EQ(r->gpu_seconds_busy, 3160);
  size_t harvest_notes = 0;
  for (const ExplainNote& n : notes) harvest_notes += n.kind == "harvest";
  EXPECT_EQ(harvest_notes, 3u);  // started on lent GPUs, preempted at the return, started again

  auto off = RunWith(t, c, "fifo", {});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(off->outcomes[1].start, 400);
  EXPECT_EQ(off->outcomes[1].end, 540);
  EXPECT_EQ(off->harvest.lends, 0u);
}

// A job that was running on the node before it lent anything is never preempted by the
// return; a borrower that fits in the lent GPUs and ends before the return is not either.
// Node of 8: job 0 (2 GPUs, 1000 s) runs from 0; RL job 1 (6 GPUs, 1 step of 300 s) from 0
// lends 4 GPUs at 50 (return at 100 + 30 = 130); job 2 (4 GPUs, 60 s, submitted 1) borrows
// them [50, 110). Nothing is preempted; lent 4 × 80 = 320, harvested 4 × 60 = 240.
TEST(Harvest, OnlyBorrowersArePreemptedAndOnlyWhenNeeded) {
  const Cluster c = OneNode();
  Trace t = MakeTrace({JobSpec{0, 1000, 2}, JobSpec{0, 300, 6}, JobSpec{1, 60, 4}});
  MakeRl(&t, 1, 1, 300);
  auto r = RunWith(t, c, "fifo", {HarvestPlan{1, 300, 130, {HarvestRelease{50, 4}}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(CheckConservation(t, *r).ok()) << CheckConservation(t, *r).error().message;
  EXPECT_EQ(r->outcomes[2].start, 50);
  EXPECT_EQ(r->outcomes[2].end, 110);
  for (const JobOutcome& o : r->outcomes) EXPECT_EQ(o.preemptions, 0);
  EXPECT_EQ(r->harvest.borrower_preemptions, 0u);
  EXPECT_DOUBLE_EQ(r->harvest.lent_gpu_seconds, 320);
  EXPECT_DOUBLE_EQ(r->harvest.harvested_gpu_seconds, 240);
}

// An RL job never borrows: job 1 (4 GPUs, a rollout phase of its own) waits at 40 although
// 4 GPUs are lent there, and starts when the lending RL job ends at 400.
TEST(Harvest, RlJobsDoNotBorrow) {
  const Cluster c = OneNode();
  Trace t = MakeTrace({JobSpec{0, 400, 8}, JobSpec{10, 140, 4}});
  MakeRl(&t, 0, 2, 200);
  MakeRl(&t, 1, 1, 140);
  auto r = RunWith(t, c, "fifo", {HarvestPlan{0, 200, 130, {HarvestRelease{40, 4}}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(CheckConservation(t, *r).ok());
  EXPECT_EQ(r->outcomes[1].start, 400);
  EXPECT_EQ(r->harvest.lends, 2u);
  EXPECT_EQ(r->harvest.borrower_starts, 0u);
}

// Seeded mixed workloads on 4 nodes: RL jobs lending every step, small jobs borrowing, under
// blocking, backfilling and preemptive policies. Every job is accounted for, no GPU is booked
// twice (ClusterState checks every Apply), and busy GPU-seconds match the jobs' own minus
// what the RL jobs lent.
TEST(Harvest, ConservationOnMixedWorkloads) {
  const Cluster c = OneNode(4);
  uint64_t borrowers = 0, preempted = 0;
  for (uint64_t seed : {1, 2, 3}) {
    Rng rng(seed, "test/harvest");
    std::vector<JobSpec> specs;
    std::vector<uint32_t> rl;
    for (uint32_t i = 0; i < 120; ++i) {
      const Time at = static_cast<Time>(rng.Below(20000));
      if (i % 12 == 0) {
        rl.push_back(i);
        specs.push_back(JobSpec{at, 0, 8});
      } else {
        specs.push_back(JobSpec{at, 30 + static_cast<Duration>(rng.Below(3000)), static_cast<uint32_t>(1u << rng.Below(4))});
      }
    }
    std::stable_sort(specs.begin(), specs.end(), [](const JobSpec& a, const JobSpec& b) { return a.submit < b.submit; });
    Trace t = MakeTrace(specs);
    std::vector<HarvestPlan> plans;
    for (uint32_t i = 0; i < t.jobs.size(); ++i) {
      if (t.jobs[i].duration != 0) continue;
      const int64_t steps = 3 + static_cast<int64_t>(rng.Below(6));
      t.jobs[i].duration = static_cast<Duration>(std::ceil(steps * 250.5));
      MakeRl(&t, i, steps, 250.5);
      plans.push_back(HarvestPlan{i, 250.5, 160.2, {HarvestRelease{60.3, 2}, HarvestRelease{90.7, 4}, HarvestRelease{150, 1}}});
    }
    for (const char* policy : {"fifo", "easy", "srtf", "tiresias"}) {
      auto r = RunWith(t, c, policy, plans);
      ASSERT_TRUE(r.ok()) << policy << ": " << r.error().message;
      Status ok = CheckConservation(t, *r);
      EXPECT_TRUE(ok.ok()) << policy << " seed " << seed << ": " << (ok.ok() ? "" : ok.error().message);
      EXPECT_GT(r->harvest.lends, 0u) << policy;
      EXPECT_LE(r->harvest.harvested_gpu_seconds, r->harvest.lent_gpu_seconds + 1e-9) << policy;
      for (const JobOutcome& o : r->outcomes) EXPECT_EQ(o.status, OutcomeStatus::kFinished) << policy;
      borrowers += r->harvest.borrower_starts;
      preempted += r->harvest.borrower_preemptions;
    }
  }
  EXPECT_GT(borrowers, 0u);  // the runs did lend, borrow and take back
  EXPECT_GT(preempted, 0u);
}

TEST(Harvest, RefusedWhereItsModelDoesNotHold) {
  const Cluster c = OneNode();
  Trace t = MakeTrace({JobSpec{0, 400, 8}, JobSpec{10, 140, 4}});
  auto not_rl = RunWith(t, c, "fifo", {HarvestPlan{1, 200, 130, {HarvestRelease{40, 4}}}});
  ASSERT_FALSE(not_rl.ok());
  EXPECT_NE(not_rl.error().message.find("harvest: job 1 is not an RL job"), std::string::npos) << not_rl.error().message;
  MakeRl(&t, 0, 2, 200);
  SimConfig cfg;
  cfg.harvest = {HarvestPlan{0, 200, 130, {HarvestRelease{40, 4}}}};
  cfg.model_cpu_mem = true;
  auto cpu = Simulate(t, c, cfg);
  ASSERT_FALSE(cpu.ok());
  EXPECT_NE(cpu.error().message.find("cannot be combined with CPU/memory modelling"), std::string::npos);
}

}  // namespace
}  // namespace orrery
