// GoodputShape and PlannerCost on the planner's own H200 profile (data/profiles/h200.json).
#include "sched/plugins/planner_shape.h"

#include <gtest/gtest.h>

#include "plan/registry.h"
#include "sched/framework/api/plugin.h"
#include "sched/framework/test_util.h"

namespace orrery {
namespace {

// GPT-3 1.3B: 24 layers, hidden 2048, 16 heads; 256 sequences of 2048 tokens per step.
constexpr TrainModel kGpt13B{24, 2048, 16, 32000, 2048, 256};

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

struct Fixture {
  Cluster cluster;
  std::vector<WorkSpec> work;
  Job job;
  SchedJob sj;
  explicit Fixture(uint32_t gpus, bool described = true) {
    testing::AddVc(&cluster, "llm", 4, 8, "H200");
    Phase p;
    p.kind = PhaseKind::kTrain;
    p.steps = 100;
    if (described) p.model = kGpt13B;
    work.push_back(WorkSpec{{p}});
    job.id = JobId(0);
    job.gpus = gpus;
    sj.job = &job;
    sj.vc = VcId(0);
  }
};

Shape ChooseWith(Fixture& f, const ClusterState& st, double min_gain) {
  GoodputShape shape(H200Cost(), TraceShapeInfo(&f.work), GoodputShapeOptions{4, 2, min_gain});
  return shape.Choose(f.sj, st);
}

TEST(PlannerCost, FragmentedAllocationIsSlowerAndMemoized) {
  auto cost = H200Cost();
  Result<PlannedStep> one = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}});
  Result<PlannedStep> two = cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 2}});
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_GT(two->seconds, one->seconds);  // 4 + 4: gradients cross the 50 GB/s fabric, not NVLink
  // Best is StepTime of its own plan on that allocation.
  plan::Workload w;
  w.model = {"gpt", 24, 2048, 16, 32000, 8192};
  w.seq = 2048;
  w.micro_batch = 256 / (two->plan.dp * two->plan.num_micro);  // the plan's micro-batches make the batch
  const plan::GpuProfile fabric = WithFabric(H200(), FabricLink(Topology{}, LinkClass::kIntraRack));
  Result<double> direct = plan::StepTime(w, two->plan, plan::Allocation{{plan::AllocationGroup{&fabric, 8, 2}}});
  ASSERT_TRUE(direct.ok());
  EXPECT_DOUBLE_EQ(*direct, two->seconds);
  EXPECT_EQ(cost->memo_size(), 2u);
  ASSERT_TRUE(cost->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}}).ok());
  EXPECT_EQ(cost->memo_size(), 2u);
}

TEST(GoodputShape, GrowsOnAFreeClusterWhenTheDoublingPays) {
  Fixture f(8);
  ClusterState st(f.cluster, false, false);
  // 8 -> 16 -> ... : with min_gain 1 any speed-up is taken, up to request × 2 = 16.
  EXPECT_EQ(ChooseWith(f, st, 1.0).gpus, 16u);
  // No doubling is 2.5× faster (at best 2×): the request stays.
  const Shape s = ChooseWith(f, st, 2.5);
  EXPECT_EQ(s.gpus, 8u);
  EXPECT_EQ(uint32_t{s.layout.dp} * s.layout.tp * s.layout.pp, 8u);
}

TEST(GoodputShape, ShrinksToWhatIsFreeInsteadOfWaiting) {
  Fixture f(8);
  ClusterState st(f.cluster, false, false);
  // Every node busy but 4 GPUs of node 3: 8 cannot start, 4 (= 8 / 2 ≥ 8 / 4) can.
  Allocation busy;
  for (uint32_t n = 0; n < 3; ++n) busy.push_back(Slot{NodeId(n), 8});
  busy.push_back(Slot{NodeId(3), 4});
  st.Apply(busy);
  EXPECT_EQ(ChooseWith(f, st, 2.5).gpus, 4u);
  // Only 1 GPU free: below 8 / 4 = 2, the job keeps its request (and waits).
  st.Apply(Allocation{Slot{NodeId(3), 3}});
  EXPECT_EQ(ChooseWith(f, st, 2.5), RequestedShape(f.job));
}

TEST(GoodputShape, JobsWithoutAModelKeepTheirRequest) {
  Fixture f(8, /*described=*/false);
  ClusterState st(f.cluster, false, false);
  EXPECT_EQ(ChooseWith(f, st, 1.0), RequestedShape(f.job));
}

// One 8-GPU H200 node and two 8-GPU nodes of a second type (the shared H200 micro-profiles,
// another GpuProfile) in one VC.
Cluster MixedVc() {
  Cluster c;
  testing::AddVc(&c, "llm", 1, 8, "H200");
  testing::AddVc(&c, "other", 2, 8, "H200-shared");
  for (NodeId n : c.vcs[1].nodes) {
    c.nodes[n.v].vc = VcId(0);
    c.vcs[0].nodes.push_back(n);
    c.vcs[0].gpus += 8;
  }
  c.vcs.pop_back();
  return c;
}

TEST(GoodputShape, ChoosesTheGpuTypeOfTheBestGoodput) {
  const Cluster c = MixedVc();
  Result<std::shared_ptr<const PlannerCost>> cost = PlannerCostFor(c);
  ASSERT_TRUE(cost.ok()) << cost.error().message;
  std::vector<WorkSpec> work(1);
  Phase p;
  p.kind = PhaseKind::kTrain;
  p.model = kGpt13B;
  work[0].phases.push_back(p);
  Job job;
  job.id = JobId(0);
  job.gpus = 8;
  SchedJob sj;
  sj.job = &job;
  sj.vc = VcId(0);
  GoodputShape shape(*cost, TraceShapeInfo(&work), GoodputShapeOptions{4, 2, 1.0});
  ClusterState st(c, false, false);
  // Type 0 (one node) tops out at 8 GPUs; type 1 (two nodes) grows to 16 with min_gain 1.
  const double t0 = (*cost)->Best(kGpt13B, {TypedGroup{GpuTypeId(0), 8, 1}})->seconds;
  const double t1 = (*cost)->Best(kGpt13B, {TypedGroup{GpuTypeId(1), 16, 2}})->seconds;
  ASSERT_LT(t1, t0);  // twice the GPUs of a comparable H200 profile
  Shape s = shape.Choose(sj, st);
  EXPECT_EQ(s.gpus, 16u);
  EXPECT_EQ(s.type, GpuTypeId(1));
  // Accepting only type 0 (the job's type mask): 8 GPUs of it.
  sj.types = 1u;
  s = shape.Choose(sj, st);
  EXPECT_EQ(s.gpus, 8u);
  EXPECT_EQ(s.type, GpuTypeId(0));
  // Both nodes of type 1 busy: type 0's 8 GPUs are the best placeable choice.
  sj.types = 0;
  st.Apply(Allocation{Slot{NodeId(1), 8}, Slot{NodeId(2), 8}});
  s = shape.Choose(sj, st);
  EXPECT_EQ(s.gpus, 8u);
  EXPECT_EQ(s.type, GpuTypeId(0));
}

}  // namespace
}  // namespace orrery
