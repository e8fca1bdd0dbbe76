// The default cluster (configs/helios-venus.toml), embedded at build time by
// src/config/embed_file.cmake into <build>/generated/config/default_cluster_toml.h.
#include "config/cluster_config.h"
#include "config/default_cluster_toml.h"

namespace orrery {

const char* EmbeddedDefaultClusterToml() { return kEmbeddedDefaultClusterToml; }

Result<Cluster> DefaultCluster() {
  return ParseClusterConfigString(kEmbeddedDefaultClusterToml, "<embedded configs/helios-venus.toml>");
}

}  // namespace orrery
