#include "predict/user_stats.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace orrery {

double UserStatsEstimator::Mean(const std::deque<Duration>& w) {
  if (w.empty()) return 0;
  long double s = 0;
  for (Duration d : w) s += d;
  return static_cast<double>(s / static_cast<long double>(w.size()));
}

double UserStatsEstimator::Median(const std::deque<Duration>& w) {
  if (w.empty()) return 0;
  std::vector<Duration> v(w.begin(), w.end());
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  if (n % 2) return static_cast<double>(v[n / 2]);
  return 0.5 * (static_cast<double>(v[n / 2 - 1]) + static_cast<double>(v[n / 2]));
}

void UserStatsEstimator::Push(Window& w, Duration d) const {
  w.ewma = w.count == 0 ? static_cast<double>(d) : o_.ewma_alpha * static_cast<double>(d) + (1 - o_.ewma_alpha) * w.ewma;
  ++w.count;
  w.last.push_back(d);
  while (w.last.size() > std::max<uint32_t>(1, o_.k)) w.last.pop_front();
}

double UserStatsEstimator::Value(const Window& w) const {
  switch (o_.stat) {
    case Stat::kMean: return Mean(w.last);
    case Stat::kMedian: return Median(w.last);
    case Stat::kEwma: return w.ewma;
  }
  return 0;
}

void UserStatsEstimator::Observe(const Job& job, Duration actual) {
  if (job.user.valid()) {
    const uint64_t u = static_cast<uint64_t>(job.user.v) << 32;
    if (o_.by_name && job.name.valid()) Push(user_name_[u | job.name.v], actual);
    Push(user_gpus_[u | job.gpus], actual);
    Push(user_[job.user.v], actual);
  }
  Push(gpus_[job.gpus], actual);
  Push(global_, actual);
}

Duration UserStatsEstimator::Estimate(const Job& job, Time) {
  auto answer = [&](Level l, const Window& w) {
    last_level_ = l;
    return static_cast<Duration>(std::llround(Value(w)));
  };
  if (job.user.valid()) {
    const uint64_t u = static_cast<uint64_t>(job.user.v) << 32;
    if (o_.by_name && job.name.valid()) {
      auto it = user_name_.find(u | job.name.v);
      if (it != user_name_.end()) return answer(Level::kUserName, it->second);
    }
    if (auto it = user_gpus_.find(u | job.gpus); it != user_gpus_.end()) return answer(Level::kUserGpus, it->second);
    if (auto it = user_.find(job.user.v); it != user_.end()) return answer(Level::kUser, it->second);
  }
  if (auto it = gpus_.find(job.gpus); it != gpus_.end()) return answer(Level::kGpus, it->second);
  if (global_.count > 0) return answer(Level::kGlobal, global_);
  last_level_ = Level::kFallback;
  return o_.fallback;
}

}  // namespace orrery
