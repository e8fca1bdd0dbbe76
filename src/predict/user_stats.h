// Rolling per-user statistics of finished jobs' durations, with fallbacks.
//
// Keys, most specific first (the first key with at least one finished job answers):
//   (user, name)       only with Options::by_name
//   (user, GPU count)
//   user
//   GPU count          (all users)
//   global
//   fallback           (no finished job at all)
// Statistic over each key's window of the last K finished jobs: mean or median (the
// lower-middle + upper-middle average for even windows), or an EWMA of all of the key's
// jobs (ewma ← a·d + (1−a)·ewma, first value = d). Jobs without a user skip the user
// keys. Observe() is O(K) (median uses a copy of the window when asked: O(K log K)).
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>

#include "predict/estimator.h"

namespace orrery {

class UserStatsEstimator final : public DurationEstimator {
 public:
  enum class Stat : uint8_t { kMean, kMedian, kEwma };
  struct Options {
    Stat stat = Stat::kMedian;
    uint32_t k = 10;           // window for mean / median
    double ewma_alpha = 0.3;   // weight of the newest job for kEwma
    bool by_name = false;      // try (user, name) first
    Duration fallback = 3600;
  };
  enum class Level : uint8_t { kUserName, kUserGpus, kUser, kGpus, kGlobal, kFallback };

  explicit UserStatsEstimator(Options o) : o_(o) {}
  std::string_view name() const override { return "user-stats"; }
  Duration Estimate(const Job& job, Time now) override;
  void Observe(const Job& job, Duration actual) override;
  Level last_level() const { return last_level_; }

  // Window statistic helpers (exposed for tests and the xgboost features).
  static double Mean(const std::deque<Duration>& w);
  static double Median(const std::deque<Duration>& w);

 private:
  struct Window {
    std::deque<Duration> last;
    double ewma = 0;
    uint64_t count = 0;
  };
  void Push(Window& w, Duration d) const;
  double Value(const Window& w) const;

  Options o_;
  std::unordered_map<uint64_t, Window> user_name_, user_gpus_;
  std::unordered_map<uint32_t, Window> user_, gpus_;
  Window global_;
  Level last_level_ = Level::kFallback;
};

}  // namespace orrery
