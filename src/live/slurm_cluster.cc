#include "live/slurm_cluster.h"

#include <algorithm>

namespace orrery::live {

namespace {

int PartitionIndex(const std::vector<std::string>& partitions, const std::string& p) {
  auto it = std::find(partitions.begin(), partitions.end(), p);
  return it == partitions.end() ? -1 : static_cast<int>(it - partitions.begin());
}

}  // namespace

SlurmCluster ClusterFromSinfo(const std::vector<std::string>& partitions, std::vector<const SlurmNode*> nodes) {
  SlurmCluster out;
  Cluster& cl = out.cluster;
  cl.name = "slurm";
  for (size_t v = 0; v < partitions.size(); ++v)
    cl.vcs.push_back(VirtualCluster{VcId(static_cast<uint16_t>(v)), partitions[v], {}, 0});
  std::sort(nodes.begin(), nodes.end(), [](const SlurmNode* a, const SlurmNode* b) { return a->name < b->name; });
  for (const SlurmNode* n : nodes) {
    const int v = PartitionIndex(partitions, n->partition);
    if (v < 0 || out.index.count(n->name)) continue;
    Node nd;
    nd.id = NodeId(static_cast<uint32_t>(cl.nodes.size()));
    nd.vc = VcId(static_cast<uint16_t>(v));
    nd.gpus = n->gpus;
    nd.name = n->name;
    cl.vcs[v].nodes.push_back(nd.id);
    cl.vcs[v].gpus += nd.gpus;
    out.index.emplace(nd.name, nd.id);
    cl.nodes.push_back(std::move(nd));
  }
  return out;
}

}  // namespace orrery::live
