// Plan search over a pool of GPUs (homogeneous or of several types), Sailor-style at layer
// granularity: pipeline depth, micro-batch size, data-parallel degree, TP degree per GPU type and
// which stages run on which type, for a fixed global batch. Objective throughput or cost, with a
// budget ($ per iteration) or a minimum throughput. Heuristics (docs/design/planner.md, "Search"):
// TP inside a node (H1), TP from the smallest that fits up to the largest that still speeds a stage
// up 1.5× (H2, the memory-feasible range), data-parallel degrees only where the number of micro-batches changes, scanned downwards
// with early stop (H3); each stage's replicas in one pool entry, hence one zone and region (H5);
// activations between stages in different zones cross the zone network (time and $/GB).
// Stage costs memoized as prefix sums. `exhaustive` turns H2/H3 off.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/result.h"
#include "plan/sailor.h"

namespace orrery::plan {

enum class Objective { kThroughput, kCost };

struct PoolEntry {
  const SailorGpu* gpu = nullptr;
  int count = 0;
  std::string zone;  // empty: one zone for the whole pool
};

struct SearchRequest {
  const SailorModel* model = nullptr;
  int global_batch = 0;
  std::vector<PoolEntry> pool;
  Objective objective = Objective::kThroughput;
  double max_cost_per_iter = std::numeric_limits<double>::infinity();
  double min_iters_per_s = 0;
  bool exhaustive = false;
  double bytes_per_param = 24;  // Sailor's DeepSpeed accounting (fp16 + fp32 master + Adam + buffers)
  const ZoneNetwork* zones = nullptr;  // needed when pool entries are in different zones
};

struct StagePlan {
  int gpu_index = 0;  // into SearchRequest::pool
  int tp = 1;
  int layer_begin = 0, layer_end = 0;  // [begin, end) over all layers incl. embedding and head
  double peak_bytes = 0;
};

struct PlanCandidate {
  int pp = 1, micro_batch = 1, dp = 1, num_micro = 1;
  std::vector<StagePlan> stages;
  double iter_s = 0;
  double cost_per_iter = 0;
  int gpus = 0;
};

struct SearchResult {
  bool found = false;
  PlanCandidate best;
  int64_t evaluated = 0;
};

// Iteration time and cost of one candidate (Sailor's 1F1B model; docs/design/planner.md).
void EvaluateCandidate(const SearchRequest& r, PlanCandidate* c);

Result<SearchResult> SearchPlans(const SearchRequest& r);

}  // namespace orrery::plan
