// The phases of one RL step besides the rollout (docs/design/rl.md, "Step"): reward and the
// old-policy and reference log-probs, the actor update, the weight sync; the rollout's step
// timer from the inference cost model; the acceptance length of the speculative tail.
#pragma once

#include <cstdint>
#include <vector>

#include "base/result.h"
#include "plan/infer.h"
#include "rl/length.h"
#include "rl/rollout.h"

namespace orrery::rl {

// Seconds of the phases after the rollout. `tokens` are the trained sequences' prompt and
// response tokens, `sq_tokens` the sum of their squared lengths (attention).
class PhaseModel {
 public:
  virtual ~PhaseModel() = default;
  virtual double Train(double tokens, double sq_tokens, uint32_t gpus) const = 0;
  // Rule-based reward (CPU, no GPU time) and two forwards: old-policy and reference log-probs.
  virtual double Reference(double tokens, double sq_tokens, uint32_t gpus) const = 0;
  virtual double Sync() const = 0;
  // GPU-seconds to train the drafter on the hidden states of `tokens` generated tokens.
  virtual double DrafterTrainGpuS(double tokens) const = 0;
};

// Documented constants of the cost model (docs/design/rl.md lists each source).
struct CostParams {
  double mfu = 0.38;                  // training MFU on H100 at long sequences (Llama 3, Table 4)
  double net_bytes_per_s = 50e9;      // 400 Gb/s NIC per GPU (DGX H100)
  double rollout_mem_frac = 0.4;      // rollout engine's share of GPU memory (TLT's 7B script)
  uint32_t engine_max_running = 1024; // verl's rollout max_num_seqs
  uint32_t tlt_max_running = 512;     // TLT raises max_running_requests to 512
  uint32_t draft_steps = 8;           // TLT's SD configs 8_4_*: 8 draft steps, top-k 4
  uint32_t draft_topk = 4;
};

// FLOPs: training 6·N·tokens + 6·L·H·Σs² (causal attention, forward and backward), the two
// log-prob forwards a third of that each; at `mfu` of the GPU's peak. Sync: each GPU receives
// its tensor-parallel shard of the bf16 weights (2·N/tp bytes) over the network.
class CostPhaseModel final : public PhaseModel {
 public:
  CostPhaseModel(const plan::DecoderShape& m, const plan::InferGpu& g, uint32_t tp, const CostParams& p)
      : m_(m), g_(g), tp_(tp), p_(p) {}
  double Train(double tokens, double sq_tokens, uint32_t gpus) const override;
  double Reference(double tokens, double sq_tokens, uint32_t gpus) const override;
  double Sync() const override;
  double DrafterTrainGpuS(double tokens) const override;

 private:
  double Flops(double tokens, double sq_tokens) const;  // one forward
  plan::DecoderShape m_;
  plan::InferGpu g_;
  uint32_t tp_;
  CostParams p_;
};

// Decode, prefill and verify steps of the target timed by plan::InferStepTime; a speculative
// step adds `draft_steps` drafter forwards of `draft_topk` tokens per sequence.
class CostTimer final : public StepTimer {
 public:
  CostTimer(const plan::DecoderShape& m, const plan::InferGpu& g, uint32_t tp, const CostParams& p)
      : m_(m), drafter_(plan::DrafterOf(m)), g_(g), tp_(tp), p_(p) {}
  double Decode(uint32_t batch, double context) const override;
  double Prefill(uint32_t batch, double prompt) const override;
  double Speculative(uint32_t batch, double context, uint32_t verify_tokens) const override;

 private:
  plan::DecoderShape m_, drafter_;
  plan::InferGpu g_;
  uint32_t tp_;
  CostParams p_;
};

// Mean accepted tokens per speculative step (accepted drafts plus the bonus token) for a
// draft tree of `verify_tokens` tokens: 1 + (tau_ref − 1)·ln(1 + k)/ln(1 + k_ref), at most
// draft_steps + 1; a drafter `staleness` policy versions behind keeps (1 − decay)^(staleness−1)
// of the gain (staleness 1: trained on the previous step's rollouts, TLT's steady state).
struct AcceptModel {
  double tau_ref = 4.0;   // EAGLE-2's acceptance length with 60-token trees (low end, sampling)
  uint32_t k_ref = 60;
  double decay = 0.1;     // gain lost per policy version the drafter is behind (assumption)
};
double AcceptLength(const AcceptModel& a, uint32_t verify_tokens, uint32_t draft_steps, uint32_t staleness);

}  // namespace orrery::rl
