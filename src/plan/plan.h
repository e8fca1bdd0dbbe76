// A parallel training plan: how one step of a model is spread over GPUs (data, tensor,
// pipeline and sequence parallelism, sharding of model states, micro-batching, recompute), and
// which implementation runs it (it decides buffers, overlap and host overhead).
#pragma once

#include <string>
#include <string_view>

#include "base/result.h"

namespace orrery::plan {

// The software that executes the plan; each has its own buffers, overlap and host cost.
enum class Framework {
  kPlain,      // one process, plain module (`single`)
  kDdp,        // torch DistributedDataParallel: bucketed fp32 all-reduce overlapped with backward
  kFsdp,       // torch FSDP1, one unit per block + root: all-gather / reduce-scatter per unit
  kDtensorTp,  // torch.distributed.tensor.parallel (DTensor): host-heavy tensor parallelism
  kMegatron,   // Megatron-style local shards and explicit f/g all-reduces (also TP+SP, PP 1F1B)
};

// Bytes of model state per parameter.
enum class Precision {
  kAutocastFp32,  // fp32 params + grads, fp32 Adam moments, bf16 autocast (the H200 workload): 4+4+8
  kMixedBf16,     // bf16 params + grads, fp32 master + Adam moments (Megatron, DeepSpeed, Lins): 2+2+12
};

enum class Recompute { kNone, kSelective, kFull };

enum class SeqParallel {
  kNone,
  kUlysses,  // DeepSpeed-Ulysses: all-to-all of q/k/v and output, heads split over the group
  kRing,     // ring attention: K/V blocks passed around the group, overlapped with attention
  kTwoD,     // LongVILA's 2D MM-SP: Ulysses inside a node × ring across nodes
};

// Lins (AMSP) sharding factors of parameters, gradients and optimizer states inside the
// data-parallel group: 1 = replicated, dp = fully sharded. ZeRO-1/2/3 are (1,1,dp), (1,dp,dp),
// (dp,dp,dp); MiCS is (g,g,g) for a subgroup g.
struct Sharding {
  int s_p = 1;
  int s_g = 1;
  int s_os = 1;
};

struct ParallelPlan {
  std::string name;  // alias or "custom"
  Framework framework = Framework::kPlain;
  Precision precision = Precision::kAutocastFp32;
  int dp = 1, tp = 1, pp = 1, sp = 1;
  SeqParallel sp_kind = SeqParallel::kNone;
  bool tp_seq_parallel = false;  // Megatron sequence parallelism (LN/dropout regions split over TP)
  bool shard_embeddings = false;  // vocabulary-parallel embedding and head under TP (Megatron proper)
  Sharding shard;
  bool fsdp_bf16_params = false;  // FSDP MixedPrecision(param/reduce = bf16)
  int num_micro = 1;             // micro-batches per step (gradient accumulation / pipeline)
  Recompute recompute = Recompute::kNone;
  double ddp_bucket_mb = 25.0;

  int Gpus() const { return dp * tp * pp * sp; }
};

// Parses a strategy: one of the gpu-h200 README names (single, ddp, fsdp_no_shard, fsdp_grad_op,
// fsdp_full, fsdp_full_mp, tp, tp_mega; data- or tensor-parallel over all `gpus`) or a general plan
// "dp=2,tp=4,pp=2,sp=1,zero=1[,sp_kind=ulysses|ring|2d][,seqpar=1][,micro=8][,lins=1:1:8]
// [,precision=mixed|autocast][,framework=megatron|ddp|fsdp]". The product of the degrees must equal
// `gpus`.
Result<ParallelPlan> ParseStrategy(std::string_view text, int gpus);

// "none" | "selective" | "full".
Result<Recompute> ParseRecompute(std::string_view text);

std::string_view FrameworkName(Framework f);
std::string_view RecomputeName(Recompute r);
std::string_view SeqParallelName(SeqParallel s);
// A plan as the general syntax ("dp=2,tp=1,pp=1,sp=1,zero=3,...").
std::string DescribePlan(const ParallelPlan& p);

}  // namespace orrery::plan
