// CES controller: power decisions worked out by hand (hysteresis, keep-alive, buffer,
// de_thr, never a busy node).
#include "sched/plugins/ces.h"

#include <gtest/gtest.h>

#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"

namespace orrery {
namespace {

using testing::AddVc;

struct Ctl {
  Cluster c;
  std::unique_ptr<PowerPlugin> p;
  std::vector<NodePowerView> nodes;
  Time now = 0;
  explicit Ctl(const std::string& spec, int n = 10) {
    AddVc(&c, "a", n, 8);
    auto r = MakePowerPlugin(spec, 1, 0);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
    p = std::move(*r);
    nodes.assign(c.nodes.size(), NodePowerView{});
  }
  void Busy(std::initializer_list<int> ids) {
    for (auto& n : nodes) n.busy = false;
    for (int i : ids) nodes[i].busy = true;
  }
  // One control step with the VC's peak busy nodes; applies the decisions to `nodes`
  // (power-ups boot, and are on by the next step) and returns them as "+3 -9" text.
  std::string Step(uint32_t used_peak, uint32_t demand_wakes = 0) {
    for (auto& n : nodes)
      if (n.state == PowerState::kBooting) n.state = PowerState::kOn;
    now += 600;
    PowerSnapshot s;
    s.now = now;
    s.cluster = &c;
    s.nodes = nodes;
    s.used_peak = {used_peak};
    s.used_now = {used_peak};
    s.demand_wakes = {demand_wakes};
    s.pending = {0};
    std::vector<PowerDecision> d;
    p->Decide(s, &d);
    std::string out;
    for (const auto& x : d) {
      EXPECT_FALSE(x.kind == PowerDecision::kPowerDown && nodes[x.node.v].busy) << "busy node " << x.node.v;
      nodes[x.node.v].state = x.kind == PowerDecision::kPowerUp ? PowerState::kBooting : PowerState::kOff;
      out += (out.empty() ? "" : " ") + std::string(x.kind == PowerDecision::kPowerUp ? "+" : "-") +
             std::to_string(x.node.v);
    }
    return out;
  }
};

constexpr const char* kSpec =
    "ces:buffer=1,buffer_frac=0,history=2,future=2,his_thr=0.5,fut_thr=0,de_thr=2,min_spare=1,keep=2,"
    "forecaster=last";

TEST(CesTest, WarmUpHysteresisKeepAliveAndDecrease) {
  Ctl k(kSpec);
  k.Busy({0, 1});
  // Steps 0 and 1 (warm-up, i < history): Active = Used + buffer = 3.
  EXPECT_EQ(k.Step(2), "-9 -8 -7 -6 -5 -4 -3");
  EXPECT_EQ(k.Step(2), "");
  // Step 2: Used 3, spare = 3 − 3 = 0 < min_spare → Active = 3 + 1, keep until step 4.
  k.Busy({0, 1, 2});
  EXPECT_EQ(k.Step(3), "+3");
  // Step 3: demand falls to 1 (history mean 2.5 − 1 ≥ 0.5) but the keep window holds.
  k.Busy({0});
  EXPECT_EQ(k.Step(1), "");
  // Step 4: outside the window; target min(4, 1 + 1) = 2, a decrease of 2 ≥ de_thr.
  EXPECT_EQ(k.Step(1), "-3 -2");
  // Step 5: Used 1 with 2 powered: spare 1 = min_spare, demand flat → nothing (hysteresis band).
  EXPECT_EQ(k.Step(1), "");
}

TEST(CesTest, DecreaseSmallerThanDeThrIsSkipped) {
  Ctl k("ces:buffer=1,buffer_frac=0,history=1,future=2,his_thr=0.5,fut_thr=0,de_thr=2,min_spare=1,keep=0,"
        "forecaster=last");
  k.Busy({0, 1, 2, 3});
  EXPECT_EQ(k.Step(4), "-9 -8 -7 -6 -5");  // warm-up: 4 + 1
  k.Busy({0, 1, 2});
  EXPECT_EQ(k.Step(3), "");  // would go 5 → 4: a decrease of 1 < de_thr 2
  k.Busy({0, 1});
  EXPECT_EQ(k.Step(2), "-4 -3");  // 5 → 3
}

TEST(CesTest, DemandWakeUpsRaiseToUsedPlusBuffer) {
  Ctl k("ces:buffer=2,buffer_frac=0,history=3,fut_thr=0,min_spare=0,keep=3,forecaster=last");
  k.Busy({0});
  EXPECT_EQ(k.Step(1), "-9 -8 -7 -6 -5 -4 -3");  // warm-up (steps 0..2): 1 + 2
  EXPECT_EQ(k.Step(1), "");
  EXPECT_EQ(k.Step(1), "");
  // Jobs woke node 3 on demand during the bin (the driver did it; we mark it booting).
  k.nodes[3].state = PowerState::kBooting;
  k.Busy({0, 1, 2});
  // Step 3, Lack → Active = max(4, 3 + 2) = 5: one more node; no decrease until step 6.
  EXPECT_EQ(k.Step(3, 1), "+4");
  k.Busy({});
  EXPECT_EQ(k.Step(0), "");  // steps 4 and 5: demand fell to 0, inside the keep window
  EXPECT_EQ(k.Step(0), "");
  // Step 6: mean(Used[3..5]) − 0 = 1 ≥ his_thr → Active = min(5, 0 + 2).
  EXPECT_EQ(k.Step(0), "-4 -3 -2");
}

TEST(CesTest, FlatDemandNeverDecreasesUnlessHisThrAllowsIt) {
  // The Helios rule decreases only while demand falls (his_thr > 0); his_thr = 0 also lets
  // a surplus left after a keep window go at flat demand.
  for (const char* thr : {"0.5", "0"}) {
    Ctl k(std::string("ces:buffer=0,buffer_frac=0,history=1,fut_thr=0,de_thr=1,min_spare=0,keep=1,forecaster=last,his_thr=") + thr);
    k.Busy({0, 1});
    EXPECT_EQ(k.Step(2), "-9 -8 -7 -6 -5 -4 -3 -2");
    k.nodes[2].state = PowerState::kBooting;  // a demand wake-up
    EXPECT_EQ(k.Step(2, 1), "");  // Lack: Active = max(3, 2 + 0); keep until step 2
    // Step 2, outside the window, flat demand: only his_thr = 0 removes the surplus node.
    EXPECT_EQ(k.Step(2), std::string(thr) == "0" ? "-2" : "") << thr;
    EXPECT_EQ(k.Step(2), "") << thr;
  }
}

TEST(CesTest, BufferFractionPerVc) {
  // 20 nodes, buffer_frac 0.25 → 5 spare nodes (larger than buffer=1).
  Ctl k("ces:buffer=1,buffer_frac=0.25,history=1,forecaster=last", 20);
  k.Busy({0, 1});
  std::string d = k.Step(2);
  EXPECT_EQ(d, "-19 -18 -17 -16 -15 -14 -13 -12 -11 -10 -9 -8 -7");  // keeps 2 + 5
}

TEST(CesTest, NeverProposesABusyNode) {
  // Peak 1 but nodes 5, 7, 9 are busy now: Used + buffer = 2 asks for 8 power-downs, only 7
  // nodes are idle, and none of the busy ones is proposed (Step checks it).
  Ctl k("ces:buffer=1,buffer_frac=0,history=1,forecaster=last");
  k.Busy({5, 7, 9});
  EXPECT_EQ(k.Step(1), "-8 -6 -4 -3 -2 -1 -0");
}

TEST(PowerStateTest, UnpoweredNodesAreInvisibleToEveryPlacer) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  ClusterState st(c, /*track_gpus=*/true, false);
  st.SetPowered(NodeId(0), false);
  EXPECT_FALSE(st.powered(NodeId(0)));
  EXPECT_EQ(st.unpowered_count(), 1u);
  EXPECT_EQ(st.vc_free_gpus(VcId(0)), 8u);
  EXPECT_EQ(st.vc_total_gpus(VcId(0)), 16u);  // admission still sees the whole VC
  EXPECT_TRUE(st.bucket(VcId(0), 0).Test(0));
  EXPECT_FALSE(st.bucket(VcId(0), 8).Test(0));
  Job whole, frac, big;
  whole.gpus = 1;
  frac.gpus = 1;
  frac.gpu_milli = 500;
  big.gpus = 16;
  for (const char* name : {"consolidate", "first-fit", "spread", "random"}) {
    auto pl = MakePlacer(name, 3);
    ASSERT_TRUE(pl.ok());
    for (const Job* j : {&whole, &frac}) {
      SchedJob sj;
      sj.job = j;
      sj.vc = VcId(0);
      Allocation a;
      ASSERT_TRUE((*pl)->Place(sj, st, nullptr, &a).ok()) << name;
      ASSERT_EQ(a.size(), 1u);
      EXPECT_EQ(a[0].node, NodeId(1)) << name;
    }
    SchedJob sj;
    sj.job = &big;
    sj.vc = VcId(0);
    Allocation a;
    EXPECT_FALSE((*pl)->Place(sj, st, nullptr, &a).ok()) << name;
  }
  st.SetPowered(NodeId(0), true);
  EXPECT_EQ(st.vc_free_gpus(VcId(0)), 16u);
  EXPECT_EQ(st.gpu_free_milli(NodeId(0), 7), 1000);
  auto pl = MakePlacer("first-fit", 1);
  SchedJob sj;
  sj.job = &whole;
  sj.vc = VcId(0);
  Allocation a;
  ASSERT_TRUE((*pl)->Place(sj, st, nullptr, &a).ok());
  EXPECT_EQ(a[0].node, NodeId(0));
}

TEST(CesTest, SpecErrors) {
  EXPECT_TRUE(ParseCesSpec("ces").ok());
  EXPECT_EQ(ParseCesSpec("ces:buffer=3").value().buffer, 3);
  EXPECT_FALSE(ParseCesSpec("ces:buffer=x").ok());
  EXPECT_FALSE(ParseCesSpec("ces:forecaster=lightgbm").ok());
  EXPECT_FALSE(ParseCesSpec("ces:period=0").ok());
  EXPECT_TRUE(ParseCesSpec("ces:period=2").ok());  // live test clusters run second-scale periods
  EXPECT_FALSE(ParseCesSpec("ces:buffer").ok());
  EXPECT_FALSE(ParseCesSpec("dvfs").ok());
  EXPECT_NE(ParseCesSpec("ces:bogus=1").error().message.find("unknown parameter 'bogus'"), std::string::npos);
}

}  // namespace
}  // namespace orrery
