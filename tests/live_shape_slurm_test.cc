// shape=goodput in `orrery serve` against a real local Slurm 22.05 (tests/slurm/harness.sh,
// 2 nodes × 8 fake GPUs as gres): a job that opts in with an #ORRERY shape=flex line, submitted
// asking one node × 8 GPUs, runs on the shape the goodput plugin chose (both nodes × 8: the
// model's step on 16 GPUs is ≥ 1.6 × faster, FlexDaemon.GoodputGrows...), which Slurm
// reports (scontrol: NumNodes, TresPerNode) and the script itself sees (SLURM_JOB_NUM_NODES,
// SLURM_GPUS_ON_NODE, one srun task per node); a job without the line runs as it asked.
// Named *Slow*: the Release stage of CI runs it, the sanitizer stage skips it.
#include <gtest/gtest.h>

#include <string>

#include "cli_testing.h"
#include "slurm/live_slurm.h"

namespace orrery {
namespace {

using testing::ServeProcess;
using testing::SlurmCluster;
using cli_testing::Slurp;

#define REQUIRE_SLURM()                                                                      \
  if (!testing::SlurmInstalled())                                                            \
  GTEST_SKIP() << "slurmctld/slurmd/munged/slurm-client not installed or not root: run "     \
                  "scripts/install-deps.sh (as root) to run the live-mode Slurm tests"

// What a launcher reads from Slurm (torchrun --nnodes=$SLURM_JOB_NUM_NODES
// --nproc-per-node=$SLURM_GPUS_ON_NODE), then one line per node from srun.
std::string Script(const std::string& header) {
  return "#!/bin/bash\n" + header +
         "echo \"world nodes=$SLURM_JOB_NUM_NODES gpus_on_node=$SLURM_GPUS_ON_NODE\"\n"
         "srun bash -c 'echo \"node $SLURMD_NODENAME gpus=$SLURM_GPUS_ON_NODE\"' | sort\n"
         "sleep 2\n";
}

uint32_t Sbatch(live::ExecSlurmClient& slurm, const SlurmCluster& c, const std::string& name, int gpus,
                const std::string& script) {
  const std::string path = c.dir() + "/" + name + ".sh";
  testing::WriteFile(path, script);
  auto out = slurm.Run("sbatch", {"--parsable", "-p", "gpu", "-N", "1", "--gres=gpu:" + std::to_string(gpus), "--hold",
                                  "-J", name, "-D", c.dir(), "-o", c.dir() + "/" + name + ".out", path});
  EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().message);
  return out.ok() ? static_cast<uint32_t>(std::stoul(*out)) : 0;
}

// One field of `scontrol show job -o`.
std::string ShowField(live::ExecSlurmClient& slurm, uint32_t id, const std::string& key) {
  auto out = slurm.Run("scontrol", {"show", "job", "-o", std::to_string(id)});
  if (!out.ok()) return "?";
  const size_t p = out->find(" " + key + "=");
  if (p == std::string::npos) return "";
  const size_t v = p + key.size() + 2;
  return out->substr(v, out->find_first_of(" \n", v) - v);
}

TEST(LiveSlurmSlow, OptedInJobRunsOnTheGoodputShapeAndTheOtherAsItAsked) {
  REQUIRE_SLURM();
  SlurmCluster cluster(2);
  ASSERT_TRUE(cluster.ok()) << cluster.log();
  auto slurm = cluster.Client();
  const std::string cfg = cluster.dir() + "/serve.toml";
  testing::WriteFile(cfg, "[slurm]\npartitions = [\"gpu\"]\nslurm_conf = \"" + cluster.conf() +
                              "\"\n[policy]\nspec = \"fifo:shape=goodput\"\ngpu_type = \"H200\"\n[daemon]\njournal = \"" +
                              cluster.dir() + "/journal.db\"\ninterval_ms = 200\n[http]\nport = 0\n");
  // Both are submitted held before the daemon starts: fifo sees the opted-in job first.
  const uint32_t flex = Sbatch(slurm, cluster, "flex", 8,
                               Script("#SBATCH --comment=orrery:duration=5\n#ORRERY shape=flex gpus=8-16 "
                                      "model=gpt:layers=24,hidden=2048,heads=16,vocab=50257 seq=2048 global_batch=512\n"));
  const uint32_t fixed = Sbatch(slurm, cluster, "fixed", 4, Script("#SBATCH --comment=orrery:duration=5\n"));
  const std::string log = cluster.dir() + "/serve.log";
  ServeProcess serve(cfg, log, cluster.conf());
  ASSERT_TRUE(serve.running());
  ASSERT_TRUE(testing::WaitFor([&] { return cluster.CompletedJobs() >= 2; }, 60)) << testing::LogTail(log);
  EXPECT_EQ(serve.Kill(SIGTERM), 0) << testing::LogTail(log);

  // Slurm's record: the opted-in job ran on both nodes × 8, the other on one node × 4, after it.
  EXPECT_EQ(ShowField(slurm, flex, "NumNodes"), "2");
  EXPECT_EQ(ShowField(slurm, flex, "TresPerNode"), "gres:gpu:8");
  EXPECT_EQ(ShowField(slurm, flex, "NodeList"), "node[1-2]");
  EXPECT_EQ(ShowField(slurm, fixed, "NumNodes"), "1");
  EXPECT_EQ(ShowField(slurm, fixed, "TresPerNode"), "gres:gpu:4");
  auto done = cluster.Completions();
  ASSERT_EQ(done.count(flex), 1u);
  ASSERT_EQ(done.count(fixed), 1u);
  EXPECT_EQ(done.find(flex)->second.state, "COMPLETED");
  EXPECT_GE(done.find(fixed)->second.start, done.find(flex)->second.end);  // fifo: 16 GPUs, then 4
  // What the scripts saw.
  EXPECT_EQ(Slurp(cluster.dir() + "/flex.out"),
            "world nodes=2 gpus_on_node=8\nnode node1 gpus=8\nnode node2 gpus=8\n");
  const std::string other = Slurp(cluster.dir() + "/fixed.out");
  EXPECT_EQ(other.substr(0, other.find('\n') + 1), "world nodes=1 gpus_on_node=4\n") << other;
}

}  // namespace
}  // namespace orrery
