#include "rl/strategy.h"

#include <gtest/gtest.h>

namespace orrery::rl {
namespace {

// Phases in hand-computable units: train 0.002 s and reward + log-probs 0.001 s per token and
// GPU share, sync 0.1 s, drafter training free.
class TestPhases final : public PhaseModel {
 public:
  double Train(double tokens, double, uint32_t gpus) const override { return 0.002 * tokens / gpus; }
  double Reference(double tokens, double, uint32_t gpus) const override { return 0.001 * tokens / gpus; }
  double Sync() const override { return 0.1; }
  double DrafterTrainGpuS(double) const override { return 0; }
};

// Decode t(b) = 0.01 + 0.001·b, no prefill, speculative s(b, k) = 0.005·b + 0.0001·k.
const FnTimer& Timer() {
  static const FnTimer t([](uint32_t b, double) { return 0.01 + 0.001 * b; }, nullptr,
                         [](uint32_t b, double, uint32_t k) { return 0.005 * b + 0.0001 * k; });
  return t;
}

RlEnv Env() {
  static const TestPhases phases;
  RlEnv e;
  e.timer = &Timer();
  e.phases = &phases;
  e.accept = {3.0, 48, 0.1};  // 3 tokens per step at 48 verify tokens
  e.draft_steps = 8;
  return e;
}

// One GPU, one worker of TP 1, prompts of 0 tokens, one sample each, fixed response lengths.
RlJob Job(uint32_t prompts, std::vector<uint32_t> lengths, uint32_t gpus = 1) {
  RlJob j;
  j.gpus = gpus;
  j.tp = 1;
  j.prompts = prompts;
  j.samples = 1;
  j.max_running = 100;
  j.tlt_max_running = 100;
  j.fixed_lengths = std::move(lengths);
  return j;
}

const StepResult& Named(const std::vector<StepResult>& v, std::string_view name) {
  for (const StepResult& r : v)
    if (r.name == name) return r;
  ADD_FAILURE() << "no " << name;
  return v.front();
}

TEST(Strategies, SyncAndTltGoldens) {
  // Responses {2, 8} on one worker.
  // sync: b = 2: 2 × 0.012, b = 1: 6 × 0.011 -> rollout 0.090; 10 tokens: reward 0.010,
  //       train 0.020, sync 0.1 -> step 0.220.
  // tlt:  b = 2 -> bucket 2..4, 32 verify tokens, accept 1 + 2·ln 33/ln 49 = 2.797 tokens:
  //       0.005·2 + 0.0032 = 0.0132, the 2-token response ends; b = 1 -> 48 verify tokens,
  //       3 tokens per step: 0.0098 per step, positions 5.8 and 8.8 -> 2 steps.
  //       rollout 0.0132 + 0.0196 = 0.0328 -> step 0.1628; speedup 0.220 / 0.1628 = 1.3514.
  Result<std::vector<StepResult>> r = RunStrategies({"sync", "tlt"}, Job(2, {2, 8}), Env());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const StepResult& sync = Named(*r, "sync");
  EXPECT_NEAR(sync.rollout_s, 0.090, 1e-12);
  EXPECT_NEAR(sync.reward_s, 0.010, 1e-12);
  EXPECT_NEAR(sync.train_s, 0.020, 1e-12);
  EXPECT_NEAR(sync.step_time_s, 0.220, 1e-12);
  EXPECT_NEAR(sync.speedup_vs_sync, 1.0, 1e-12);
  const StepResult& tlt = Named(*r, "tlt");
  EXPECT_NEAR(tlt.rollout_s, 0.0328, 1e-12);
  EXPECT_NEAR(tlt.step_time_s, 0.1628, 1e-12);
  EXPECT_NEAR(tlt.speedup_vs_sync, 0.220 / 0.1628, 1e-9);
  EXPECT_NEAR(tlt.accept_length, 3.0, 1e-12);
  EXPECT_NEAR(tlt.drafter_trained, 1.0, 1e-12);
}

TEST(Strategies, TailBatchGolden) {
  // P = 2 launches 2 + ceil(0.25·2) = 3 prompts a short round; lengths {2, 8, 2} in turn.
  //   short round: b = 3: 2 × 0.013 = 0.026, two prompts complete: stop; 4 tokens:
  //                reward 0.004, train 0.008, sync 0.1 -> 0.138; the 8-token prompt deferred
  //   second short round: the same -> 0.138; two deferred = P
  //   tail round: {8, 8}: 8 × 0.012 = 0.096; 16 tokens: 0.016 + 0.032 + 0.1 -> 0.244
  //   mean step (0.138 + 0.138 + 0.244) / 3 = 0.173333; tail 0.096 / 3 = 0.032
  Result<std::vector<StepResult>> r = RunStrategies({"tail-batch"}, Job(2, {2, 8, 2}), Env());
  ASSERT_TRUE(r.ok()) << r.error().message;
  const StepResult& t = r->front();
  EXPECT_NEAR(t.step_time_s, 0.52 / 3, 1e-12);
  EXPECT_NEAR(t.rollout_s, 0.148 / 3, 1e-12);
  EXPECT_NEAR(t.tail_s, 0.032, 1e-12);
  // sync of the same job: responses {2, 8} -> 0.220 (above)
  EXPECT_NEAR(t.speedup_vs_sync, 0.220 / (0.52 / 3), 1e-9);
}

TEST(Strategies, PartialGolden) {
  // P = 2, 3 prompts launched a step, lengths {2, 8, 2} in turn; mean of steps 2 and 3.
  //   step 1: A2 B8 C2: 2 × 0.013 -> A, C complete; B carried with 2 tokens
  //   step 2: B (6 left), D2, E8: 2 × 0.013 (D completes), 4 × 0.012 (B completes) -> 0.074;
  //           B, D: 10 tokens -> 0.074 + 0.010 + 0.020 + 0.1 = 0.204; lags 1, 0
  //   step 3: E (2 left), F2, G2: 2 × 0.013 -> all complete, E and F trained: 10 tokens
  //           -> 0.026 + 0.130 = 0.156; lags 1, 0
  //   mean 0.180, lag 0.5
  const RlEnv env = Env();
  const RlJob job = Job(2, {2, 8, 2});
  Result<StepResult> r = MakePartial(3)->Step(job, env);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->step_time_s, 0.180, 1e-12);
  EXPECT_NEAR(r->rollout_s, 0.050, 1e-12);
  EXPECT_NEAR(r->policy_lag, 0.5, 1e-12);
}

TEST(Strategies, AsyncGolden) {
  // 2 GPUs: 1 rollout, 1 training; eta 1 streams 2 steps' prompts {4, 4}:
  //   rollout: b = 2: 4 × 0.012 = 0.048 -> 0.024 a step; training pool: 4 tokens a step:
  //   reward 0.004 + train 0.008 = 0.012; step max(0.024, 0.012) + 0.1 = 0.124.
  //   idle: the training GPU 0.024 − 0.012 = 0.012 of 2 × 0.124 -> 0.048387.
  //   lag: batch 0 done at 0.048 = 0.387 steps; batch 1 also at 0.048, not behind -> mean 0.19355
  Result<StepResult> r = MakeAsync(1)->Step(Job(1, {4}, 2), Env());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->rollout_gpus, 1u);
  EXPECT_NEAR(r->rollout_s, 0.024, 1e-12);
  EXPECT_NEAR(r->train_s, 0.008, 1e-12);
  EXPECT_NEAR(r->step_time_s, 0.124, 1e-12);
  EXPECT_NEAR(r->idle_gpu_frac, 0.012 / 0.248, 1e-12);
  EXPECT_NEAR(r->policy_lag, 0.048 / 0.124 / 2, 1e-12);
}

TEST(Strategies, HarvestGolden) {
  // Timeline on 8 GPUs: all busy to 10 s, 4 to 50 s, 2 to 100 s; restore 30 s:
  //   4 GPUs released at 10: 4 × (100 − 10 − 30) = 240; 2 at 50: 2 × (100 − 50 − 30) = 40
  const std::vector<BusySegment> t = {{0, 10, 8}, {10, 50, 4}, {50, 100, 2}};
  EXPECT_DOUBLE_EQ(HarvestableGpuS(t, 8, 100, 30), 280);
  EXPECT_DOUBLE_EQ(HarvestableGpuS(t, 8, 100, 60), 4 * 30.0);  // the late release is too short
  // Through the strategy, 1-second steps on 2 workers of 1 GPU, responses {10, 100}:
  //   worker 0 idle from 10 s of a 100 s rollout, restart 7 s (1 GPU): 1 × (100 − 10 − 7) = 83
  //   GPU-s, more than the 2 GPUs × 30 s the job waits for the return: lent.
  //   step: sync's 100 + reward 110·0.001/2 + train 110·0.002/2 + 0.1 = 100.265, + 30 s return
  static const FnTimer slow([](uint32_t, double) { return 1.0; }, nullptr, nullptr);
  RlEnv env = Env();
  env.timer = &slow;
  Result<std::vector<StepResult>> r = RunStrategies({"harvest"}, Job(2, {10, 100}, 2), env);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->front().harvestable_gpu_s, 83, 1e-9);
  EXPECT_NEAR(r->front().step_time_s, 130.265, 1e-9);
  EXPECT_NEAR(r->front().other_s, 30, 1e-12);
  // Responses {10, 50}: 1 × (50 − 10 − 7) = 33 GPU-s < 60: nothing lent, the sync step.
  r = RunStrategies({"harvest"}, Job(2, {10, 50}, 2), env);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->front().harvestable_gpu_s, 0);
  EXPECT_NEAR(r->front().step_time_s, 50.19, 1e-9);
}

TEST(Strategies, UnknownNameIsAnError) {
  Result<std::vector<StepResult>> r = RunStrategies({"tlt", "fast"}, Job(2, {2, 8}), Env());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "--strategy: unknown strategy \"fast\"; expected one of sync, tlt, tail-batch, partial, async, harvest");
}

TEST(Strategies, SameSeedSameStepsAcrossRuns) {
  // Sampled lengths (no fixed list): every strategy's output is a function of the seed.
  RlJob job = Job(8, {}, 4);
  job.samples = 4;
  Result<LengthDist> d = FitLengths({0.41, 0.02, 0.3}, 64);
  ASSERT_TRUE(d.ok());
  job.lengths = *d;
  std::vector<std::string> names;
  for (const StrategyInfo& s : Strategies()) names.emplace_back(s.name);
  auto run = [&](uint64_t seed) {
    job.seed = seed;
    Result<std::vector<StepResult>> r = RunStrategies(names, job, Env());
    EXPECT_TRUE(r.ok());
    std::vector<double> v;
    for (const StepResult& s : *r)
      for (double x : {s.step_time_s, s.rollout_s, s.tail_s, s.idle_gpu_frac, s.policy_lag}) v.push_back(x);
    return v;
  };
  const std::vector<double> a = run(5);
  EXPECT_EQ(a, run(5));  // bit-identical
  EXPECT_NE(a, run(6));
}

}  // namespace
}  // namespace orrery::rl
