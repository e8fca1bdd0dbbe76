// The planner-aware progress model in whole runs: a described training job is charged the
// planner's step time on the allocation it actually got (docs/design/planner.md,
// "Scheduler integration"); trace jobs are untouched.
#include "sim/planner_progress.h"

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

// The H200 profile, read once (the shared NCCL tables make it the slow part of a test).
const plan::GpuProfile& H200() {
  static const plan::GpuProfile p = [] {
    Result<plan::GpuProfile> r = plan::ResolveGpu("H200", plan::DefaultProfilePaths());
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    return r.ok() ? *r : plan::GpuProfile{};
  }();
  return p;
}

// Cross-node links at the defaults (FabricLink: 50 GB/s, 3 µs inside a rack).
std::shared_ptr<const PlannerCost> H200Cost() {
  return std::make_shared<PlannerCost>(std::vector<std::optional<plan::GpuProfile>>{H200()}, Topology{});
}

Cluster TwoH200Nodes() {
  Cluster c;
  c.name = "h200-2x8";
  c.single_pool = true;
  AddVc(&c, "a", 2, 8, "H200");
  return c;
}

// One 8-GPU job of 1000 steps of 1.3B, timed at seconds_per_step = the planner's step on one
// node; `nodes` = 2 asks for 4 + 4 GPUs on two nodes (a fragmented allocation).
Trace LlmJob(const PlannerCost& cost, uint16_t nodes) {
  Trace t = MakeTrace({JobSpec{0, 1, 8, "a", 1000, nodes}});
  Phase p;
  p.kind = PhaseKind::kTrain;
  p.steps = 1000;
  p.seconds_per_step = cost.Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}})->seconds;
  p.demand.gpus = 8;
  p.model = kGpt13B;
  t.work.push_back(WorkSpec{{p}});
  return t;
}

Time EndOf(const Trace& t, const Cluster& c, std::shared_ptr<const PlannerCost> cost) {
  SimConfig cfg;
  cfg.sample_interval = 0;
  cfg.planner = std::move(cost);
  Result<SimResult> r = Simulate(t, c, cfg);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  EXPECT_TRUE(CheckConservation(t, *r).ok());
  return r->outcomes[0].end;
}

TEST(PlannerProgress, TwoNodesCostWhatStepTimeSays) {
  auto cost = H200Cost();
  const Cluster c = TwoH200Nodes();
  const double s1 = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}})->seconds;
  const double s2 = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 2}})->seconds;
  ASSERT_GT(s2, s1);
  // One node: speed 1, the job runs its 1000 steps × s1 (SecondsBetween rounds up).
  const Duration work = static_cast<Duration>(std::ceil(1000 * s1 - 1e-9));
  EXPECT_EQ(EndOf(LlmJob(*cost, 0), c, cost), work);
  // 4 + 4 on two nodes: speed s1 / s2, end = ceil(work / speed) ≈ 1000 × s2.
  const float speed = static_cast<float>(s1 / s2);
  const Time two = EndOf(LlmJob(*cost, 2), c, cost);
  EXPECT_EQ(two, static_cast<Time>(std::ceil(static_cast<double>(work) / speed - 1e-9)));
  EXPECT_NEAR(static_cast<double>(two), 1000 * s2, 2.0);
}

TEST(PlannerProgress, TraceJobsAreUnaffected) {
  const Cluster c = TwoH200Nodes();
  const Trace t = MakeTrace({JobSpec{0, 500, 8}, JobSpec{10, 300, 4, "a", 1000, 2}});
  EXPECT_EQ(EndOf(t, c, H200Cost()), 500);
  SimConfig cfg;
  cfg.sample_interval = 0;
  Result<SimResult> off = Simulate(t, c, cfg);
  cfg.planner = H200Cost();
  Result<SimResult> on = Simulate(t, c, cfg);
  ASSERT_TRUE(off.ok() && on.ok());
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    EXPECT_EQ(off->outcomes[i].start, on->outcomes[i].start);
    EXPECT_EQ(off->outcomes[i].end, on->outcomes[i].end);
  }
}

TEST(PlannerProgress, ShapingPoliciesNeedIt) {
  const Cluster c = TwoH200Nodes();
  const Trace t = MakeTrace({JobSpec{0, 500, 8}});
  Result<PolicyParts> parts = MakePolicy("fifo", 1);
  ASSERT_TRUE(parts.ok());
  parts->shape = std::make_unique<GoodputShape>(H200Cost(), TraceShapeInfo(&t.work), GoodputShapeOptions{});
  SimConfig cfg;
  cfg.record_attempts = true;
  Result<SimResult> r = Simulate(t, c, cfg, std::move(*parts));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "policy 'fifo' reshapes jobs (ShapePlugin 'goodput'): shaped jobs need the planner-aware progress "
            "model (SimConfig::planner)");
}

}  // namespace
}  // namespace orrery
