// Clusters inferred from a trace's own description (`orrery simulate --cluster auto`;
// docs/formats/cluster.md, "Inferred clusters").
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "base/result.h"
#include "config/cluster_config.h"
#include "model/cluster.h"

namespace orrery {

// The machine an SWF log's header describes (`; MaxProcs: N`, `; MaxNodes: N`; 0 = absent).
struct SwfMachine {
  uint64_t max_procs = 0;
  uint64_t max_nodes = 0;
};

// Reads the header comment lines of an SWF log (plain or gzip) up to its first job line.
// A MaxProcs/MaxNodes value that is not a positive integer is an error located at its line.
Result<SwfMachine> ReadSwfMachine(const std::string& path);
// Same for in-memory text; `name` stands in for the path in messages (tests, fuzzers).
Result<SwfMachine> ParseSwfMachine(std::string_view text, const std::string& name);

// One pool ("default", single_pool) of the SWF machine with processors as GPUs: MaxNodes
// nodes of MaxProcs / MaxNodes processors each (the remainder on extra nodes), or, without
// MaxNodes, nodes of 8. Fails (with a hint to pass --cluster) without MaxProcs or beyond
// `max_nodes` nodes (kMaxConfigNodes unless a caller knows a smaller bound).
Result<Cluster> SwfCluster(const SwfMachine& machine, const std::string& path, uint64_t max_nodes = kMaxConfigNodes);

}  // namespace orrery
