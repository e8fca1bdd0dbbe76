#include <gtest/gtest.h>

#include "eval/strategy.h"

namespace orrery::eval {
namespace {

DatasetWork D(std::string name, uint64_t examples, TaskType t, uint32_t candidates = 1, double s_per_ex = 1) {
  DatasetWork d;
  d.name = std::move(name);
  d.examples = examples;
  d.task = t;
  d.candidates = candidates;
  d.infer_s_per_example = s_per_ex;
  return d;
}

Workload Of(std::vector<DatasetWork> ds) {
  Workload w;
  w.model.params = 1e9;
  w.startup_s = 10;
  w.metric_job_startup_s = 3;
  w.datasets = std::move(ds);
  return w;
}

std::vector<std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>> Jobs(const Plan& p) {
  std::vector<std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>> out;
  for (const GpuJob& j : p.gpu_jobs) {
    out.emplace_back();
    for (const Slice& s : j.slices) out.back().emplace_back(s.dataset, s.begin, s.end);
  }
  return out;
}

ClusterSpec Nodes(uint32_t n, uint32_t g) {
  ClusterSpec c;
  c.nodes = n;
  c.gpus_per_node = g;
  return c;
}

TEST(StrategyTest, SizeFactorFollowsOpenCompassRules) {
  EXPECT_EQ(SizeFactor(D("nq", 1, TaskType::kGeneration), 20), 20u);
  EXPECT_EQ(SizeFactor(D("piqa", 1, TaskType::kPerplexity, 2), 20), 2u);
  EXPECT_EQ(SizeFactor(D("gsm8k", 1, TaskType::kGeneration), 20), 200u);
  EXPECT_EQ(SizeFactor(D("bbh (27 tasks)", 1, TaskType::kGeneration), 20), 200u);
  EXPECT_EQ(SizeFactor(D("lukaemon_mmlu_professional_law", 1, TaskType::kPerplexity, 4), 20), 40u);
  EXPECT_EQ(SizeFactor(D("winogrande", 1, TaskType::kLoglikelihood, 2), 20), 20u);  // not a dict template
}

TEST(StrategyTest, SizePartitionerSplitsSortsAndPacks) {
  // Costs: p1 4 x 5000 = 20000, g1 20 x 3000 = 60000 (> 40000: step 40000 // 20 = 2000, evened
  // to ceil(3000 / ceil(3000 / 2000)) = 1500, two parts of cost 40000), gsm8k 200 x 100 = 20000,
  // p2 4 x 3000 = 12000, p3 4 x 2500 = 10000. Sorted: g1_0, g1_1, p1, gsm8k (tie: suite order),
  // p2, p3. Packing to 40000: [g1_0] [g1_1] [p1 gsm8k] [p2 p3].
  const Workload w = Of({D("p1", 5000, TaskType::kPerplexity, 4), D("g1", 3000, TaskType::kGeneration),
                         D("gsm8k", 100, TaskType::kGeneration), D("p2", 3000, TaskType::kPerplexity, 4),
                         D("p3", 2500, TaskType::kPerplexity, 4)});
  auto s = MakeStrategy("opencompass-size");
  ASSERT_TRUE(s.ok());
  auto p = BuildPlan(**s, "opencompass-size", w, Nodes(1, 8));
  ASSERT_TRUE(p.ok()) << p.error().message;
  using V = std::vector<std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>>;
  EXPECT_EQ(Jobs(*p), (V{{{1, 0, 1500}}, {{1, 1500, 3000}}, {{0, 0, 5000}, {2, 0, 100}}, {{3, 0, 3000}, {4, 0, 2500}}}));
  EXPECT_EQ(p->load, LoadSource::kSharedStorage);
  EXPECT_EQ(p->release, MetricRelease::kAllInferenceDone);
  ASSERT_EQ(p->metric_jobs.size(), 5u);
  EXPECT_EQ(p->metric_jobs[1].after, (std::vector<uint32_t>{0, 1}));
  auto split = MakeStrategy("opencompass-size:strategy=split");
  ASSERT_TRUE(split.ok());
  auto ps = BuildPlan(**split, "x", w, Nodes(1, 8));
  ASSERT_TRUE(ps.ok());
  EXPECT_EQ(ps->gpu_jobs.size(), 6u);
}

TEST(StrategyTest, NumWorkerPartitionerDealsChunksRoundRobin) {
  // num_worker 2: a (10 <= 16) whole; b 100 -> step max(50, 16) = 50; c 20 -> step max(10, 16)
  // = 16: [0,16) [16,20). Chunks a b0 b1 c0 c1 -> bucket 0: a b1 c1, bucket 1: b0 c0.
  const Workload w = Of({D("a", 10, TaskType::kGeneration), D("b", 100, TaskType::kGeneration),
                         D("c", 20, TaskType::kGeneration)});
  auto s = MakeStrategy("opencompass-workers:num_worker=2");
  ASSERT_TRUE(s.ok());
  auto p = BuildPlan(**s, "w", w, Nodes(1, 8));
  ASSERT_TRUE(p.ok()) << p.error().message;
  using V = std::vector<std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>>;
  EXPECT_EQ(Jobs(*p), (V{{{0, 0, 10}, {1, 50, 100}, {2, 16, 20}}, {{1, 0, 50}, {2, 0, 16}}}));
  // Default num_worker = 8 and the CLI default of OpenCompass (--max-num-workers 1): one task.
  auto one = MakeStrategy("opencompass-workers:num_worker=1");
  ASSERT_TRUE(one.ok());
  auto p1 = BuildPlan(**one, "w1", w, Nodes(1, 8));
  ASSERT_TRUE(p1.ok());
  EXPECT_EQ(Jobs(*p1), (V{{{0, 0, 10}, {1, 0, 100}, {2, 0, 20}}}));
}

TEST(StrategyTest, AcmeBalancesByLongestProcessingTime) {
  // 2 GPUs, total 200 s, granularity 1: pieces cap 100 s, no split. LPT: A (100) -> gpu0,
  // B (60) -> gpu1, C (40) -> gpu1. Metrics are short (3 s < a job start), so gpu1's two
  // datasets share one job. Both jobs are planned at t = 0: gpu0's first.
  const Workload w = Of({D("A", 100, TaskType::kGeneration), D("B", 60, TaskType::kGeneration),
                         D("C", 40, TaskType::kGeneration)});
  auto s = MakeStrategy("acme:granularity=1");
  ASSERT_TRUE(s.ok());
  auto p = BuildPlan(**s, "acme", w, Nodes(1, 2));
  ASSERT_TRUE(p.ok()) << p.error().message;
  using V = std::vector<std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>>;
  EXPECT_EQ(Jobs(*p), (V{{{0, 0, 100}}, {{1, 0, 60}, {2, 0, 40}}}));
  EXPECT_EQ(p->load, LoadSource::kNodeCache);
  EXPECT_EQ(p->metric, MetricPlacement::kCpuJob);
  EXPECT_EQ(p->release, MetricRelease::kDatasetDone);
}

TEST(StrategyTest, AcmeSplitsLongDatasetsAndCutsJobsAfterLongMetrics) {
  // 2 GPUs, granularity 2: cap = 200 / 2 / 2 = 50 s. A (120) -> 3 slices of 40; B (80) -> 2 of
  // 40. LPT over five 40-s pieces: A0 g0, A1 g1, A2 g0, B0 g1, B1 g0. Ranges handed out again
  // in GPU order: g0 gets A[0:40] A[40:80] B[0:40], g1 gets A[80:120] B[40:80]. B's metric
  // (3 + 100 s) outlasts a job start (10 + 2e9 / 10e9 = 10.2 s), so B comes first and ends a job;
  // g0's two A slices merge into A[0:80].
  Workload w = Of({D("A", 120, TaskType::kGeneration), D("B", 80, TaskType::kGeneration)});
  w.datasets[1].metric_s = 100;
  auto s = MakeStrategy("acme:granularity=2");
  ASSERT_TRUE(s.ok());
  ClusterSpec c = Nodes(1, 2);
  c.cache_bytes_per_s = 10e9;
  auto p = BuildPlan(**s, "acme", w, c);
  ASSERT_TRUE(p.ok()) << p.error().message;
  // Planned starts (0 or 10.2 + 40 = 50.2), ties by GPU: g0 [B0:40], g1 [B40:80], g0 [A0:80], g1 [A80:120].
  using V = std::vector<std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>>;
  EXPECT_EQ(Jobs(*p), (V{{{1, 0, 40}}, {{1, 40, 80}}, {{0, 0, 80}}, {{0, 80, 120}}}));
}

TEST(StrategyTest, CoverageCheckRejectsGapsOverlapsAndDuplicates) {
  const Workload w = Of({D("a", 10, TaskType::kGeneration)});
  const std::vector<std::vector<Slice>> bad = {
      {{0, 0, 5}},                 // gap [5, 10)
      {{0, 0, 6}, {0, 5, 10}},     // overlap
      {{0, 0, 10}, {0, 0, 10}},    // duplicate
      {},                          // missing
  };
  for (const auto& slices : bad) {
    Plan p;
    p.strategy = "hand";
    for (const Slice& s : slices) p.gpu_jobs.push_back(GpuJob{{s}});
    EXPECT_FALSE(CheckCoverage(w, p).ok()) << slices.size();
  }
  Plan good;
  good.gpu_jobs = {GpuJob{{Slice{0, 5, 10}}}, GpuJob{{Slice{0, 0, 5}}}};
  EXPECT_TRUE(CheckCoverage(w, good).ok());
}

TEST(StrategyTest, UnknownStrategiesAndOptionsAreErrors) {
  auto a = MakeStrategy("fastest");
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.error().message,
            "unknown strategy \"fastest\" (expected coupled, opencompass-size, opencompass-workers or acme)");
  auto b = MakeStrategy("acme:granularity=0");
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.error().message, "strategy acme: option granularity: expected an integer in [1, 1024], got \"0\"");
  auto c = MakeStrategy("opencompass-size:max_task=5");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message, "strategy opencompass-size: unknown option \"max_task\"");
  auto d = MakeStrategy("coupled:x");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message, "strategy coupled: option \"x\": expected key=value");
}

}  // namespace
}  // namespace orrery::eval
