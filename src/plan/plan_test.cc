#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "plan/estimate.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/profile.h"

namespace orrery::plan {
namespace {

TEST(ModelSpec, PresetParamsMatchTheWorkloadFormula) {
  Result<GptModel> m = ParseModelSpec("1.3B");
  ASSERT_TRUE(m.ok());
  // N_total = L(12h^2 + 4h) + 2Vh + 2h = 24(12*2048^2 + 8192) + 2*32000*2048 + 4096 (calibration.csv N_total)
  EXPECT_DOUBLE_EQ(m->TotalParams(), 1339232256.0);
}

TEST(ModelSpec, GeneralSyntax) {
  Result<GptModel> m = ParseModelSpec("gpt:layers=12,hidden=768,heads=12,vocab=32000");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->ffn, 3072);
  EXPECT_DOUBLE_EQ(m->TotalParams(), 134125056.0);  // the 125M row of calibration.csv
}

TEST(ModelSpec, ErrorsNameTheProblem) {
  EXPECT_EQ(ParseModelSpec("gpt:layers=12,hidden=770,heads=12").error().message,
            "model: hidden 770 is not divisible by heads 12");
  EXPECT_EQ(ParseModelSpec("gpt:layers=x").error().message, "model: 'layers' must be a positive integer, got \"x\"");
  EXPECT_EQ(ParseModelSpec("gpt:depth=3").error().message,
            "model: unknown key 'depth' (expected layers, hidden, heads, vocab, ffn)");
  EXPECT_EQ(ParseModelSpec("gpt:hidden=64").error().message,
            "model: 'gpt:' needs layers, hidden and heads (e.g. gpt:layers=24,hidden=2048,heads=16,vocab=32000)");
}

TEST(Strategy, AliasesMapToPlans) {
  Result<ParallelPlan> f = ParseStrategy("fsdp_grad_op", 2);
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->framework, Framework::kFsdp);
  EXPECT_EQ(f->shard.s_p, 1);
  EXPECT_EQ(f->shard.s_g, 2);
  EXPECT_EQ(f->shard.s_os, 2);
  Result<ParallelPlan> t = ParseStrategy("tp_mega", 2);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->tp, 2);
  EXPECT_EQ(t->framework, Framework::kMegatron);
}

TEST(Strategy, GeneralPlan) {
  Result<ParallelPlan> p = ParseStrategy("dp=4,tp=2,pp=2,sp=1,zero=1", 16);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->shard.s_os, 4);
  EXPECT_EQ(p->framework, Framework::kMegatron);
  Result<ParallelPlan> l = ParseStrategy("dp=8,lins=1:1:8,precision=mixed", 8);
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->precision, Precision::kMixedBf16);
}

TEST(Strategy, ErrorsNameTheConstraint) {
  EXPECT_EQ(ParseStrategy("zero_infinity", 2).error().message,
            "strategy: unknown strategy \"zero_infinity\" (expected single, ddp, fsdp_no_shard, fsdp_grad_op, "
            "fsdp_full, fsdp_full_mp, tp, tp_mega or a plan dp=..,tp=..,pp=..,sp=..,zero=..)");
  EXPECT_EQ(ParseStrategy("dp=2,tp=2", 8).error().message,
            "strategy: dp*tp*pp*sp = 2*2*1*1 = 4 GPUs, but --gpus is 8");
  EXPECT_EQ(ParseStrategy("dp=4,lins=2:1:4", 4).error().message,
            "strategy: Lins sharding needs s_p <= s_g <= s_os <= dp, got 2:1:4 with dp=4");
  EXPECT_EQ(ParseStrategy("single", 2).error().message, "strategy 'single' runs on 1 GPU, got --gpus 2");
  EXPECT_EQ(ParseStrategy("dp=2,zero=5", 2).error().message, "strategy: 'zero' must be 0, 1, 2 or 3, got \"5\"");
}

// A profile with one GEMM rate for every shape and a flat copy bandwidth, so that the model's
// arithmetic can be checked by hand.
GpuProfile FlatProfile() {
  GpuProfile p;
  p.gpu = "flat";
  p.memory_bytes = 80.0 * (1ull << 30);
  p.peak_bf16_tflops = 1000;
  p.membw_Bps = 1e12;
  p.gemm = {{GemmOp::kFwd, 1024, 1024, 1024, 2.0 * 1024 * 1024 * 1024 / 500e12}};
  p.sdpa = {{1, 16, 2048, 128, 1e-3, 3e-3}};
  return p;
}

Workload Work(const char* model, int64_t s, int b) { return Workload{*ParseModelSpec(model), s, b}; }

TEST(Memory, SingleGpuPeakIsTheLossBackwardSum) {
  const GpuProfile p = FlatProfile();
  Workload w = Work("1.3B", 2048, 1);
  ParallelPlan plan = *ParseStrategy("single", 1);
  Result<StepEstimate> e = EstimateStep(w, plan, p, 8);
  ASSERT_TRUE(e.ok());
  // 12 B/param (fp32 params + Adam m, v) + 2 B per matmul weight (bf16 copies) + per token
  // L*(36h + 4*heads + 16) + 6h + 12V + the allocator constant:
  const double N = 1339232256.0, Nmm = 24 * 12.0 * 2048 * 2048 + 32000.0 * 2048;
  const double per_token = 24 * (36.0 * 2048 + 64 + 16) + 6 * 2048 + 12 * 32000.0;
  const double expect = 12 * N + 2 * Nmm + 2048 * per_token + p.constants.alloc_const_bytes;
  EXPECT_NEAR(e->memory.peak_bytes, expect, 1.0);
  EXPECT_EQ(e->memory.peak_phase, MemoryPhase::kLossBackward);
}

TEST(Memory, DdpAddsOneBucketCopyOfTheGradients) {
  const GpuProfile p = FlatProfile();
  Workload w = Work("1.3B", 2048, 1);
  const double single = EstimateStep(w, *ParseStrategy("single", 1), p, 8)->memory.peak_bytes;
  const double ddp = EstimateStep(w, *ParseStrategy("ddp", 2), p, 8)->memory.peak_bytes;
  EXPECT_NEAR(ddp - single, 4.0 * 1339232256.0, 1.0);  // 25 MB buckets, gradient_as_bucket_view=False
}

TEST(Memory, ZeroThreeShardsTheModelStates) {
  const GpuProfile p = FlatProfile();
  Workload w = Work("6.7B", 2048, 1);
  ParallelPlan z0 = *ParseStrategy("dp=8,zero=0,precision=mixed", 8);
  ParallelPlan z3 = *ParseStrategy("dp=8,zero=3,precision=mixed", 8);
  const StepEstimate e0 = *EstimateStep(w, z0, p, 8), e3 = *EstimateStep(w, z3, p, 8);
  // mixed precision: 2 + 2 + 12 B/param replicated vs /8 sharded.
  EXPECT_NEAR(e0.memory.optimizer_bytes, 12.0 * 6705127424.0, 1.0);
  EXPECT_NEAR(e3.memory.optimizer_bytes, 12.0 * 6705127424.0 / 8, 1.0);
  EXPECT_LT(e3.memory.peak_bytes, e0.memory.peak_bytes / 3);
}

TEST(Memory, FullRecomputeKeepsOnlyBlockInputs) {
  const GpuProfile p = FlatProfile();
  Workload w = Work("6.7B", 8192, 4);  // measured OOM without checkpointing on an H200
  ParallelPlan plan = *ParseStrategy("single", 1);
  EXPECT_FALSE(EstimateStep(w, plan, p, 8)->fits);
  plan.recompute = Recompute::kFull;
  const StepEstimate e = *EstimateStep(w, plan, p, 8);
  EXPECT_GT(e.time.recompute_s, 0);
}

TEST(Plan, ModelMustDivideIntoTheParallelDegrees) {
  const GpuProfile p = FlatProfile();
  EXPECT_EQ(EstimateStep(Work("125M", 2048, 1), *ParseStrategy("dp=1,tp=8", 8), p, 8).error().message,
            "plan: model heads 12 is not divisible by tp=8");
  EXPECT_EQ(EstimateStep(Work("125M", 2048, 1), *ParseStrategy("dp=1,pp=5", 5), p, 8).error().message,
            "plan: model layers 12 is not divisible by pp=5");
  EXPECT_EQ(EstimateStep(Work("125M", 2000, 1), *ParseStrategy("dp=1,sp=3,sp_kind=ring", 3), p, 8).error().message,
            "plan: sequence length 2000 is not divisible by sp=3");
}

TEST(Time, TensorParallelHalvesGemmWork) {
  const GpuProfile p = FlatProfile();
  Workload w = Work("6.7B", 8192, 1);
  const StepEstimate one = *EstimateStep(w, *ParseStrategy("single", 1), p, 8);
  const StepEstimate tp = *EstimateStep(w, *ParseStrategy("tp_mega", 2), p, 8);
  // Block GEMMs split in two; the head is replicated (tp_mega), so a bit more than half remains.
  EXPECT_LT(tp.time.gemm_s, 0.6 * one.time.gemm_s);
  EXPECT_GT(tp.time.gemm_s, 0.5 * one.time.gemm_s);
  EXPECT_GT(tp.time.comm_s, 0);
}

TEST(Time, PipelineBubbleShrinksWithMoreMicroBatches) {
  const GpuProfile p = FlatProfile();
  Workload w = Work("1.3B", 2048, 1);
  ParallelPlan a = *ParseStrategy("dp=1,pp=4,micro=4", 4);
  ParallelPlan b = *ParseStrategy("dp=1,pp=4,micro=32", 4);
  const StepEstimate ea = *EstimateStep(w, a, p, 8), eb = *EstimateStep(w, b, p, 8);
  // bubble fraction (p-1)/(m+p-1): 3/7 vs 3/35
  EXPECT_GT(ea.time.pipeline_bubble_s / ea.time.step_s, 0.3);
  EXPECT_LT(eb.time.pipeline_bubble_s / eb.time.step_s, 0.12);
}

TEST(StepTimeApi, SlowestGroupSetsThePace) {
  GpuProfile fast = FlatProfile(), slow = FlatProfile();
  slow.gemm[0].t_s *= 2;
  slow.gpu = "slow";
  Workload w = Work("350M", 2048, 4);
  ParallelPlan p = *ParseStrategy("ddp", 4);
  Allocation mixed{{{&fast, 2, 1}, {&slow, 2, 1}}};
  Allocation homo{{{&fast, 4, 1}}};
  const double t_mixed = *StepTime(w, p, mixed), t_fast = *StepTime(w, p, homo);
  // GEMMs take twice as long on `slow`: the mixed allocation runs at slow's pace.
  EXPECT_NEAR(t_mixed, *StepTime(w, p, Allocation{{{&slow, 4, 1}}}), 1e-12);
  EXPECT_GT(t_mixed, t_fast * 1.1);
  EXPECT_EQ(StepTime(w, p, Allocation{{{&fast, 2, 1}}}).error().message, "plan needs 4 GPUs, the allocation has 2");
}

}  // namespace
}  // namespace orrery::plan
