// Nodes of any GPU count through the simulator's loading path: a TOML cluster of G-GPU nodes
// (G = 8, 63, 64, 72; a GB200 NVL72 rack exported as one Slurm node has 72) is simulated as
// the scheduler's own tests decide it (sched/plugins/scheduler_test.cc, SchedulerNodeSizes),
// and per-GPU accounting, which fractional jobs need, refuses nodes it cannot account.
#include <gtest/gtest.h>

#include "config/cluster_config.h"
#include "sched/framework/cluster_state.h"
#include "sched/framework/test_util.h"
#include "sim/simulator.h"

namespace orrery {
namespace {

using testing::MakeTrace;

Cluster TwoNodesOf(uint32_t g) {
  const std::string toml = "name = \"nvl\"\n[defaults]\ngpus_per_node = " + std::to_string(g) +
                           "\n[[vc]]\nname = \"a\"\nnodes = 2\n";
  auto c = ParseClusterConfigString(toml, "nvl.toml");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return c.ok() ? *c : Cluster{};
}

const uint32_t kNodeSizes[] = {8, 63, 64, 72};

// EASY (walltimes exact), bf_max_job_test=2, two G-GPU nodes. J0 (1 GPU) and J1 (G GPUs) run
// 0..1000: node 0 has G − 1 free GPUs, node 1 none. At 1 arrive J2, J3, J4 (2 nodes × G, 100 s)
// and J5 (1 GPU, 10 s). J2 is the head, reserved at 1000. No node is idle, so J3 and J4 are no
// backfill candidates and J5 is: it ends at 11 ≤ 1000 and runs 1..11. Then J2 1000..1100, J3
// 1100..1200, J4 1200..1300 (each takes both nodes).
TEST(SimNodeSizes, EasyOnNodesOfEveryGpuCount) {
  for (uint32_t g : kNodeSizes) {
    SCOPED_TRACE("G = " + std::to_string(g));
    const Cluster c = TwoNodesOf(g);
    ASSERT_EQ(c.nodes.size(), 2u);
    Trace t = MakeTrace({{0, 1000, 1},
                         {0, 1000, g},
                         {1, 100, 2 * g, "a", 1000, 2},
                         {1, 100, 2 * g, "a", 1000, 2},
                         {1, 100, 2 * g, "a", 1000, 2},
                         {1, 10, 1}});
    for (Job& j : t.jobs) j.walltime = j.duration;
    SimConfig cfg;
    cfg.policy = "easy:bf_max_job_test=2";
    auto r = Simulate(t, c, cfg);
    ASSERT_TRUE(r.ok()) << r.error().message;
    ASSERT_TRUE(CheckConservation(t, *r).ok());
    std::vector<std::pair<Time, Time>> se;
    for (const JobOutcome& o : r->outcomes) se.emplace_back(o.start, o.end);
    EXPECT_EQ(se, (std::vector<std::pair<Time, Time>>{{0, 1000}, {0, 1000}, {1000, 1100}, {1100, 1200}, {1200, 1300}, {1, 11}}));
  }
}

// Fractional jobs are accounted GPU by GPU (Slot::gpu_mask): 32 GPUs per node at most. A
// fractional trace on 64-GPU nodes is refused before it runs, naming the node; on 32-GPU
// nodes it runs (two half-GPU jobs, both 0..10).
TEST(SimNodeSizes, PerGpuAccountingRefusesNodesItCannotName) {
  Trace t = MakeTrace({{0, 10, 1, "a", 500}, {0, 10, 1, "a", 500}});
  SimConfig cfg;
  cfg.policy = "fifo";
  auto refused = Simulate(t, TwoNodesOf(64), cfg);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message,
            "node 'a-0' has 64 GPUs: fractional GPU jobs are accounted GPU by GPU, on nodes of at most 32 GPUs");
  EXPECT_EQ(refused.error().exit_code, kExitBadInput);
  static_assert(kMaxTrackedNodeGpus == 32);
  auto ran = Simulate(t, TwoNodesOf(32), cfg);
  ASSERT_TRUE(ran.ok()) << ran.error().message;
  EXPECT_EQ(ran->outcomes[0].start, 0);
  EXPECT_EQ(ran->outcomes[1].start, 0);
  EXPECT_EQ(ran->outcomes[1].end, 10);
}

}  // namespace
}  // namespace orrery
