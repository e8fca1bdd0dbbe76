// Plan search on Sailor's published profiles (../shared/sailor-profiles; skipped without them).
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plan/search.h"

namespace orrery::plan {
namespace {

const std::string kDir = std::string(ORRERY_SHARED_DIR) + "/sailor-profiles";

struct Instance {
  std::string model;
  std::vector<std::pair<std::string, int>> pool;
};

double BestIterTime(const Instance& in, bool exhaustive, const SailorModel& m, std::vector<SailorGpu>& gpus) {
  SearchRequest r;
  r.model = &m;
  r.global_batch = m.global_batch;
  for (size_t i = 0; i < gpus.size(); ++i) r.pool.push_back({&gpus[i], in.pool[i].second, ""});
  r.exhaustive = exhaustive;
  Result<SearchResult> res = SearchPlans(r);
  EXPECT_TRUE(res.ok()) << res.error().message;
  return res.ok() ? res->best.iter_s : 0;
}

TEST(Search, HeuristicsLoseAtMostTwoPercentAgainstExhaustive) {
  if (!std::filesystem::exists(kDir)) GTEST_SKIP() << "no " << kDir;
  const std::vector<Instance> instances = {
      {"OPT-350", {{"A100-40", 16}}},
      {"OPT-350", {{"A100-40", 8}, {"V100-16", 8}}},
      {"OPT-350", {{"A100-40", 16}, {"V100-16", 32}}},
      {"GPT-Neo-2.7", {{"A100-40", 32}}},
      {"GPT-Neo-2.7", {{"V100-16", 64}}},
      {"GPT-Neo-2.7", {{"A100-40", 16}, {"V100-16", 16}}},
      {"GPT-Neo-2.7", {{"A100-40", 32}, {"V100-16", 96}}},
  };
  for (const Instance& in : instances) {
    Result<SailorModel> m = LoadSailorModel(kDir, in.model);
    ASSERT_TRUE(m.ok()) << m.error().message;
    std::vector<SailorGpu> gpus;
    for (const auto& [g, n] : in.pool) gpus.push_back(*LoadSailorGpu(kDir, in.model, g));
    const double heur = BestIterTime(in, false, *m, gpus), exh = BestIterTime(in, true, *m, gpus);
    EXPECT_LE(heur, exh * 1.02) << in.model << " " << in.pool[0].first;
    EXPECT_GE(heur, exh * (1 - 1e-12));  // exhaustive can never be worse
  }
}

TEST(Search, BudgetAndThroughputConstraints) {
  if (!std::filesystem::exists(kDir)) GTEST_SKIP() << "no " << kDir;
  SailorModel m = *LoadSailorModel(kDir, "OPT-350");
  std::vector<SailorGpu> gpus = {*LoadSailorGpu(kDir, "OPT-350", "A100-40"), *LoadSailorGpu(kDir, "OPT-350", "V100-16")};
  SearchRequest r;
  r.model = &m;
  r.global_batch = m.global_batch;
  r.pool = {{&gpus[0], 16, ""}, {&gpus[1], 32, ""}};
  const SearchResult fastest = *SearchPlans(r);
  r.objective = Objective::kCost;
  const SearchResult cheapest = *SearchPlans(r);
  EXPECT_LE(cheapest.best.cost_per_iter, fastest.best.cost_per_iter);
  EXPECT_GE(cheapest.best.iter_s, fastest.best.iter_s);
  r.objective = Objective::kThroughput;
  r.max_cost_per_iter = cheapest.best.cost_per_iter * 1.1;
  const SearchResult capped = *SearchPlans(r);
  EXPECT_LE(capped.best.cost_per_iter, r.max_cost_per_iter);
  r.max_cost_per_iter = cheapest.best.cost_per_iter * 0.5;
  EXPECT_EQ(SearchPlans(r).error().message.substr(0, 56), "search: no plan fits the pool's memory and the constrain");
}

TEST(Search, EvaluateMatchesSailorsFormula) {
  if (!std::filesystem::exists(kDir)) GTEST_SKIP() << "no " << kDir;
  SailorModel m = *LoadSailorModel(kDir, "OPT-350");
  SailorGpu a100 = *LoadSailorGpu(kDir, "OPT-350", "A100-40");
  SearchRequest r;
  r.model = &m;
  r.global_batch = 64;
  r.pool = {{&a100, 1, ""}};
  PlanCandidate c;
  c.pp = 1, c.micro_batch = 1, c.dp = 1, c.num_micro = 64;
  c.stages = {{0, 1, 0, m.Layers()}};
  EvaluateCandidate(r, &c);
  // one stage, one GPU: T = Nb * sum(fwd + bwd) + sum(update)
  double comp = 0, upd = 0;
  for (const LayerCost& l : a100.times.at({1, 1})) comp += l.fwd_s + l.bwd_s, upd += l.update_s;
  EXPECT_NEAR(c.iter_s, 64 * comp + upd, 1e-12);
  EXPECT_NEAR(c.cost_per_iter, 3.67 / 3600 * c.iter_s, 1e-12);
}

}  // namespace
}  // namespace orrery::plan

namespace orrery::plan {
namespace {

TEST(Search, StagesInAnotherRegionPayTheZoneNetwork) {
  if (!std::filesystem::exists(kDir)) GTEST_SKIP() << "no " << kDir;
  SailorModel m = *LoadSailorModel(kDir, "OPT-350");
  std::vector<SailorGpu> gpus = {*LoadSailorGpu(kDir, "OPT-350", "A100-40"), *LoadSailorGpu(kDir, "OPT-350", "V100-16")};
  ZoneNetwork zones = *LoadZoneNetwork(kDir);
  SearchRequest r;
  r.model = &m;
  r.global_batch = m.global_batch;
  r.zones = &zones;
  r.pool = {{&gpus[0], 16, "us-central1-a"}, {&gpus[1], 32, "us-central1-a"}};
  const SearchResult same = *SearchPlans(r);
  r.pool[1].zone = "us-west1-b";
  const SearchResult apart = *SearchPlans(r);
  EXPECT_GE(apart.best.iter_s, same.best.iter_s);
  EXPECT_GT(apart.best.cost_per_iter, same.best.cost_per_iter);  // us-central1 -> us-west1: 0.02 $/GB
  EXPECT_DOUBLE_EQ(zones.DollarsPerGb("us-central1-a", "us-west1-b"), 0.02);
  r.zones = nullptr;
  EXPECT_EQ(SearchPlans(r).error().message, "search: pool entries with zones need the zone network");
}

}  // namespace
}  // namespace orrery::plan
