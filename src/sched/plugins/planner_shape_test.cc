// GoodputShape and PlannerCost on the planner's own H200 profile (data/profiles/h200.json).
#include "sched/plugins/planner_shape.h"

#include <gtest/gtest.h>

#include "plan/registry.h"
#include "sched/framework/plugin.h"
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
  GoodputShape shape(H200Cost(), &f.work, GoodputShapeOptions{4, 2, min_gain});
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

}  // namespace
}  // namespace orrery
