// Offline evaluation of duration estimators on a trace (`orrery predict evaluate`).
//
// Protocol (docs/predict.md): jobs with a known duration (≥ 0) are taken in trace order
// (submit time, then id) and split chronologically: the first ⌊f·n⌋ are the training
// (warm-up) part, the rest the test part. Every estimator replays the whole trace as a
// simulation *without queueing*: job j is submitted at submit_j (Estimate() is called)
// and finishes at submit_j + duration_j (Observe() is called), finishes at a time t
// being delivered before submissions at t, in (finish time, job id) order. So at a
// job's submit the estimator knows exactly the jobs that would have finished by then
// had every job started at once; only test-part estimates are scored. Real schedules
// finish jobs later (queueing), so these numbers are slightly optimistic for online
// learners compared with a loaded cluster.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/trace.h"
#include "predict/estimator.h"

namespace orrery {

struct PredictionMetrics {
  size_t n = 0;
  double mae = 0;         // mean |p − a| (seconds)
  double mape = 0;        // mean |p − a| / a × 100 over a > 0 (percent)
  double mdape = 0;       // median of the same (robust to a few tiny durations)
  double r2 = 0;          // 1 − SS_res / SS_tot on raw seconds
  double r2_log = 0;      // same on ln(max(·, 1))
  double within_2x = 0;   // fraction with max(p,1)/max(a,1) in [0.5, 2]
  double spearman = 0;    // rank correlation (average ranks for ties)
  double kendall = 0;     // Kendall tau-b
  double mean_actual = 0;
  double mean_predicted = 0;
};

// Predictions are clamped to ≥ 1 s before scoring (schedulers clamp likewise).
PredictionMetrics ComputeMetrics(const std::vector<double>& actual, const std::vector<double>& predicted);
double SpearmanRho(const std::vector<double>& x, const std::vector<double>& y);
double KendallTauB(const std::vector<double>& x, const std::vector<double>& y);  // O(n log n)

struct EvalOptions {
  double train_fraction = 0.5;
  uint64_t seed = 1;
};

struct EvalResult {
  std::string spec;
  std::string name;
  PredictionMetrics metrics;
  size_t train_jobs = 0, test_jobs = 0;
  double seconds = 0;  // wall time of the replay
  std::map<std::string, double> details;  // estimator-specific (history branches, xgboost trainings)
  std::vector<double> predictions;        // per test job, in test order (if keep_predictions)
};

// Replays `trace` through one estimator (the protocol above); spec/name are left empty.
Result<EvalResult> EvaluateEstimator(const Trace& trace, DurationEstimator* estimator, const EvalOptions& options,
                                     bool keep_predictions = false);

// Evaluates each spec (MakeEstimator(spec, seed, &trace)) on `trace`.
Result<std::vector<EvalResult>> EvaluateEstimators(const Trace& trace, const std::vector<std::string>& specs,
                                                   const EvalOptions& options, bool keep_predictions = false);

}  // namespace orrery
