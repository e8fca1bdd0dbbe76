// Variable sequence lengths across data-parallel ranks: a sequence of length s costs
// a·s + c·s² (everything but attention is linear in length, causal attention quadratic), a step
// waits for its slowest rank, so how sequences are assigned to ranks sets the step time
// (the load-imbalance problem of long-sequence training, cf. FlexSP / Hydraulis).
#pragma once

#include <cstdint>
#include <vector>

#include "plan/estimate.h"

namespace orrery::plan {

struct LengthCost {
  double per_token_s = 0;   // a
  double per_token2_s = 0;  // c
  double Of(double s) const { return per_token_s * s + per_token2_s * s * s; }
};

// a and c of one GPU from an estimate made at (seq, micro_batch): attention time scales with
// b·s², the rest of the step (optimizer and host excluded) with b·s.
LengthCost LengthCostFrom(const StepEstimate& e, int64_t seq, int micro_batch);

enum class LengthPartition {
  kInOrder,      // sequences dealt to ranks in arrival order, equal counts (what a sampler does)
  kLengthAware,  // longest-processing-time first: each sequence to the least-loaded rank
};

struct PartitionResult {
  std::vector<double> rank_s;  // compute seconds per rank
  double max_s = 0, mean_s = 0;
  double Imbalance() const { return mean_s > 0 ? max_s / mean_s : 1.0; }
};

PartitionResult PartitionSequences(const std::vector<int64_t>& lengths, int dp, const LengthCost& cost,
                                   LengthPartition how);

}  // namespace orrery::plan
