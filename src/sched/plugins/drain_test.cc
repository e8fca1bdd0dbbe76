// A drained node (a cordoned node; ClusterState::SetDrained): its running allocation
// goes on and releases normally, but no placer puts a new job there until it is undrained.
#include <gtest/gtest.h>

#include "sched/framework/cluster_state.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"

namespace orrery {
namespace {

using testing::AddVc;

TEST(DrainTest, DrainedNodeKeepsItsJobsAndTakesNoNewOnes) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  ClusterState st(c, /*track_gpus=*/true, false);
  Allocation running;
  running.push_back(Slot{NodeId(0), 4, 1000, 0x0f});
  st.Apply(running);                // node 0: 4 of 8 GPUs busy
  st.SetDrained(NodeId(0), true);
  EXPECT_TRUE(st.drained(NodeId(0)));
  EXPECT_EQ(st.vc_free_gpus(VcId(0)), 8u);  // node 1 only
  EXPECT_TRUE(st.bucket(VcId(0), 0).Test(0));
  st.Release(running);              // the job ends: node 0 idle, still drained
  EXPECT_TRUE(st.idle(NodeId(0)));
  EXPECT_EQ(st.free_gpus(NodeId(0)), 8);    // its true free GPUs
  EXPECT_EQ(st.vc_free_gpus(VcId(0)), 8u);
  EXPECT_TRUE(st.bucket(VcId(0), 0).Test(0));
  EXPECT_FALSE(st.bucket(VcId(0), 8).Test(0));
  Job whole, big;
  whole.gpus = 1;
  big.gpus = 16;
  for (const char* name : {"consolidate", "first-fit", "spread", "random"}) {
    auto pl = MakePlacer(name, 3);
    ASSERT_TRUE(pl.ok());
    SchedJob sj;
    sj.job = &whole;
    sj.vc = VcId(0);
    Allocation a;
    ASSERT_TRUE((*pl)->Place(sj, st, nullptr, &a).ok()) << name;
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].node, NodeId(1)) << name;
    sj.job = &big;
    Allocation b;
    EXPECT_FALSE((*pl)->Place(sj, st, nullptr, &b).ok()) << name;
  }
  st.SetDrained(NodeId(0), false);  // repaired
  EXPECT_EQ(st.vc_free_gpus(VcId(0)), 16u);
  EXPECT_TRUE(st.bucket(VcId(0), 8).Test(0));
  auto pl = MakePlacer("first-fit", 1);
  SchedJob sj;
  sj.job = &whole;
  sj.vc = VcId(0);
  Allocation a;
  ASSERT_TRUE((*pl)->Place(sj, st, nullptr, &a).ok());
  EXPECT_EQ(a[0].node, NodeId(0));
}

}  // namespace
}  // namespace orrery
