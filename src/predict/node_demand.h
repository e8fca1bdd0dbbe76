// Node-demand forecasters for energy saving (CES): predict, per pool (a VC), the number
// of busy nodes in the next 10-minute bins from the pool's past series only.
//
//   last              persistence: every future bin = the last observed bin
//   seasonal-daily    y[t] = y[t − 1 day] (persistence until one day of history exists)
//   seasonal-weekly   y[t] = y[t − 7 days] (daily, then persistence, until a week exists)
//   xgboost           a direct multi-horizon gradient-boosted model (XGBoost C API) on lags,
//                     rolling statistics and calendar features of the target bin, trained on
//                     every pool's past (values as a fraction of the pool's nodes) and
//                     retrained periodically; seasonal-daily until the first training.
//
// No look-ahead: a forecast made after bin L−1 reads bins 0..L−1 only; training pairs are
// (origin, horizon) with the target bin ≤ L−1.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "base/time.h"

namespace orrery {

class NodeDemandForecaster {
 public:
  virtual ~NodeDemandForecaster() = default;
  virtual std::string_view name() const = 0;
  // history[p][i]: pool p's value in bin i (bin i starts at t0 + i·bin); every pool has the
  // same length L ≥ 1. capacity[p]: pool p's nodes. Writes (*out)[p][h] = forecast for bin
  // L + h, h = 0..horizon−1 (values clamped to [0, capacity]).
  virtual void Forecast(const std::vector<std::vector<float>>& history, const std::vector<float>& capacity, Time t0,
                        Duration bin, size_t horizon, std::vector<std::vector<float>>* out) = 0;
  // Trainings so far (0 for the naive forecasters).
  virtual uint64_t trainings() const { return 0; }
};

struct XgbDemandOptions {
  size_t retrain_bins = 144;        // retrain every day of 10-minute bins
  size_t window_bins = 14 * 144;    // training window: the last 14 days of origins
  size_t min_bins = 144;            // first training once a day of history exists
  int rounds = 60;
  int max_depth = 5;
  double eta = 0.15;
  uint64_t seed = 1;
};

// name: last | seasonal-daily | seasonal-weekly | xgboost.
Result<std::unique_ptr<NodeDemandForecaster>> MakeNodeDemandForecaster(std::string_view name, uint64_t seed,
                                                                       const XgbDemandOptions& xgb = {});

}  // namespace orrery
