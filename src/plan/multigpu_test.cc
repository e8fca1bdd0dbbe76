// The multi-GPU paths of the cost model at 4 and 8 ranks, where no measured step exists: the
// collective volumes and times of a step against hand arithmetic (nccl-tests bus-bandwidth
// convention: ring all-reduce moves 2(n-1)/n of the buffer per rank, all-gather and
// reduce-scatter (n-1)/n), FSDP's gradient division and the memory of the DTensor plan.
#include <algorithm>

#include <gtest/gtest.h>

#include "plan/cost_internal.h"
#include "plan/estimate.h"
#include "plan/plan.h"
#include "plan/profile.h"

namespace orrery::plan {
namespace {

// 2-rank tables, linear in size from 1 KiB to 1 GiB at 100 GB/s bus bandwidth: an all-reduce of
// B bytes takes B / 1e11 s (bus factor 1 at n = 2), an all-gather or reduce-scatter B / 2e11.
constexpr const char* kLinear = R"({
 "format": "orrery-gpu-profile", "version": 1, "gpu": "X", "memory_gib": 80,
 "peak_bf16_tflops": 900, "membw_GBps": 3000,
 "gemm": [{"op": "fwd", "m": 8192, "k": 8192, "n": 8192, "t_s": 0.0016}],
 "collectives": [
  {"op": "all_reduce", "dtype": "fp32", "world": 2, "nodes": 1, "bytes": 1024, "t_s": 1.024e-8},
  {"op": "all_reduce", "dtype": "fp32", "world": 2, "nodes": 1, "bytes": 1073741824, "t_s": 1.073741824e-2},
  {"op": "all_gather", "dtype": "fp32", "world": 2, "nodes": 1, "bytes": 1024, "t_s": 5.12e-9},
  {"op": "all_gather", "dtype": "fp32", "world": 2, "nodes": 1, "bytes": 1073741824, "t_s": 5.36870912e-3},
  {"op": "reduce_scatter", "dtype": "fp32", "world": 2, "nodes": 1, "bytes": 1024, "t_s": 5.12e-9},
  {"op": "reduce_scatter", "dtype": "fp32", "world": 2, "nodes": 1, "bytes": 1073741824, "t_s": 5.36870912e-3}
 ]
})";

// 4 layers, h = 512, 8 heads, V = 2000: N = 4(12·512² + 4·512) + 2·2000·512 + 2·512
//   = 4·3,147,776 + 2,048,000 + 1,024 = 14,640,128 parameters; one block 3,147,776.
constexpr double kParams = 14640128, kBlock = 3147776;

Workload Tiny() {
  Workload w;
  w.model = GptModel{"tiny", 4, 512, 8, 2000, 2048};
  w.seq = 128;
  w.micro_batch = 1;
  return w;
}

TimeBreakdown Step(const std::string& strategy, int gpus) {
  const GpuProfile gpu = *ParseProfileJson(kLinear, "linear.json");
  Result<ParallelPlan> p = ParseStrategy(strategy, gpus);
  EXPECT_TRUE(p.ok()) << p.error().message;
  Result<StepEstimate> e = EstimateStep(Tiny(), *p, gpu, 8);
  EXPECT_TRUE(e.ok()) << e.error().message;
  return e->time;
}

TEST(MultiGpu, CollectiveTimesAtFourAndEightRanks) {
  const GpuProfile p = *ParseProfileJson(kLinear, "linear.json");
  // busbw 1e11 B/s from the 2-rank tables; 1 GB buffers
  EXPECT_NEAR(CollectiveTime(p, Collective::kAllReduce, DType::kFp32, 1e9, 4, 1), 1e9 * 2 * 3 / 4 / 1e11, 1e-12);
  EXPECT_NEAR(CollectiveTime(p, Collective::kAllReduce, DType::kFp32, 1e9, 8, 1), 1e9 * 2 * 7 / 8 / 1e11, 1e-12);
  EXPECT_NEAR(CollectiveTime(p, Collective::kAllGather, DType::kFp32, 1e9, 8, 1), 1e9 * 7 / 8 / 1e11, 1e-12);
  EXPECT_NEAR(CollectiveTime(p, Collective::kReduceScatter, DType::kFp32, 1e9, 4, 1), 1e9 * 3 / 4 / 1e11, 1e-12);
}

TEST(MultiGpu, DdpAllReducesEveryGradientByteOnce) {
  // fp32 gradients, 4·N bytes in 25 MB buckets; linear tables, so the bucket split does not
  // change the sum: 4N · 2(n-1)/n / 1e11.
  struct Case {
    int n;
    double comm_s;
  };
  for (const Case c : {Case{2, 4 * kParams * 1.0 / 1e11}, Case{4, 4 * kParams * 1.5 / 1e11},
                       Case{8, 4 * kParams * 1.75 / 1e11}}) {
    EXPECT_NEAR(Step("ddp", c.n).comm_s, c.comm_s, 1e-9) << c.n;  // 8 ranks: 1.0248e-3 s
  }
}

TEST(MultiGpu, FsdpFullShardGathersTwiceAndReduceScattersOnce) {
  // Forward gathers every unit (N params), backward the blocks again (4 blocks; the root unit
  // stays gathered), then every unit's gradient is reduce-scattered: (N + 4·block + N) · 4 B
  // · (n-1)/n / 1e11.
  const double bytes = (kParams + 4 * kBlock + kParams) * 4;
  EXPECT_NEAR(Step("fsdp_full", 4).comm_s, bytes * 3 / 4 / 1e11, 1e-9);
  EXPECT_NEAR(Step("fsdp_full", 8).comm_s, bytes * 7 / 8 / 1e11, 1e-9);
  // SHARD_GRAD_OP: one gather in forward, none in backward or after the optimizer (the next
  // forward gathers the updated shards): 2N · 4 B · 7/8 / 1e11 at 8 ranks.
  EXPECT_NEAR(Step("fsdp_grad_op", 8).comm_s, 2 * kParams * 4 * 7 / 8 / 1e11, 1e-9);
}

TEST(MultiGpu, FsdpGradientDivisionFactors) {
  // PyTorch's predivide factor doubles from 1 while it divides the world and world/factor > factor.
  struct Case {
    int world;
    double pre, post;
  };
  for (const Case c : {Case{1, 1, 1}, Case{2, 2, 1}, Case{4, 2, 2}, Case{8, 4, 2}, Case{16, 4, 4}, Case{6, 4, 1.5}}) {
    const FsdpDivide d = FsdpDivideFactors(c.world);
    EXPECT_DOUBLE_EQ(d.pre, c.pre) << c.world;
    EXPECT_DOUBLE_EQ(d.post, c.post) << c.world;
  }
}

TEST(MultiGpu, DtensorPlanHoldsTheForeachAdamTemporary) {
  // tp over n ranks: the block weights (12h² per block) are split n ways, the rest replicated.
  // Foreach AdamW's sqrt(v) covers the larger group: blocks 4·12·512²/n = 12,582,912/n against
  // the rest 14,640,128 − 12,582,912 = 2,057,216 (embedding, head, LayerNorms).
  const GpuProfile gpu = *ParseProfileJson(kLinear, "linear.json");
  for (int n : {2, 4, 8}) {
    Result<ParallelPlan> dt = ParseStrategy("tp", n);
    Result<ParallelPlan> mega = ParseStrategy("tp_mega", n);
    ASSERT_TRUE(dt.ok() && mega.ok());
    Workload w = Tiny();
    const MemoryBreakdown a = EstimateStep(w, *dt, gpu, 8)->memory;
    const MemoryBreakdown b = EstimateStep(w, *mega, gpu, 8)->memory;
    const double blocks = 12582912.0 / n, rest = 2057216.0;
    const double tmp = 4 * std::max(blocks, rest);  // n = 2: 25,165,824 B; n = 4: 12,582,912 B; n = 8: 8,228,864 B (the rest)
    // 128 tokens: activations are small, both peak at the optimizer step, same states otherwise.
    ASSERT_EQ(a.peak_phase, MemoryPhase::kOptimizer) << n;
    ASSERT_EQ(b.peak_phase, MemoryPhase::kOptimizer) << n;
    EXPECT_NEAR(a.peak_bytes - b.peak_bytes, tmp, 1) << n;
  }
}

}  // namespace
}  // namespace orrery::plan
