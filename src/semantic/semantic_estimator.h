// Duration from semantics: the scheduling advisor's estimator.
//
//  1. Steps x predicted step time, when the job's launch config gives the steps, the model
//     size, the tokens per step and the GPUs: the step time comes from a StepTimeModel, by
//     default FLOPs-based, 6·P·(global batch · sequence) / (GPUs · peak · MFU); a cost model
//     (the planner's, src/plan/) plugs in through the same interface. The product is
//     calibrated online by the median actual/predicted ratio of the k most similar finished
//     jobs (same user first; at least 3 of them), which absorbs both a cluster's systematic
//     efficiency and how often and how early such jobs end before their planned steps.
//     With fewer, the estimate is the expectation over an early end at a uniform point,
//     (1 − p)·T + p·T/2, p the chance of an early failure (3.).
//  2. Otherwise retrieval over history: the median duration of the k most similar past jobs
//     by schema (framework, model size, GPUs), user and name.
//  3. The chance of an early failure: the share of those neighbours that failed or were
//     cancelled, with a prior of 1/2 worth one job.
// Jobs of a trace carry no launch configs: the builder registered as "semantic" generates
// each job's payload (payload.h) from the trace; the estimator itself only reads the text.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "model/trace.h"
#include "predict/estimator.h"
#include "semantic/inspect.h"
#include "semantic/payload.h"

namespace orrery::semantic {

// Seconds per optimizer step of a job described by `schema` on `gpus` GPUs; nullopt when
// the schema lacks what the model needs.
class StepTimeModel {
 public:
  virtual ~StepTimeModel() = default;
  virtual std::optional<double> StepSeconds(const LaunchSchema& schema, double gpus) const = 0;
};

class FlopsStepTimeModel final : public StepTimeModel {
 public:
  FlopsStepTimeModel(double peak_flops, double mfu) : peak_(peak_flops), mfu_(mfu) {}
  std::optional<double> StepSeconds(const LaunchSchema& schema, double gpus) const override;

 private:
  double peak_, mfu_;
};

// The launch file of a job, or nullopt when it has none.
using PayloadSource = std::function<std::optional<InputFile>(const Job& job)>;
// The launch schema of a job already read (a live driver's, completed by the LLM fallback),
// or nullopt when it has none.
using SchemaSource = std::function<std::optional<LaunchSchema>(const Job& job)>;

class SemanticEstimator final : public DurationEstimator {
 public:
  struct Options {
    uint32_t k = 10;           // neighbours for calibration, retrieval and failure chance
    Duration fallback = 3600;  // nothing known at all
    double overhead_s = 60;    // added to steps x step time (start-up, loading, final save)
  };
  // Job user and name ids are the trace's (interned); `payloads` gives each job's launch file.
  SemanticEstimator(PayloadSource payloads, std::unique_ptr<StepTimeModel> step_model, Options o);

  std::string_view name() const override { return "semantic"; }
  Duration Estimate(const Job& job, Time now) override;
  void Observe(const Job& job, Duration actual) override;
  bool Explain(const Job& job, Time now, EstimateExplanation* out) override;

  // Where the jobs' launch files come from (a live driver: each job's batch script). Jobs
  // estimated before keep their estimate.
  void SetPayloads(PayloadSource payloads) { schemas_ = ReadEach(std::move(payloads)); }
  // ... or their schemas, read already (orrery serve: completed by the LLM fallback).
  void SetSchemas(SchemaSource schemas) { schemas_ = std::move(schemas); }
  // Drops what was read of a pending job (its schema changed); its next Estimate reads again.
  void Refresh(const Job& job) { features_.erase(job.id.v); }

  // Chance that the job ends early (fails or is cancelled), from its neighbours.
  double EarlyFailureChance(const Job& job);
  // How many estimates used steps x step time (the rest used retrieval or the fallback).
  size_t semantic_estimates() const { return semantic_estimates_; }

 private:
  struct Features {
    uint32_t user = UINT32_MAX, name = UINT32_MAX, gpus = 0;
    std::string framework;
    double params_b = 0;
    std::optional<double> semantic_s;  // steps x step time, uncalibrated
  };
  struct Past {
    Features f;
    double actual = 0;
    bool ended_early = false;
  };
  const Features& FeaturesOf(const Job& job);
  std::vector<const Past*> Neighbours(const Features& f) const;
  static double Similarity(const Features& a, const Features& b);

  // Each job's file read by the rule-based readers (InspectText).
  static SchemaSource ReadEach(PayloadSource payloads);

  SchemaSource schemas_;
  std::unique_ptr<StepTimeModel> step_model_;
  Options o_;
  std::unordered_map<uint32_t, Features> features_;  // by job id, until observed
  std::deque<Past> history_;                          // stable addresses
  std::unordered_map<uint32_t, std::vector<size_t>> by_user_, by_name_;
  std::vector<size_t> recent_;  // the last jobs of anyone
  size_t semantic_estimates_ = 0;
};

// Registers "semantic[:peak=125e12,mfu=0.35,k=10,fallback=3600]" with MakeEstimator. With a
// trace, payloads are generated from it with the estimator's seed (payload.h); without one the
// estimator reads no launch file until SetPayloads gives it a source (orrery serve).
void RegisterSemanticEstimator();

}  // namespace orrery::semantic
