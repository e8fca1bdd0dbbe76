#include "sched/plugins/placers.h"

#include <gtest/gtest.h>

#include "sched/framework/test_util.h"

namespace orrery {
namespace {

using testing::AddVc;

struct Fixture {
  Cluster cluster;
  std::vector<Job> jobs;
  std::vector<SchedJob> sj;
  SchedJob& Make(uint32_t gpus, uint16_t milli = 1000, uint16_t nodes = 0, GpuTypeMask types = 0) {
    jobs.reserve(64);
    sj.reserve(64);
    Job j;
    j.gpus = gpus;
    j.gpu_milli = milli;
    j.nodes = nodes;
    jobs.push_back(j);
    SchedJob s;
    s.job = &jobs.back();
    s.vc = VcId(0);
    s.types = types;
    sj.push_back(s);
    return sj.back();
  }
};

std::vector<std::pair<uint32_t, uint16_t>> Nodes(const Allocation& a) {
  std::vector<std::pair<uint32_t, uint16_t>> v;
  for (const Slot& s : a) v.emplace_back(s.node.v, s.gpus);
  return v;
}
using NV = std::vector<std::pair<uint32_t, uint16_t>>;

// Three 4-GPU nodes; jobs of 3, 1, 2 then a 1-GPU probe.
NV PlaceSequence(const std::string& placer) {
  Fixture f;
  AddVc(&f.cluster, "a", 3, 4);
  ClusterState st(f.cluster, false, false);
  auto p = MakePlacer(placer, 7);
  NV got;
  for (uint32_t g : {3u, 1u, 2u, 1u}) {
    Allocation a;
    EXPECT_TRUE((*p)->Place(f.Make(g), st, nullptr, &a).ok());
    st.Apply(a);
    got.push_back(Nodes(a)[0]);
  }
  return got;
}

TEST(PlacerTest, ConsolidateIsBestFitLowestIndex) {
  // 3 → node0 (all have 4; lowest index) leaves 1; 1 → node0 (fewest free that fits);
  // 2 → node1; 1 → node1 (2 free beats node2's 4).
  EXPECT_EQ(PlaceSequence("consolidate"), (NV{{0, 3}, {0, 1}, {1, 2}, {1, 1}}));
}

TEST(PlacerTest, FirstFitTakesLowestIndexThatFits) {
  EXPECT_EQ(PlaceSequence("first-fit"), (NV{{0, 3}, {0, 1}, {1, 2}, {1, 1}}));
}

TEST(PlacerTest, SpreadTakesMostFree) {
  // 3 → node0 (free 1); 1 → node1 (4 free, lowest index of the max) → 3; 2 → node2 → 2;
  // 1 → node1 (3 free is the max).
  EXPECT_EQ(PlaceSequence("spread"), (NV{{0, 3}, {1, 1}, {2, 2}, {1, 1}}));
}

TEST(PlacerTest, RandomIsSeededAndFeasible) {
  NV a = PlaceSequence("random"), b = PlaceSequence("random");
  EXPECT_EQ(a, b);
  for (auto [n, g] : a) EXPECT_LT(n, 3u);
}

TEST(PlacerTest, ConsolidateMultiNodeFollowsHeliosRules) {
  Fixture f;
  AddVc(&f.cluster, "a", 3, 8);
  ClusterState st(f.cluster, false, false);
  auto p = MakePlacer("consolidate", 1);
  Allocation a;
  // Occupy 3 GPUs of node2: free = {8, 8, 5}.
  st.Apply({Slot{NodeId(2), 3}});
  // 12 GPUs: one idle node (node0) + remainder 4 on the next node in descending free order:
  // node1 (8, idle, lower index than nothing else) → {0:8, 1:4}.
  ASSERT_TRUE((*p)->Place(f.Make(12), st, nullptr, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{0, 8}, {1, 4}}));
  // 16 GPUs: two idle nodes.
  ASSERT_TRUE((*p)->Place(f.Make(16), st, nullptr, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{0, 8}, {1, 8}}));
  // Make node1 hold 3 free: free = {8, 3, 5}. 13 = 8 + 5: node0 + node2 (5 ≥ 5).
  st.Apply({Slot{NodeId(1), 5}});
  ASSERT_TRUE((*p)->Place(f.Make(13), st, nullptr, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{0, 8}, {2, 5}}));
  // 14 = 8 + 6: the next node (node2, 5 free) cannot hold 6 → fail, even though
  // 16 GPUs are free in total.
  EXPECT_FALSE((*p)->Place(f.Make(14), st, nullptr, &a).ok());
  // 17 > VC free (16) → fail.
  EXPECT_FALSE((*p)->Place(f.Make(17), st, nullptr, &a).ok());
}

TEST(PlacerTest, BlockedNodesAreAvoided) {
  Fixture f;
  AddVc(&f.cluster, "a", 2, 4);
  ClusterState st(f.cluster, false, false);
  auto p = MakePlacer("consolidate", 1);
  NodeMask blocked(2);
  blocked.Set(0);
  Allocation a;
  ASSERT_TRUE((*p)->Place(f.Make(2), st, &blocked, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{1, 2}}));
  blocked.Set(1);
  EXPECT_FALSE((*p)->Place(f.Make(1), st, &blocked, &a).ok());
}

TEST(PlacerTest, FractionalBestFitOnPartiallyUsedGpu) {
  Fixture f;
  AddVc(&f.cluster, "a", 1, 2);
  ClusterState st(f.cluster, true, false);
  auto p = MakePlacer("consolidate", 1);
  Allocation a;
  ASSERT_TRUE((*p)->Place(f.Make(1, 500), st, nullptr, &a).ok());
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].gpu_mask, 1u);  // GPU 0
  st.Apply(a);
  EXPECT_EQ(st.free_gpus(NodeId(0)), 1);  // GPU 0 no longer wholly free
  // 300 milli: GPU 0 has 500 free, GPU 1 has 1000 → best fit GPU 0.
  ASSERT_TRUE((*p)->Place(f.Make(1, 300), st, nullptr, &a).ok());
  EXPECT_EQ(a[0].gpu_mask, 1u);
  st.Apply(a);
  EXPECT_EQ(st.gpu_free_milli(NodeId(0), 0), 200);
  // A whole GPU job can only use GPU 1.
  ASSERT_TRUE((*p)->Place(f.Make(1), st, nullptr, &a).ok());
  EXPECT_EQ(a[0].gpu_mask, 2u);
  st.Apply(a);
  // 300 milli no longer fits anywhere (200 free on GPU 0, 0 on GPU 1).
  EXPECT_FALSE((*p)->Place(f.Make(1, 300), st, nullptr, &a).ok());
  EXPECT_EQ(st.busy_gpu_milli(), 1800u);
}

TEST(PlacerTest, ExplicitNodeCountSplitsEvenly) {
  Fixture f;
  AddVc(&f.cluster, "a", 3, 4);
  ClusterState st(f.cluster, false, false);
  st.Apply({Slot{NodeId(0), 3}});
  auto p = MakePlacer("consolidate", 1);
  Allocation a;
  ASSERT_TRUE((*p)->Place(f.Make(4, 1000, 2), st, nullptr, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{1, 2}, {2, 2}}));  // node0 has only 1 free
}

TEST(PlacerTest, GpuTypeConstraint) {
  Fixture f;
  AddVc(&f.cluster, "a", 1, 4, "V100");
  // second node of another type in the same VC
  Node n;
  n.id = NodeId(1);
  n.vc = VcId(0);
  n.gpus = 4;
  n.gpu_type = GpuTypeId(static_cast<uint8_t>(f.cluster.gpu_types.Intern("T4")));
  f.cluster.nodes.push_back(n);
  f.cluster.vcs[0].nodes.push_back(n.id);
  ClusterState st(f.cluster, false, false);
  auto p = MakePlacer("consolidate", 1);
  Allocation a;
  ASSERT_TRUE((*p)->Place(f.Make(2, 1000, 0, 1u << 1), st, nullptr, &a).ok());  // T4 only
  EXPECT_EQ(Nodes(a), (NV{{1, 2}}));
  ASSERT_TRUE((*p)->Place(f.Make(2, 1000, 0, 0), st, nullptr, &a).ok());  // any → node0
  EXPECT_EQ(Nodes(a), (NV{{0, 2}}));
  // Two accepted types (V100 | T4): best fit over both → node0 (lowest index, both 4 free).
  ASSERT_TRUE((*p)->Place(f.Make(2, 1000, 0, 0b11), st, nullptr, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{0, 2}}));
  st.Apply(a);
  // Now node0 has 2 free: a 3-GPU job accepting both types goes to node1; V100 only fails.
  ASSERT_TRUE((*p)->Place(f.Make(3, 1000, 0, 0b11), st, nullptr, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{1, 3}}));
  EXPECT_FALSE((*p)->Place(f.Make(3, 1000, 0, 0b01), st, nullptr, &a).ok());
  // A second ClusterState (a later run in the same process) must not see the first's cache.
  ClusterState fresh(f.cluster, false, false);
  ASSERT_TRUE((*p)->Place(f.Make(4, 1000, 0, 0b11), fresh, nullptr, &a).ok());
  EXPECT_EQ(Nodes(a), (NV{{0, 4}}));
}

}  // namespace
}  // namespace orrery
