// The planner's shapes through `orrery simulate --policy` (shape=goodput, elastic=true) on the
// generated LLM workload, and the messages for what cannot be shaped.
#include <string>

#include <gtest/gtest.h>

#include "cli_testing.h"

namespace {

using orrery::cli_testing::RunOrrery;

const std::string kCluster = std::string(ORRERY_SOURCE_DIR) + "/configs/h200-16x8.toml";

TEST(ShapeCli, SimulateRunsShapedAndElasticPoliciesDeterministicallySlow) {
  const std::string args = "simulate --generate llm --jobs 8 --seed 2 --cluster " + kCluster +
                           " --policy fifo:shape=goodput,fifo:shape=goodput,elastic=true --no-output --quiet";
  const auto a = RunOrrery(args);
  ASSERT_EQ(a.status, 0) << a.text;
  EXPECT_NE(a.text.find("fifo:shape=goodput,elastic=true"), std::string::npos) << a.text;
  EXPECT_EQ(RunOrrery(args).text, a.text);  // same inputs and seed: the same table
}

TEST(ShapeCli, WhatCannotBeShapedSaysWhy) {
  auto o = RunOrrery("simulate --generate llm --jobs 4 --policy fifo:shape=goodput --no-output --quiet");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.text.find("--generate llm: pass --cluster FILE.toml whose GPU types have planner profiles"),
            std::string::npos)
      << o.text;
  o = RunOrrery("simulate --generate llm --jobs 4 --cluster " + kCluster +
                " --policy tiresias:shape=goodput,elastic=true --no-output --quiet");
  EXPECT_EQ(o.status, 2);
  EXPECT_NE(o.text.find("parameter 'elastic': policy 'tiresias' already re-decides its running jobs"), std::string::npos)
      << o.text;
}

}  // namespace
