#include "logs/progress.h"

#include <gtest/gtest.h>

#include <cmath>

namespace orrery::logs {
namespace {

Reading Track(std::string_view text) {
  ProgressTracker t;
  t.Feed(text, kNoTime);
  t.Finish(kNoTime);
  return t.latest();
}

std::string Megatron(int it, double ms, double loss) {
  char b[256];
  std::snprintf(b, sizeof b,
                " iteration %8d/     100 | consumed samples:       %d | elapsed time per iteration (ms): %.1f | "
                "learning rate: 1.0E-04 | lm loss: %.6E | loss scale: 1.0 |\n",
                it, it * 8, ms, loss);
  return b;
}

TEST(ProgressTest, MegatronLineAndEta) {
  std::string log = Megatron(10, 500.0, 3.0) + Megatron(11, 500.0, 2.9);
  Reading r = Track(log);
  EXPECT_EQ(FrameworkName(r.framework), "megatron-lm");
  EXPECT_EQ(r.step, 11);
  EXPECT_EQ(r.total_steps, 100);
  EXPECT_DOUBLE_EQ(*r.loss, 2.9);
  EXPECT_DOUBLE_EQ(*r.seconds_per_step, 0.5);
  ASSERT_TRUE(r.eta_s.has_value());
  EXPECT_NEAR(*r.eta_s, 89 * 0.5, 1e-9);  // (100 - 11) steps × 0.5 s
  EXPECT_FALSE(r.epoch.has_value());
}

TEST(ProgressTest, ChunkingDoesNotMatter) {
  std::string log;
  for (int i = 1; i <= 30; ++i) log += Megatron(i, 400 + i, 3.0 - i * 0.01);
  Reading whole = Track(log);
  ProgressTracker t;
  for (char c : log) t.Feed(std::string_view(&c, 1), kNoTime);
  t.Finish(kNoTime);
  Reading bytewise = t.latest();
  EXPECT_EQ(bytewise.step, whole.step);
  EXPECT_EQ(bytewise.loss, whole.loss);
  EXPECT_EQ(bytewise.seconds_per_step, whole.seconds_per_step);
  EXPECT_EQ(bytewise.eta_s, whole.eta_s);
  EXPECT_EQ(t.plans_learned(), 1u);  // one template, learned once
}

TEST(ProgressTest, TqdmCarriageReturnRefreshes) {
  // A terminal bar redraws itself with '\r'; the last refresh counts. 1.00s/it, 20 of 100.
  Reading r = Track("\r 10%|\xe2\x96\x88         | 10/100 [00:10<01:30,  1.00it/s]\r 20%|\xe2\x96\x88\xe2\x96\x88        | "
                    "20/100 [00:20<01:20,  1.00s/it]");
  EXPECT_EQ(FrameworkName(r.framework), "hf_trainer");  // a bar without description
  EXPECT_EQ(r.step, 20);
  EXPECT_EQ(r.total_steps, 100);
  EXPECT_DOUBLE_EQ(*r.seconds_per_step, 1.0);
  // ETA: 80 steps × the EMA of printed times: 1/1.00 it/s = 1.0 and 1.00 s/it = 1.0.
  EXPECT_DOUBLE_EQ(*r.eta_s, 80.0);
}

TEST(ProgressTest, HfTrainerBarThenDictAndEvalLinesSkipped) {
  Reading r = Track(
      " 40%|####      | 40/100 [00:40<01:00,  2.00it/s]\n"
      "{'loss': 1.25, 'grad_norm': 0.5, 'learning_rate': 1e-05, 'epoch': 0.4}\n"
      "{'eval_loss': 0.9, 'eval_runtime': 3.1, 'epoch': 0.4}\n");
  EXPECT_EQ(FrameworkName(r.framework), "hf_trainer");
  EXPECT_EQ(r.step, 40);
  EXPECT_EQ(r.total_steps, 100);
  EXPECT_DOUBLE_EQ(*r.loss, 1.25);  // not the eval loss
  EXPECT_DOUBLE_EQ(*r.epoch, 0.4);
  EXPECT_DOUBLE_EQ(*r.seconds_per_step, 0.5);  // 1 / 2.00 it/s
}

TEST(ProgressTest, PerRankDuplicatesAreOneStep) {
  std::string log;
  for (int r = 0; r < 4; ++r) log += "[rank" + std::to_string(r) + "]: iter 7: loss 2.5000, time 120.00ms\n";
  Reading r = Track(log);
  EXPECT_EQ(FrameworkName(r.framework), "nanogpt");
  EXPECT_EQ(r.step, 7);
  EXPECT_DOUBLE_EQ(*r.seconds_per_step, 0.12);
}

TEST(ProgressTest, NothingInventedForNonProgressText) {
  Reading r = Track("Loading checkpoint shards: done\nSaved model to /tmp/x\nhello 42\n");
  EXPECT_FALSE(r.step.has_value());
  EXPECT_FALSE(r.loss.has_value());
  EXPECT_FALSE(r.eta_s.has_value());
  EXPECT_EQ(r.framework, Framework::kUnknown);
}

TEST(ProgressTest, StepTimeFromCallerClockAndHangDetection) {
  TrackerOptions o;
  o.min_hang_s = 60;
  o.hang_factor = 5;
  ProgressTracker t(o);
  // torchtitan-like lines, no printed time: 10 steps every 15 s of the caller's clock.
  for (int i = 1; i <= 5; ++i) t.Feed("step: " + std::to_string(i * 10) + "  loss:  2.0000  memory: 40.0GiB\n", 15 * i);
  Reading r = t.latest();
  EXPECT_FALSE(r.seconds_per_step.has_value());  // not printed, so not reported as printed
  ASSERT_TRUE(r.smoothed_step_s.has_value());
  EXPECT_DOUBLE_EQ(*r.smoothed_step_s, 1.5);  // 15 s / 10 steps
  EXPECT_DOUBLE_EQ(*t.usual_interval_s(), 15.0);
  // Last step at t = 75. Limit max(60, 5 × 15) = 75 s: stalled after t = 150.
  EXPECT_FALSE(t.Stalled(150));
  EXPECT_TRUE(t.Stalled(151));
  t.Feed("step: 60  loss:  1.9000  memory: 40.0GiB\n", 151);
  EXPECT_FALSE(t.Stalled(152));
}

TEST(ProgressTest, StepTimeFromLogTimestamps) {
  // Steps 10 apart, timestamps 14 s apart: 1.4 s per step.
  Reading r = Track(
      "[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384  memory: 49.66GiB\n"
      "[titan] 2025-06-16 22:31:04,970 - root - INFO - step: 210  loss:  6.0388  memory: 49.66GiB\n");
  EXPECT_EQ(FrameworkName(r.framework), "torchtitan");
  EXPECT_DOUBLE_EQ(*r.smoothed_step_s, 1.4);
}

TEST(ProgressTest, LossNanAndSpikeAnomalies) {
  ProgressTracker t;
  std::string log;
  for (int i = 1; i <= 20; ++i) log += "iter " + std::to_string(i) + ": loss " + (i % 2 ? "2.0100" : "1.9900") + ", time 100.00ms\n";
  log += "iter 21: loss 9.5000, time 100.00ms\n";  // far above mean 2.0 ± 0.01
  log += "iter 22: loss nan, time 100.00ms\n";
  t.Feed(log, kNoTime);
  ASSERT_EQ(t.anomalies().size(), 2u);
  EXPECT_EQ(t.anomalies()[0].kind, AnomalyKind::kLossSpike);
  EXPECT_EQ(t.anomalies()[0].step, 21);
  EXPECT_NEAR(t.anomalies()[0].baseline, 2.0, 0.01);
  EXPECT_EQ(t.anomalies()[1].kind, AnomalyKind::kLossNan);
  EXPECT_EQ(t.anomalies()[1].step, 22);
  EXPECT_TRUE(std::isnan(*t.latest().loss));
}

class FakeOracle : public FormatOracle {
 public:
  int calls = 0;
  std::optional<Plan> Explain(const MaskedLine& line, const std::string&) override {
    ++calls;
    Plan p;
    p.param_count = line.params.size();
    p.refs.push_back({Field::kStep, 0, 1, false, 0, line.params[0].token, std::string(line.tokens[line.params[0].token])});
    p.refs.push_back({Field::kLoss, 1, 1, false, 0, line.params[1].token, std::string(line.tokens[line.params[1].token])});
    return p;
  }
};

TEST(ProgressTest, OracleAskedOncePerUnknownTemplate) {
  FakeOracle o;
  ProgressTracker t({}, &o);
  for (int i = 1; i <= 50; ++i) t.Feed("zork " + std::to_string(i) + " lossy " + std::to_string(3.0 - i * 0.01) + "\n", kNoTime);
  t.Feed("NCCL INFO Channel 00/02 : 0 1 2 3\n", kNoTime);  // routine: nothing progress-like, not asked
  EXPECT_EQ(o.calls, 1);
  EXPECT_EQ(t.latest().step, 50);
  EXPECT_NEAR(*t.latest().loss, 2.5, 1e-9);
}

TEST(ProgressTest, BannerTotalAndNamedStepBesideBar) {
  // verl: the bar counts batches of the epoch (9/62); the logger prints the global step 10.
  // The banner's total is the run's total, as the development corpus labels it (P008), and the
  // ETA's.
  Reading r = Track(
      "Number of steps/epoch 62, number of epochs 6, total number of steps 372\n"
      "Epoch 1/6:  15%|#         | 9/62 [01:06<06:18,  7.13s/it]step:10 - train/loss:0.89 - train/lr(1e-3):0.0027\n");
  EXPECT_EQ(FrameworkName(r.framework), "verl");
  EXPECT_EQ(r.step, 10);
  EXPECT_EQ(r.total_steps, 372);
  ASSERT_TRUE(r.eta_s.has_value());
  EXPECT_NEAR(*r.eta_s, (372 - 10) * 7.13, 1e-6);
  EXPECT_DOUBLE_EQ(*r.epoch, 1);
  EXPECT_DOUBLE_EQ(*r.loss, 0.89);
  EXPECT_DOUBLE_EQ(*r.seconds_per_step, 7.13);
}

TEST(ProgressTest, TableRowsUnderAHeader) {
  Reading r = Track("Step\tTraining Loss\n1\t1.815700\n2\t1.759400\n");
  EXPECT_EQ(r.step, 2);
  EXPECT_DOUBLE_EQ(*r.loss, 1.7594);
  EXPECT_EQ(r.reader, "generic:table");
  // Several "*_loss" parts: no single loss; "13/100" is the 13th epoch.
  r = Track("  Epoch  GPU_mem  box_loss  cls_loss  Size\n  13/100  3.39G  1.121  0.8750  640:  33%|###  | 155/469 [00:37<01:15,  4.16it/s]\n");
  EXPECT_DOUBLE_EQ(*r.epoch, 13);
  EXPECT_FALSE(r.loss.has_value());
  EXPECT_EQ(r.step, 155);
}

TEST(ProgressTest, DictOverSeveralLinesIsOneRecord) {
  Reading r = Track("{'accuracy': 0.48,\n 'loss': 2.4123,\n 'step': 4000}\n");
  EXPECT_EQ(r.step, 4000);
  EXPECT_DOUBLE_EQ(*r.loss, 2.4123);
  // An unbalanced brace inside a string does not swallow the progress lines after it.
  r = Track("{'prompt': 'a { b',\nstep 10 | loss 2.5\nstep 11 | loss 2.4\n");
  EXPECT_EQ(r.step, 11);
}

TEST(ProgressTest, BannerTotalGlueCountersAndBarElapsed) {
  Reading r = Track("Total steps = 60\nstep 14 | loss 1.02\n");
  EXPECT_EQ(r.step, 14);
  EXPECT_EQ(r.total_steps, 60);
  // A total on the step's own line wins over the banner's.
  r = Track("Total steps = 60\nstep 14/50 | loss 1.02\n");
  EXPECT_EQ(r.total_steps, 50);
  r = Track("12epoch:train:2001-2100batch: forward_time=0.123, loss=30.1, optim_step_time=0.034, train_time=0.456\n");
  EXPECT_EQ(r.step, 2100);
  EXPECT_DOUBLE_EQ(*r.epoch, 12);
  EXPECT_DOUBLE_EQ(*r.seconds_per_step, 0.456);
  r = Track("Epoch [3/24]: [312/391]  80%|########  , batch loss=0.612 [00:41<00:10]\n");
  EXPECT_EQ(r.step, 312);
  EXPECT_NEAR(*r.seconds_per_step, 41.0 / 312, 1e-9);
  r = Track("accuracy: 0.81, batch_loss: 0.4123, loss: 0.4876 ||:  45%|####5     | 450/1000 [01:23<01:40,  5.41it/s]\n");
  EXPECT_DOUBLE_EQ(*r.loss, 0.4123);
  r = Track("{'loss': 1.23, 'epoch': 0.12, 'global_step/max_steps': '30/250'}\n");
  EXPECT_EQ(r.step, 30);
  EXPECT_EQ(r.total_steps, 250);
  r = Track("Processed prompts: 100%|##########| 64/64 [00:07<00:00,  8.61it/s, est. speed input: 1203.44 toks/s]\n");
  EXPECT_FALSE(r.step.has_value());
}

TEST(ProgressTest, BinaryAndHugeInputNeverCrash) {
  std::string junk;
  for (int i = 0; i < 200000; ++i) junk.push_back(static_cast<char>((i * 7919) & 0xff));
  (void)Track(junk);
  (void)Track(std::string(10 << 20, '9'));
  EXPECT_FALSE(Track("").step.has_value());
}

TEST(LineTimestampTest, Formats) {
  EXPECT_EQ(LineTimestamp("[2023-01-15 19:09:56,486] [INFO] x"), 1673809796);
  EXPECT_EQ(LineTimestamp("no time 12:00"), std::nullopt);
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

// Progress lines in the formats the frameworks print today (written for this test).
struct Format {
  const char* log;
  const char* framework;
  std::optional<int64_t> step, total;
  std::optional<double> epoch, loss, seconds;
};

TEST(ProgressTest, FormatCatalogue) {
  const Format cases[] = {
      // DeepSpeed >= 0.10 timer line.
      {"[2024-01-01 00:00:00,000] [INFO] [timer.py:260:stop] epoch=0/micro_step=40/global_step=10, "
       "RunningAvgSamplesPerSec=12.5, CurrSamplesPerSec=12.1, MemAllocated=4.2GB, MaxMemAllocated=9.9GB\n",
       "deepspeed", 10, std::nullopt, 0, std::nullopt, std::nullopt},
      // Lightning 2.x: the step's loss, not the epoch average.
      {"Epoch 3:  45%|####5     | 450/1000 [01:23<01:42,  5.38it/s, v_num=12, train_loss_step=0.523, train_loss_epoch=0.611]\n",
       "pytorch_lightning", 450, 1000, 3, 0.523, 1 / 5.38},
      // NeMo's Lightning bar: global_step printed rounded beside the exact bar count.
      {"Epoch 0:   6%|##        | 32040/500150 [6:28:43<94:39:17,  1.37it/s, loss=2.6, v_num=95nc, reduced_train_loss=2.590, "
       "global_step=3.2e+4, consumed_samples=2.56e+7]\n",
       "nemo", 32040, 500150, 0, 2.59, 1 / 1.37},
      // A hand-written loop.
      {"Epoch [2/10], Step [100/600], Loss: 0.2345\n", "", 100, 600, 2, 0.2345, std::nullopt},
      // detectron2-style metrics.
      {"[01/01 00:00:00 d2.utils.events]:  eta: 0:10:00  iter: 19  total_loss: 2.1  loss_cls: 0.7  time: 0.4123  data_time: 0.0012  lr: 0.0001\n",
       "detectron2", 19, std::nullopt, std::nullopt, 2.1, 0.4123},
      // fairseq >= 0.10 with the logging prefix.
      {"2021-01-01 00:00:00 | INFO | train_inner | epoch 002:    100 / 1000 loss=9.5, nll_loss=9.1, ppl=550, wps=1e+04, "
       "ups=2.5, wpb=4000, bsz=100, num_updates=1100, lr=0.0005, gnorm=1.1, train_wall=40, wall=400\n",
       "fairseq", 1100, std::nullopt, 2, 9.5, 0.4},
      // HF Trainer's final summary dict.
      {"{'train_runtime': 100.5, 'train_samples_per_second': 9.9, 'train_steps_per_second': 1.2, 'train_loss': 1.5, 'epoch': 3.0}\n",
       "hf_trainer", std::nullopt, std::nullopt, 3.0, 1.5, std::nullopt},
  };
  for (const Format& c : cases) {
    Reading r = Track(c.log);
    EXPECT_EQ(FrameworkName(r.framework), c.framework) << c.log;
    EXPECT_EQ(r.step, c.step) << c.log;
    EXPECT_EQ(r.total_steps, c.total) << c.log;
    EXPECT_EQ(r.epoch.has_value(), c.epoch.has_value()) << c.log;
    if (r.epoch && c.epoch) {
      EXPECT_DOUBLE_EQ(*r.epoch, *c.epoch) << c.log;
    }
    EXPECT_EQ(r.loss.has_value(), c.loss.has_value()) << c.log;
    if (r.loss && c.loss) {
      EXPECT_DOUBLE_EQ(*r.loss, *c.loss) << c.log;
    }
    EXPECT_EQ(r.seconds_per_step.has_value(), c.seconds.has_value()) << c.log;
    if (r.seconds_per_step && c.seconds) {
      EXPECT_NEAR(*r.seconds_per_step, *c.seconds, 1e-9) << c.log;
    }
  }
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

TEST(ProgressTest, BannerNamesTheFramework) {
  // axolotl prints HF Trainer's dicts; its own log lines name it.
  Reading r = Track("[axolotl.cli.train] loading model and tokenizer\n{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': 0.25}\n");
  EXPECT_EQ(FrameworkName(r.framework), "axolotl");
  EXPECT_EQ(FrameworkName(Track("{'loss': 0.5, 'learning_rate': 1e-05, 'epoch': 0.25}\n").framework), "hf_trainer");
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

// The generic readers' edges: what looks like a counter or a step but is not.
TEST(GenericReaderTest, DatesPercentagesAndBareNumbersAreNotCounters) {
  // A date "2026/12/07" at the line start is followed by '/', not '[' or '-': no counter, so
  // the line gives only its loss.
  Reading r = Track("2026/12/07 10:21:33 - INFO - loss: 1.5\n");
  EXPECT_EQ(r.step, std::nullopt);
  EXPECT_EQ(r.total_steps, std::nullopt);
  EXPECT_EQ(r.loss, 1.5);
  EXPECT_EQ(r.reader, "generic:keyvalue");
  // "Steps:  12%|...| 120/1000": the 12 after the key "Steps:" is a percentage; the bar counts.
  r = Track("Steps:  12%|#         | 120/1000 [02:00<14:40,  1.00s/it]\n");
  EXPECT_EQ(r.step, 120);
  EXPECT_EQ(r.total_steps, 1000);
  EXPECT_EQ(r.reader, "generic:tqdm");
  // "[12/07 10:21:33 ...]": a bracketed pair not closed by ']' or '(' is no counter.
  r = Track("[12/07 10:21:33 trainer]: loss: 2.0\n");
  EXPECT_EQ(r.step, std::nullopt);
  // A bracketed counter beside a named step counts the epoch's batches: the step wins and
  // the bracket's total is not the run's (step 200 from "step=200"; no total).
  r = Track("Epoch [1][50/500] step=200 loss: 2.0\n");
  EXPECT_EQ(r.step, 200);
  EXPECT_EQ(r.total_steps, std::nullopt);
  // A unit after one space: 0.5 s/step; 250 ms/step = 0.25 s.
  EXPECT_EQ(Track("step 3 loss 1.0 0.5 s/step\n").seconds_per_step, 0.5);
  EXPECT_EQ(Track("step 3 loss 1.0 250 ms/step\n").seconds_per_step, 0.25);
  // steps_per_second is a rate: 1 / 4 = 0.25 s.
  EXPECT_EQ(Track("step=3 loss=1.0 steps_per_second=4\n").seconds_per_step, 0.25);
}

}  // namespace
}  // namespace orrery::logs

namespace orrery::logs {
namespace {

// Bars of loading, data preparation and downloads are not training progress.
TEST(GenericReaderTest, AuxiliaryBarsDoNotMoveTheReading) {
  // Loading shards alone: no progress at all.
  EXPECT_EQ(Track("Loading checkpoint shards: 100%|##########| 4/4 [00:05<00:00,  1.31s/it]\n").step, std::nullopt);
  // Training at 120/500, then a datasets map bar (examples/s): the reading stays at 120.
  Reading r = Track(
      "train:  24%|##4       | 120/500 [02:01<06:24,  1.01s/it]\n"
      "Map: 100%|##########| 5000/5000 [00:01<00:00, 4000.00 examples/s]\n");
  EXPECT_EQ(r.step, 120);
  EXPECT_EQ(r.total_steps, 500);
}

}  // namespace
}  // namespace orrery::logs
