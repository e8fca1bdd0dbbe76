// The GA2M-like estimator (XgbEstimator::Ga2mOptions): additive decomposition of its
// predictions into main effects and the allowed pairwise terms only.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "base/rng.h"
#include "predict/evaluate.h"
#include "predict/test_trace.h"
#include "predict/xgb.h"

namespace orrery {
namespace {

using predict_test::MakeJob;

// duration = 100 s × gpus × user factor (users u0..u6 take 1..7×), ±10 % noise, hourly submits.
Trace UserGpuTrace(int n) {
  Trace t;
  Rng rng(3, "ga2m-test");
  const uint32_t gpus[] = {1, 2, 4, 8};
  for (int i = 0; i < n; ++i) {
    uint32_t g = gpus[rng.NextU64() % 4];
    uint64_t u = rng.NextU64() % 7;
    double noise = 1.0 + 0.2 * (rng.Uniform() - 0.5);
    MakeJob(t, "u" + std::to_string(u), "job" + std::to_string(rng.NextU64() % 30), g,
            static_cast<Duration>(std::llround(100.0 * g * static_cast<double>(u + 1) * noise)), i * 3600);
  }
  return t;
}

TEST(Ga2m, PredictsAndDecomposesIntoAllowedTerms) {
  Trace t = UserGpuTrace(1200);
  auto made = MakeEstimator("ga2m:min-train=300,retrain-days=7", 1, &t);
  ASSERT_TRUE(made.ok()) << made.error().message;
  DurationEstimator& est = **made;
  EXPECT_EQ(est.name(), "ga2m");
  std::vector<double> actual, pred;
  for (size_t i = 0; i < t.jobs.size(); ++i) {
    const Job& j = t.jobs[i];
    Duration e = est.Estimate(j, j.submit);
    if (i >= 900) {
      actual.push_back(static_cast<double>(j.duration));
      pred.push_back(static_cast<double>(e));
    }
    if (i == 1100) {
      EstimateExplanation ex;
      ASSERT_TRUE(est.Explain(j, j.submit, &ex));
      EXPECT_EQ(ex.scale, "log-seconds");
      // base + Σ terms = the model's log estimate (the estimate is its rounded exp).
      double sum = ex.base;
      std::set<std::string> pairs;
      for (const auto& [name, v] : ex.terms) {
        sum += v;
        if (name.find(" x ") != std::string::npos) pairs.insert(name);
      }
      EXPECT_NEAR(std::exp(sum), static_cast<double>(e), 0.01 * static_cast<double>(e) + 1);
      // Only the constrained pairs may interact.
      const std::set<std::string> allowed = {"gpus x user_mean_log", "gpus x log_walltime", "vc x hour",
                                             "user_last_log x user_name_mean_log"};
      for (const auto& p : pairs) EXPECT_TRUE(allowed.count(p)) << p;
      // gpus and the user's history carry the signal.
      double gpus = 0, user = 0;
      for (const auto& [name, v] : ex.terms) {
        if (name == "gpus") gpus = v;
        if (name == "user_mean_log") user = v;
      }
      EXPECT_NE(gpus, 0.0);
      EXPECT_NE(user, 0.0);
    }
    est.Observe(j, j.duration);
  }
  PredictionMetrics m = ComputeMetrics(actual, pred);
  EXPECT_GT(m.r2_log, 0.8);
  EXPECT_LT(m.mape, 25.0);
}

TEST(Ga2m, ExplainsBeforeTrainingAndRejectsDeepTrees) {
  Trace t = UserGpuTrace(10);
  auto made = MakeEstimator("ga2m", 1, &t);
  ASSERT_TRUE(made.ok());
  (*made)->Estimate(t.jobs[0], 0);
  EstimateExplanation ex;
  ASSERT_TRUE((*made)->Explain(t.jobs[0], 0, &ex));
  EXPECT_TRUE(ex.terms.empty());
  EXPECT_NE(ex.note.find("no model"), std::string::npos);
  EXPECT_FALSE(MakeEstimator("ga2m:depth=3", 1, &t).ok());
  EXPECT_TRUE(MakeEstimator("ga2m:depth=1", 1, &t).ok());
}

}  // namespace
}  // namespace orrery
