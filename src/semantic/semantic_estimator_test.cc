#include "semantic/semantic_estimator.h"

#include <gtest/gtest.h>

#include <cmath>

#include "semantic/llm_schema.h"

namespace orrery::semantic {
namespace {

Job MakeJob(uint32_t id, uint32_t user, uint32_t gpus, Duration duration, JobState state = JobState::kCompleted) {
  Job j;
  j.id = JobId(id);
  j.user = UserId(user);
  j.gpus = gpus;
  j.duration = duration;
  j.state = state;
  return j;
}

TEST(PayloadTest, DeterministicPerSeedAndJob) {
  Job j = MakeJob(7, 1, 8, 36000);
  SemanticPayload a = GeneratePayload(j, 1), b = GeneratePayload(j, 1), c = GeneratePayload(j, 2);
  EXPECT_EQ(a.text, b.text);
  EXPECT_EQ(a.file_name, b.file_name);
  EXPECT_NE(a.text, c.text);
}

// The reader recovers from the generated text exactly what the generator planned: steps,
// and (with the true MFU) the step time, so steps x step time + overhead = planned duration.
TEST(PayloadTest, ConsistentWithTheJobsTruth) {
  for (uint32_t id = 0; id < 200; ++id) {
    uint32_t gpus = 1u << (id % 7);  // 1 .. 64
    Job j = MakeJob(id, 1, gpus, 600 + 97 * id);
    PayloadOptions po;
    po.epochs_only_fraction = 0;
    SemanticPayload p = GeneratePayload(j, 3, po);
    LaunchSchema s = InspectText(p.file_name, p.text);
    ASSERT_TRUE(s.number(FieldId::kTrainSteps).has_value()) << p.text;
    EXPECT_EQ(*s.number(FieldId::kTrainSteps), static_cast<double>(p.steps)) << p.text;
    FlopsStepTimeModel truth(po.peak_flops, p.mfu);
    double g = s.gpus().value_or(std::max<uint32_t>(1, gpus));
    auto step = truth.StepSeconds(s, g);
    ASSERT_TRUE(step.has_value()) << p.text;
    EXPECT_NEAR(*step, p.step_s, 1e-6 * p.step_s) << p.text;
    EXPECT_LE(std::fabs(static_cast<double>(p.steps) * p.step_s - p.planned_s), p.planned_s * 0.5 + p.step_s) << p.text;
  }
}

// The simulator's payloads are files the readers read well: the LLM fallback's rule never
// fires on them (with the default 15 % of epochs-only configs too).
TEST(PayloadTest, NeverSentToTheLlm) {
  for (uint32_t id = 0; id < 200; ++id) {
    Job j = MakeJob(id, 1, 1u << (id % 7), 600 + 97 * id);
    SemanticPayload p = GeneratePayload(j, 5);
    EXPECT_EQ(NeedsLlm(InspectText(p.file_name, p.text)), LlmNeed::kNone) << p.text;
  }
}

TEST(PayloadTest, FailedJobsPlannedLongerRuns) {
  Job j = MakeJob(11, 1, 4, 1000, JobState::kFailed);
  SemanticPayload p = GeneratePayload(j, 1);
  EXPECT_GT(p.planned_s, 1000.0);
  EXPECT_LE(p.planned_s, 1000.0 / 0.05 + 1e-6);
}

// A payload source that writes a fixed HF command line: 8 GPUs, a 6.74B model (Llama-2-7B
// in the table), global 8 x 4 x 1 = 32 sequences of 2048, `steps` steps.
PayloadSource FixedSource(double steps_per_job) {
  return [steps_per_job](const Job& job) -> std::optional<InputFile> {
    std::string text = "torchrun --nnodes 1 --nproc_per_node 8 run_clm.py --model_name_or_path org/Llama-2-7B "
                       "--per_device_train_batch_size 4 --gradient_accumulation_steps 1 --block_size 2048 --max_steps " +
                       std::to_string(static_cast<long long>(steps_per_job * (1 + job.id.v % 3))) + "\n";
    return InputFile{"job.sh", text};
  };
}

TEST(SemanticEstimatorTest, StepsTimesFlopsStepTimeThenCalibration) {
  // step = 6 x 6.74e9 x (4 x 1 x 8 x 2048) / (8 x 100e12 x 0.5) = 6.626 s (hand: 6*6.74e9*65536 / 4e14)
  SemanticEstimator::Options o;
  o.overhead_s = 0;
  SemanticEstimator est(FixedSource(1000), std::make_unique<FlopsStepTimeModel>(100e12, 0.5), o);
  Job first = MakeJob(0, 1, 8, 0);
  double step = 6 * 6.74e9 * 65536 / (8 * 100e12 * 0.5);
  // No neighbours yet: the chance of an early end is the prior 1/2, so T x (1 - 1/4).
  EXPECT_NEAR(static_cast<double>(est.Estimate(first, 0)), 1000 * step * 0.75, 1.0);
  // The cluster runs at half the nominal MFU: every job takes twice as long.
  for (uint32_t id = 0; id < 6; ++id) {
    Job j = MakeJob(id, 1, 8, 0);
    double planned = 1000.0 * (1 + id % 3) * step;
    est.Observe(j, static_cast<Duration>(std::llround(2 * planned)));
  }
  Job next = MakeJob(7, 1, 8, 0);  // 2000 steps
  // Calibration: the median actual/planned ratio of the 6 neighbours, 2.0.
  double expect = 2 * 2000 * step;
  EXPECT_NEAR(static_cast<double>(est.Estimate(next, 0)), expect, 2.0);
  EXPECT_EQ(est.semantic_estimates(), 2u);
}

TEST(SemanticEstimatorTest, RetrievalWhenTheConfigHasNoSteps) {
  PayloadSource epochs = [](const Job&) -> std::optional<InputFile> {
    return InputFile{"a.yaml", "model_name_or_path: org/Llama-2-7B\nnum_train_epochs: 3\n"};
  };
  SemanticEstimator est(epochs, std::make_unique<FlopsStepTimeModel>(100e12, 0.5), {});
  EXPECT_EQ(est.Estimate(MakeJob(0, 1, 8, 0), 0), 3600);  // nothing known: the fallback
  est.Observe(MakeJob(1, 1, 8, 0), 100);
  est.Observe(MakeJob(2, 1, 8, 0), 300);
  est.Observe(MakeJob(3, 2, 8, 0), 5000);  // another user: less similar, still among k = 10
  EXPECT_EQ(est.Estimate(MakeJob(4, 1, 8, 0), 0), 300);  // median of 100, 300, 5000
  EXPECT_EQ(est.semantic_estimates(), 0u);
}

TEST(SemanticEstimatorTest, EarlyFailureChanceFromNeighbours) {
  SemanticEstimator est(FixedSource(10), std::make_unique<FlopsStepTimeModel>(100e12, 0.5), {});
  est.Observe(MakeJob(1, 1, 8, 0, JobState::kFailed), 10);
  est.Observe(MakeJob(2, 1, 8, 0, JobState::kCancelled), 10);
  est.Observe(MakeJob(3, 1, 8, 0, JobState::kFailed), 10);
  est.Observe(MakeJob(4, 1, 8, 0, JobState::kCompleted), 10);
  EXPECT_DOUBLE_EQ(est.EarlyFailureChance(MakeJob(5, 1, 8, 0)), (3 + 0.5) / (4 + 1.0));
}

TEST(SemanticEstimatorTest, RegisteredInTheFactory) {
  RegisterSemanticEstimator();
  Trace t;
  auto e = MakeEstimator("semantic:mfu=0.4,k=5", 1, &t);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ((*e)->name(), "semantic");
  auto bad = MakeEstimator("semantic:mfu=x", 1, &t);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "estimator 'semantic': option 'mfu=x': expected key=positive number");
  // Without a trace (orrery serve) it reads no launch file until the driver supplies them.
  auto no_trace = MakeEstimator("semantic", 1, nullptr);
  ASSERT_TRUE(no_trace.ok()) << no_trace.error().message;
  EXPECT_EQ((*no_trace)->Estimate(MakeJob(7, 1, 8, 0), 0), 3600);  // nothing known: the fallback
  auto* live = dynamic_cast<SemanticEstimator*>(no_trace->get());
  ASSERT_NE(live, nullptr);
  live->SetPayloads([](const Job&) {
    return std::optional<InputFile>(InputFile{
        "job.sbatch", "#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gres=gpu:8\ntorchrun pretrain_gpt.py --num-layers 24 "
                      "--hidden-size 2048 --num-attention-heads 16 --seq-length 2048 --global-batch-size 64 "
                      "--train-iters 100\n"});
  });
  // 6 · 1,310,885,888 · 64 · 2048 / (8 · 125e12 · 0.35) = 2.9455 s per step; (100 · 2.9455 + 60)
  // · 0.75 (no history: early end with chance 1/2) = 265.9 -> 266 s.
  EXPECT_EQ((*no_trace)->Estimate(MakeJob(8, 1, 8, 0), 0), 266);
}

}  // namespace
}  // namespace orrery::semantic
