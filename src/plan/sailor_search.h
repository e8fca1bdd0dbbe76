// A plan search over a pool of GPUs described by Sailor's published profiles: the one home of
// reading the pool, loading the profiles and shaping the answer, for `orrery plan search` and
// `orrery.plan.search` (docs/design/planner.md, "Search").
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace orrery::plan {

struct SailorPoolEntry {
  std::string gpu;
  int count = 0;
  std::string zone;  // "" = none
};

// "sailor:A100-40=128,V100-16=384", with zones "sailor:A100-40=64@us-central1-a,...".
Result<std::vector<SailorPoolEntry>> ParseSailorPool(const std::string& text);

struct SailorSearchArgs {
  std::string model = "gpt-neo-2.7b";  // a model with a Sailor profile (model_names.h)
  std::string pool;                    // ParseSailorPool's text
  int global_batch = 0;                // 0: the profile's training config
  std::string objective = "throughput";  // throughput | cost
  double max_cost = 0;                 // $ per iteration; 0: none
  double min_throughput = 0;           // iterations per second
  bool exhaustive = false;
};

// The best plan: model, global_batch, pp, dp, micro_batch, num_micro, iter_s, iters_per_s,
// cost_per_iter, gpus_used, stages (gpu, zone, tp, layers, peak_gib), evaluated and search_s
// (the search's wall time). `profile_dir` holds Sailor's profiles (sailor-profiles/).
Result<nlohmann::ordered_json> SearchSailorPool(const SailorSearchArgs& a, const std::string& profile_dir);

}  // namespace orrery::plan
