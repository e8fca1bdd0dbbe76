// Shared storage that checkpoint reads compete for (evaluation trials loading a model): one
// aggregate read bandwidth for the cluster, one link per node, and a node-local cache. Plain
// values and the one sharing rule, used by the evaluation executor (eval/executor.h) and the
// simulator's storage model (sim/storage_sim.h).
#pragma once

#include <algorithm>
#include <cstdint>

namespace orrery {

struct StorageSpec {
  double aggregate_bytes_per_s = 12e9;  // shared file system, all readers together
  double node_bytes_per_s = 3e9;        // one node's link to it
  double cache_bytes_per_s = 10e9;      // node-local memory/NVMe -> GPU, per reader
};

// Bytes/s of one reader of shared storage while `nodes_reading` nodes read and its node has
// `readers_on_node` readers: a node gets min(its link, aggregate / nodes reading) and splits
// it equally among its readers (max-min fair across nodes when every link is the same).
inline double SharedReadRate(const StorageSpec& s, uint32_t nodes_reading, uint32_t readers_on_node) {
  const double node = std::min(s.node_bytes_per_s, s.aggregate_bytes_per_s / std::max<uint32_t>(1, nodes_reading));
  return node / std::max<uint32_t>(1, readers_on_node);
}

}  // namespace orrery
