// Cluster configuration: TOML files (docs/formats/cluster.md), the Alibaba openb node
// list CSV, and the embedded default cluster (configs/helios-venus.toml).
//
// Loading is strict: an unknown key, a value of the wrong type, a negative or
// out-of-range number, or a missing required key is an error located as
//   "file:line:col: key 'nodes' in [[vc]] #2: expected a positive integer, got -3".
// Nothing is silently defaulted except the documented optional keys.
//
// The resulting Cluster has node ids dense in VC order (all nodes of VC 0, then VC 1, ...),
// every VirtualCluster.nodes ascending, and GPU model names interned in node-id order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/cluster.h"

namespace orrery {

// Node power model inputs (energy accounting of `simulate --energy`, docs/energy.md).
// Node power = idle_watts + busy_watts_per_gpu * busy GPUs.
struct PowerModel {
  double idle_watts = 0;          // whole node, all GPUs idle
  double busy_watts_per_gpu = 0;  // added per busy GPU
  // Where the numbers come from: "config" (both keys given), "default:<type>" (documented
  // defaults for 8-GPU V100/A100/H100 nodes) or "none" (unknown: both fields are 0).
  std::string source = "none";
  bool known() const { return source != "none"; }
};

// One homogeneous group of nodes as declared ([[vc]] or [[node_group]]), after defaults.
struct NodeGroupSpec {
  std::string vc;              // owning VC name
  uint32_t first_node = 0;     // node ids [first_node, first_node + count) in the Cluster
  uint32_t count = 0;
  uint16_t gpus = 0;
  std::string gpu_type;        // empty = untyped
  uint32_t cpu_milli = 0;
  uint32_t mem_mib = 0;
  PowerModel power;
  uint32_t decl_line = 0;      // line of the declaring table (0 for CSV-loaded clusters)
};

struct ClusterSpec {
  Cluster cluster;
  // In node-id order (groups of one VC are contiguous); node_power is per node.
  std::vector<NodeGroupSpec> groups;
  const PowerModel& node_power(NodeId n) const;
};

// Limits enforced while loading (beyond them a config is rejected, not truncated).
inline constexpr uint64_t kMaxConfigNodes = 1'000'000;
inline constexpr uint32_t kMaxGpuTypes = 32;

// TOML (file path or text). `name` is used as the file name in error messages. Text parsers
// take the cluster's node bound (kMaxConfigNodes unless a caller knows a smaller one: the
// fuzz targets bound theirs so that inputs exercise the grammar, not the allocator).
Result<ClusterSpec> LoadClusterSpec(const std::string& path);
Result<ClusterSpec> ParseClusterSpecString(const std::string& text, const std::string& name,
                                           uint64_t max_nodes = kMaxConfigNodes);
Result<Cluster> LoadClusterConfig(const std::string& path);
Result<Cluster> ParseClusterConfigString(const std::string& text, const std::string& name,
                                         uint64_t max_nodes = kMaxConfigNodes);

// Alibaba openb node list CSV (`sn,cpu_milli,memory_mib,gpu,model`, plain or gzip) as a
// single-pool cluster: one VC "default", nodes in file order named by `sn`, empty model =
// untyped (CPU-only nodes of openb_node_list_all_node.csv).
Result<Cluster> LoadOpenbNodeList(const std::string& path);

// The documented default power model for a node of `gpus` GPUs of `gpu_type`
// (8 x V100/A100/H100); source "none" otherwise.
PowerModel DefaultPowerModel(const std::string& gpu_type, uint32_t gpus);

// configs/helios-venus.toml, embedded at build time.
const char* EmbeddedDefaultClusterToml();
Result<Cluster> DefaultCluster();

}  // namespace orrery
