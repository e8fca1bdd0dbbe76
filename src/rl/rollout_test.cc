#include "rl/rollout.h"

#include <gtest/gtest.h>

namespace orrery::rl {
namespace {

// t(b) = 0.01 + 0.001·b per decode step; no prefill cost unless a test gives one.
FnTimer LinearTimer(FnTimer::DecodeFn prefill = nullptr, FnTimer::SpecFn spec = nullptr) {
  return FnTimer([](uint32_t b, double) { return 0.01 + 0.001 * b; }, std::move(prefill), std::move(spec));
}

std::vector<Sequence> Lengths(std::vector<uint32_t> lens, uint32_t prompt = 0) {
  std::vector<Sequence> out;
  for (uint32_t i = 0; i < lens.size(); ++i) out.push_back({prompt, lens[i], 0, i});
  return out;
}

RolloutConfig Config(uint32_t workers, uint32_t tp, uint32_t max_running) {
  RolloutConfig c;
  c.workers = workers;
  c.tp = tp;
  c.max_running = max_running;
  return c;
}

TEST(Rollout, TheBatchShrinksAsSequencesEnd) {
  // One worker, responses of 1, 2 and 4 tokens:
  //   step 1, b = 3: 0.013 (the 1-token response ends)   t = 0.013
  //   step 2, b = 2: 0.012 (the 2-token response ends)   t = 0.025
  //   steps 3-4, b = 1: 2 × 0.011                         t = 0.047
  const FnTimer timer = LinearTimer();
  Result<RolloutResult> r = SimulateRollout(Lengths({1, 2, 4}), Config(1, 1, 8), timer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->time_s, 0.047, 1e-12);
  EXPECT_EQ(r->steps, 4u);
  EXPECT_NEAR(r->worker_busy_s[0], 0.047, 1e-12);
  EXPECT_NEAR(r->idle_gpu_s, 0, 1e-12);
}

TEST(Rollout, AFinishedWorkerIsIdleUntilTheRolloutEnds) {
  // Two workers of TP 2; worker 0 gets responses {1, 3}, worker 1 gets {2, 2}.
  //   worker 0: b = 2: 0.012, then b = 1: 2 × 0.011      busy 0.034
  //   worker 1: b = 2: 2 × 0.012                         busy 0.024
  // rollout 0.034; idle GPU-seconds 2 × (0.034 − 0.024) = 0.020; tail 0.010.
  const FnTimer timer = LinearTimer();
  Result<RolloutResult> r = SimulateRollout(Lengths({1, 3, 2, 2}), Config(2, 2, 8), timer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->time_s, 0.034, 1e-12);
  EXPECT_NEAR(r->worker_busy_s[0], 0.034, 1e-12);
  EXPECT_NEAR(r->worker_busy_s[1], 0.024, 1e-12);
  EXPECT_NEAR(r->idle_gpu_s, 0.020, 1e-12);
  EXPECT_NEAR(r->tail_s, 0.010, 1e-12);
  ASSERT_EQ(r->timeline.size(), 2u);
  EXPECT_NEAR(r->timeline[0].t0, 0, 1e-12);
  EXPECT_NEAR(r->timeline[0].t1, 0.024, 1e-12);
  EXPECT_EQ(r->timeline[0].busy_gpus, 4u);
  EXPECT_NEAR(r->timeline[1].t1, 0.034, 1e-12);
  EXPECT_EQ(r->timeline[1].busy_gpus, 2u);
}

TEST(Rollout, TheRunningCapQueuesTheRestAndPrefillsOnAdmission) {
  // Cap 1; responses {2, 1}; prefill p(b) = 0.005·b on each admission:
  //   0.005 + 2 × 0.011 (first)  +  0.005 + 0.011 (second) = 0.043
  const FnTimer timer = LinearTimer([](uint32_t b, double) { return 0.005 * b; });
  Result<RolloutResult> r = SimulateRollout(Lengths({2, 1}), Config(1, 1, 1), timer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->time_s, 0.043, 1e-12);
  EXPECT_EQ(r->steps, 3u);
}

TEST(Rollout, StepsAreTimedAtTheBatchMeanContext) {
  // Prompt 10, responses {2, 4}; t = 0.001·context:
  //   step 1: contexts 10, 10 -> 0.010; step 2: 11, 11 -> 0.011 (the 2-token one ends)
  //   step 3: 12 -> 0.012; step 4: 13 -> 0.013; total 0.046
  const FnTimer timer([](uint32_t, double c) { return 0.001 * c; }, nullptr, nullptr);
  Result<RolloutResult> r = SimulateRollout(Lengths({2, 4}, 10), Config(1, 1, 8), timer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->time_s, 0.046, 1e-12);
}

TEST(Rollout, SpeculativeStepsServeTheSmallBatchTail) {
  // Responses {6, 1}; speculation at b ≤ 1 with 4 verify tokens and 2.5 tokens per step,
  // s(b, k) = 0.02 + 0.001·k·b:
  //   step 1, b = 2 (no speculation): 0.012, the 1-token response ends
  //   steps 2-3, b = 1: 2 × 0.024, positions 3.5 and 6.0 -> the 6-token response ends
  //   total 0.060, 3 steps of which 2 speculative
  const FnTimer timer = LinearTimer(nullptr, [](uint32_t b, double, uint32_t k) { return 0.02 + 0.001 * k * b; });
  RolloutConfig c = Config(1, 1, 8);
  c.spec.on = true;
  c.spec.max_batch = 1;
  c.spec.bucket_lo = {1};
  c.spec.verify_tokens = {4};
  c.spec.accept = {2.5};
  Result<RolloutResult> r = SimulateRollout(Lengths({6, 1}), c, timer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->time_s, 0.060, 1e-12);
  EXPECT_EQ(r->steps, 3u);
  EXPECT_EQ(r->spec_steps, 2u);
}

TEST(Rollout, StopsWhenEnoughGroupsAreCompleteAndKeepsPartialTokens) {
  // Groups: 0 = {1, 1}, 1 = {3}, 2 = {5}; stop after 2 complete groups.
  //   step 1, b = 4: 0.014 -> group 0 complete
  //   steps 2-3, b = 2: 2 × 0.012 -> t = 0.038, group 1 complete: stop
  // The 5-token response has 3 tokens.
  std::vector<Sequence> seqs = {{0, 1, 0, 0}, {0, 1, 0, 0}, {0, 3, 0, 1}, {0, 5, 0, 2}};
  RolloutConfig c = Config(1, 1, 8);
  c.stop_after_groups = 2;
  const FnTimer timer = LinearTimer();
  Result<RolloutResult> r = SimulateRollout(seqs, c, timer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->time_s, 0.038, 1e-12);
  EXPECT_EQ(r->complete_groups, (std::vector<uint32_t>{0, 1}));
  EXPECT_NEAR(r->group_done_s[0], 0.014, 1e-12);
  EXPECT_FALSE(r->finished[3]);
  EXPECT_NEAR(r->generated[3], 3, 1e-12);
}

TEST(Rollout, AContinuedResponseNeedsOnlyItsRemainingTokens) {
  // A 5-token response with 3 done and a fresh 2-token one: 2 steps at b = 2 = 0.024.
  std::vector<Sequence> seqs = {{0, 5, 3, 0}, {0, 2, 0, 1}};
  const FnTimer timer = LinearTimer();
  Result<RolloutResult> r = SimulateRollout(seqs, Config(1, 1, 8), timer);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_NEAR(r->time_s, 0.024, 1e-12);
}

TEST(Rollout, EmptyConfigurationsAreErrors) {
  const FnTimer timer = LinearTimer();
  EXPECT_FALSE(SimulateRollout(Lengths({1}), Config(0, 1, 1), timer).ok());
  EXPECT_FALSE(SimulateRollout(Lengths({1}), Config(1, 1, 0), timer).ok());
  RolloutConfig c = Config(1, 1, 1);
  c.spec.on = true;
  c.spec.accept = {1};  // four buckets, one acceptance
  EXPECT_FALSE(SimulateRollout(Lengths({1}), c, timer).ok());
}

TEST(Rollout, BusyTimelineIsPiecewiseConstant) {
  // Workers of 8 GPUs busy to 10, 50, 100 and 100.
  const std::vector<BusySegment> t = BusyTimeline({100, 10, 50, 100}, 8, 100);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].busy_gpus, 32u);
  EXPECT_EQ(t[1].busy_gpus, 24u);
  EXPECT_EQ(t[2].busy_gpus, 16u);
  EXPECT_DOUBLE_EQ(t[1].t0, 10);
  EXPECT_DOUBLE_EQ(t[2].t0, 50);
  EXPECT_DOUBLE_EQ(t[2].t1, 100);
}

}  // namespace
}  // namespace orrery::rl
