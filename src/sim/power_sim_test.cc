// Energy saving in the simulator: hand-computed power states, energy and wake-up delays.
#include <gtest/gtest.h>

#include "sched/framework/internal/scheduler.h"
#include "sched/framework/test_util.h"
#include "sched/plugins/placers.h"
#include "sched/plugins/policies.h"
#include "sim/power_sim.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

using testing::AddVc;
using testing::MakeTrace;

PowerModel Watts(double idle, double busy) {
  PowerModel p;
  p.idle_watts = idle;
  p.busy_watts_per_gpu = busy;
  p.source = "config";
  return p;
}

Result<SimResult> RunEnergy(const Cluster& c, const Trace& t, const std::string& energy, Duration wake = 300,
                            double fail = 0, uint64_t seed = 1, const std::string& policy = "fifo") {
  SimConfig cfg;
  cfg.policy = policy;
  cfg.energy = energy;
  cfg.wake_latency = wake;
  cfg.resume_failure = fail;
  cfg.seed = seed;
  cfg.node_power.assign(c.nodes.size(), Watts(100, 10));
  auto r = Simulate(t, c, cfg);
  if (r.ok()) {
    EXPECT_TRUE(CheckConservation(t, *r).ok());
  }
  return r;
}

// 2 nodes × 8 GPUs, 100 W idle + 10 W per busy GPU, control every 600 s, no buffer.
//   A: 8 GPUs, 0..2000 on node 0.
//   600: first control step (warm-up, history=1): Used = 1, target 1 + 0 → node 1 off.
//   B: 8 GPUs, 500 s, submitted at 1000: no powered capacity → wake node 1 (on demand),
//      booting 1000..1300, B runs 1300..1800 on node 1; it waited 300 s for the boot.
//   1200: step with Lack (a demand wake) → target = max(active 2, Used 1 + 0) = 2: nothing.
//   1800: B ends before the step; Used peak 2 → demand is not falling: nothing. A ends 2000.
// Node-seconds: node 0 on 2000; node 1 on 600 + 700, off 400 (600..1000), booting 300.
// Energy: idle 100 W × (2000 + 1600 powered s) + 10 W × 8 × (2000 + 500) busy GPU-s
//       = 360,000 + 200,000 = 560,000 J; all-on baseline 100 × 2 × 2000 + 200,000 = 600,000 J.
constexpr const char* kNoBuffer = "ces:buffer=0,buffer_frac=0,history=1,min_spare=0,forecaster=last";

TEST(PowerSimTest, HandComputedEnergyAndWakeDelay) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  Trace t = MakeTrace({{0, 2000, 8}, {1000, 500, 8}});
  auto r = RunEnergy(c, t, kNoBuffer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->outcomes[0].start, 0);
  EXPECT_EQ(r->outcomes[1].start, 1300);
  EXPECT_EQ(r->outcomes[1].end, 1800);
  EXPECT_EQ(r->outcomes[1].wait, 300);
  ASSERT_TRUE(r->has_energy);
  const EnergyStats& e = r->energy;
  EXPECT_DOUBLE_EQ(e.seconds, 2000);
  EXPECT_DOUBLE_EQ(e.node_s_on, 3300);
  EXPECT_DOUBLE_EQ(e.node_s_off, 400);
  EXPECT_DOUBLE_EQ(e.node_s_booting, 300);
  EXPECT_DOUBLE_EQ(e.node_s_used, 2500);
  EXPECT_TRUE(e.power_known);
  EXPECT_DOUBLE_EQ(e.energy_j, 560000);
  EXPECT_DOUBLE_EQ(e.baseline_energy_j, 600000);
  EXPECT_NEAR(e.saved_kwh(), 40000 / 3.6e6, 1e-12);
  EXPECT_EQ(e.power_downs, 1u);
  EXPECT_EQ(e.power_ups, 1u);
  EXPECT_EQ(e.demand_wakes, 1u);
  EXPECT_EQ(e.jobs_started, 2u);
  EXPECT_EQ(e.jobs_delayed, 1u);
  EXPECT_DOUBLE_EQ(e.delay_sum_s, 300);
  EXPECT_EQ(e.min_powered, 1u);
  EXPECT_EQ(e.max_powered, 2u);
  // powered_nodes at the 60-s samples: 2 until the power-down at 600, then 1, 2 again from
  // the wake-up at 1000 (booting counts as powered).
  ASSERT_EQ(r->powered_samples.size(), r->samples.size());
  EXPECT_EQ(r->samples[10].t, 600);
  EXPECT_EQ(r->powered_samples[9], 2u);
  EXPECT_EQ(r->powered_samples[10], 1u);
  EXPECT_EQ(r->powered_samples[16], 1u);
  EXPECT_EQ(r->powered_samples[17], 2u);
  // Node utilisation: 2500 busy node-s over 3600 powered (on + booting) vs 4000 in all.
  EXPECT_DOUBLE_EQ(e.node_util_powered(), 2500.0 / 3600.0);
  EXPECT_DOUBLE_EQ(e.node_util_all(), 2500.0 / 4000.0);
}

TEST(PowerSimTest, WakeLatencyIsTheDelay) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  Trace t = MakeTrace({{0, 2000, 8}, {1000, 500, 8}});
  for (Duration wake : {0, 60, 900}) {
    auto r = RunEnergy(c, t, kNoBuffer, wake);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->outcomes[1].start, 1000 + wake) << wake;
    EXPECT_EQ(r->energy.jobs_delayed, wake > 0 ? 1u : 0u);
    EXPECT_DOUBLE_EQ(r->energy.node_s_booting, static_cast<double>(wake));
  }
}

TEST(PowerSimTest, JobSubmittedWhileBootingWaitsOnlyTheRest) {
  // Node 1 is off from 600. C (8 GPUs) at 1100 wakes it: booting 1100..1400, C runs
  // 1400..1900 on it (waited 300 s for the boot). D (4 GPUs) at 1200 finds node 1 booting
  // (no second wake-up: it is already on its way), cannot share it with C, and starts on
  // node 1 when C ends at 1900 (A holds node 0 until 2000). D waited for node 1 while it was
  // booting, 1200..1400: 200 s attributed to the wake-up.
  Cluster c;
  AddVc(&c, "a", 2, 8);
  Trace t = MakeTrace({{0, 2000, 8}, {1100, 500, 8}, {1200, 100, 4}});
  auto r = RunEnergy(c, t, kNoBuffer);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->outcomes[1].start, 1400);
  EXPECT_EQ(r->outcomes[2].start, 1900);
  EXPECT_EQ(r->energy.demand_wakes, 1u);
  EXPECT_EQ(r->energy.jobs_delayed, 2u);
  EXPECT_DOUBLE_EQ(r->energy.delay_sum_s, 300 + 200);
}

TEST(PowerSimTest, FailedResumesRetryAndAreSeeded) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  Trace t = MakeTrace({{0, 2000, 8}, {1000, 500, 8}});
  auto a = RunEnergy(c, t, kNoBuffer, 300, 0.9, 7);
  auto b = RunEnergy(c, t, kNoBuffer, 300, 0.9, 7);
  ASSERT_TRUE(a.ok() && b.ok());
  // Every failed boot leaves node 1 off; the pending job wakes it again at once, so B starts
  // after (failures + 1) boots of 300 s (or on node 0 when A ends at 2000, whichever is first).
  const uint64_t f = a->energy.failed_resumes;
  EXPECT_GT(f, 0u);
  EXPECT_EQ(a->outcomes[1].start, std::min<Time>(1000 + 300 * static_cast<Time>(f + 1), 2000));
  EXPECT_EQ(a->outcomes[1].start, b->outcomes[1].start);
  EXPECT_EQ(a->energy.failed_resumes, b->energy.failed_resumes);
  EXPECT_DOUBLE_EQ(a->energy.energy_j, b->energy.energy_j);
}

TEST(PowerSimTest, ControllerSwitchesOffOnlyIdleNodes) {
  // Four 8-GPU jobs on nodes 0..3 run past the first control steps; with no buffer the
  // controller keeps exactly the 4 busy nodes and switches off the 4 idle ones.
  Cluster c;
  AddVc(&c, "a", 8, 8);
  Trace t = MakeTrace({{0, 5000, 8}, {0, 5000, 8}, {0, 5000, 8}, {0, 5000, 8}});
  auto r = RunEnergy(c, t, kNoBuffer);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->energy.power_downs, 4u);
  EXPECT_EQ(r->energy.min_powered, 4u);
  for (const auto& o : r->outcomes) EXPECT_EQ(o.end, 5000);
}

// A plugin that asks to power every node down at every step.
class PowerEverythingDown final : public PowerPlugin {
 public:
  std::string_view name() const override { return "rogue"; }
  Duration period() const override { return 600; }
  void Decide(const PowerSnapshot& s, std::vector<PowerDecision>* out) override {
    for (size_t n = 0; n < s.nodes.size(); ++n) out->push_back({PowerDecision::kPowerDown, NodeId(static_cast<uint32_t>(n))});
  }
};

TEST(PowerSimTest, DriverRefusesToPowerOffBusyNodes) {
  Cluster c;
  AddVc(&c, "a", 3, 8);
  Trace t = MakeTrace({{0, 5000, 4}});
  auto policy = MakePolicy("fifo", 1, &t);
  auto placer = MakePlacer("consolidate", 1);
  ASSERT_TRUE(policy.ok() && placer.ok());
  Scheduler sched(c, false, false, std::move(*policy), std::move(*placer));
  PowerSim ps(c, std::make_unique<PowerEverythingDown>(), {}, 300, 0, 1, 0);
  auto slot = sched.Submit(&t.jobs[0], VcId(0), 0, 0, 0);
  ASSERT_TRUE(slot.ok());
  ps.OnSubmit(sched.view(*slot));
  std::vector<Decision> d;
  sched.Schedule(0, &d);
  ASSERT_EQ(d.size(), 1u);
  ps.OnStart(*slot, sched.view(*slot), 0, 0);
  EXPECT_EQ(ps.NextEvent(true), 600);
  ps.AfterCycle(600, sched);
  // Node 0 holds the job: refused; nodes 1 and 2 are off and invisible to placement.
  EXPECT_TRUE(sched.cluster_state().powered(NodeId(0)));
  EXPECT_FALSE(sched.cluster_state().powered(NodeId(1)));
  EXPECT_FALSE(sched.cluster_state().powered(NodeId(2)));
  EXPECT_EQ(sched.cluster_state().vc_free_gpus(VcId(0)), 4u);
  EXPECT_EQ(ps.powered(), 1u);
  EnergyStats e = ps.Finish(0, 600);
  EXPECT_EQ(e.refused_downs, 1u);
  EXPECT_EQ(e.power_downs, 2u);
  EXPECT_FALSE(e.power_known);  // no power model given
}

TEST(PowerSimTest, OffByDefaultAndOutputsUnchanged) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  Trace t = MakeTrace({{0, 2000, 8}, {1000, 500, 8}});
  SimConfig cfg;
  auto r = Simulate(t, c, cfg);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->has_energy);
  EXPECT_EQ(r->outcomes[1].start, 1000);
  EXPECT_TRUE(r->powered_samples.empty());
}

TEST(PowerSimTest, BadSpecsAreErrors) {
  Cluster c;
  AddVc(&c, "a", 2, 8);
  Trace t = MakeTrace({{0, 10, 8}});
  EXPECT_FALSE(RunEnergy(c, t, "ces:buffer=-1").ok());
  EXPECT_FALSE(RunEnergy(c, t, "ces:nope=1").ok());
  EXPECT_FALSE(RunEnergy(c, t, "sleep").ok());
  EXPECT_FALSE(RunEnergy(c, t, "ces", 300, 0.95).ok());
}

// Preemptive policies restart jobs: energy counts distinct jobs, not starts, so the
// delayed share stays a share of jobs (≤ 1 each) whatever the number of preemptions.
TEST(PowerSimTest, DelayedJobsAreDistinctJobsUnderPreemption) {
  Cluster c;
  AddVc(&c, "a", 4, 8);
  std::vector<testing::JobSpec> specs;
  // Bursts of long and short jobs a few hours apart: nodes go off between bursts, and SRTF
  // preempts the long jobs for the short ones.
  for (int burst = 0; burst < 6; ++burst) {
    Time t0 = burst * 12 * 3600;
    for (int k = 0; k < 6; ++k) specs.push_back({t0 + k * 60, 3 * 3600 + 600 * k, 8});
    for (int k = 0; k < 6; ++k) specs.push_back({t0 + 900 + k * 30, 300 + 60 * k, 4});
  }
  Trace t = MakeTrace(specs);
  auto r = RunEnergy(c, t, kNoBuffer, 300, 0, 1, "srtf");
  ASSERT_TRUE(r.ok()) << r.error().message;
  uint64_t preemptions = 0, finished = 0;
  for (const auto& o : r->outcomes) {
    preemptions += o.preemptions;
    finished += o.status == OutcomeStatus::kFinished;
  }
  EXPECT_GT(preemptions, 0u);
  EXPECT_EQ(r->energy.jobs_started, finished);
  EXPECT_GT(r->energy.jobs_delayed, 0u);
  EXPECT_LE(r->energy.jobs_delayed, finished);
  EXPECT_LE(r->energy.delayed_share(), 1.0);
}

}  // namespace
}  // namespace orrery
