// The machines: nodes with GPUs, grouped into virtual clusters (VCs, Slurm
// partitions). Plain data; loaded from TOML or CSV by config/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/ids.h"
#include "base/string_pool.h"
#include "model/job.h"

namespace orrery {

struct Node {
  NodeId id;
  VcId vc;                 // the VC that owns this node
  GpuTypeId gpu_type;      // invalid = untyped
  uint16_t gpus = 0;       // GPU devices
  uint32_t cpu_milli = 0;  // 0 = not modelled
  uint32_t mem_mib = 0;    // 0 = not modelled
  std::string name;
};

struct VirtualCluster {
  VcId id;
  std::string name;
  std::vector<NodeId> nodes;  // ascending
  uint64_t gpus = 0;          // sum over nodes
};

// Power model inputs per node (used by energy accounting; defaults documented in docs/formats/cluster.md).
struct Cluster {
  std::string name;
  std::vector<Node> nodes;
  std::vector<VirtualCluster> vcs;
  StringPool gpu_types;  // GpuTypeId -> model name
  // When true, every job runs in the single VC regardless of its own VC label.
  bool single_pool = false;

  uint64_t total_gpus() const {
    uint64_t g = 0;
    for (const auto& n : nodes) g += n.gpus;
    return g;
  }
  const VirtualCluster* FindVc(std::string_view name) const {
    for (const auto& v : vcs)
      if (v.name == name) return &v;
    return nullptr;
  }
};

}  // namespace orrery
