// A cluster built from a site's slurm.conf (`--cluster site.conf`; docs/formats/cluster.md,
// "From a slurm.conf"): the nodes its partitions name, with their GPUs (Gres), CPUs and
// memory. One partition makes a single-pool cluster; several make one VC per partition, named
// as the partition, which the simulator needs disjoint: a node in two partitions is a located
// error, never a silent choice. A partition that names no node takes no VC.
#pragma once

#include <string>

#include "base/result.h"
#include "model/cluster.h"
#include "slurm/conf.h"

namespace orrery {

// Whether `--cluster PATH` names a slurm.conf (a file name ending in ".conf").
bool IsSlurmConfPath(const std::string& path);
Result<Cluster> ClusterFromSlurmConf(const slurm::SlurmConf& conf, const std::string& path);
Result<Cluster> LoadSlurmConfCluster(const std::string& path);

}  // namespace orrery
