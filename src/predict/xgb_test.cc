#include "predict/xgb.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "base/rng.h"
#include "predict/estimator.h"
#include "predict/evaluate.h"
#include "predict/test_trace.h"

namespace orrery {
namespace {

using predict_test::MakeJob;

// duration = 100 × gpus × (1 ± 10 %): the model must recover the relation.
Trace SyntheticTrace(int n, uint64_t seed) {
  Trace t;
  Rng rng(seed, "xgb-test");
  const uint32_t gpus[] = {1, 2, 4, 8, 16};
  for (int i = 0; i < n; ++i) {
    uint32_t g = gpus[rng.NextU64() % 5];
    double noise = 1.0 + 0.2 * (rng.Uniform() - 0.5);
    MakeJob(t, "u" + std::to_string(rng.NextU64() % 7), "job" + std::to_string(rng.NextU64() % 30), g,
            static_cast<Duration>(std::llround(100.0 * g * noise)), i * 60);
  }
  return t;
}

XgbEstimator::Options FastOptions() {
  XgbEstimator::Options o;
  o.rounds = 40;
  o.max_depth = 4;
  o.eta = 0.3;
  o.min_train = 100;
  o.retrain_seconds = 0;
  return o;
}

TEST(Xgb, LearnsSyntheticRelation) {
  Trace t = SyntheticTrace(1500, 1);
  XgbEstimator::Options o = FastOptions();
  o.min_train = 1000000;  // train explicitly below
  XgbEstimator est(&t, o);
  for (int i = 0; i < 1000; ++i) {
    const Job& j = t.jobs[i];
    est.Estimate(j, j.submit);
    est.Observe(j, j.duration);
  }
  ASSERT_TRUE(est.Train().ok()) << est.last_error();
  std::vector<double> actual, pred;
  for (size_t i = 1000; i < t.jobs.size(); ++i) {
    actual.push_back(static_cast<double>(t.jobs[i].duration));
    pred.push_back(static_cast<double>(est.Estimate(t.jobs[i], t.jobs[i].submit)));
  }
  PredictionMetrics m = ComputeMetrics(actual, pred);
  EXPECT_GT(m.r2, 0.9);
  EXPECT_GT(m.r2_log, 0.9);
  EXPECT_LT(m.mape, 10.0);
  EXPECT_EQ(est.trainings(), 1);
}

TEST(Xgb, OnlineTrainingAndDeterminism) {
  Trace t = SyntheticTrace(600, 2);
  auto run = [&] {
    XgbEstimator::Options o = FastOptions();
    o.retrain_jobs = 200;
    XgbEstimator est(&t, o);
    std::vector<Duration> out;
    for (const Job& j : t.jobs) {
      out.push_back(est.Estimate(j, j.submit));
      est.Observe(j, j.duration);
    }
    EXPECT_EQ(est.trainings(), 3);  // at 100 rows, then after +200 and +200 more
    return out;
  };
  std::vector<Duration> a = run(), b = run();
  EXPECT_EQ(a, b);
  EXPECT_GT(a.back(), 0);
}

TEST(Xgb, UntrainedFallbacks) {
  Trace t;
  XgbEstimator::Options o = FastOptions();
  o.fallback = 1234;
  XgbEstimator est(&t, o);
  Job q = MakeJob(t, "u", "n", 1, 10);
  EXPECT_EQ(est.Estimate(q, 0), 1234);  // nothing seen
  est.Observe(MakeJob(t, "u", "n", 1, 100), 100);
  est.Observe(MakeJob(t, "u", "n", 1, 400), 400);
  EXPECT_EQ(est.Estimate(MakeJob(t, "u", "n", 1, 10), 0), 200);  // user's geometric mean
  o.zero_when_untrained = true;
  XgbEstimator zero(&t, o);
  EXPECT_EQ(zero.Estimate(q, 0), 0);
  EXPECT_FALSE(zero.trained());
}

TEST(Xgb, FeaturesUseOnlyFinishedJobs) {
  Trace t;
  t.epoch_unix = 0;
  XgbEstimator est(&t, FastOptions());
  Job a = MakeJob(t, "u", "train_x1", 2, 100, 3600 * 5);
  std::vector<float> f = est.Features(a, a.submit);
  ASSERT_EQ(static_cast<int>(f.size()), XgbEstimator::NumFeatures());
  EXPECT_EQ(f[0], 2.0f);
  EXPECT_EQ(f[6], 5.0f);   // hour
  EXPECT_EQ(f[7], 3.0f);   // 1970-01-01: Thursday (Monday = 0)
  EXPECT_EQ(f[9], 0.0f);   // no finished job of the user yet
  EXPECT_TRUE(std::isnan(f[10]));
  est.Observe(a, 100);
  Job b = MakeJob(t, "u", "train_x2", 2, 100, 3600 * 6);
  f = est.Features(b, b.submit);
  EXPECT_EQ(f[9], 1.0f);
  EXPECT_NEAR(f[10], std::log(100.0), 1e-5);
  EXPECT_NEAR(f[21], std::log(100.0), 1e-5);  // same stem "train_x"
  EXPECT_TRUE(std::isnan(f[16]));              // different exact name
  EXPECT_EQ(NameStemHash("train_x1"), NameStemHash("train_x22"));
  EXPECT_EQ(NameFirstTokenHash("bert-base_1"), NameFirstTokenHash("bert"));
}

TEST(Xgb, NativeForestPredictsBitIdenticallyToXgboost) {
  // Default depth and rounds; names/users give NaN-free and NaN features (mem, cpus, nodes,
  // walltime are unset: missing values take the default branch).
  Trace t = SyntheticTrace(3000, 5);
  XgbEstimator::Options o;
  o.min_train = 1000000;
  XgbEstimator est(&t, o);
  for (int i = 0; i < 2000; ++i) {
    est.Estimate(t.jobs[i], t.jobs[i].submit);
    est.Observe(t.jobs[i], t.jobs[i].duration);
  }
  ASSERT_TRUE(est.Train().ok()) << est.last_error();
  ASSERT_TRUE(est.native());
  int compared = 0;
  for (size_t i = 2000; i < t.jobs.size(); ++i) {
    std::vector<float> row = est.Features(t.jobs[i], t.jobs[i].submit);
    if (i % 3 == 0) row[10] = std::numeric_limits<float>::quiet_NaN();  // a missing history feature
    Result<double> mine = est.PredictLog(row), lib = est.LibraryPredictLog(row);
    ASSERT_TRUE(mine.ok() && lib.ok());
    EXPECT_EQ(*mine, *lib) << "job " << i;  // exact: same float sums
    ++compared;
  }
  EXPECT_EQ(compared, 1000);
}

TEST(Xgb, IncrementalRetrainingAddsTreesOnTheNewRows) {
  // 600 jobs, a training every 200 new rows: the first from scratch (40 rounds), then two
  // updates of 10 trees each; deterministic, evaluated natively throughout.
  Trace t = SyntheticTrace(600, 2);
  auto run = [&] {
    XgbEstimator::Options o = FastOptions();
    o.retrain_jobs = 200;
    o.retrain = XgbEstimator::Retrain::kIncremental;
    XgbEstimator est(&t, o);
    std::vector<Duration> out;
    for (const Job& j : t.jobs) {
      out.push_back(est.Estimate(j, j.submit));
      est.Observe(j, j.duration);
    }
    EXPECT_EQ(est.trainings(), 3);
    EXPECT_TRUE(est.native());
    return out;
  };
  std::vector<Duration> a = run(), b = run();
  EXPECT_EQ(a, b);
  auto bad = MakeEstimator("xgboost:retrain=sometimes", 1, &t);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "estimator 'xgboost:retrain=sometimes': retrain must be full, window or incremental, got 'sometimes'");
  EXPECT_TRUE(MakeEstimator("xgboost:retrain=incremental,update-rounds=5", 1, &t).ok());
}

// One job an hour (job i submitted at i·3600 s, 60 s long, observed before the next submit),
// retraining daily, at least 50 rows: which rows train which model at which time.
Trace HourlyTrace(int jobs) {
  Trace t = SyntheticTrace(jobs, 3);
  for (int i = 0; i < jobs; ++i) t.jobs[i].submit = static_cast<Time>(i) * 3600;
  return t;
}

XgbEstimator::Options Daily(XgbEstimator::Options o) {
  o.min_train = 50;
  o.retrain_seconds = 86400;
  return o;
}

void Replay(const Trace& t, XgbEstimator* est) {
  for (const Job& j : t.jobs) {
    est->Estimate(j, j.submit);
    est->Observe(j, 60);
  }
  EXPECT_TRUE(est->native());
}

std::vector<XgbEstimator::Training> HourlyJobsHistory(XgbEstimator::Options o, int jobs) {
  const Trace t = HourlyTrace(jobs);
  XgbEstimator est(&t, Daily(o));
  Replay(t, &est);
  return est.history();
}

TEST(Xgb, WindowRetrainingTrainsOnTheNewestRowsFromScratch) {
  XgbEstimator::Options o = XgbEstimator::WindowOptions(FastOptions());
  o.max_rows = 100;
  o.rounds = 5;
  // First model at job 50's submit (t = 50·3600 = 180,000 s; rows 0..49 observed). Then every
  // 86,400 s = 24 jobs later: job 74 (266,400 s) sees rows 0..73, job 98 rows 0..97, job 122
  // the newest 100 of 122 (22..121), job 146 rows 46..145. Each model has `rounds` trees.
  using T = XgbEstimator::Training;
  EXPECT_EQ(HourlyJobsHistory(o, 150), (std::vector<T>{{180000, 0, 50, 5},
                                                       {266400, 0, 74, 5},
                                                       {352800, 0, 98, 5},
                                                       {439200, 22, 100, 5},
                                                       {525600, 46, 100, 5}}));
}

TEST(Xgb, WindowRetrainingKeepsOnlyTheRowsItCanStillRead) {
  // As above over 250 jobs. Trainings at rows 50, 74, ..., 242 (every 24); the one at rows r can
  // only be followed by trainings on rows >= r - 100. Rows are dropped once at least half of the
  // stored ones are dead: at 218 (118 dead of 218; at 194, 94 < 97), then at 242 142 - 118 = 24
  // of 124 are dead, not enough. Stored at the end: 250 - 118 = 132.
  const Trace t = HourlyTrace(250);
  XgbEstimator::Options o = XgbEstimator::WindowOptions(FastOptions());
  o.max_rows = 100;
  o.rounds = 5;
  XgbEstimator est(&t, Daily(o));
  Replay(t, &est);
  ASSERT_EQ(est.history().size(), 9u);
  EXPECT_EQ(est.history().back(), (XgbEstimator::Training{242 * 3600, 142, 100, 5}));
  EXPECT_EQ(est.stored_rows(), 132u);
}

TEST(Xgb, IncrementalRetrainingHistoryGrowsTheForest) {
  XgbEstimator::Options o = FastOptions();
  o.retrain = XgbEstimator::Retrain::kIncremental;
  o.rounds = 5;
  o.update_rounds = 2;
  // Same times; the first model from scratch on rows 0..49, then 2 trees per update fitted to
  // the rows since the previous training (50..73, 74..97).
  using T = XgbEstimator::Training;
  EXPECT_EQ(HourlyJobsHistory(o, 100), (std::vector<T>{{180000, 0, 50, 5}, {266400, 50, 24, 7}, {352800, 74, 24, 9}}));
}

TEST(Xgb, RetrainSchemesFromTheSpec) {
  Trace t;
  auto options = [&](const std::string& spec) {
    auto e = MakeEstimator(spec, 1, &t);
    EXPECT_TRUE(e.ok()) << spec << ": " << (e.ok() ? "" : e.error().message);
    auto* x = e.ok() ? dynamic_cast<XgbEstimator*>(e->get()) : nullptr;
    return x ? x->options() : XgbEstimator::Options{};
  };
  const XgbEstimator::Options full = options("xgboost"), window = options("xgboost:retrain=window");
  EXPECT_EQ(full.retrain, XgbEstimator::Retrain::kFull);
  EXPECT_EQ(std::tie(full.max_rows, full.rounds, full.eta, full.max_bin), std::make_tuple(200000u, 100, 0.1, 256));
  EXPECT_EQ(window.retrain, XgbEstimator::Retrain::kWindow);
  EXPECT_EQ(std::tie(window.max_rows, window.rounds, window.eta, window.max_bin), std::make_tuple(10000u, 30, 0.15, 32));
  EXPECT_EQ(window.retrain_seconds, 7 * 86400);  // still weekly
  // Keys override the scheme's defaults, in any order, separated by ',' or ':' (a policy spec
  // passes several keys with ':').
  const XgbEstimator::Options w = options("xgboost:rounds=20:retrain=window,bins=64");
  EXPECT_EQ(std::tie(w.max_rows, w.rounds, w.max_bin), std::make_tuple(10000u, 20, 64));
  auto bad = MakeEstimator("xgboost:retrain=window:bins=1", 1, &t);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "estimator 'xgboost:retrain=window:bins=1': bins must be a number in [2, 65536], got '1'");
}

TEST(Xgb, ForestRejectsWhatIsNotAModel) {
  EXPECT_FALSE(XgbForest::FromUbjson("").ok());
  EXPECT_FALSE(XgbForest::FromUbjson("{not ubjson").ok());
}

}  // namespace
}  // namespace orrery
