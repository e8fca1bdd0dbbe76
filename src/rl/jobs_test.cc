// RL jobs in a simulated workload: the jobs file, the generated share, the core jobs they
// become, and the run's RL figures worked by hand.
#include "rl/jobs.h"

#include <string>

#include <gtest/gtest.h>

namespace orrery::rl {
namespace {

const char* kJobs =
    "# two jobs\n"
    "submit,user,vc,name,model,gpu,gpus,tp,prompts,samples,max_response,steps\n"
    "300,dana,gpu,grpo-a,qwen2.5-7b,h100,8,4,8,4,2048,20\n"
    "900,dana,gpu,grpo-b,qwen2.5-7b,h100,8,4,8,4,2048,10\n";

TEST(RlJobsFile, RowsTakeDefaultsForMissingColumns) {
  auto jobs = ParseRlJobs("submit,model,gpus,steps\n5,qwen2.5-32b,128,385\n", "j.csv");
  ASSERT_TRUE(jobs.ok()) << jobs.error().message;
  ASSERT_EQ(jobs->size(), 1u);
  const RlJobSpec& j = (*jobs)[0];
  EXPECT_EQ(j.submit, 5);
  EXPECT_EQ(j.request.model, "qwen2.5-32b");
  EXPECT_EQ(j.request.gpus, 128u);
  EXPECT_EQ(j.steps, 385u);
  EXPECT_EQ(j.request.prompts, 64u);  // orrery rl step's defaults
  EXPECT_EQ(j.request.max_response, 32768u);
  EXPECT_EQ(j.where, "j.csv:2");
}

TEST(RlJobsFile, BadInputIsLocated) {
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"submit,model,gpus\n0,qwen2.5-7b,8\n", "f.csv:1:1: expected a column 'steps' in the header"},
      {"submit,model,gpus,steps,colour\n", "f.csv:1:25: unknown column \"colour\""},
      {"submit,model,gpus,steps,steps\n", "f.csv:1:25: column \"steps\" given twice"},
      {"submit,model,gpus,steps\n0,qwen2.5-7b,0,10\n", "f.csv:2:14: field 'gpus': expected an integer from 1 to 100000, got \"0\""},
      {"submit,model,gpus,steps\n0,qwen2.5-7b,8\n", "f.csv:2:1: expected 4 fields, found 3"},
      {"submit,model,gpus,steps\n", "f.csv: no RL jobs"},
  };
  for (const Case& c : cases) {
    auto r = ParseRlJobs(c.text, "f.csv");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.error), std::string::npos) << r.error().message;
  }
}

TEST(RlJobsExpand, EachJobIsOneRolloutPhaseAtItsStrategysStepTime) {
  Trace t;
  auto specs = ParseRlJobs(kJobs, "j.csv");
  ASSERT_TRUE(specs.ok());
  auto x = AddRlJobs(*specs, "tlt", &t);
  ASSERT_TRUE(x.ok()) << x.error().message;
  ASSERT_EQ(t.jobs.size(), 2u);
  EXPECT_EQ(x->costs.size(), 1u);  // both jobs share one setting: the step model ran once
  const RlStepCost& c = *x->jobs[0].cost;
  EXPECT_EQ(c.step.name, "tlt");
  EXPECT_EQ(c.sync.name, "sync");
  EXPECT_GT(c.step.step_time_s, 0);
  ASSERT_EQ(t.work[1].phases.size(), 1u);
  const Phase& p = t.work[1].phases[0];
  EXPECT_EQ(p.kind, PhaseKind::kRollout);
  EXPECT_EQ(p.steps, 10);
  EXPECT_DOUBLE_EQ(p.seconds_per_step, c.step.step_time_s);
  EXPECT_EQ(t.jobs[1].gpus, 8u);
  EXPECT_EQ(t.jobs[1].submit, 900);
  EXPECT_EQ(t.jobs[1].kind, JobKind::kFinetune);
  EXPECT_EQ(t.jobs[1].duration, static_cast<Duration>(std::ceil(10 * c.step.step_time_s)));
  EXPECT_EQ(t.names.Get(t.jobs[0].name.v), "grpo-a");
  EXPECT_TRUE(AddRlJobs(*specs, "harvest", &t).ok());  // simulated since harvest lends in the simulator
  EXPECT_FALSE(AddRlJobs(*specs, "fastest", &t).ok());
}

TEST(RlJobsReport, FiguresByHand) {
  RlStepCost cost;
  cost.step.step_time_s = 100, cost.step.rollout_s = 80, cost.step.tail_s = 30, cost.step.reward_s = 5;
  cost.step.train_s = 14, cost.step.sync_s = 1, cost.step.idle_gpu_frac = 0.25;
  cost.sync.step_time_s = 150;
  RlExpansion x;
  x.strategy = "tlt";
  x.jobs = {{0, 10, 8, &cost}, {2, 10, 16, &cost}};
  std::vector<JobOutcome> o(4);
  o[0].status = OutcomeStatus::kFinished, o[0].run = 1000, o[0].wait = 50;
  o[2].status = OutcomeStatus::kUnfinished, o[2].run = 250;
  o[1].status = OutcomeStatus::kFinished, o[1].run = 300, o[1].wait = 100, o[1].preemptions = 2;
  o[3].status = OutcomeStatus::kFinished, o[3].run = 500, o[3].wait = 0;
  const RlReport r = SummarizeRl(x, o);
  EXPECT_EQ(r.jobs, 2u);
  EXPECT_EQ(r.finished, 1u);
  // Steps: 10 (finished) + 250 s / 100 s = 2.5 (unfinished) = 12.5.
  EXPECT_DOUBLE_EQ(r.steps_run, 12.5);
  EXPECT_DOUBLE_EQ(r.step_time_s, 100);
  EXPECT_DOUBLE_EQ(r.sync_step_time_s, 150);
  EXPECT_DOUBLE_EQ(r.rollout_s, 80);
  // GPU-hours: (8·1000 + 16·250) / 3600 = 12000 / 3600.
  EXPECT_DOUBLE_EQ(r.gpu_hours, 12000.0 / 3600);
  // Idle: 10 steps · 0.25 · 100 s · 8 GPUs + 2.5 · 0.25 · 100 · 16 = 2000 + 1000 GPU-s.
  EXPECT_DOUBLE_EQ(r.idle_gpu_hours, 3000.0 / 3600);
  // Other jobs: JCT (300 + 100) and (500 + 0): mean 450 s; 2 preemptions.
  EXPECT_EQ(r.other_jobs, 2u);
  EXPECT_DOUBLE_EQ(r.other_avg_jct_s, 450);
  EXPECT_EQ(r.other_preemptions, 2u);
  // Under harvest the RL jobs did not hold what they lent: 12000 − 1800 GPU-s held.
  HarvestStats h;
  h.lent_gpu_seconds = 1800;
  EXPECT_DOUBLE_EQ(SummarizeRl(x, o, h).gpu_hours, 10200.0 / 3600);
}

// Harvest's lending schedule from a step's busy timeline: 8 GPUs of TP 2, rollout 100 s.
// At 40 s 4 GPUs go idle: idle 100 − 40 = 60 s > the borrower's restart at TP 2 (30 s): lent.
// At 80 s 2 more: idle 20 s < 30 s: not lent. The GPUs come back at 100 + 30 s (the return wait).
TEST(RlHarvestPlans, LendingScheduleByHand) {
  RlStepCost cost;
  cost.tp = 2;
  cost.step.name = "harvest";
  cost.step.step_time_s = 160, cost.step.rollout_s = 100, cost.step.harvestable_gpu_s = 120;
  cost.step.timeline = {{0, 40, 8}, {40, 80, 4}, {80, 100, 2}};
  RlExpansion x;
  x.strategy = "harvest";
  x.jobs = {{3, 10, 8, &cost}};
  const std::vector<HarvestPlan> p = HarvestPlans(x);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].job, 3u);
  EXPECT_DOUBLE_EQ(p[0].step_s, 160);
  EXPECT_DOUBLE_EQ(p[0].return_s, 130);
  ASSERT_EQ(p[0].releases.size(), 1u);
  EXPECT_DOUBLE_EQ(p[0].releases[0].at_s, 40);
  EXPECT_EQ(p[0].releases[0].gpus, 4u);
  cost.step.harvestable_gpu_s = 0;  // the step does not pay for the return wait: nothing lent
  EXPECT_TRUE(HarvestPlans(x).empty());
  cost.step.harvestable_gpu_s = 120;
  x.strategy = "sync";
  EXPECT_TRUE(HarvestPlans(x).empty());
}

TEST(RlJobsGenerate, ShareSettingsAndSeed) {
  Trace t;
  for (int i = 0; i < 95; ++i) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(i));
    j.submit = 1000 + 10 * i;
    t.jobs.push_back(j);
  }
  // 5 % of the jobs once added: round(0.05 · 95 / 0.95) = 5.
  auto a = GenerateRlJobs(t, 0.05, 32, "gpu", 7);
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_EQ(a->size(), 5u);
  for (const RlJobSpec& s : *a) {
    EXPECT_LE(s.request.gpus, 32u);  // the 128-GPU setting does not fit
    EXPECT_GE(s.steps, 50u);
    EXPECT_LE(s.steps, 400u);
    EXPECT_GE(s.submit, 1000);
    EXPECT_LE(s.submit, 1940);
    EXPECT_EQ(s.vc, "gpu");
  }
  auto b = GenerateRlJobs(t, 0.05, 32, "gpu", 7);
  for (size_t i = 0; i < a->size(); ++i) {
    EXPECT_EQ((*a)[i].submit, (*b)[i].submit);
    EXPECT_EQ((*a)[i].steps, (*b)[i].steps);
  }
  EXPECT_FALSE(GenerateRlJobs(t, 0.05, 4, "gpu", 7).ok());  // no setting fits in 4 GPUs
  EXPECT_FALSE(GenerateRlJobs(t, 1.0, 32, "gpu", 7).ok());
}

}  // namespace
}  // namespace orrery::rl
