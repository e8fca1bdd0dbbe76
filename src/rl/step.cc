#include "rl/step.h"

#include <algorithm>
#include <cmath>

namespace orrery::rl {

double CostPhaseModel::Flops(double tokens, double sq_tokens) const {
  return 2.0 * m_.Params() * tokens + 2.0 * m_.layers * static_cast<double>(m_.hidden) * sq_tokens;
}

double CostPhaseModel::Train(double tokens, double sq_tokens, uint32_t gpus) const {
  return 3.0 * Flops(tokens, sq_tokens) / (gpus * g_.peak_flops * p_.mfu);
}

double CostPhaseModel::Reference(double tokens, double sq_tokens, uint32_t gpus) const {
  return 2.0 * Flops(tokens, sq_tokens) / (gpus * g_.peak_flops * p_.mfu);
}

double CostPhaseModel::Sync() const { return 2.0 * m_.Params() / tp_ / p_.net_bytes_per_s; }

double CostPhaseModel::DrafterTrainGpuS(double tokens) const {
  const plan::DecoderShape d = plan::DrafterOf(m_);
  return 6.0 * d.Params() * tokens / (g_.peak_flops * p_.mfu);
}

double CostTimer::Decode(uint32_t batch, double context) const {
  return plan::InferStepTime(m_, {plan::InferPhase::kDecode, batch, context, 0, tp_}, g_).step_time_s;
}

double CostTimer::Prefill(uint32_t batch, double prompt) const {
  return plan::InferStepTime(m_, {plan::InferPhase::kPrefill, batch, prompt, 0, tp_}, g_).step_time_s;
}

double CostTimer::Speculative(uint32_t batch, double context, uint32_t verify_tokens) const {
  const double verify =
      plan::InferStepTime(m_, {plan::InferPhase::kVerify, batch, context, verify_tokens, tp_}, g_).step_time_s;
  const double draft =
      plan::InferStepTime(drafter_, {plan::InferPhase::kVerify, batch, context, p_.draft_topk, tp_}, g_).step_time_s;
  return verify + p_.draft_steps * draft;
}

double AcceptLength(const AcceptModel& a, uint32_t verify_tokens, uint32_t draft_steps, uint32_t staleness) {
  const double gain = (a.tau_ref - 1) * std::log1p(static_cast<double>(verify_tokens)) / std::log1p(a.k_ref) *
                      std::pow(1 - a.decay, std::max<uint32_t>(staleness, 1) - 1);
  return std::min(1 + gain, static_cast<double>(draft_steps) + 1);
}

}  // namespace orrery::rl
