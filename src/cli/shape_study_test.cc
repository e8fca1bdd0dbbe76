// The LLM workload generator and the fixed-vs-goodput study (cli/shape_study.h).
#include "cli/shape_study.h"

#include <gtest/gtest.h>

#include "sched/framework/test_util.h"

namespace orrery::cli {
namespace {

Cluster H200Nodes(int n) {
  Cluster c;
  c.name = "h200";
  c.single_pool = true;
  testing::AddVc(&c, "llm", n, 8, "H200");
  return c;
}

TEST(LlmWorkload, JobsCarryTheirModelAndThePlannersStepAtTheRequest) {
  const Cluster c = H200Nodes(4);
  auto cost = PlannerCostFor(c);
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  LlmWorkloadSpec s;
  s.jobs = 12;
  auto t = GenerateLlmWorkload(s, **cost, GpuTypeId(0), 8);
  ASSERT_TRUE(t.ok()) << t.error().message;
  ASSERT_EQ(t->jobs.size(), 12u);
  ASSERT_EQ(t->work.size(), 12u);
  for (size_t i = 0; i < t->jobs.size(); ++i) {
    const Job& j = t->jobs[i];
    const Phase& p = t->work[i].phases.at(0);
    EXPECT_TRUE(p.model.described());
    EXPECT_TRUE(j.gpus == 8 || j.gpus == 16 || j.gpus == 32 || j.gpus == 64);
    // seconds_per_step is the planner's best step on the request packed on whole nodes.
    const int nodes = static_cast<int>((j.gpus + 7) / 8);
    EXPECT_DOUBLE_EQ(p.seconds_per_step, (*cost)->Best(p.model, {TypedGroup{GpuTypeId(0), int(j.gpus), nodes}})->seconds);
    // 0.5–10 B tokens at 256 × 2048 tokens per step: 954..19074 steps.
    EXPECT_GE(p.steps, 953);
    EXPECT_LE(p.steps, 19074);
    if (i > 0) EXPECT_GE(j.submit, t->jobs[i - 1].submit);
  }
}

TEST(ShapeStudy, GoodputReshapesAndRunsAreDeterministicSlow) {
  const Cluster c = H200Nodes(8);
  auto cost = PlannerCostFor(c);
  ASSERT_TRUE(cost.ok());
  LlmWorkloadSpec s;
  s.jobs = 16;
  s.mean_interarrival_s = 600;
  auto t = GenerateLlmWorkload(s, **cost, GpuTypeId(0), 8);
  ASSERT_TRUE(t.ok());
  auto a = RunShapeStudy(*t, c, *cost, GoodputShapeOptions{});
  auto b = RunShapeStudy(*t, c, *cost, GoodputShapeOptions{});
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(b.ok());
  ASSERT_EQ(a->size(), 3u);
  EXPECT_EQ((*a)[0].shape, "fixed");
  EXPECT_EQ((*a)[0].reshaped, 0u);  // fixed shapes run as requested
  EXPECT_EQ((*a)[0].resized, 0u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ((*a)[i].finished, 16u);
  EXPECT_GT((*a)[1].reshaped, 0u);
  EXPECT_EQ((*a)[1].resized, 0u);  // goodput shapes only at the start
  EXPECT_EQ((*a)[2].shape, "elastic");
  EXPECT_GT((*a)[2].resized, 0u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ((*a)[i].avg_jct_h, (*b)[i].avg_jct_h);
    EXPECT_EQ((*a)[i].makespan_h, (*b)[i].makespan_h);
  }
}

TEST(ShapeStudy, RestartCostAndPolicySpecs) {
  // 1.3B: 12·24·2048² + 2·32000·2048 = 1,339,031,552 params × 28 B / 5 GB/s = 7.5 -> 8 s, + 60.
  EXPECT_EQ(RestartCost(TrainModel{24, 2048, 16, 32000, 2048, 256}), 68);
  // 13B: 12·40·5120² + 2·32000·5120 = 12,910,592,000 × 28 / 5e9 = 72.3 -> 73 s, + 60.
  EXPECT_EQ(RestartCost(TrainModel{40, 5120, 40, 32000, 2048, 256}), 133);
  const GoodputShapeOptions o;
  EXPECT_EQ(ShapePolicySpec("fixed", o), "fifo");
  EXPECT_EQ(ShapePolicySpec("goodput", o), "fifo:shape=goodput,shape_shrink=4,shape_grow=2,shape_gain=1.6");
  EXPECT_EQ(ShapePolicySpec("elastic", o), "fifo:shape=goodput,shape_shrink=4,shape_grow=2,shape_gain=1.6,elastic=true");
}

}  // namespace
}  // namespace orrery::cli
