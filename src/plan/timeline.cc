// Step time of one pipeline stage (docs/design/planner.md, "Time"): the step is written out as
// the ordered list of operations eager PyTorch issues (per block: LayerNorms, casts, GEMMs,
// attention, activation, residual adds; their backward; recompute; loss; optimizer), each with
// a device time from the GPU profile and a host dispatch cost. A host clock issues them in order;
// the compute stream runs each when issued and when the previous one ended; collectives run on
// a communication stream (DDP buckets, FSDP all-gathers/reduce-scatters) or, when the next
// kernel needs their result (tensor parallelism), on the compute stream. The step ends when the
// host and both streams are done: this gives max(host, device) for host-bound steps and
// compute + exposed communication for device-bound ones, with the transitions in between.
#include <algorithm>
#include <cmath>
#include <vector>

#include "plan/cost_internal.h"

namespace orrery::plan {

namespace {

enum class Stream { kCompute, kComm };
enum class Cat { kGemm, kAttention, kElementwise, kOptimizer, kComm };

struct Op {
  Cat cat;
  Stream stream;
  double gpu_s;
  double host_s;
  int wait_for = -1;  // index of an op that must have finished (an all-gather before its unit)
  bool recompute = false;
};

class Timeline {
 public:
  Timeline(const GpuProfile& g, const ParallelPlan& p) : gpu_(g) {
    host_op_ = g.constants.host_op_s * (p.framework == Framework::kDtensorTp ? g.constants.dtensor_op_factor : 1.0);
  }

  // Device-side op of `bytes` moved by a memory-bound kernel.
  int Mem(double bytes, double host_ops = 1) {
    const double t = bytes / (gpu_.membw_Bps * gpu_.constants.mem_efficiency);
    return Push({Cat::kElementwise, Stream::kCompute, std::max(t, gpu_.constants.kernel_min_s), host_ops * host_op_});
  }
  int Gemm(GemmOp op, double m, double k, double n) {
    return Push({Cat::kGemm, Stream::kCompute, GemmTime(gpu_, op, m, k, n), host_op_});
  }
  int Attn(double t) { return Push({Cat::kAttention, Stream::kCompute, t, host_op_}); }
  int Host(double s) { return Push({Cat::kElementwise, Stream::kCompute, 0, s}); }
  // A collective the next compute op depends on (tensor/sequence parallelism).
  int Blocking(double t) { return Push({Cat::kComm, Stream::kCompute, t, host_op_}); }
  // A collective on its own stream; `wait_for` makes it wait for a compute op (its inputs).
  int Async(double t, int after = -1) {
    Op o{Cat::kComm, Stream::kComm, t, host_op_};
    o.wait_for = after;
    return Push(o);
  }
  // A pass over one flat contiguous buffer (DDP buckets, FSDP flat gradients): the kernel the
  // device-copy micro-benchmark times, at its bandwidth.
  int Flat(double bytes) {
    return Push({Cat::kElementwise, Stream::kCompute, std::max(bytes / gpu_.membw_Bps, gpu_.constants.kernel_min_s), host_op_});
  }
  // The same on the communication stream (FSDP's gradient division and casts run on its
  // post-backward stream, next to the reduce-scatter).
  int SideMem(double bytes, int after = -1) {
    const double t = bytes / gpu_.membw_Bps;
    Op o{Cat::kElementwise, Stream::kComm, std::max(t, gpu_.constants.kernel_min_s), host_op_};
    o.wait_for = after;
    return Push(o);
  }
  void WaitFor(int op_index) { pending_wait_ = op_index; }
  void Optimizer(double bytes, double host_ops) {
    const double t = bytes / (gpu_.membw_Bps * gpu_.constants.mem_efficiency);
    Push({Cat::kOptimizer, Stream::kCompute, std::max(t, gpu_.constants.kernel_min_s), host_ops * host_op_});
  }
  void SetRecompute(bool on) { recompute_ = on; }
  int Last() const { return static_cast<int>(ops_.size()) - 1; }

  TimeBreakdown Run() const;

 private:
  int Push(Op o) {
    if (pending_wait_ >= 0 && o.stream == Stream::kCompute) {
      o.wait_for = std::max(o.wait_for, pending_wait_);
      pending_wait_ = -1;
    }
    o.recompute = recompute_;
    ops_.push_back(o);
    return Last();
  }

  const GpuProfile& gpu_;
  double host_op_ = 0;
  int pending_wait_ = -1;
  bool recompute_ = false;
  std::vector<Op> ops_;
};

TimeBreakdown Timeline::Run() const {
  TimeBreakdown t;
  double host = 0, compute_free = 0, comm_free = 0, overlapped_comm = 0;
  std::vector<double> end(ops_.size(), 0);
  for (size_t i = 0; i < ops_.size(); ++i) {
    const Op& o = ops_[i];
    host += o.host_s;
    double& free = o.stream == Stream::kCompute ? compute_free : comm_free;
    double start = std::max(host, free);
    if (o.wait_for >= 0) start = std::max(start, end[o.wait_for]);
    end[i] = start + o.gpu_s;
    free = end[i];
    if (o.stream == Stream::kComm) overlapped_comm += o.gpu_s;
    switch (o.cat) {
      case Cat::kGemm: t.gemm_s += o.gpu_s; break;
      case Cat::kAttention: t.attention_s += o.gpu_s; break;
      case Cat::kElementwise: t.elementwise_s += o.gpu_s; break;
      case Cat::kOptimizer: t.optimizer_s += o.gpu_s; break;
      case Cat::kComm: t.comm_s += o.gpu_s; break;
    }
    if (o.recompute) t.recompute_s += o.gpu_s;
    if (o.stream == Stream::kCompute) t.gpu_busy_s += o.gpu_s;
  }
  // Work on the communication stream (NCCL kernels, FSDP's side-stream divisions) takes SMs and
  // memory bandwidth from the compute it overlaps: the compute stream loses a fitted share of
  // that time (docs/plan-multigpu.md).
  const double slowdown = gpu_.constants.comm_compute_slowdown * overlapped_comm;
  t.host_s = host;
  t.step_s = std::max({host, compute_free, comm_free}) + slowdown;
  double compute_only = 0;
  for (const Op& o : ops_) {
    if (o.stream == Stream::kCompute && o.cat != Cat::kComm) compute_only += o.gpu_s;
  }
  t.comm_exposed_s = std::max(0.0, t.step_s - std::max(host, compute_only));
  t.host_bound = host >= compute_free;
  return t;
}

// ------------------------------------------------------------------ the step, op by op

class StepBuilder {
 public:
  StepBuilder(const Workload& w, const ParallelPlan& p, const GpuProfile& g, int stage, const GroupLayout& layout)
      : p_(p), g_(g), s_(MakeStage(w, p, stage)), layout_(layout), tl_(g, p) {}

  TimeBreakdown Build() {
    for (int micro = 0; micro < micro_steps_; ++micro) {
      last_micro_ = sync_grads_ && micro == micro_steps_ - 1;
      first_micro_ = micro == 0;
      Forward();
      Backward();
    }
    if (with_optimizer_) Optimizer();
    return tl_.Run();
  }
  void SetMicroSteps(int n) { micro_steps_ = n; }
  void WithOptimizer(bool on) { with_optimizer_ = on; sync_grads_ = on; }

 private:
  // ---- sizes
  double T() const { return s_.tokens; }
  double Tr() const { return s_.tokens_rep; }
  double h() const { return s_.h; }
  bool Fp32Residual() const { return p_.precision == Precision::kAutocastFp32; }
  double ResidualBytes() const { return Fp32Residual() ? 4.0 : 2.0; }

  // ---- collectives
  double Coll(Collective op, DType dt, double bytes, int world, int nodes) const {
    return CollectiveTime(g_, op, dt, bytes, world, nodes);
  }
  // Tensor parallelism: the reduction after a row-parallel GEMM (all-reduce, or reduce-scatter
  // under sequence parallelism) and, under sequence parallelism only, the all-gather before a
  // column-parallel GEMM. In backward the roles swap (the backward of an all-gather is a
  // reduce-scatter and vice versa; an all-reduce's backward is free).
  void TpReduce() {
    if (p_.tp <= 1) return;
    const Collective op = p_.tp_seq_parallel ? Collective::kReduceScatter : Collective::kAllReduce;
    tl_.Blocking(Coll(op, DType::kBf16, T() * h() * 2.0, p_.tp, layout_.tp_nodes));
  }
  void TpGather() {
    if (p_.tp <= 1 || !p_.tp_seq_parallel) return;
    tl_.Blocking(Coll(Collective::kAllGather, DType::kBf16, T() * h() * 2.0, p_.tp, layout_.tp_nodes));
  }
  void UlyssesAllToAll(double bytes_per_rank) {
    if (p_.sp <= 1 || p_.sp_kind == SeqParallel::kRing) return;
    const int world = p_.sp_kind == SeqParallel::kTwoD ? std::min(p_.sp, g_.gpus_per_node) : p_.sp;
    tl_.Blocking(Coll(Collective::kAllToAll, DType::kBf16, bytes_per_rank * world, world, 1));
  }

  // ---- attention under sequence parallelism
  double AttentionTime(bool backward) const {
    const double hd = s_.m->HeadDim();
    const double b = s_.b;
    switch (p_.sp_kind) {
      case SeqParallel::kNone:
        return SdpaTime(g_, b, s_.heads_local, s_.seq, hd, backward);
      case SeqParallel::kUlysses:
        return SdpaTime(g_, b, s_.heads_local / p_.sp, s_.seq, hd, backward);
      case SeqParallel::kRing:
      case SeqParallel::kTwoD: {
        const int ring = p_.sp_kind == SeqParallel::kRing ? p_.sp : std::max(1, p_.sp / g_.gpus_per_node);
        const int uly = p_.sp / ring;
        const double compute = SdpaTime(g_, b, s_.heads_local / uly, s_.seq, hd, backward) / ring;
        // K and V blocks (bf16) travel ring-1 hops, overlapped with the block computations.
        const double kv = 2.0 * 2.0 * T() * h() / p_.tp * (backward ? 2.0 : 1.0);
        const double hop = Coll(Collective::kSendRecv, DType::kBf16, kv, 2, layout_.sp_nodes > 1 ? 2 : 1);
        return std::max(compute, (ring - 1) * hop);
      }
    }
    return 0;
  }

  // ---- forward of one block
  void BlockForward(bool recompute) {
    tl_.SetRecompute(recompute);
    const double rb = ResidualBytes();
    const double ffn_l = s_.ffn / p_.tp;
    if (recompute) tl_.Host(g_.constants.host_ckpt_block_s);
    if (Fp32Residual() && (first_micro_ || recompute) && !p_.fsdp_bf16_params) {
      tl_.Mem(6.0 * s_.block_matmul, 4);  // fp32 -> bf16 weight casts (cached for the step)
    }
    tl_.Mem(2 * rb * h() * Tr());                       // LN1
    if (Fp32Residual()) tl_.Mem((rb + 2) * h() * Tr()); // cast to bf16
    TpGather();
    tl_.Gemm(GemmOp::kFwd, T(), h(), 3 * h() / p_.tp);  // QKV
    UlyssesAllToAll(3 * 2.0 * T() * h() / p_.tp);
    tl_.Attn(AttentionTime(false));
    UlyssesAllToAll(2.0 * T() * h() / p_.tp);
    tl_.Host(4 * CurrentHostOp());                      // views, transposes
    tl_.Gemm(GemmOp::kFwd, T(), h() / p_.tp, h());      // Proj
    TpReduce();
    tl_.Mem((2 * rb + 2) * h() * Tr());                 // residual add
    tl_.Mem(2 * rb * h() * Tr());                       // LN2
    if (Fp32Residual()) tl_.Mem((rb + 2) * h() * Tr());
    TpGather();
    tl_.Gemm(GemmOp::kFwd, T(), h(), ffn_l);            // FC1
    tl_.Mem(4.0 * ffn_l * T());                         // GELU (bf16 in, bf16 out)
    // Non-reentrant checkpointing stops the recompute once every saved tensor is back: FC2's
    // output and the residual add are never needed again.
    if (!recompute) {
      tl_.Gemm(GemmOp::kFwd, T(), ffn_l, h());          // FC2
      TpReduce();
      tl_.Mem((2 * rb + 2) * h() * Tr());               // residual add
    }
    tl_.SetRecompute(false);
  }

  // ---- backward of one block
  void BlockBackward() {
    const double rb = ResidualBytes();
    const double ffn_l = s_.ffn / p_.tp;
    tl_.Mem((rb + 2) * h() * Tr());                     // grad cast for the FC2 branch
    TpGather();
    tl_.Gemm(GemmOp::kDgrad, T(), h(), ffn_l);          // FC2 dgrad
    tl_.Gemm(GemmOp::kWgrad, h(), T(), ffn_l);          // FC2 wgrad
    tl_.Mem(6.0 * ffn_l * T());                         // GELU backward
    tl_.Gemm(GemmOp::kDgrad, T(), ffn_l, h());          // FC1 dgrad
    tl_.Gemm(GemmOp::kWgrad, ffn_l, T(), h());          // FC1 wgrad
    TpReduce();
    tl_.Mem((3 * rb + 2) * h() * Tr() + 2 * rb * h() * Tr());  // LN2 backward + residual accumulate
    tl_.Mem((rb + 2) * h() * Tr());
    TpGather();
    tl_.Gemm(GemmOp::kDgrad, T(), h(), h() / p_.tp);    // Proj dgrad
    tl_.Gemm(GemmOp::kWgrad, h(), T(), h() / p_.tp);    // Proj wgrad
    UlyssesAllToAll(2.0 * T() * h() / p_.tp);
    tl_.Attn(AttentionTime(true));
    UlyssesAllToAll(3 * 2.0 * T() * h() / p_.tp);
    tl_.Gemm(GemmOp::kDgrad, T(), 3 * h() / p_.tp, h());  // QKV dgrad
    tl_.Gemm(GemmOp::kWgrad, 3 * h() / p_.tp, T(), h());  // QKV wgrad
    TpReduce();
    tl_.Mem((3 * rb + 2) * h() * Tr() + 2 * rb * h() * Tr());  // LN1 backward + residual accumulate
    // weight gradients: bf16 -> fp32 cast and accumulation into .grad (read-add-write later)
    const double grad_bytes = Fp32Residual() ? (first_micro_ ? 6.0 : 12.0) : (first_micro_ ? 0.0 : 6.0);
    if (grad_bytes > 0) tl_.Mem(grad_bytes * s_.block_matmul, 6);
    tl_.Host(10 * CurrentHostOp());                     // autograd engine, AccumulateGrad, hooks
  }

  double CurrentHostOp() const {
    return g_.constants.host_op_s * (p_.framework == Framework::kDtensorTp ? g_.constants.dtensor_op_factor : 1.0);
  }

  // ---- data-parallel machinery
  double DpGroupNodes() const { return layout_.dp_nodes; }
  DType GradDType() const {
    return (p_.precision == Precision::kMixedBf16 || p_.fsdp_bf16_params) ? DType::kBf16 : DType::kFp32;
  }
  double GradElemBytes() const { return GradDType() == DType::kBf16 ? 2.0 : 4.0; }

  // Gradients of `params` just became ready: DDP fills buckets; FSDP reduce-scatters the unit.
  void GradientsReady(double params) {
    if (p_.dp <= 1 || !last_micro_) return;
    switch (p_.framework) {
      case Framework::kDdp: {
        // The reducer copies each gradient into its bucket, scaled by 1/world on the way
        // (gradient_as_bucket_view=False: read and write the gradient once).
        tl_.Flat(2.0 * GradElemBytes() * params);
        const int after = tl_.Last();
        pending_bucket_ += params * GradElemBytes();
        const double cap = p_.ddp_bucket_mb * 1e6;
        while (pending_bucket_ >= cap) {
          last_comm_ = tl_.Async(Coll(Collective::kAllReduce, GradDType(), cap, p_.dp, DpGroupNodes()), after);
          pending_bucket_ -= cap;
        }
        break;
      }
      case Framework::kFsdp:
      case Framework::kPlain:
      case Framework::kDtensorTp:
      case Framework::kMegatron: {
        const double bytes = params * GradElemBytes();
        const bool shard = p_.shard.s_g > 1;
        const Collective op = shard ? Collective::kReduceScatter : Collective::kAllReduce;
        const int world = shard ? p_.shard.s_g : p_.dp;
        int after = tl_.Last();
        const FsdpDivide div = p_.framework == Framework::kFsdp ? FsdpDivideFactors(p_.dp) : FsdpDivide{1, 1};
        // FSDP1 divides the unsharded gradient before the reduction and the reduced shard after
        // it, each only when its factor is not 1, on its post-backward stream.
        if (div.pre > 1) after = tl_.SideMem(2.0 * bytes, after);
        last_comm_ = tl_.Async(Coll(op, GradDType(), bytes, world, DpGroupNodes()), after);
        const double kept = shard ? 1.0 / world : 1.0;  // share of the unit's gradient this rank keeps
        if (div.post > 1) last_comm_ = tl_.SideMem(2.0 * bytes * kept, last_comm_);
        // Mixed precision: the bf16 reduced gradient is cast to the fp32 gradient of the master copy.
        if (p_.framework == Framework::kFsdp && p_.fsdp_bf16_params) last_comm_ = tl_.SideMem(6.0 * params * kept, last_comm_);
        // Partial sharding (Lins s_g < dp): the reduced shards are all-reduced across the
        // replicas of the same shard.
        if (shard && world < p_.dp) {
          last_comm_ = tl_.Async(Coll(Collective::kAllReduce, GradDType(), bytes / world, p_.dp / world, DpGroupNodes()));
        }
        break;
      }
    }
  }
  void FlushBuckets() {
    if (p_.dp <= 1 || !last_micro_ || p_.framework != Framework::kDdp || pending_bucket_ <= 0) return;
    last_comm_ = tl_.Async(Coll(Collective::kAllReduce, GradDType(), pending_bucket_, p_.dp, DpGroupNodes()), tl_.Last());
    pending_bucket_ = 0;
  }

  // Parameter all-gather of one unit (sharded parameters), prefetched one unit ahead.
  int GatherUnit(double params) {
    if (p_.shard.s_p <= 1 || p_.dp <= 1) return -1;
    const double bytes = params * (p_.fsdp_bf16_params || p_.precision == Precision::kMixedBf16 ? 2.0 : 4.0);
    // FSDP MixedPrecision casts the fp32 shard to a bf16 shard before gathering it.
    if (p_.framework == Framework::kFsdp && p_.fsdp_bf16_params) {
      prefetch_anchor_ = tl_.SideMem(6.0 * params / p_.shard.s_p, prefetch_anchor_);
    }
    const int ag = tl_.Async(Coll(Collective::kAllGather, p_.fsdp_bf16_params ? DType::kBf16 : DType::kFp32, bytes,
                                  p_.shard.s_p, DpGroupNodes()),
                             prefetch_anchor_);
    return ag;
  }
  // FSDP SHARD_GRAD_OP and FULL_SHARD gather in forward; only FULL_SHARD again in backward.
  bool GathersInForward() const { return p_.shard.s_p > 1 || (p_.framework == Framework::kFsdp && p_.shard.s_g > 1); }

  // FSDP1's pre/post hooks of one unit (flat-parameter views, stream waits), half in forward and
  // half in backward; they run whatever the world size.
  void FsdpHooks() {
    if (p_.framework == Framework::kFsdp) tl_.Host(g_.constants.fsdp_unit_host_s / 2);
  }

  // ---- the whole micro-step
  void Forward() {
    const double rb = ResidualBytes();
    if (s_.first) tl_.Mem((2 * rb * h() + 16) * Tr());  // embedding gather: read + write a row, token ids
    int next_ag = GathersInForward() && first_micro_ ? GatherForwardUnit(s_.embed_params + s_.head_params) : -1;
    for (int l = 0; l < s_.layers; ++l) {
      if (next_ag >= 0) tl_.WaitFor(next_ag);
      prefetch_anchor_ = tl_.Last();
      next_ag = GathersInForward() && (first_micro_ || p_.shard.s_p > 1) ? GatherForwardUnit(s_.block_params) : -1;
      FsdpHooks();
      BlockForward(false);
    }
    if (next_ag >= 0) tl_.WaitFor(next_ag);
    if (s_.last) Head(false);
  }
  int GatherForwardUnit(double params) {
    if (p_.shard.s_p > 1) return GatherUnit(params);
    // SHARD_GRAD_OP: gathered once per step in forward, kept until the backward ends.
    if (p_.framework == Framework::kFsdp && p_.shard.s_g > 1 && p_.dp > 1) {
      return tl_.Async(Coll(Collective::kAllGather, DType::kFp32, params * 4.0, p_.shard.s_g, DpGroupNodes()),
                       prefetch_anchor_);
    }
    return -1;
  }

  void Head(bool backward) {
    const double rb = ResidualBytes();
    const double v = s_.vocab_local;
    if (!backward) {
      tl_.Mem(2 * rb * h() * Tr() + (rb + 2) * h() * Tr(), 2);  // final LN + cast
      if (Fp32Residual() && first_micro_) tl_.Mem(6.0 * v * h());
      tl_.Gemm(GemmOp::kFwd, Tr(), h(), v);
      tl_.Mem(14.0 * v * Tr(), 4);   // logits -> fp32, log-softmax, NLL
      return;
    }
    tl_.Mem(22.0 * v * Tr(), 4);     // NLL/log-softmax backward, cast back to bf16
    tl_.Gemm(GemmOp::kDgrad, Tr(), v, h());
    tl_.Gemm(GemmOp::kWgrad, v, Tr(), h());
    if (Fp32Residual()) tl_.Mem((first_micro_ ? 6.0 : 12.0) * v * h(), 2);
    tl_.Mem((3 * rb + 2) * h() * Tr(), 3);  // final LN backward
    GradientsReady(s_.head_params);
  }

  void Backward() {
    if (s_.last) Head(true);
    int next_ag = -1;
    const bool regather = p_.shard.s_p > 1;
    if (regather) {
      prefetch_anchor_ = tl_.Last();
      next_ag = GatherUnit(s_.block_params);
    }
    for (int l = s_.layers - 1; l >= 0; --l) {
      if (next_ag >= 0) tl_.WaitFor(next_ag);
      prefetch_anchor_ = tl_.Last();
      next_ag = regather && l > 0 ? GatherUnit(s_.block_params) : -1;
      if (p_.recompute == Recompute::kFull) BlockForward(true);
      BlockBackward();
      FsdpHooks();
      GradientsReady(s_.block_params);
    }
    if (s_.first) {
      const double rb = ResidualBytes();
      tl_.Mem(rb * s_.vocab_local * h() + 2 * rb * h() * Tr(), 3);  // embedding backward (zero + index-add)
      GradientsReady(s_.embed_params);
    }
    FlushBuckets();
  }

  void Optimizer() {
    if (last_comm_ >= 0) tl_.WaitFor(last_comm_);
    // DDP (gradient_as_bucket_view=False) copies the reduced buckets back into .grad.
    if (p_.framework == Framework::kDdp && p_.dp > 1 && sync_grads_) tl_.Flat(2.0 * GradElemBytes() * s_.StageParams());
    const double params = s_.StageParams() / p_.shard.s_os;
    // Fused AdamW: read p, g, m, v and write p, m, v (fp32: 28 B/param); mixed precision also
    // writes the bf16 copy of the parameters.
    // Foreach AdamW (the DTensor plan: fused AdamW takes no DTensor) runs eight list kernels:
    // params *= 1 - lr·wd (8 B), m.lerp_(g) (12), v *= b2 (8), v.addcmul_(g, g) (16), sqrt(v) (8),
    // its division (8) and + eps (8), params.addcdiv_(m, sqrt) (16): 84 B/param.
    const bool foreach = p_.framework == Framework::kDtensorTp;
    const double bytes = foreach ? 84.0 : p_.precision == Precision::kMixedBf16 ? 30.0 : 28.0;
    const double host_ops = p_.framework == Framework::kDtensorTp ? 12.0 * (s_.layers + 2) : 8.0;
    tl_.Optimizer(bytes * params, host_ops);
    // Lins: optimizer states sharded wider than parameters -> spread the updated parameters.
    // (FSDP keeps its parameters sharded at rest and gathers them again in the next forward.)
    if (p_.shard.s_os > p_.shard.s_p && p_.dp > 1 && p_.framework != Framework::kFsdp) {
      const double bytes_p = s_.StageParams() * (p_.precision == Precision::kMixedBf16 ? 2.0 : 4.0) / p_.shard.s_p;
      tl_.Blocking(Coll(Collective::kAllGather, DType::kBf16, bytes_p, p_.shard.s_os / p_.shard.s_p, DpGroupNodes()));
    }
    tl_.Host(2 * (s_.layers + 2) * CurrentHostOp() / 8);  // zero_grad(set_to_none)
  }

  const ParallelPlan& p_;
  const GpuProfile& g_;
  StageShape s_;
  GroupLayout layout_;
  Timeline tl_;
  bool first_micro_ = true, last_micro_ = true, with_optimizer_ = true, sync_grads_ = true;
  int micro_steps_ = 1;
  double pending_bucket_ = 0;
  int last_comm_ = -1;
  int prefetch_anchor_ = -1;
};

}  // namespace

FsdpDivide FsdpDivideFactors(int world) {
  int pre = 1;
  while (world % pre == 0 && static_cast<double>(world) / pre > pre) pre *= 2;
  return {static_cast<double>(pre), static_cast<double>(world) / pre};
}

TimeBreakdown StageTime(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu, int stage,
                        const GroupLayout& g, int micro_steps, bool with_optimizer) {
  StepBuilder b(w, p, gpu, stage, g);
  b.SetMicroSteps(micro_steps);
  b.WithOptimizer(with_optimizer);
  return b.Build();
}

}  // namespace orrery::plan
