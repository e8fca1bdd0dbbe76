#include "plan/lins.h"

#include <gtest/gtest.h>

namespace orrery::plan {
namespace {

TEST(Lins, FabricTableArithmetic) {
  IbFabric f;
  // inside a node: 15 us + 1 GB * 7/8 / 150 GB/s
  EXPECT_NEAR(f.Time(Collective::kAllGather, 1e9, 8, 1), 15e-6 + 1e9 * 7 / 8 / 150e9, 1e-12);
  // across 4 nodes (32 GPUs): ring latency 31 steps x 6 us, bus bandwidth 45 GB/s
  EXPECT_NEAR(f.Time(Collective::kReduceScatter, 1e9, 8, 4), 31 * 6e-6 + 1e9 * 31 / 32 / 45e9, 1e-12);
}

TEST(Lins, MfuVersusScaleHasThePapersShape) {
  const GptModel m = *ParseModelSpec("llama-7b");
  const IbFabric f;
  const double tokens = 4.0 * 1024 * 1024;  // 4M tokens per step (Lins' setting)
  const double mem = 80e9;
  auto mfu = [&](int gpus, ZeroScheme s) { return LinsStep(m, 4096, tokens, gpus, s, f, mem).mfu; };
  // At 1,024 GPUs: Lins ahead of MiCS and ZeRO-1, ZeRO-3 collapsed (paper: 51 / 35 / 36 / ~5 %).
  EXPECT_GT(mfu(1024, ZeroScheme::kLins), mfu(1024, ZeroScheme::kMics));
  EXPECT_GT(mfu(1024, ZeroScheme::kLins), mfu(1024, ZeroScheme::kZero1) + 0.1);
  EXPECT_LT(mfu(1024, ZeroScheme::kZero3), 0.12);
  // Lins loses little from 8 to 1,024 GPUs (paper: -15 %), ZeRO-3 most of its MFU (paper: -88 %).
  EXPECT_GT(mfu(1024, ZeroScheme::kLins), 0.8 * mfu(8, ZeroScheme::kLins));
  EXPECT_LT(mfu(1024, ZeroScheme::kZero3), 0.3 * mfu(8, ZeroScheme::kZero3));
  // Lins' choice for 7B keeps the parameters whole and shards inside a node (its Table IV: P 1x1,
  // G 1x1, OS 8x1; with one micro-batch per step the model finds G 1x2, OS 1x2 as cheap: s_g > s_p
  // costs nothing when there is no gradient accumulation).
  const ScalePoint p = LinsStep(m, 4096, tokens, 1024, ZeroScheme::kLins, f, mem);
  EXPECT_EQ(p.shard.s_p, 1);
  EXPECT_LE(p.shard.s_os, 8);
}

}  // namespace
}  // namespace orrery::plan
