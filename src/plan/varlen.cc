#include "plan/varlen.h"

#include <algorithm>
#include <numeric>
#include <queue>

namespace orrery::plan {

LengthCost LengthCostFrom(const StepEstimate& e, int64_t seq, int micro_batch) {
  const double s = static_cast<double>(seq), b = micro_batch;
  const double linear = std::max(0.0, e.time.gpu_busy_s - e.time.optimizer_s - e.time.attention_s);
  return {linear / (b * s), e.time.attention_s / (b * s * s)};
}

PartitionResult PartitionSequences(const std::vector<int64_t>& lengths, int dp, const LengthCost& cost,
                                   LengthPartition how) {
  PartitionResult r;
  r.rank_s.assign(std::max(dp, 1), 0.0);
  switch (how) {
    case LengthPartition::kInOrder: {
      const size_t per = (lengths.size() + r.rank_s.size() - 1) / r.rank_s.size();
      for (size_t i = 0; i < lengths.size(); ++i) r.rank_s[std::min(i / per, r.rank_s.size() - 1)] += cost.Of(lengths[i]);
      break;
    }
    case LengthPartition::kLengthAware: {
      std::vector<int64_t> sorted = lengths;
      std::sort(sorted.begin(), sorted.end(), std::greater<>());
      using Slot = std::pair<double, size_t>;  // (load, rank)
      std::priority_queue<Slot, std::vector<Slot>, std::greater<>> heap;
      for (size_t k = 0; k < r.rank_s.size(); ++k) heap.push({0.0, k});
      for (int64_t s : sorted) {
        auto [load, k] = heap.top();
        heap.pop();
        r.rank_s[k] = load + cost.Of(s);
        heap.push({r.rank_s[k], k});
      }
      break;
    }
  }
  r.max_s = *std::max_element(r.rank_s.begin(), r.rank_s.end());
  r.mean_s = std::accumulate(r.rank_s.begin(), r.rank_s.end(), 0.0) / r.rank_s.size();
  return r;
}

}  // namespace orrery::plan
