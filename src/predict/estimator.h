// Duration estimators: predict a job's run time at submit time from what is known
// then, and learn online as jobs finish. Used by QSSF, EASY backfill (instead of
// walltimes), and later by Lucid, SchedMate and the live daemon.
// Contract: Estimate() must be deterministic given the same sequence of calls.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/result.h"
#include "base/time.h"
#include "model/job.h"

namespace orrery {

// Why an estimator predicted what it did (`orrery explain`): an additive decomposition
// estimate = f(base + Σ terms) where `scale` names f's domain (e.g. "log-seconds": the
// estimate is exp(base + Σ terms)). Terms are per-feature contributions and, for
// models with pairwise terms, "a x b" interaction contributions.
struct EstimateExplanation {
  std::string scale;
  double base = 0;
  std::vector<std::pair<std::string, double>> terms;
  std::string note;  // e.g. "untrained: user mean"
};

class DurationEstimator {
 public:
  virtual ~DurationEstimator() = default;
  virtual std::string_view name() const = 0;
  // Predicted run time in seconds (may be ≤ 0 for noisy estimators; callers clamp if needed).
  virtual Duration Estimate(const Job& job, Time now) = 0;
  // Called when a job finishes with its actual run time.
  virtual void Observe(const Job& job, Duration actual) {}
  // True when Estimate() reads the job's true duration (oracle); such policies are labelled so.
  virtual bool is_oracle() const { return false; }
  // Explains the estimate of a job already passed to Estimate() (and not yet Observe()d).
  // False when the estimator cannot decompose its predictions.
  virtual bool Explain(const Job& job, Time now, EstimateExplanation* out) { return false; }
};

// The true recorded duration.
class OracleEstimator final : public DurationEstimator {
 public:
  std::string_view name() const override { return "oracle"; }
  Duration Estimate(const Job& job, Time) override { return job.duration; }
  bool is_oracle() const override { return true; }
};

// The user's walltime request; jobs without one get `fallback` seconds.
class WalltimeEstimator final : public DurationEstimator {
 public:
  explicit WalltimeEstimator(Duration fallback) : fallback_(fallback) {}
  std::string_view name() const override { return "walltime"; }
  Duration Estimate(const Job& job, Time) override { return job.walltime > 0 ? job.walltime : fallback_; }

 private:
  Duration fallback_;
};

// Helios' Philly noisy oracle: true duration times (1 ± e) with e drawn from the
// Helios estimator's error CDF: 10 % of jobs |e| < 0.1, 40 % in [0.1, 0.5), 20 % in
// [0.5, 1), 20 % in [1, 10), 10 % in [10, 100), random sign. Deterministic per
// (seed, job id), independent of call order.
class NoisyOracleEstimator final : public DurationEstimator {
 public:
  explicit NoisyOracleEstimator(uint64_t seed) : seed_(seed) {}
  std::string_view name() const override { return "noisy-oracle"; }
  Duration Estimate(const Job& job, Time) override;
  bool is_oracle() const override { return true; }  // reads the true duration

 private:
  uint64_t seed_;
};

// Estimates looked up by job index (e.g. the reference run's qssf_estimates.csv).
class TableEstimator final : public DurationEstimator {
 public:
  explicit TableEstimator(std::vector<Duration> by_job) : by_job_(std::move(by_job)) {}
  std::string_view name() const override { return "table"; }
  Duration Estimate(const Job& job, Time) override {
    return job.id.v < by_job_.size() ? by_job_[job.id.v] : job.duration;
  }

 private:
  std::vector<Duration> by_job_;
};

// Builds an estimator by name: "oracle", "walltime", "noisy-oracle", "table:<csv>" (job_id,estimate).
// Same as MakeEstimator(spec, seed, nullptr): the estimators that need the trace fail.
Result<std::unique_ptr<DurationEstimator>> MakeEstimator(const std::string& spec, uint64_t seed);

struct Trace;
// Also builds the learning estimators (docs/predict.md), "NAME[:key=value,...]" (keys separated
// by ',' or ':', so that a policy spec, whose own parameters are ','-separated, can pass several:
// "lucid:estimator=xgboost:retrain=window:rounds=50"):
//   "history[:fallback=3600]"                       Helios' history estimator (needs trace)
//   "user-stats[:stat=median|mean|ewma,k=10,ewma=0.3,name=0,fallback=3600]"
//   "xgboost[:rounds=100,depth=6,eta=0.1,bins=256,threads=1,min-train=200,retrain-jobs=0,
//             retrain-days=7,max-rows=200000,walltime=1,retrain=full|window|incremental,
//             update-rounds=10]"  gradient-boosted model (trace optional; walltime=0 leaves the
//             requested walltime out of the features; retrain=window changes the defaults to
//             max-rows=10000, rounds=30, eta=0.15, bins=32, predict/xgb.h)
//   "blend[:alpha=0.1,<xgboost keys>]"              α·history + (1−α)·xgboost (needs trace)
//   "ga2m[:<xgboost keys>]"  interpretable GA2M-like model: XGBoost depth-2 trees over 13
//             named features with interaction constraints (main effects + 4 pairs),
//             retrained weekly; exposes per-feature and pairwise contributions (Explain)
// `trace` (may be null) must outlive the estimator; it supplies names, users, the epoch.
Result<std::unique_ptr<DurationEstimator>> MakeEstimator(const std::string& spec, uint64_t seed, const Trace* trace);

// Estimators that live above predict/ (the scheduling advisor's "semantic" estimator in
// semantic/, which needs the launch-config reader) register a builder under their name at
// program start (cli/main.cpp); MakeEstimator("NAME[:options]", ...) then calls it with the
// text after "NAME:" ("" when none). predict/ itself never includes them.
using EstimatorBuilder =
    std::function<Result<std::unique_ptr<DurationEstimator>>(const std::string& options, uint64_t seed, const Trace* trace)>;
void RegisterEstimatorBuilder(const std::string& name, EstimatorBuilder builder);

}  // namespace orrery
