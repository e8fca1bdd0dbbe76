#include "predict/user_stats.h"

#include <gtest/gtest.h>

#include "predict/test_trace.h"

namespace orrery {
namespace {

using predict_test::MakeJob;
using L = UserStatsEstimator::Level;

TEST(UserStats, WindowHelpers) {
  EXPECT_DOUBLE_EQ(UserStatsEstimator::Mean({1, 2, 6}), 3);
  EXPECT_DOUBLE_EQ(UserStatsEstimator::Median({5, 1, 3}), 3);
  EXPECT_DOUBLE_EQ(UserStatsEstimator::Median({4, 1, 3, 10}), 3.5);
}

TEST(UserStats, RollingWindowAndFallbacks) {
  Trace t;
  UserStatsEstimator::Options o;
  o.stat = UserStatsEstimator::Stat::kMean;
  o.k = 3;
  o.fallback = 99;
  UserStatsEstimator est(o);
  Job q = MakeJob(t, "alice", "a", 2, 1);
  EXPECT_EQ(est.Estimate(q, 0), 99);
  EXPECT_EQ(est.last_level(), L::kFallback);
  // alice, 2 GPUs: 100, 200, 300, 400 -> last 3 mean = 300.
  for (Duration d : {100, 200, 300, 400}) est.Observe(MakeJob(t, "alice", "a", 2, d), d);
  EXPECT_EQ(est.Estimate(q, 0), 300);
  EXPECT_EQ(est.last_level(), L::kUserGpus);
  // alice, 4 GPUs: no (user, 4) history -> user's last 3 = 300.
  EXPECT_EQ(est.Estimate(MakeJob(t, "alice", "a", 4, 1), 0), 300);
  EXPECT_EQ(est.last_level(), L::kUser);
  // bob (new) with 2 GPUs -> GPU-count window (last 3 of all 2-GPU jobs) = 300.
  est.Observe(MakeJob(t, "carol", "c", 8, 1000), 1000);
  EXPECT_EQ(est.Estimate(MakeJob(t, "bob", "b", 2, 1), 0), 300);
  EXPECT_EQ(est.last_level(), L::kGpus);
  // bob with 1 GPU -> global last 3: 300, 400, 1000 -> 566.67 -> 567.
  EXPECT_EQ(est.Estimate(MakeJob(t, "bob", "b", 1, 1), 0), 567);
  EXPECT_EQ(est.last_level(), L::kGlobal);
}

TEST(UserStats, MedianEwmaAndByName) {
  Trace t;
  UserStatsEstimator::Options o;
  o.stat = UserStatsEstimator::Stat::kEwma;
  o.ewma_alpha = 0.5;
  UserStatsEstimator ewma(o);
  for (Duration d : {100, 200, 400}) ewma.Observe(MakeJob(t, "u", "x", 1, d), d);
  // 100 -> 0.5*200 + 0.5*100 = 150 -> 0.5*400 + 0.5*150 = 275
  EXPECT_EQ(ewma.Estimate(MakeJob(t, "u", "x", 1, 1), 0), 275);

  o.stat = UserStatsEstimator::Stat::kMedian;
  o.k = 10;
  o.by_name = true;
  UserStatsEstimator med(o);
  for (Duration d : {10, 20, 1000}) med.Observe(MakeJob(t, "u", "short", 1, d), d);
  for (Duration d : {5000, 7000}) med.Observe(MakeJob(t, "u", "long", 1, d), d);
  EXPECT_EQ(med.Estimate(MakeJob(t, "u", "short", 1, 1), 0), 20);
  EXPECT_EQ(med.last_level(), L::kUserName);
  EXPECT_EQ(med.Estimate(MakeJob(t, "u", "long", 1, 1), 0), 6000);
  EXPECT_EQ(med.Estimate(MakeJob(t, "u", "new", 1, 1), 0), 1000);  // (user, 1 GPU) median of 5
  EXPECT_EQ(med.last_level(), L::kUserGpus);
}

}  // namespace
}  // namespace orrery
