// Per-GPU sizes of one pipeline stage under a plan (internal to the cost model): local tokens,
// heads, parameters, and the bytes per parameter of each model-state component. One home for
// "what does one GPU hold and compute".
#pragma once

#include <algorithm>
#include <cstdint>

#include "plan/estimate.h"

namespace orrery::plan {

struct StateBytes {  // bytes per parameter
  double param, grad, optim;
};

inline StateBytes BytesPerParam(Precision p) {
  switch (p) {
    case Precision::kAutocastFp32: return {4, 4, 8};   // fp32 params, fp32 grads, fp32 Adam m and v
    case Precision::kMixedBf16: return {2, 2, 12};     // bf16 params/grads, fp32 master + m + v
  }
  return {4, 4, 8};
}

struct StageShape {
  const GptModel* m = nullptr;
  double h = 0, ffn = 0, V = 0;
  double seq = 0;          // sequence length the attention sees
  double b = 0;            // sequences per micro-step per replica
  double tokens = 0;       // tokens this GPU holds in its replicated (non-sequence-split) regions
  double tokens_rep = 0;   // tokens of the LayerNorm/residual regions (split by TP under Megatron SP)
  double heads_local = 0;  // attention heads computed by this GPU
  int tp = 1;
  int layers = 0;          // blocks on this stage
  bool first = true, last = true;
  double vocab_local = 0;  // head columns on this GPU
  // Parameters held by this GPU before data-parallel sharding.
  double block_params = 0;   // one block (matmul weights / tp + LayerNorms)
  double block_matmul = 0;   // one block's matmul weights / tp
  double embed_params = 0;   // embedding (first stage)
  double head_params = 0;    // head + final LayerNorm (last stage)
  double StageParams() const { return layers * block_params + embed_params + head_params; }
  double StageMatmulParams() const { return layers * block_matmul + (last ? head_params - 2 * h : 0); }
};

inline StageShape MakeStage(const Workload& w, const ParallelPlan& p, int stage) {
  StageShape s;
  const GptModel& m = w.model;
  s.m = &m;
  s.h = m.hidden, s.ffn = m.ffn, s.V = m.vocab;
  s.b = w.micro_batch;
  s.seq = static_cast<double>(w.seq);
  s.tp = p.tp;
  const double sp = p.sp;
  s.tokens = s.b * s.seq / sp;
  s.tokens_rep = p.tp_seq_parallel ? s.tokens / p.tp : s.tokens;
  s.heads_local = static_cast<double>(m.heads) / p.tp;
  s.layers = m.layers / p.pp;
  s.first = stage == 0;
  s.last = stage == p.pp - 1;
  const bool vocab_split = p.shard_embeddings && p.tp > 1;
  s.vocab_local = vocab_split ? s.V / p.tp : s.V;
  s.block_matmul = m.BlockMatmulParams() / p.tp;
  s.block_params = s.block_matmul + 4.0 * m.hidden;
  s.embed_params = s.first ? s.vocab_local * s.h : 0;
  s.head_params = s.last ? s.vocab_local * s.h + 2.0 * s.h : 0;
  return s;
}

}  // namespace orrery::plan
