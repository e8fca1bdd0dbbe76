#include "plan/varlen.h"

#include <gtest/gtest.h>

namespace orrery::plan {
namespace {

TEST(VarLen, LengthAwarePartitionBalancesQuadraticCost) {
  const LengthCost quad{0.0, 1.0};  // cost = s²
  // one 4k sequence and eight 1k ones on 2 ranks: in order, rank 0 gets {4k, 1k, 1k, 1k, 1k} =
  // 16 + 4 = 20 (in M), rank 1 {1k x4} = 4; LPT puts the 4k alone and the eight 1k on the other: 16 / 8.
  const std::vector<int64_t> lens = {4000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000};
  PartitionResult in_order = PartitionSequences(lens, 2, quad, LengthPartition::kInOrder);
  PartitionResult aware = PartitionSequences(lens, 2, quad, LengthPartition::kLengthAware);
  EXPECT_DOUBLE_EQ(in_order.max_s, 20e6);
  EXPECT_DOUBLE_EQ(aware.max_s, 16e6);
  EXPECT_DOUBLE_EQ(aware.mean_s, 12e6);
  EXPECT_NEAR(aware.Imbalance(), 16.0 / 12.0, 1e-12);
}

TEST(VarLen, LinearCostIsBalancedByTokenCount) {
  const LengthCost lin{1.0, 0.0};
  PartitionResult r = PartitionSequences({3, 3, 2, 2, 2}, 2, lin, LengthPartition::kLengthAware);
  // LPT: 3 -> r0, 3 -> r1, 2 -> r0 (5), 2 -> r1 (5), 2 -> r0 (7)
  EXPECT_DOUBLE_EQ(r.max_s, 7);
  EXPECT_DOUBLE_EQ(r.mean_s, 6);
}

TEST(VarLen, CostFromAnEstimateSplitsAttention) {
  StepEstimate e;
  e.time.gpu_busy_s = 1.0;
  e.time.attention_s = 0.25;
  e.time.optimizer_s = 0.15;
  const LengthCost c = LengthCostFrom(e, 1000, 2);
  EXPECT_DOUBLE_EQ(c.per_token_s, 0.6 / 2000);
  EXPECT_DOUBLE_EQ(c.per_token2_s, 0.25 / 2e6);
}

}  // namespace
}  // namespace orrery::plan
