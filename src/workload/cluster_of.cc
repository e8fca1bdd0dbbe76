#include "workload/cluster_of.h"

#include <algorithm>
#include <string>

namespace orrery::workload {

Cluster ClusterOf(const WorkloadSpec& spec) {
  Cluster c;
  c.name = "generated:" + spec.name;
  c.single_pool = spec.vcs.size() == 1;
  c.start_latency = spec.start_latency;
  const uint32_t per_node = std::max<uint32_t>(1, spec.gpus_per_node);
  for (size_t v = 0; v < spec.vcs.size(); ++v) {
    VirtualCluster vc;
    vc.id = VcId(static_cast<uint16_t>(v));
    vc.name = spec.vcs[v].name;
    for (uint32_t left = spec.vcs[v].gpus, k = 0; left > 0; ++k) {
      Node n;
      n.id = NodeId(static_cast<uint32_t>(c.nodes.size()));
      n.vc = vc.id;
      n.gpus = static_cast<uint16_t>(std::min(left, per_node));
      n.name = vc.name + "-" + std::to_string(k);
      left -= n.gpus;
      vc.nodes.push_back(n.id);
      vc.gpus += n.gpus;
      c.nodes.push_back(std::move(n));
    }
    c.vcs.push_back(std::move(vc));
  }
  return c;
}

}  // namespace orrery::workload
