// The one cluster-from-sinfo: the scheduler's Cluster built from the nodes Slurm reports,
// used by the daemon (`orrery serve`) and by `orrery replay` (its simulated prediction).
// One VC per managed partition, in the given order; nodes ascending by name, so node ids
// are deterministic for a given sinfo listing.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "live/slurm_client.h"
#include "model/cluster.h"

namespace orrery::live {

struct SlurmCluster {
  Cluster cluster;
  std::unordered_map<std::string, NodeId> index;  // node name -> id
};

// `nodes`: the nodes to model (each in one of `partitions`; others are skipped).
SlurmCluster ClusterFromSinfo(const std::vector<std::string>& partitions, std::vector<const SlurmNode*> nodes);

}  // namespace orrery::live
