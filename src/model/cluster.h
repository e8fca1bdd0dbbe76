// The machines: nodes with GPUs, grouped into virtual clusters (VCs, Slurm
// partitions), and the network between them (Topology: GPUs within a node, nodes within
// racks/leaf switches, link classes with bandwidths). Plain data; loaded from TOML or CSV
// by config/ (docs/formats/cluster.md).
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
  uint16_t rack = 0;       // index into Topology::racks (0 = the default rack when none is declared)
  std::string name;
};

// How two GPUs are connected: on one node (NVLink/NVSwitch or PCIe), through one rack's
// leaf switch, or across the spine.
enum class LinkClass : uint8_t { kIntraNode = 0, kIntraRack, kInterRack };
inline constexpr int kNumLinkClasses = 3;

struct LinkSpec {
  double gbps = 0;         // per-GPU bandwidth in GB/s (0 = unknown)
  double latency_us = 0;   // one-way latency (0 = unknown)
};

// The network. Shipped configs that say nothing get one rack holding every node and
// unknown bandwidths (0), which no policy reads as a constraint.
struct Topology {
  std::vector<std::string> racks{"default"};  // rack index -> name (leaf switch)
  LinkSpec links[kNumLinkClasses];            // by LinkClass
  bool declared = false;                      // the config had a [topology] table or rack keys
  const LinkSpec& link(LinkClass c) const { return links[static_cast<int>(c)]; }
};

// Time from a job's submission (or release) until the scheduler can first place it, where the
// cluster's scheduling system adds one whatever the load: a pod's creation on a Kubernetes
// platform, a scheduler that sees new jobs only at its next pass. Drawn per job:
// L = min_s + (median_s − min_s) × exp(sigma × Z), Z ~ N(0, 1), rounded to whole seconds; the
// job is invisible to the scheduler meanwhile (it holds no GPUs) and L counts as queueing delay.
// Off (no delay) when median_s == 0, the default of every cluster (docs/formats/cluster.md).
struct StartLatency {
  double min_s = 0;     // no job starts sooner (s)
  double median_s = 0;  // median of L (s), >= min_s; 0 = off
  double sigma = 0;     // log-sd of L − min_s (0: every job waits median_s exactly)
  bool active() const { return median_s > 0; }
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
  Topology topology;
  StartLatency start_latency;  // off unless the config or the generator's preset declares one

  // The slowest link class between GPUs on nodes a and b.
  LinkClass LinkBetween(NodeId a, NodeId b) const {
    if (a == b) return LinkClass::kIntraNode;
    return nodes[a.v].rack == nodes[b.v].rack ? LinkClass::kIntraRack : LinkClass::kInterRack;
  }

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
