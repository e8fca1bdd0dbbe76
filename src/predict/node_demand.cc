#include "predict/node_demand.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace orrery {

namespace {

constexpr float kNoValue = std::numeric_limits<float>::quiet_NaN();

float Clamp(float v, float cap) { return std::clamp(v, 0.0f, std::max(cap, 0.0f)); }

// y[t] = y[t − period] when that bin is observed; else the fallback's forecast.
void SeasonalNaive(const std::vector<float>& y, size_t period, size_t horizon, float cap, std::vector<float>* out) {
  const size_t L = y.size();
  out->assign(horizon, 0);
  for (size_t h = 0; h < horizon; ++h) {
    size_t target = L + h;
    float v;
    if (period > 0 && target >= period && target - period < L)
      v = y[target - period];
    else
      v = L ? y[L - 1] : 0;
    (*out)[h] = Clamp(v, cap);
  }
}

class NaiveForecaster final : public NodeDemandForecaster {
 public:
  // periods in seconds
  NaiveForecaster(std::string name, std::vector<Duration> periods) : name_(std::move(name)), periods_(std::move(periods)) {}
  std::string_view name() const override { return name_; }
  void Forecast(const std::vector<std::vector<float>>& history, const std::vector<float>& capacity, Time, Duration bin,
                size_t horizon, std::vector<std::vector<float>>* out) override {
    out->resize(history.size());
    for (size_t p = 0; p < history.size(); ++p) {
      // Longest period with at least one full season of history, else persistence.
      size_t period = 0;
      for (Duration secs : periods_) {
        size_t q = static_cast<size_t>(secs / std::max<Duration>(1, bin));
        if (history[p].size() >= q) period = std::max(period, q);
      }
      SeasonalNaive(history[p], period, horizon, capacity[p], &(*out)[p]);
    }
  }

 private:
  std::string name_;
  std::vector<Duration> periods_;
};

// Direct multi-horizon model. One row per (pool, origin, horizon): the features known at
// the origin (the last observed bin) and the calendar of the target bin; the label is the
// target bin's change from the last observed bin, as a fraction of the pool's nodes (trees
// cannot extrapolate a level they never saw; a change they can).
class XgbDemandForecaster final : public NodeDemandForecaster {
 public:
  explicit XgbDemandForecaster(const XgbDemandOptions& o) : o_(o) {}
  ~XgbDemandForecaster() override {
    if (booster_) XGBoosterFree(booster_);
  }
  std::string_view name() const override { return "xgboost"; }
  uint64_t trainings() const override { return trainings_; }

  void Forecast(const std::vector<std::vector<float>>& history, const std::vector<float>& capacity, Time t0,
                Duration bin, size_t horizon, std::vector<std::vector<float>>* out) override {
    const size_t L = history.empty() ? 0 : history[0].size();
    bins_per_day_ = std::max<size_t>(1, static_cast<size_t>(86400 / std::max<Duration>(1, bin)));
    if (L >= o_.min_bins && (!booster_ || L - trained_at_ >= o_.retrain_bins)) Train(history, capacity, t0, bin, horizon);
    out->resize(history.size());
    if (!booster_) {
      for (size_t p = 0; p < history.size(); ++p)
        SeasonalNaive(history[p], history[p].size() >= bins_per_day_ ? bins_per_day_ : 0, horizon, capacity[p],
                      &(*out)[p]);
      return;
    }
    rows_.clear();
    for (size_t p = 0; p < history.size(); ++p)
      for (size_t h = 1; h <= horizon; ++h) AppendRow(history[p], capacity[p], L, h, t0, bin);
    const size_t n = history.size() * horizon;
    DMatrixHandle dm = nullptr;
    const float* pred = nullptr;
    bst_ulong len = 0;
    bool ok = XGDMatrixCreateFromMat(rows_.data(), n, kFeatures, kNoValue, &dm) == 0 &&
              XGBoosterPredict(booster_, dm, 0, 0, 0, &len, &pred) == 0 && len == n;
    for (size_t p = 0; p < history.size(); ++p) {
      (*out)[p].resize(horizon);
      for (size_t h = 0; h < horizon; ++h)
        (*out)[p][h] = ok ? Clamp(history[p][L - 1] + pred[p * horizon + h] * std::max(capacity[p], 1.0f), capacity[p])
                          : history[p][L - 1];
    }
    if (dm) XGDMatrixFree(dm);
  }

 private:
  static constexpr size_t kFeatures = 12;

  // Features for origin o (bins 0..o−1 known) and horizon h ≥ 1 (target bin o − 1 + h).
  void AppendRow(const std::vector<float>& y, float cap, size_t o, size_t h, Time t0, Duration bin) {
    const float c = std::max(cap, 1.0f);
    const size_t target = o - 1 + h;
    auto at = [&](size_t i) { return y[i] / c; };
    auto mean = [&](size_t k) {
      k = std::min(k, o);
      double s = 0;
      for (size_t i = o - k; i < o; ++i) s += at(i);
      return static_cast<float>(s / static_cast<double>(k));
    };
    auto lag = [&](size_t back) -> float { return target >= back && target - back < o ? at(target - back) : kNoValue; };
    double sd = 0;
    {
      size_t k = std::min<size_t>(6, o);
      float m = mean(k);
      for (size_t i = o - k; i < o; ++i) sd += (at(i) - m) * (at(i) - m);
      sd = std::sqrt(sd / static_cast<double>(k));
    }
    float mx = 0;
    for (size_t i = o - std::min<size_t>(18, o); i < o; ++i) mx = std::max(mx, at(i));
    Time tt = t0 + static_cast<Time>(target) * bin;
    int64_t day = tt >= 0 ? tt / 86400 : (tt - 86399) / 86400;
    int64_t sod = tt - day * 86400;
    const size_t D = bins_per_day_;
    float soft = kNoValue;
    if (target >= D + 1 && target - D + 1 < o) soft = 0.5f * at(target - D) + 0.25f * (at(target - D - 1) + at(target - D + 1));
    // Everything but the level itself is relative to the last observed value.
    const float last = at(o - 1);
    auto rel = [&](float v) { return std::isnan(v) ? v : v - last; };
    const float row[kFeatures] = {
        static_cast<float>(h),
        cap,
        last,
        mean(3) - last,
        mean(6) - last,
        static_cast<float>(sd),
        mx - last,
        rel(lag(D)),
        rel(soft),
        rel(lag(7 * D)),
        static_cast<float>(sod) / 3600.0f,
        static_cast<float>(((day % 7) + 10) % 7),  // 0 = Monday (1970-01-01 was a Thursday)
    };
    rows_.insert(rows_.end(), row, row + kFeatures);
  }

  void Train(const std::vector<std::vector<float>>& history, const std::vector<float>& capacity, Time t0, Duration bin,
             size_t horizon) {
    const size_t L = history[0].size();
    trained_at_ = L;
    rows_.clear();
    labels_.clear();
    // Horizons 1..horizon on a sparse grid (the model interpolates between them).
    std::vector<size_t> hs;
    for (size_t h = 1; h <= horizon; h = h < 6 ? h + 1 : h + 3) hs.push_back(h);
    const size_t first = L > o_.window_bins ? L - o_.window_bins : 1;
    for (size_t p = 0; p < history.size(); ++p) {
      const float c = std::max(capacity[p], 1.0f);
      for (size_t o = first; o < L; o += 2)
        for (size_t h : hs) {
          if (o - 1 + h >= L) break;  // target not observed yet: no look-ahead
          AppendRow(history[p], capacity[p], o, h, t0, bin);
          labels_.push_back((history[p][o - 1 + h] - history[p][o - 1]) / c);  // change from the origin
        }
    }
    if (labels_.empty()) return;
    DMatrixHandle dm = nullptr;
    BoosterHandle b = nullptr;
    bool ok = XGDMatrixCreateFromMat(rows_.data(), labels_.size(), kFeatures, kNoValue, &dm) == 0 &&
              XGDMatrixSetFloatInfo(dm, "label", labels_.data(), labels_.size()) == 0 &&
              XGBoosterCreate(&dm, 1, &b) == 0;
    const std::pair<const char*, std::string> params[] = {
        {"verbosity", "0"},         {"nthread", "1"},
        {"seed", std::to_string(o_.seed)},
        {"objective", "reg:squarederror"},
        {"tree_method", "hist"},    {"max_depth", std::to_string(o_.max_depth)},
        {"eta", std::to_string(o_.eta)},
        {"subsample", "1"},         {"colsample_bytree", "1"},
    };
    for (const auto& [k, v] : params) ok = ok && XGBoosterSetParam(b, k, v.c_str()) == 0;
    for (int it = 0; ok && it < o_.rounds; ++it) ok = XGBoosterUpdateOneIter(b, it, dm) == 0;
    if (dm) XGDMatrixFree(dm);
    if (!ok) {  // keep the previous model (or the seasonal fallback)
      if (b) XGBoosterFree(b);
      return;
    }
    if (booster_) XGBoosterFree(booster_);
    booster_ = b;
    ++trainings_;
  }

  XgbDemandOptions o_;
  BoosterHandle booster_ = nullptr;
  size_t trained_at_ = 0, bins_per_day_ = 144;
  uint64_t trainings_ = 0;
  std::vector<float> rows_, labels_;
};

}  // namespace

Result<std::unique_ptr<NodeDemandForecaster>> MakeNodeDemandForecaster(std::string_view name, uint64_t seed,
                                                                       const XgbDemandOptions& xgb) {
  if (name == "last") return std::unique_ptr<NodeDemandForecaster>(new NaiveForecaster("last", {}));
  if (name == "seasonal-daily")
    return std::unique_ptr<NodeDemandForecaster>(new NaiveForecaster("seasonal-daily", {86400}));
  if (name == "seasonal-weekly")
    return std::unique_ptr<NodeDemandForecaster>(new NaiveForecaster("seasonal-weekly", {86400, 7 * 86400}));
  if (name == "xgboost") {
    XgbDemandOptions o = xgb;
    o.seed = seed;
    return std::unique_ptr<NodeDemandForecaster>(new XgbDemandForecaster(o));
  }
  return MakeError("unknown forecaster '" + std::string(name) +
                   "': expected one of last, seasonal-daily, seasonal-weekly, xgboost");
}

}  // namespace orrery
