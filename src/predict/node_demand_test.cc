#include "predict/node_demand.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <numeric>
#include <sstream>

namespace orrery {
namespace {

std::vector<std::vector<float>> Out() { return {}; }

TEST(NodeDemandTest, SeasonalNaiveReadsOneSeasonBack) {
  auto f = MakeNodeDemandForecaster("seasonal-daily", 1);
  ASSERT_TRUE(f.ok());
  std::vector<float> y(150);
  for (size_t i = 0; i < y.size(); ++i) y[i] = static_cast<float>(i % 144 == 7 ? 9 : i % 5);
  std::vector<std::vector<float>> out;
  (*f)->Forecast({y}, {100}, 0, 600, 3, &out);
  // Bins 150, 151, 152 ← bins 6, 7, 8 of the day before.
  EXPECT_EQ(out[0], (std::vector<float>{1, 9, 3}));
  // Less than a day of history: persistence of the last bin.
  std::vector<float> short_y = {1, 2, 5};
  (*f)->Forecast({short_y}, {100}, 0, 600, 2, &out);
  EXPECT_EQ(out[0], (std::vector<float>{5, 5}));
  // Clamped to the pool's nodes.
  (*f)->Forecast({short_y}, {4}, 0, 600, 1, &out);
  EXPECT_EQ(out[0], (std::vector<float>{4}));
}

TEST(NodeDemandTest, SeasonalWeeklyUsesAWeekWhenItHasOne) {
  auto f = MakeNodeDemandForecaster("seasonal-weekly", 1);
  ASSERT_TRUE(f.ok());
  std::vector<float> y(1008 + 2, 1);
  y[2] = 7;     // one week before bin 1010
  y[1010 - 144] = 3;  // one day before
  std::vector<std::vector<float>> out;
  (*f)->Forecast({y}, {100}, 0, 600, 1, &out);
  EXPECT_EQ(out[0][0], 7);
  y.resize(1000);  // less than a week: daily
  y[1000 - 144] = 4;
  (*f)->Forecast({y}, {100}, 0, 600, 1, &out);
  EXPECT_EQ(out[0][0], 4);
}

TEST(NodeDemandTest, UnknownNameIsAnError) {
  EXPECT_FALSE(MakeNodeDemandForecaster("lightgbm", 1).ok());
}

// A diurnal pattern with a weekday/weekend difference and a trend-free level: XGBoost on
// lags and calendar features must beat persistence at multi-hour horizons.
TEST(NodeDemandTest, XgboostLearnsADailyPatternWithoutLookAhead) {
  XgbDemandOptions o;
  o.rounds = 40;
  auto f = MakeNodeDemandForecaster("xgboost", 1, o);
  auto last = MakeNodeDemandForecaster("last", 1);
  ASSERT_TRUE(f.ok() && last.ok());
  auto truth = [](size_t i, float cap) {
    double day = std::sin(2 * M_PI * static_cast<double>(i % 144) / 144.0);
    return static_cast<float>(std::round(cap * (0.5 + 0.35 * day)));
  };
  const std::vector<float> cap = {20, 40};
  std::vector<std::vector<float>> hist(2);
  double err_x = 0, err_l = 0;
  size_t n = 0;
  std::vector<std::vector<float>> px, pl;
  for (size_t L = 1; L <= 144 * 6; ++L) {
    for (size_t p = 0; p < 2; ++p) hist[p].push_back(truth(L - 1, cap[p]));
    if (L < 144 * 4 || L % 12) continue;  // score days 5 and 6, every 2 h
    (*f)->Forecast(hist, cap, 0, 600, 18, &px);
    (*last)->Forecast(hist, cap, 0, 600, 18, &pl);
    for (size_t p = 0; p < 2; ++p)
      for (size_t h = 0; h < 18; ++h) {
        float y = truth(L + h, cap[p]);
        err_x += std::abs(px[p][h] - y);
        err_l += std::abs(pl[p][h] - y);
        ++n;
      }
  }
  EXPECT_GE((*f)->trainings(), 3u);  // first at one day, then daily
  EXPECT_LT(err_x / n, 0.5 * err_l / n) << "xgboost MAE " << err_x / n << " vs persistence " << err_l / n;
  EXPECT_LT(err_x / n, 1.0);
}

TEST(NodeDemandTest, XgboostFallsBackBeforeItsFirstTraining) {
  auto f = MakeNodeDemandForecaster("xgboost", 1);
  ASSERT_TRUE(f.ok());
  std::vector<std::vector<float>> out;
  (*f)->Forecast({{3, 4, 6}}, {10}, 0, 600, 2, &out);
  EXPECT_EQ((*f)->trainings(), 0u);
  EXPECT_EQ(out[0], (std::vector<float>{6, 6}));
}

}  // namespace
}  // namespace orrery

namespace orrery {
namespace {

// Real Helios data: Venus' 10-minute GPU starts and ends (shared/traces/helios-aggregates/
// cluster_throughput.csv, 2020-04-01 .. 09-28). Running GPUs = cumulative starts − ends
// (shifted so that the minimum is 0: jobs running at the trace start are unknown); in node
// units (/8) this stands in for the busy-node series Helios forecasts. Rolling origin every
// hour from day 15 on, horizons 1..18 (3 h), as the controller uses them.
TEST(NodeDemandSlowTest, HeliosVenusRunningGpus) {
  const std::string path = std::string(ORRERY_SHARED_DIR) + "/traces/helios-aggregates/cluster_throughput.csv";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "shared data not found: " << path;
  std::string line;
  std::getline(in, line);
  std::vector<double> run;
  double cur = 0;
  while (std::getline(in, line)) {
    std::vector<std::string> f;
    std::stringstream ss(line);
    std::string x;
    while (std::getline(ss, x, ',')) f.push_back(x);
    ASSERT_EQ(f.size(), 10u) << line;
    cur += std::stod(f[8]) - std::stod(f[9]);  // start_gpu_num − end_gpu_num
    run.push_back(cur);
  }
  ASSERT_EQ(run.size(), 26064u);
  double lo = *std::min_element(run.begin(), run.end());
  std::vector<float> y;
  for (double v : run) y.push_back(static_cast<float>((v - lo) / 8.0));
  const float cap = *std::max_element(y.begin(), y.end());
  const Time t0 = 1585699200;  // 2020-04-01 00:00 UTC (the trace's local time, no zone)
  struct Score {
    std::string name;
    double abs = 0;
    size_t n = 0;
  };
  std::vector<Score> scores;
  for (const char* name : {"last", "seasonal-daily", "seasonal-weekly", "xgboost"}) {
    auto f = MakeNodeDemandForecaster(name, 1);
    ASSERT_TRUE(f.ok());
    Score s{name};
    std::vector<std::vector<float>> hist(1), out;
    for (size_t L = 1; L + 18 <= y.size(); ++L) {
      hist[0].push_back(y[L - 1]);
      if (L < 15 * 144 || L % 6) continue;
      (*f)->Forecast(hist, {cap}, t0, 600, 18, &out);
      for (size_t h = 0; h < 18; ++h) {
        s.abs += std::abs(out[0][h] - y[L + h]);
        ++s.n;
      }
    }
    scores.push_back(s);
    std::printf("%-16s MAE %.3f nodes over %zu points (mean demand %.1f nodes)\n", name, s.abs / s.n, s.n,
                std::accumulate(y.begin(), y.end(), 0.0) / y.size());
  }
  auto mae = [&](size_t i) { return scores[i].abs / scores[i].n; };
  // Measured (docs/validation/energy.md §H): on this smooth series (long jobs) persistence is the
  // best forecast at 10 min–3 h; xgboost is close behind (2.77 vs 3.19 nodes) and far better
  // than both seasonal forecasts (8.1 and 10.1 nodes), which replay yesterday's level.
  EXPECT_LT(mae(0), mae(3));
  EXPECT_LT(mae(3), 1.3 * mae(0));
  EXPECT_LT(mae(3), 0.5 * mae(1));
  EXPECT_LT(mae(1), mae(2));
}

}  // namespace
}  // namespace orrery
