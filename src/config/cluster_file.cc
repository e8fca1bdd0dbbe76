#include "config/cluster_file.h"

#include "config/cluster_config.h"
#include "config/slurm_conf_cluster.h"

namespace orrery {

ClusterFileKind ClusterFileKindOf(const std::string& path) {
  if (path.ends_with(".csv") || path.ends_with(".csv.gz")) return ClusterFileKind::kOpenbNodeList;
  if (IsSlurmConfPath(path)) return ClusterFileKind::kSlurmConf;
  return ClusterFileKind::kToml;
}

Result<Cluster> LoadClusterFile(const std::string& path) {
  switch (ClusterFileKindOf(path)) {
    case ClusterFileKind::kToml:
      return LoadClusterConfig(path);
    case ClusterFileKind::kOpenbNodeList:
      return LoadOpenbNodeList(path);
    case ClusterFileKind::kSlurmConf:
      return LoadSlurmConfCluster(path);
  }
  return LoadClusterConfig(path);
}

}  // namespace orrery
