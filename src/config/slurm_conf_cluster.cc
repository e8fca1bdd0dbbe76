#include "config/slurm_conf_cluster.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "config/cluster_config.h"

namespace orrery {

bool IsSlurmConfPath(const std::string& path) { return path.size() > 5 && path.ends_with(".conf"); }

namespace {

std::string Stem(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.ends_with(".conf")) base.resize(base.size() - 5);
  return base;
}

std::string At(const std::string& path, uint64_t line) { return path + ":" + std::to_string(line) + ":1: "; }

// One node of the cluster from its NodeName definition.
Result<Node> NodeOf(const slurm::NodeDef& d, const std::string& path, Cluster* cl) {
  if (d.gpus > std::numeric_limits<uint16_t>::max())
    return MakeError(At(path, d.line) + "node " + d.name + ": expected at most 65535 GPUs, got " + std::to_string(d.gpus));
  Node n;
  n.name = d.name;
  n.gpus = static_cast<uint16_t>(d.gpus);
  n.cpu_milli = static_cast<uint32_t>(std::min<uint64_t>(uint64_t{d.cpus} * 1000, std::numeric_limits<uint32_t>::max()));
  n.mem_mib = static_cast<uint32_t>(std::clamp<int64_t>(d.real_memory_mib, 0, std::numeric_limits<uint32_t>::max()));
  if (!d.gpu_type.empty()) {
    if (cl->gpu_types.Find(d.gpu_type) == UINT32_MAX && cl->gpu_types.size() >= kMaxGpuTypes)
      return MakeError(At(path, d.line) + "node " + d.name + ": expected at most " + std::to_string(kMaxGpuTypes) +
                       " GPU models in the cluster, got another one, '" + d.gpu_type + "'");
    n.gpu_type = GpuTypeId(static_cast<uint8_t>(cl->gpu_types.Intern(d.gpu_type)));
  }
  return n;
}

}  // namespace

Result<Cluster> ClusterFromSlurmConf(const slurm::SlurmConf& conf, const std::string& path) {
  Cluster cl;
  cl.name = Stem(path);
  std::vector<size_t> parts;  // the partitions that name nodes (the others take no VC)
  for (size_t p = 0; p < conf.partitions.size(); ++p)
    if (!conf.partitions[p].nodes.empty()) parts.push_back(p);
  if (parts.size() >= VcId::kInvalid)
    return MakeError(path + ": expected at most " + std::to_string(VcId::kInvalid - 1) + " partitions with nodes, got " +
                     std::to_string(parts.size()));
  cl.single_pool = parts.size() == 1;
  std::vector<int64_t> owner(conf.nodes.size(), -1);  // the partition that took each node
  for (size_t p : parts) {
    const slurm::PartitionDef& part = conf.partitions[p];
    VirtualCluster vc;
    vc.id = VcId(static_cast<uint16_t>(cl.vcs.size()));
    vc.name = cl.single_pool ? "default" : part.name;
    for (uint32_t i : part.nodes) {
      if (owner[i] >= 0) {
        const slurm::PartitionDef& first = conf.partitions[static_cast<size_t>(owner[i])];
        return MakeError(At(path, part.line) + "partition '" + part.name + "' names node " + conf.nodes[i].name +
                         ", already in partition '" + first.name + "' (line " + std::to_string(first.line) +
                         "): a cluster's VCs are disjoint, so overlapping partitions cannot be one; pass "
                         "--cluster FILE.toml");
      }
      owner[i] = static_cast<int64_t>(p);
      ORR_ASSIGN_OR_RETURN(Node n, NodeOf(conf.nodes[i], path, &cl));
      n.id = NodeId(static_cast<uint32_t>(cl.nodes.size()));
      n.vc = vc.id;
      vc.nodes.push_back(n.id);
      vc.gpus += n.gpus;
      cl.nodes.push_back(std::move(n));
    }
    cl.vcs.push_back(std::move(vc));
  }
  if (cl.nodes.empty()) return MakeError(path + ": expected a PartitionName line naming nodes, got none");
  if (cl.total_gpus() == 0) return MakeError(path + ": expected nodes with GPUs (Gres=gpu:N), got none");
  return cl;
}

Result<Cluster> LoadSlurmConfCluster(const std::string& path) {
  ORR_ASSIGN_OR_RETURN(slurm::SlurmConf conf, slurm::ReadSlurmConf(path));
  return ClusterFromSlurmConf(conf, path);
}

}  // namespace orrery
