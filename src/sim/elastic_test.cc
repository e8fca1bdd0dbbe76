// Elastic resize in whole runs (sched/plugins/elastic.h): a described job grows into GPUs a
// finished job frees and shrinks back to its request when another job arrives, each resize a
// checkpoint and a restart that costs its phase's checkpoint.restore (hand arithmetic below).
#include <cmath>

#include <gtest/gtest.h>

#include "plan/registry.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/policies.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

using testing::AddVc;
using testing::JobSpec;
using testing::MakeTrace;

constexpr TrainModel kGpt13B{24, 2048, 16, 32000, 2048, 256};  // GPT-3 1.3B, 0.5 M tokens/step
constexpr Duration kRestore = 68;                               // cli RestartCost(1.3B): 60 s + 8 s
constexpr int64_t kSteps = 4000;

Cluster TwoH200Nodes() {
  Cluster c;
  c.name = "h200-2x8";
  c.single_pool = true;
  AddVc(&c, "a", 2, 8, "H200");
  return c;
}

std::shared_ptr<const PlannerCost> Cost(const Cluster& c) {
  Result<std::shared_ptr<const PlannerCost>> r = PlannerCostFor(c);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return *r;
}

// Jobs 0..k-1: trace jobs of 8 GPUs given as (submit, duration); job k (the last): 1.3B on
// 8 GPUs, kSteps steps at the planner's one-node step, submitted at `llm_submit`.
Trace Workload(const PlannerCost& cost, Time llm_submit, const std::vector<std::pair<Time, Duration>>& others) {
  std::vector<JobSpec> specs;
  for (auto [at, d] : others) specs.push_back(JobSpec{at, d, 8});
  specs.push_back(JobSpec{llm_submit, 1, 8});
  Trace t = MakeTrace(specs);
  t.work.resize(others.size());
  Phase p;
  p.kind = PhaseKind::kTrain;
  p.steps = kSteps;
  p.seconds_per_step = cost.Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}})->seconds;
  p.demand.gpus = 8;
  p.model = kGpt13B;
  p.checkpoint.restore = kRestore;
  t.work.push_back(WorkSpec{{p}});
  return t;
}

SimResult RunPolicy(const Trace& t, const Cluster& c, const std::string& policy) {
  SimConfig cfg;
  cfg.policy = policy;
  cfg.sample_interval = 0;
  Result<SimResult> r = Simulate(t, c, cfg);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  EXPECT_TRUE(CheckConservation(t, *r).ok());
  return std::move(*r);
}

constexpr const char* kElastic = "fifo:shape=goodput,shape_gain=1,elastic=true,elastic_cooldown=600";

TEST(ElasticResize, GrowsIntoFreedGpusWithARestart) {
  const Cluster c = TwoH200Nodes();
  auto cost = Cost(c);
  // The trace job (8 GPUs, 1000 s) starts at 0 on one node; the 1.3B job at 1 on the other 8.
  const Trace t = Workload(*cost, 1, {{0, 1000}});
  const SimResult r = RunPolicy(t, c, kElastic);
  const double s8 = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}})->seconds;
  const double s16 = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 16, 2}})->seconds;
  ASSERT_LT(s16, s8);
  // At 1000 the trace job ends; the 1.3B job has run 999 s ≥ the 600 s cooldown at speed 1:
  // floor(999 / s8) steps done, checkpointed; it restarts on 16 GPUs at speed s8 / s16 with
  // restore + the rest of its steps left: end = 1000 + ceil((68 + ceil((N − done)·s8)) / speed).
  const int64_t done = static_cast<int64_t>(std::floor(999 / s8));
  const Duration left = kRestore + static_cast<Duration>(std::ceil((kSteps - done) * s8 - 1e-9));
  const float speed = static_cast<float>(s8 / s16);
  const Time end = 1000 + static_cast<Time>(std::ceil(static_cast<double>(left) / speed - 1e-9));
  EXPECT_EQ(r.outcomes[1].end, end);
  ASSERT_EQ(r.attempts.attempts.size(), 3u);  // (in end order) trace job, 1.3B on 8 (resized), on 16
  EXPECT_EQ(r.attempts.attempts[1].job, JobId(1));
  EXPECT_EQ(r.attempts.attempts[1].gpus, 8u);
  EXPECT_EQ(r.attempts.attempts[1].cause, EndCause::kPreempted);
  EXPECT_EQ(r.attempts.attempts[1].end, 1000);
  EXPECT_EQ(r.attempts.attempts[2].gpus, 16u);
  // Without elastic the job keeps its 8 GPUs: 1 + ceil(N · s8).
  const SimResult fixed = RunPolicy(t, c, "fifo:shape=goodput,shape_gain=1");
  EXPECT_EQ(fixed.outcomes[1].end, 1 + static_cast<Time>(std::ceil(kSteps * s8 - 1e-9)));
  EXPECT_LT(r.outcomes[1].end, fixed.outcomes[1].end);
}

TEST(ElasticResize, ShrinksToItsRequestWhenAJobArrives) {
  const Cluster c = TwoH200Nodes();
  auto cost = Cost(c);
  // The 1.3B job is alone at 0 and grows to 16 (shape_gain 1); an 8-GPU job arrives at 500.
  const Trace t = Workload(*cost, 0, {{500, 100}});
  const SimResult r = RunPolicy(t, c, kElastic);
  const double s8 = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}})->seconds;
  const double s16 = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 16, 2}})->seconds;
  // 0..500 on 16 at speed s8/s16: floor(500 · speed) s of work = floor(that / s8) steps; back
  // on 8 GPUs at 500 (speed 1) with restore + the rest; the arrival starts at 500 beside it.
  // At 600 it ends, but the job restarted 100 s ago (< cooldown 600): no regrowth.
  const float speed = static_cast<float>(s8 / s16);
  const Duration work = static_cast<Duration>(std::floor(500.0 * speed + 1e-9));
  const int64_t done = static_cast<int64_t>(std::floor(work / s8));
  const Duration left = kRestore + static_cast<Duration>(std::ceil((kSteps - done) * s8 - 1e-9));
  EXPECT_EQ(r.outcomes[0].start, 500);
  EXPECT_EQ(r.outcomes[0].end, 600);
  EXPECT_EQ(r.outcomes[1].end, 500 + left);
  ASSERT_EQ(r.attempts.attempts.size(), 3u);  // 1.3B on 16 (resized), trace job, 1.3B on 8
  EXPECT_EQ(r.attempts.attempts[0].gpus, 16u);
  EXPECT_EQ(r.attempts.attempts[0].cause, EndCause::kPreempted);
  EXPECT_EQ(r.attempts.attempts[2].gpus, 8u);
}

TEST(ElasticResize, PolicySpecErrors) {
  const Cluster c = TwoH200Nodes();
  const Trace t = MakeTrace({JobSpec{0, 10, 8}});
  PolicyEnv env{&t, &c, nullptr};
  struct Case {
    const char* spec;
    const char* message;
  } cases[] = {
      {"fifo:shape=best", "policy 'fifo:shape=best': parameter 'shape': expected goodput or none, got \"best\""},
      {"fifo:elastic=true", "policy 'fifo:elastic=true': parameter 'elastic' needs shape=goodput"},
      {"fifo:shape=goodput,shape_gain=3",
       "policy 'fifo:shape=goodput,shape_gain=3': parameter 'shape_gain': expected a number in [1, 2], got \"3\""},
      {"fifo:shape=goodput,shape_grow=1.5",
       "policy 'fifo:shape=goodput,shape_grow=1.5': parameters 'shape_shrink' and 'shape_grow': expected whole numbers"},
      {"tiresias:shape=goodput,elastic=true",
       "policy 'tiresias:shape=goodput,elastic=true': parameter 'elastic': policy 'tiresias' already re-decides its "
       "running jobs (a Reschedule plugin); use elastic with fifo, qssf or easy"},
  };
  for (const Case& k : cases) {
    Result<PolicyParts> p = MakePolicyFor(k.spec, 1, &env);
    ASSERT_FALSE(p.ok()) << k.spec;
    EXPECT_EQ(p.error().message, k.message);
  }
  // Without the jobs' models (a trace, or the live daemon's opt-in jobs) shaping is refused.
  Result<PolicyParts> live = MakePolicy("easy:shape=goodput", 1, &t);
  ASSERT_FALSE(live.ok());
  EXPECT_EQ(live.error().message,
            "policy 'easy:shape=goodput': parameter 'shape': needs the jobs' models (a trace's phases, or the live "
            "daemon's opt-in jobs) and the cluster's GPU types");
  // A good spec builds the shape plugin and the planner it shares with the progress model.
  Result<PolicyParts> ok = MakePolicyFor("easy:shape=goodput,elastic=true", 1, &env);
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_NE(ok->shape, nullptr);
  EXPECT_NE(ok->reschedule, nullptr);
  EXPECT_NE(env.planner, nullptr);
  // Live mode runs shape=goodput (for the jobs that opt in) but refuses elastic resizes by
  // name (the core's rule).
  Result<PolicyParts> shaped = MakePolicyFor("easy:shape=goodput", 1, &env);
  ASSERT_TRUE(shaped.ok()) << shaped.error().message;
  EXPECT_TRUE(CheckLiveSupport(*shaped).ok());
  EXPECT_EQ(CheckLiveSupport(*ok).error().message,
            "policy 'easy:shape=goodput,elastic=true': 'elastic' resizes running jobs (a checkpoint and a restart at "
            "another GPU count), which orrery serve does not do yet; drop elastic=true: shape=goodput alone shapes the "
            "jobs that opt in when they start");
}

}  // namespace
}  // namespace orrery
