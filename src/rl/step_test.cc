#include "rl/step.h"

#include <cmath>

#include <gtest/gtest.h>

namespace orrery::rl {
namespace {

// A decoder small enough to count by hand: 1 layer, hidden 2, 1 head (head dim 2), 1 KV head,
// FFN 4, vocabulary 10, untied. Block GEMMs: Q and O 2·2² = 8, K and V 2·2·2 = 8, gate, up and
// down 3·2·4 = 24 -> 40; parameters 1·(40 + 2·2 norms) + 2·10·2 embedding and head + 2 = 86.
plan::DecoderShape Tiny() {
  plan::DecoderShape m;
  m.name = "tiny";
  m.layers = 1;
  m.hidden = 2;
  m.heads = 1;
  m.kv_heads = 1;
  m.ffn = 4;
  m.vocab = 10;
  return m;
}

TEST(Phases, FlopCountsAtTheMfu) {
  plan::InferGpu g;
  g.peak_flops = 1e12;
  CostParams p;
  p.mfu = 0.5;
  p.net_bytes_per_s = 50e9;
  const CostPhaseModel phases(Tiny(), g, 2, p);
  ASSERT_DOUBLE_EQ(Tiny().Params(), 86);
  // 100 tokens, Σs² = 1000: one forward 2·86·100 + 2·L·H·Σs² = 17,200 + 2·1·2·1000 = 21,200 FLOPs.
  // training 3 × 21,200 on 2 GPUs at 0.5 of 1e12: 63,600 / 1e12 = 6.36e-8 s
  EXPECT_NEAR(phases.Train(100, 1000, 2), 6.36e-8, 1e-20);
  // two forwards: 42,400 / 1e12 = 4.24e-8 s
  EXPECT_NEAR(phases.Reference(100, 1000, 2), 4.24e-8, 1e-20);
  // a TP-2 shard of the bf16 weights: 2·86 / 2 = 86 bytes at 50e9 B/s = 1.72e-9 s
  EXPECT_NEAR(phases.Sync(), 1.72e-9, 1e-21);
  // the drafter of a one-layer model is the model: 6·86·100 / (1e12·0.5) = 1.032e-7 GPU-s
  EXPECT_NEAR(phases.DrafterTrainGpuS(100), 1.032e-7, 1e-19);
}

TEST(Phases, SpeculativeStepIsVerifyPlusDraftSteps) {
  Result<plan::InferGpu> g = plan::InferGpuByName("h100");
  ASSERT_TRUE(g.ok()) << g.error().message;
  Result<plan::DecoderShape> m = plan::ParseDecoder("qwen2.5-7b");
  ASSERT_TRUE(m.ok());
  const CostParams p;
  const CostTimer timer(*m, *g, 4, p);
  const double verify = plan::InferStepTime(*m, {plan::InferPhase::kVerify, 3, 5000, 16, 4}, *g).step_time_s;
  const double draft =
      plan::InferStepTime(plan::DrafterOf(*m), {plan::InferPhase::kVerify, 3, 5000, 4, 4}, *g).step_time_s;
  EXPECT_DOUBLE_EQ(timer.Speculative(3, 5000, 16), verify + 8 * draft);
  EXPECT_DOUBLE_EQ(timer.Decode(3, 5000),
                   plan::InferStepTime(*m, {plan::InferPhase::kDecode, 3, 5000, 0, 4}, *g).step_time_s);
  // A speculative step of 16 tokens costs more than a decode step and less than 3.07 of them
  // (its acceptance length): speculation pays at this batch.
  EXPECT_GT(timer.Speculative(3, 5000, 16), timer.Decode(3, 5000));
  EXPECT_LT(timer.Speculative(3, 5000, 16), 3.07 * timer.Decode(3, 5000));
}

TEST(Accept, LogarithmicInTheDraftBudgetAndDecayingWithStaleness) {
  const AcceptModel a;  // 4.0 tokens at 60 draft tokens, 10 % of the gain lost per stale version
  // 1 + 3·ln 49/ln 61 = 1 + 3·3.8918203/4.1108739 = 1 + 3·0.9467136 = 3.8401409
  EXPECT_NEAR(AcceptLength(a, 48, 8, 1), 3.8401409, 1e-6);
  // 1 + 3·ln 9/ln 61 = 1 + 3·2.1972246/4.1108739 = 2.6034718
  EXPECT_NEAR(AcceptLength(a, 8, 8, 1), 2.6034718, 1e-6);
  // two versions behind: 1 + 2.8401409·0.9² = 3.3005141
  EXPECT_NEAR(AcceptLength(a, 48, 8, 3), 3.3005141, 1e-6);
  // never more than the draft steps + 1
  EXPECT_DOUBLE_EQ(AcceptLength(a, 48, 2, 1), 3.0);
  EXPECT_NEAR(AcceptLength(a, 60, 8, 1), 4.0, 1e-12);
}

}  // namespace
}  // namespace orrery::rl
