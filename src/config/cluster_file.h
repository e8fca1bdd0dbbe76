// `--cluster FILE`: the one place that tells a cluster file's kind by its name.
#pragma once

#include <string>

#include "base/result.h"
#include "model/cluster.h"

namespace orrery {

enum class ClusterFileKind { kToml, kOpenbNodeList, kSlurmConf };

// ".csv" / ".csv.gz": an Alibaba openb node list; ".conf": a slurm.conf; anything else: TOML.
ClusterFileKind ClusterFileKindOf(const std::string& path);
Result<Cluster> LoadClusterFile(const std::string& path);

}  // namespace orrery
