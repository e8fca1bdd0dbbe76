// Clusters built from a slurm.conf (docs/formats/cluster.md, "From a slurm.conf").
#include "config/slurm_conf_cluster.h"

#include <gtest/gtest.h>

#include "config/cluster_file.h"

namespace orrery {
namespace {

Result<Cluster> FromText(const std::string& text, const std::string& path = "site.conf") {
  auto conf = slurm::ParseSlurmConf(text, path);
  if (!conf.ok()) return conf.error();
  return ClusterFromSlurmConf(*conf, path);
}

// Two disjoint partitions: a (gpu[1-2], 8 H100 each) and b (cpu1 without GPUs, big1 with 4
// untyped): VCs a (16 GPUs) and b (4 GPUs), nodes in partition order, CPUs x 1000 as milli-CPUs.
TEST(SlurmConfCluster, DisjointPartitionsAreTheVcs) {
  auto c = FromText(
      "NodeName=gpu[1-2] CPUs=64 RealMemory=512000 Gres=gpu:h100:8\n"
      "NodeName=cpu1 CPUs=32\n"
      "NodeName=big1 CPUs=16 Gres=gpu:4\n"
      "PartitionName=a Nodes=gpu[1-2] Default=YES\n"
      "PartitionName=b Nodes=cpu1,big1\n"
      "PartitionName=empty\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->name, "site");
  EXPECT_FALSE(c->single_pool);
  ASSERT_EQ(c->vcs.size(), 2u);  // the partition without nodes takes no VC
  EXPECT_EQ(c->vcs[0].name, "a");
  EXPECT_EQ(c->vcs[0].gpus, 16u);
  EXPECT_EQ(c->vcs[1].name, "b");
  EXPECT_EQ(c->vcs[1].gpus, 4u);
  ASSERT_EQ(c->nodes.size(), 4u);
  EXPECT_EQ(c->nodes[0].name, "gpu1");
  EXPECT_EQ(c->nodes[0].cpu_milli, 64'000u);
  EXPECT_EQ(c->nodes[0].mem_mib, 512'000u);
  EXPECT_EQ(c->gpu_types.Get(c->nodes[0].gpu_type.v), "h100");
  EXPECT_EQ(c->nodes[2].name, "cpu1");
  EXPECT_EQ(c->nodes[2].gpus, 0);
  EXPECT_FALSE(c->nodes[3].gpu_type.valid());  // Gres=gpu:4 names no type
  EXPECT_EQ(c->nodes[3].vc.v, 1);
}

TEST(SlurmConfCluster, OnePartitionIsASinglePool) {
  auto c = FromText("NodeName=n[1-4] Gres=gpu:8\nPartitionName=gpu Nodes=ALL Default=YES\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_TRUE(c->single_pool);
  ASSERT_EQ(c->vcs.size(), 1u);
  EXPECT_EQ(c->vcs[0].name, "default");
  EXPECT_EQ(c->total_gpus(), 32u);
}

TEST(SlurmConfCluster, WhatCannotBeAClusterIsLocated) {
  const struct {
    const char* text;
    const char* want;
  } cases[] = {
      // gpu[13-16] are in batch (line 2) and interactive (line 3).
      {"NodeName=gpu[01-16] Gres=gpu:8\nPartitionName=batch Nodes=ALL\nPartitionName=interactive Nodes=gpu[13-16]\n",
       "site.conf:3:1: partition 'interactive' names node gpu13, already in partition 'batch' (line 2)"},
      {"NodeName=n1 CPUs=8\nPartitionName=p Nodes=n1\n", "expected nodes with GPUs (Gres=gpu:N), got none"},
      {"NodeName=n1 Gres=gpu:8\n", "expected a PartitionName line naming nodes, got none"},
  };
  for (const auto& c : cases) {
    auto r = FromText(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.error().message.find(c.want), std::string::npos) << r.error().message;
  }
}

TEST(ClusterFile, TheKindFollowsTheName) {
  EXPECT_EQ(ClusterFileKindOf("configs/helios-venus.toml"), ClusterFileKind::kToml);
  EXPECT_EQ(ClusterFileKindOf("nodes.csv"), ClusterFileKind::kOpenbNodeList);
  EXPECT_EQ(ClusterFileKindOf("nodes.csv.gz"), ClusterFileKind::kOpenbNodeList);
  EXPECT_EQ(ClusterFileKindOf("configs/slurm/gpu-site.conf"), ClusterFileKind::kSlurmConf);
  EXPECT_EQ(ClusterFileKindOf(".conf"), ClusterFileKind::kToml);  // no name before the suffix
}

}  // namespace
}  // namespace orrery
