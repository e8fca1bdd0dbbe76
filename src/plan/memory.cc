// Peak allocated memory of one GPU (docs/design/planner.md, "Memory"). The peak is the largest
// of four moments of a step, each the sum of what is alive then:
//   forward_end    model states + bf16 weight copies + saved activations + loss forward buffers
//   loss_backward  model states + saved activations + loss backward buffers (last stage)
//   block_backward model states + almost all gradients + one block's activations and transients
//   optimizer      model states + all gradients + the logits still referenced by the step
// Activation bytes per token and block follow Korthikanti et al. (MLSys'23), written for the
// implementation that runs the plan (fp32 residual stream under autocast, or bf16 throughout).
#include <algorithm>

#include "plan/cost_internal.h"

namespace orrery::plan {

namespace {

struct ActivationBytes {  // per token of one block
  double replicated;      // LayerNorm/residual regions: split over TP only with sequence parallelism
  double sharded;         // attention and MLP interiors: split over TP
  double checkpoint;      // what a fully recomputed block keeps (its input)
  double head;            // final LayerNorm input + head input
  double backward_transient;  // gradients alive while one block runs its backward
};

ActivationBytes Activations(const StageShape& s, Precision prec) {
  const double h = s.h, f = s.ffn;
  const double lse = 4.0 * s.heads_local;  // flash-attention log-sum-exp, fp32 per head
  switch (prec) {
    case Precision::kAutocastFp32:
      // fp32 block input x and mid-block residual x1 (4h each, saved by the LayerNorms, +16 B of
      // LN statistics), bf16 copies of both LN outputs (2h each); q,k,v (6h), attention output
      // (2h), FC1 output and GELU output (2·ffn each).
      return {12 * h + 16, (8 * h + 4 * f) / s.tp + lse, 4 * h, 6 * h, 14 * h};
    case Precision::kMixedBf16:
      // Korthikanti's 10 + 24/t bytes·h per token (flash attention: no s² term).
      return {10 * h, (8 * h + 4 * f) / s.tp + lse, 2 * h, 4 * h, 10 * h};
  }
  return {};
}

// Memory held by a data-parallel framework besides the model states.
struct FrameworkBuffers {
  double persistent = 0;      // DDP buckets
  double gathered_fb = 0;     // unsharded parameters alive during forward/backward
  double unit_grad = 0;       // one unit's unsharded gradient before its reduce-scatter
};

FrameworkBuffers Buffers(const StageShape& s, const ParallelPlan& p, const StateBytes& sb) {
  FrameworkBuffers fb;
  const double n = s.StageParams();
  const bool sharded_p = p.shard.s_p > 1;
  const double gathered_bytes = p.fsdp_bf16_params ? 2.0 : sb.param;
  switch (p.framework) {
    case Framework::kDdp:
      fb.persistent = n * sb.grad;  // gradient_as_bucket_view=False: buckets are a second copy
      break;
    case Framework::kFsdp:
      if (sharded_p) {
        // limit_all_gathers: the unit computing and the one prefetched; the root unit (embedding,
        // final LN, head) stays gathered through forward and backward.
        fb.gathered_fb = 2.0 * s.block_params * gathered_bytes + (s.embed_params + s.head_params) * gathered_bytes;
        fb.unit_grad = s.block_params * sb.grad;
      } else if (p.shard.s_g > 1) {
        fb.gathered_fb = n * sb.param;  // SHARD_GRAD_OP keeps every unit gathered after forward
        fb.unit_grad = s.block_params * sb.grad;
      }
      break;
    case Framework::kPlain:
    case Framework::kDtensorTp:
    case Framework::kMegatron:
      if (sharded_p) {
        fb.gathered_fb = 2.0 * s.block_params * sb.param + (s.embed_params + s.head_params) * sb.param;
        fb.unit_grad = s.block_params * sb.grad;
      }
      break;
  }
  return fb;
}

// bf16 copies of fp32 weights made by autocast (kept for the backward's data gradients).
double WeightCopyBytes(const ParallelPlan& p, double matmul_params) {
  if (p.precision != Precision::kAutocastFp32 || p.fsdp_bf16_params) return 0;
  return 2.0 * matmul_params;
}

}  // namespace

std::string_view MemoryPhaseName(MemoryPhase p) {
  switch (p) {
    case MemoryPhase::kForwardEnd: return "forward_end";
    case MemoryPhase::kLossBackward: return "loss_backward";
    case MemoryPhase::kBlockBackward: return "block_backward";
    case MemoryPhase::kOptimizer: return "optimizer";
  }
  return "?";
}

MemoryBreakdown StageMemory(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu, int stage) {
  const StageShape s = MakeStage(w, p, stage);
  const StateBytes sb = BytesPerParam(p.precision);
  const ModelConstants& c = gpu.constants;
  const double n = s.StageParams();
  const FrameworkBuffers fb = Buffers(s, p, sb);
  const bool ckpt = p.recompute == Recompute::kFull;

  // FSDP holds its parameters sharded between steps whenever it shards the gradients
  // (SHARD_GRAD_OP gathers them in forward and frees them after backward).
  const int rest_shard = p.framework == Framework::kFsdp ? std::max(p.shard.s_p, p.shard.s_g) : p.shard.s_p;
  const double params_rest = n * sb.param / rest_shard;
  const double params_fb = (p.shard.s_p > 1 || p.shard.s_g > 1) && fb.gathered_fb > 0
                               ? params_rest + fb.gathered_fb : params_rest;
  const double grads = n * sb.grad / p.shard.s_g;
  const double optim = n * sb.optim / p.shard.s_os;
  const double states_fb = params_fb + optim + fb.persistent;

  const ActivationBytes ab = Activations(s, p.precision);
  const double per_block = ckpt ? ab.checkpoint * s.tokens_rep
                                : ab.replicated * s.tokens_rep + ab.sharded * s.tokens;
  const double head_act = s.last ? ab.head * s.tokens_rep : 0;
  const int in_flight = p.pp > 1 ? std::min(p.pp - stage, p.num_micro) : 1;
  const double acts = in_flight * (s.layers * per_block + head_act);
  const double full_block = ab.replicated * s.tokens_rep + ab.sharded * s.tokens;

  const double logits_tokens = s.last ? s.tokens_rep * s.vocab_local : 0;
  const double held_logits = 2.0 * logits_tokens;  // bf16 logits referenced until the step returns
  const bool accumulating = p.num_micro > 1 || p.pp > 1;
  const double grads_fb = accumulating ? grads : 0;

  const double copies_head = s.last ? WeightCopyBytes(p, s.vocab_local * s.h) : 0;
  // Autocast caches the bf16 copy of a leaf weight until the forward ends; FSDP's parameters are
  // views of its flat parameter (not leaves): their copies live only while autograd saves them,
  // i.e. not in a checkpointed block.
  const bool uncached = p.framework == Framework::kFsdp && ckpt;
  const double copies_all = uncached ? copies_head : WeightCopyBytes(p, s.StageMatmulParams());
  const double copies_block = WeightCopyBytes(p, s.block_matmul);

  struct Phase {
    MemoryPhase name;
    double grads, buffers, acts, logits, transient;
  };
  // Foreach AdamW (DTensor plan) allocates sqrt(v) for the whole parameter group it updates:
  // 4 B per parameter of the larger group (the sharded block weights, or the replicated rest).
  const double foreach_tmp = p.framework == Framework::kDtensorTp
                                 ? 4.0 * std::max(s.layers * s.block_matmul, n - s.layers * s.block_matmul) / p.shard.s_os
                                 : 0;
  // SHARD_GRAD_OP frees each unit's gathered parameters after its backward, faster (4 B per
  // parameter) than the sharded gradients grow (4/n B): its backward peaks at its start, with
  // the head's gradients only.
  const bool keeps_gathered = p.framework == Framework::kFsdp && p.shard.s_p == 1 && p.shard.s_g > 1;
  const double first_grads_missing = std::min(grads, (s.block_params + s.embed_params) * sb.grad / p.shard.s_g);
  const Phase phases[] = {
      {MemoryPhase::kForwardEnd, grads_fb, copies_all, acts, c.loss_fwd_bytes_per_logit * logits_tokens, 0},
      {MemoryPhase::kLossBackward, grads_fb, ckpt ? copies_head : copies_all, acts, c.loss_bwd_bytes_per_logit * logits_tokens, 0},
      {MemoryPhase::kBlockBackward, (keeps_gathered ? s.head_params * sb.grad / p.shard.s_g : grads - first_grads_missing) + fb.unit_grad, copies_block,
       (in_flight - 1) * (s.layers * per_block + head_act) + full_block + (ckpt ? per_block : 0), held_logits,
       ab.backward_transient * s.tokens_rep},
      {MemoryPhase::kOptimizer, grads, 0, 0, held_logits, foreach_tmp},
  };
  MemoryBreakdown best;
  for (const Phase& ph : phases) {
    const bool opt = ph.name == MemoryPhase::kOptimizer;
    const double states = opt ? params_rest + optim + fb.persistent : states_fb;
    const double total = states + ph.grads + ph.buffers + ph.acts + ph.logits + ph.transient + c.alloc_const_bytes;
    if (total > best.peak_bytes) {
      best.peak_bytes = total;
      best.peak_phase = ph.name;
      best.params_bytes = opt ? params_rest : params_fb;
      best.grads_bytes = ph.grads;
      best.optimizer_bytes = optim;
      best.buffers_bytes = fb.persistent + ph.buffers + (opt ? 0 : params_fb - params_rest);
      best.activations_bytes = ph.acts;
      best.logits_bytes = ph.logits;
      best.transient_bytes = ph.transient + c.alloc_const_bytes;
    }
  }
  return best;
}

}  // namespace orrery::plan
