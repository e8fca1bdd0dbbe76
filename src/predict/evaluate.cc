#include "predict/evaluate.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <numeric>
#include <queue>

#include "predict/blend.h"
#include "predict/estimator.h"
#include "predict/history.h"
#include "predict/xgb.h"

namespace orrery {

namespace {

std::vector<double> AverageRanks(const std::vector<double>& v) {
  const size_t n = v.size();
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return v[a] < v[b]; });
  std::vector<double> r(n);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j + 1 < n && v[idx[j + 1]] == v[idx[i]]) ++j;
    const double avg = 0.5 * (static_cast<double>(i) + static_cast<double>(j)) + 1.0;
    for (size_t k = i; k <= j; ++k) r[idx[k]] = avg;
    i = j + 1;
  }
  return r;
}

double Pearson(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2) return 0;
  double mx = 0, my = 0;
  for (size_t i = 0; i < n; ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(n), my /= static_cast<double>(n);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < n; ++i) {
    sxy += (x[i] - mx) * (y[i] - my);
    sxx += (x[i] - mx) * (x[i] - mx);
    syy += (y[i] - my) * (y[i] - my);
  }
  if (sxx <= 0 || syy <= 0) return 0;
  return sxy / std::sqrt(sxx * syy);
}

// Number of inversions (pairs i < j with v[i] > v[j]) by merge sort; sorts v.
uint64_t CountInversions(std::vector<double>& v) {
  std::vector<double> tmp(v.size());
  uint64_t inv = 0;
  for (size_t width = 1; width < v.size(); width *= 2) {
    for (size_t lo = 0; lo < v.size(); lo += 2 * width) {
      size_t mid = std::min(lo + width, v.size()), hi = std::min(lo + 2 * width, v.size());
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        if (v[j] < v[i]) {
          inv += mid - i;
          tmp[k++] = v[j++];
        } else {
          tmp[k++] = v[i++];
        }
      }
      while (i < mid) tmp[k++] = v[i++];
      while (j < hi) tmp[k++] = v[j++];
    }
    std::swap(v, tmp);
  }
  return inv;
}

// Σ t(t−1)/2 over runs of equal values in a sorted sequence.
template <class Eq>
uint64_t TiePairs(size_t n, Eq eq) {
  uint64_t ties = 0, run = 1;
  for (size_t i = 1; i <= n; ++i) {
    if (i < n && eq(i - 1, i)) {
      ++run;
    } else {
      ties += run * (run - 1) / 2;
      run = 1;
    }
  }
  return ties;
}

}  // namespace

double SpearmanRho(const std::vector<double>& x, const std::vector<double>& y) {
  return Pearson(AverageRanks(x), AverageRanks(y));
}

double KendallTauB(const std::vector<double>& x, const std::vector<double>& y) {
  const size_t n = x.size();
  if (n < 2) return 0;
  std::vector<size_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](size_t a, size_t b) { return x[a] != x[b] ? x[a] < x[b] : y[a] < y[b]; });
  const uint64_t n0 = static_cast<uint64_t>(n) * (n - 1) / 2;
  const uint64_t n1 = TiePairs(n, [&](size_t i, size_t j) { return x[idx[i]] == x[idx[j]]; });
  const uint64_t n3 = TiePairs(n, [&](size_t i, size_t j) { return x[idx[i]] == x[idx[j]] && y[idx[i]] == y[idx[j]]; });
  std::vector<double> ys(n);
  for (size_t i = 0; i < n; ++i) ys[i] = y[idx[i]];
  const uint64_t swaps = CountInversions(ys);  // ys now sorted
  const uint64_t n2 = TiePairs(n, [&](size_t i, size_t j) { return ys[i] == ys[j]; });
  const double denom = std::sqrt(static_cast<double>(n0 - n1) * static_cast<double>(n0 - n2));
  if (denom <= 0) return 0;
  const double s = static_cast<double>(n0) - static_cast<double>(n1) - static_cast<double>(n2) +
                   static_cast<double>(n3) - 2.0 * static_cast<double>(swaps);
  return s / denom;
}

PredictionMetrics ComputeMetrics(const std::vector<double>& actual, const std::vector<double>& predicted_in) {
  PredictionMetrics m;
  const size_t n = actual.size();
  m.n = n;
  if (n == 0) return m;
  std::vector<double> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = std::max(predicted_in[i], 1.0);
  double sum_abs = 0, sum_ape = 0, mean_a = 0, mean_la = 0, mean_p = 0;
  size_t n_ape = 0, within = 0;
  std::vector<double> apes;
  std::vector<double> la(n), lp(n);
  for (size_t i = 0; i < n; ++i) {
    const double a = actual[i];
    sum_abs += std::fabs(p[i] - a);
    if (a > 0) {
      sum_ape += std::fabs(p[i] - a) / a, ++n_ape;
      apes.push_back(100.0 * std::fabs(p[i] - a) / a);
    }
    const double ratio = p[i] / std::max(a, 1.0);
    if (ratio >= 0.5 && ratio <= 2.0) ++within;
    la[i] = std::log(std::max(a, 1.0));
    lp[i] = std::log(p[i]);
    mean_a += a, mean_la += la[i], mean_p += p[i];
  }
  mean_a /= static_cast<double>(n), mean_la /= static_cast<double>(n), mean_p /= static_cast<double>(n);
  double ss_res = 0, ss_tot = 0, ss_res_l = 0, ss_tot_l = 0;
  for (size_t i = 0; i < n; ++i) {
    ss_res += (actual[i] - p[i]) * (actual[i] - p[i]);
    ss_tot += (actual[i] - mean_a) * (actual[i] - mean_a);
    ss_res_l += (la[i] - lp[i]) * (la[i] - lp[i]);
    ss_tot_l += (la[i] - mean_la) * (la[i] - mean_la);
  }
  m.mae = sum_abs / static_cast<double>(n);
  m.mape = n_ape ? 100.0 * sum_ape / static_cast<double>(n_ape) : 0;
  if (!apes.empty()) {
    std::sort(apes.begin(), apes.end());
    const size_t h = apes.size() / 2;
    m.mdape = apes.size() % 2 ? apes[h] : 0.5 * (apes[h - 1] + apes[h]);
  }
  m.r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 0;
  m.r2_log = ss_tot_l > 0 ? 1 - ss_res_l / ss_tot_l : 0;
  m.within_2x = static_cast<double>(within) / static_cast<double>(n);
  m.spearman = SpearmanRho(actual, p);
  m.kendall = KendallTauB(actual, p);
  m.mean_actual = mean_a;
  m.mean_predicted = mean_p;
  return m;
}

Result<EvalResult> EvaluateEstimator(const Trace& trace, DurationEstimator* est, const EvalOptions& options,
                                     bool keep_predictions) {
  if (!(options.train_fraction >= 0 && options.train_fraction < 1)) {
    return MakeError("train fraction must be in [0, 1)");
  }
  std::vector<uint32_t> order;  // jobs with a known duration, in (submit, id) order
  order.reserve(trace.jobs.size());
  for (const Job& j : trace.jobs) {
    if (j.duration >= 0) order.push_back(j.id.v);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return trace.jobs[a].submit < trace.jobs[b].submit;
  });
  const size_t split = static_cast<size_t>(std::floor(options.train_fraction * static_cast<double>(order.size())));
  if (split >= order.size()) {
    return MakeError("no test jobs (trace has " + std::to_string(order.size()) + " jobs with a duration)");
  }
  std::vector<double> actual;
  actual.reserve(order.size() - split);
  for (size_t k = split; k < order.size(); ++k) actual.push_back(static_cast<double>(trace.jobs[order[k]].duration));

  EvalResult r;
  r.name = std::string(est->name());
  r.train_jobs = split;
  r.test_jobs = order.size() - split;
  auto t0 = std::chrono::steady_clock::now();
  using Fin = std::pair<Time, uint32_t>;  // (finish time, job id)
  std::priority_queue<Fin, std::vector<Fin>, std::greater<Fin>> finishing;
  std::vector<double> pred;
  pred.reserve(r.test_jobs);
  HeliosHistoryEstimator* hist = dynamic_cast<HeliosHistoryEstimator*>(est);
  XgbEstimator* xgb = dynamic_cast<XgbEstimator*>(est);
  if (auto* blend = dynamic_cast<BlendEstimator*>(est)) {
    hist = dynamic_cast<HeliosHistoryEstimator*>(blend->history());
    xgb = dynamic_cast<XgbEstimator*>(blend->model());
  }
  std::array<uint64_t, HeliosHistoryEstimator::kNumBranches> branches_at_split{};
  for (size_t k = 0; k < order.size(); ++k) {
    const Job& job = trace.jobs[order[k]];
    while (!finishing.empty() && finishing.top().first <= job.submit) {
      const Job& done = trace.jobs[finishing.top().second];
      finishing.pop();
      est->Observe(done, done.duration);
    }
    if (k == split && hist) branches_at_split = hist->branch_counts();
    const Duration e = est->Estimate(job, job.submit);
    if (k >= split) pred.push_back(static_cast<double>(e));
    finishing.emplace(job.submit + job.duration, job.id.v);
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.metrics = ComputeMetrics(actual, pred);
  if (hist) {
    const auto& bc = hist->branch_counts();
    for (int b = 0; b < HeliosHistoryEstimator::kNumBranches; ++b) {
      r.details[std::string("history.") +
                std::string(HeliosHistoryEstimator::BranchName(static_cast<HeliosHistoryEstimator::Branch>(b)))] =
          static_cast<double>(bc[b] - branches_at_split[b]) / static_cast<double>(r.test_jobs);
    }
    r.details["history.distinct_names"] = static_cast<double>(hist->distinct_names());
    r.details["history.ratio_calls"] = static_cast<double>(hist->ratio_calls());
  }
  if (xgb) {
    r.details["xgboost.trainings"] = xgb->trainings();
    r.details["xgboost.train_seconds"] = xgb->train_seconds();
  }
  if (keep_predictions) r.predictions = std::move(pred);
  return r;
}

Result<std::vector<EvalResult>> EvaluateEstimators(const Trace& trace, const std::vector<std::string>& specs,
                                                   const EvalOptions& options, bool keep_predictions) {
  std::vector<EvalResult> results;
  for (const std::string& spec : specs) {
    ORR_ASSIGN_OR_RETURN(auto est, MakeEstimator(spec, options.seed, &trace));
    ORR_ASSIGN_OR_RETURN(EvalResult r, EvaluateEstimator(trace, est.get(), options, keep_predictions));
    r.spec = spec;
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace orrery
