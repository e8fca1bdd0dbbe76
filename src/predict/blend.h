// Helios' CombinedEstimator: estimate = α·history + (1−α)·model when the model's
// estimate is > 0, else the history estimate (α = 0.1 in Helios). Both parts observe
// every finished job. The artifact blends GPU-time priorities; both terms carry the same
// gpu_num factor, so blending durations gives the same ordering (up to rounding).
#pragma once

#include <cmath>
#include <memory>

#include "predict/estimator.h"

namespace orrery {

class BlendEstimator final : public DurationEstimator {
 public:
  BlendEstimator(std::unique_ptr<DurationEstimator> history, std::unique_ptr<DurationEstimator> model, double alpha)
      : history_(std::move(history)), model_(std::move(model)), alpha_(alpha) {}
  std::string_view name() const override { return "blend"; }
  Duration Estimate(const Job& job, Time now) override {
    const Duration h = history_->Estimate(job, now);
    const Duration m = model_->Estimate(job, now);
    if (m > 0) return static_cast<Duration>(std::llround(alpha_ * static_cast<double>(h) + (1 - alpha_) * static_cast<double>(m)));
    return h;
  }
  void Observe(const Job& job, Duration actual) override {
    history_->Observe(job, actual);
    model_->Observe(job, actual);
  }
  bool is_oracle() const override { return history_->is_oracle() || model_->is_oracle(); }
  double alpha() const { return alpha_; }
  DurationEstimator* history() { return history_.get(); }
  DurationEstimator* model() { return model_.get(); }

 private:
  std::unique_ptr<DurationEstimator> history_, model_;
  double alpha_;
};

}  // namespace orrery
