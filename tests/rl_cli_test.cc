// `orrery rl step` end to end: the JSON every script reads, byte-identical output for a seed,
// and bad input as a located error with exit 2 (docs/formats/rl-step.md, docs/cli.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_testing.h"

namespace {

using orrery::cli_testing::CmdOut;
using orrery::cli_testing::RunOrrery;

// A small job: 8 prompts × 4 samples, 2048-token responses, on 16 H100s of TP 4.
const std::string kSmall = "rl step --model qwen2.5-7b --gpus 16 --gpu h100 --prompts 8 --samples 4 --max-response 2048 ";

TEST(RlCli, JsonHasEveryStrategyWithStepTimeAndSpeedup) {
  CmdOut o = RunOrrery(kSmall + "--strategy sync,tlt,tail-batch,partial,async,harvest --json");
  ASSERT_EQ(o.status, 0) << o.text;
  const nlohmann::json j = nlohmann::json::parse(o.text);
  ASSERT_EQ(j["strategies"].size(), 6u);
  EXPECT_EQ(j["workers"], 4);
  EXPECT_EQ(j["tp"], 4);
  for (const auto& s : j["strategies"]) {
    SCOPED_TRACE(s["name"].get<std::string>());
    const double step = s["step_time_s"];
    EXPECT_GT(step, 0);
    EXPECT_NEAR(s["speedup_vs_sync"].get<double>() * step, j["strategies"][0]["step_time_s"].get<double>(), 1e-6 * step);
    if (s["name"] != "async")
      EXPECT_NEAR(s["rollout_s"].get<double>() + s["reward_s"].get<double>() + s["train_s"].get<double>() +
                      s["sync_s"].get<double>() + s["other_s"].get<double>(),
                  step, 1e-9 * step);
    EXPECT_GE(s["idle_gpu_frac"].get<double>(), 0);
    EXPECT_LT(s["idle_gpu_frac"].get<double>(), 1);
  }
  EXPECT_EQ(j["strategies"][0]["name"], "sync");
  EXPECT_DOUBLE_EQ(j["strategies"][0]["speedup_vs_sync"].get<double>(), 1.0);
}

TEST(RlCli, SameSeedSameBytesOtherSeedOtherLengths) {
  const std::string args = kSmall + "--strategy sync,tlt,partial --json --seed ";
  CmdOut a = RunOrrery(args + "3"), b = RunOrrery(args + "3"), c = RunOrrery(args + "4");
  ASSERT_EQ(a.status, 0) << a.text;
  EXPECT_EQ(a.text, b.text);
  EXPECT_NE(a.text, c.text);
}

TEST(RlCli, BadInputIsALocatedErrorWithExit2) {
  struct Case {
    std::string args, expected;
  };
  const Case cases[] = {
      {"rl step --model qwen9-7b",
       "orrery rl step: --model: unknown model \"qwen9-7b\": expected one of llama3-8b, llama3-70b, qwen2.5-1.5b, "
       "qwen2.5-7b, qwen2.5-14b, qwen2.5-32b, qwen2.5-72b or llama:layers=L,hidden=H,heads=A,kv_heads=K,ffn=F,vocab=V\n"},
      {"rl step --model OPT-30",
       "orrery rl step: --model: model \"OPT-30\" is opt-30b, which has a Sailor profile, not an inference shape: "
       "expected one of llama3-8b, llama3-70b, "},
      {"rl step --model qwen2.5-7b --gpus 32 --tp 8", "orrery rl step: --tp: "},  // 28 heads
      {"rl step --model qwen2.5-7b --gpus 30 --tp 4", "--gpus: 30 GPUs do not split into rollout workers of TP 4"},
      {"rl step --model qwen2.5-32b --gpus 8 --tp 1", "impossible batch: one sequence of 33792 tokens"},
      {"rl step --model qwen2.5-7b --gpu a100", "orrery rl step: --gpu: "},
      {"rl step --model qwen2.5-7b --lengths mean=0.01,clip=0.02", "orrery rl step: --lengths: "},
      {"rl step --model qwen2.5-7b --strategy sync,fast", "unknown strategy \"fast\""},
      {"rl step --model qwen2.5-7b --prompts 0", "expected a whole number of prompts from 1 to 1000000"},
      {"rl step --list-strategies --gpus 8", "--gpus does not apply: --list-strategies prints the strategies"},
  };
  for (const Case& c : cases) {
    CmdOut o = RunOrrery(c.args);
    EXPECT_EQ(o.status, 2) << c.args << "\n" << o.text;
    EXPECT_NE(o.text.find(c.expected), std::string::npos) << c.args << "\n" << o.text;
  }
}

// RL jobs in `orrery simulate`: a jobs file on a two-node cluster, the run's "rl" report in
// summary.json, and the flags refused where they do not apply.
TEST(RlSimulate, JobsFileGivesTheRunsRlReport) {
  namespace fs = std::filesystem;
  const std::string fx = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/rl_sim/";
  const fs::path dir = orrery::cli_testing::FreshTempDir("rl_sim");
  const std::string base = "simulate " + fx + "trace.csv --cluster " + fx + "cluster.toml --rl-jobs " + fx +
                           "rl_jobs.csv --policy fifo --out-dir " + dir.string();
  CmdOut o = RunOrrery(base + " --rl-strategy tlt");
  ASSERT_EQ(o.status, 0) << o.text;
  const nlohmann::json j = nlohmann::json::parse(orrery::cli_testing::Slurp(dir / "summary.json"));
  const nlohmann::json& rl = j["runs"][0]["rl"];
  EXPECT_EQ(rl["strategy"], "tlt");
  EXPECT_EQ(rl["jobs"], 2);
  EXPECT_EQ(rl["finished"], 2);
  EXPECT_DOUBLE_EQ(rl["steps_run"].get<double>(), 30.0);  // 20 + 10 steps, both finished
  EXPECT_LT(rl["step_time_s"].get<double>(), rl["sync_step_time_s"].get<double>());
  EXPECT_EQ(rl["other_jobs"]["finished"], 3);
  EXPECT_EQ(j["jobs"], 5);  // three trace jobs and two RL jobs
  EXPECT_NE(o.text.find("fifo: 2 RL jobs (2 finished) under tlt"), std::string::npos) << o.text;
  fs::remove_all(dir);

  // harvest: the report gains its lending figures (these small jobs' steps lend nothing: no
  // worker is idle longer than the return wait pays for).
  o = RunOrrery(base + " --rl-strategy harvest");
  ASSERT_EQ(o.status, 0) << o.text;
  const nlohmann::json h = nlohmann::json::parse(orrery::cli_testing::Slurp(dir / "summary.json"))["runs"][0]["rl"];
  EXPECT_EQ(h["strategy"], "harvest");
  ASSERT_TRUE(h.contains("harvest")) << h.dump();
  EXPECT_EQ(h["harvest"]["lends"], 0);
  EXPECT_EQ(h["harvest"]["borrower_preemptions"], 0);
  EXPECT_NE(o.text.find("borrowers preempted at the return"), std::string::npos) << o.text;
  fs::remove_all(dir);

  const struct {
    std::string args, expected;
  } bad[] = {
      {"simulate " + fx + "trace.csv --cluster " + fx + "cluster.toml --rl-strategy tlt --no-output",
       "--rl-strategy does not apply: the workload has no RL jobs"},
      {"simulate " + fx + "trace.csv --cluster " + fx + "cluster.toml --rl-share 1.5 --no-output", "--rl-share"},
  };
  for (const auto& c : bad) {
    CmdOut b = RunOrrery(c.args);
    EXPECT_EQ(b.status, 2) << c.args << "\n" << b.text;
    EXPECT_NE(b.text.find(c.expected), std::string::npos) << c.args << "\n" << b.text;
  }
}

// `orrery explain` on an RL job (the first of the jobs file: index 3, after the trace's three
// jobs): its steps, the strategy's step against sync's and the breakdown. It runs alone on its
// 8 GPUs, so its run is its 20 steps: end - start = 20 x the step time (rounded to the second).
TEST(RlExplain, AnRlJobsStepsAndWhereTheirTimeGoes) {
  const std::string fx = std::string(ORRERY_SOURCE_DIR) + "/tests/fixtures/rl_sim/";
  const std::string base = "explain " + fx + "trace.csv 3 --cluster " + fx + "cluster.toml --rl-jobs " + fx + "rl_jobs.csv";
  CmdOut o = RunOrrery(base + " --rl-strategy tlt --json");
  ASSERT_EQ(o.status, 0) << o.text;
  const nlohmann::json j = nlohmann::json::parse(o.text);
  const nlohmann::json& rl = j["rl"];
  EXPECT_EQ(rl["strategy"], "tlt");
  EXPECT_EQ(rl["steps"], 20);
  const double step = rl["step_time_s"].get<double>();
  EXPECT_GT(rl["speedup_vs_sync"].get<double>(), 1.0);  // speculation shortens the rollout
  EXPECT_NEAR(rl["speedup_vs_sync"].get<double>(), rl["sync_step_time_s"].get<double>() / step, 1e-3);
  const nlohmann::json& b = rl["breakdown_s"];
  EXPECT_NEAR(b["rollout"].get<double>() + b["reward"].get<double>() + b["train"].get<double>() +
                  b["sync"].get<double>() + b["other"].get<double>(),
              step, 0.01);  // the tail is part of the rollout
  EXPECT_NEAR(j["end"].get<double>() - j["start"].get<double>(), 20 * step, 1.0);
  EXPECT_NEAR(rl["gpu_hours"].get<double>(), 20 * step * 8 / 3600, 1e-3);

  CmdOut text = RunOrrery(base + " --rl-strategy tlt");
  ASSERT_EQ(text.status, 0) << text.text;
  EXPECT_NE(text.text.find("RL job: 20 steps under tlt"), std::string::npos) << text.text;
  CmdOut plain = RunOrrery("explain " + fx + "trace.csv 0 --cluster " + fx + "cluster.toml --json");
  ASSERT_EQ(plain.status, 0) << plain.text;
  EXPECT_FALSE(nlohmann::json::parse(plain.text).contains("rl"));  // not an RL job
  CmdOut refused = RunOrrery("explain " + fx + "trace.csv 0 --cluster " + fx + "cluster.toml --rl-strategy tlt");
  EXPECT_EQ(refused.status, 2);
  EXPECT_NE(refused.text.find("--rl-strategy does not apply"), std::string::npos) << refused.text;
}

}  // namespace
