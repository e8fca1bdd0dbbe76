// Blend arithmetic, metrics, the evaluation replay order and MakeEstimator specs.
#include <gtest/gtest.h>

#include <cmath>

#include "predict/blend.h"
#include "predict/evaluate.h"
#include "predict/history.h"
#include "predict/test_trace.h"
#include "predict/xgb.h"

namespace orrery {
namespace {

using predict_test::MakeJob;

class Fixed final : public DurationEstimator {
 public:
  explicit Fixed(Duration v) : v_(v) {}
  std::string_view name() const override { return "fixed"; }
  Duration Estimate(const Job&, Time) override { return v_; }
  void Observe(const Job&, Duration) override { ++observed; }
  Duration v_;
  int observed = 0;
};

TEST(Blend, AlphaArithmetic) {
  Job j;
  auto h = std::make_unique<Fixed>(1000);
  auto m = std::make_unique<Fixed>(100);
  Fixed *hp = h.get(), *mp = m.get();
  BlendEstimator b(std::move(h), std::move(m), 0.1);
  EXPECT_EQ(b.Estimate(j, 0), 190);  // 0.1·1000 + 0.9·100
  mp->v_ = 0;
  EXPECT_EQ(b.Estimate(j, 0), 1000);  // model gave nothing -> history
  mp->v_ = -5;
  EXPECT_EQ(b.Estimate(j, 0), 1000);
  b.Observe(j, 7);
  EXPECT_EQ(hp->observed, 1);
  EXPECT_EQ(mp->observed, 1);
}

TEST(Metrics, HandComputed) {
  PredictionMetrics m = ComputeMetrics({100, 200}, {150, 100});
  EXPECT_DOUBLE_EQ(m.mae, 75);
  EXPECT_DOUBLE_EQ(m.mape, 50);
  EXPECT_DOUBLE_EQ(m.mdape, 50);
  EXPECT_DOUBLE_EQ(ComputeMetrics({100, 100, 100}, {110, 300, 100}).mdape, 10);
  EXPECT_DOUBLE_EQ(m.r2, -1.5);  // 1 − 12500 / 5000
  EXPECT_DOUBLE_EQ(m.within_2x, 1.0);
  PredictionMetrics p = ComputeMetrics({1, 2, 3, 4}, {1, 2, 3, 4});
  EXPECT_DOUBLE_EQ(p.r2, 1);
  EXPECT_DOUBLE_EQ(p.r2_log, 1);
  EXPECT_DOUBLE_EQ(p.spearman, 1);
  EXPECT_DOUBLE_EQ(p.kendall, 1);
  // Predictions are clamped to >= 1 s.
  EXPECT_DOUBLE_EQ(ComputeMetrics({10}, {-50}).mae, 9);
}

TEST(Metrics, RankCorrelations) {
  // 2 discordant of 10 pairs: (8 − 2) / 10.
  EXPECT_DOUBLE_EQ(KendallTauB({1, 2, 3, 4, 5}, {1, 3, 2, 5, 4}), 0.6);
  // Ties: C = 4, D = 0, one tie in each -> 4 / sqrt(5·5) = 0.8 (scipy.stats.kendalltau).
  EXPECT_DOUBLE_EQ(KendallTauB({1, 1, 2, 3}, {1, 2, 2, 3}), 0.8);
  // Average ranks [1.5 1.5 3 4] vs [1 2.5 2.5 4]: 3.75 / 4.5.
  EXPECT_NEAR(SpearmanRho({1, 1, 2, 3}, {1, 2, 2, 3}), 3.75 / 4.5, 1e-12);
  EXPECT_DOUBLE_EQ(KendallTauB({1, 2, 3}, {3, 2, 1}), -1);
}

// Records the order of calls.
class Recorder final : public DurationEstimator {
 public:
  std::string_view name() const override { return "recorder"; }
  Duration Estimate(const Job& j, Time) override {
    log += "E" + std::to_string(j.id.v) + " ";
    return 10;
  }
  void Observe(const Job& j, Duration) override { log += "O" + std::to_string(j.id.v) + " "; }
  std::string log;
};

TEST(Evaluate, ReplayOrderWithoutQueueing) {
  Trace t;
  MakeJob(t, "u", "a", 1, 10, 0);    // 0: finishes at 10
  MakeJob(t, "u", "a", 1, 100, 5);   // 1: finishes at 105
  MakeJob(t, "u", "a", 1, 0, 10);    // 2: finishes at 10, after its own submit
  MakeJob(t, "u", "a", 1, 1, 10);    // 3: finishes at 11
  MakeJob(t, "u", "a", 1, -1, 12);   // 4: unknown duration: skipped
  MakeJob(t, "u", "a", 1, 5, 20);    // 5
  Recorder rec;
  EvalOptions o;
  o.train_fraction = 0.5;
  auto r = EvaluateEstimator(t, &rec, o, true);
  ASSERT_TRUE(r.ok()) << r.error().message;
  // Finishes at t are delivered before submissions at t (job 2 ends at its own submit time).
  EXPECT_EQ(rec.log, "E0 E1 O0 E2 O2 E3 O3 E5 ");
  EXPECT_EQ(r->train_jobs, 2u);
  EXPECT_EQ(r->test_jobs, 3u);
  EXPECT_EQ(r->predictions, (std::vector<double>{10, 10, 10}));
}

TEST(Evaluate, SpecsAndErrors) {
  Trace t;
  for (int i = 0; i < 50; ++i) MakeJob(t, "u" + std::to_string(i % 3), "n" + std::to_string(i % 4), 1, 100 + i, i * 1000);
  auto res = EvaluateEstimators(t, {"oracle", "history", "user-stats:stat=mean,k=5", "blend:alpha=0.2,rounds=5"}, {});
  ASSERT_TRUE(res.ok()) << res.error().message;
  EXPECT_DOUBLE_EQ((*res)[0].metrics.r2, 1.0);
  EXPECT_EQ((*res)[1].name, "history");
  EXPECT_GT((*res)[1].details.at("history.exact-user"), 0.9);

  EXPECT_TRUE(MakeEstimator("oracle", 1).ok());  // old signature
  EXPECT_FALSE(MakeEstimator("history", 1).ok());  // needs the trace
  EXPECT_FALSE(MakeEstimator("blend", 1).ok());
  EXPECT_TRUE(MakeEstimator("xgboost", 1).ok());
  EXPECT_TRUE(MakeEstimator("history", 1, &t).ok());
  auto bad = MakeEstimator("user-stats:stat=mode", 1, &t);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("mean, median or ewma"), std::string::npos);
  EXPECT_FALSE(MakeEstimator("xgboost:depth=0", 1, &t).ok());
  EXPECT_FALSE(MakeEstimator("xgboost:colour=red", 1, &t).ok());
  EXPECT_FALSE(MakeEstimator("blend:alpha", 1, &t).ok());
  auto blend = MakeEstimator("blend", 1, &t);
  ASSERT_TRUE(blend.ok());
  EXPECT_DOUBLE_EQ(dynamic_cast<BlendEstimator&>(**blend).alpha(), 0.1);
}

}  // namespace
}  // namespace orrery
