#include "plan/estimate.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "plan/cost_internal.h"

namespace orrery::plan {

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

Status Divides(int degree, int value, std::string_view what, std::string_view degree_name) {
  if (value % degree != 0) {
    return MakeError(fmt::format("plan: {} {} is not divisible by {}={}", what, value, degree_name, degree));
  }
  return Status::Ok();
}

// Ranks are laid out tensor-parallel innermost, then sequence-parallel, data-parallel,
// pipeline-parallel (Megatron's order): a group spans as many nodes as its stride forces.
GroupLayout Layout(const ParallelPlan& p, int gpus_per_node) {
  auto nodes = [&](int inner, int size) {
    const int span = inner * size;
    if (span <= gpus_per_node) return 1;
    return inner >= gpus_per_node ? size : (span + gpus_per_node - 1) / gpus_per_node;
  };
  GroupLayout g;
  g.tp_nodes = nodes(1, p.tp);
  g.sp_nodes = nodes(p.tp, p.sp);
  g.dp_nodes = nodes(p.tp * p.sp, p.dp);
  return g;
}

double P2pTime(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu, int gpus_per_node) {
  if (p.pp <= 1) return 0;
  const double bytes = w.micro_batch * static_cast<double>(w.seq) / p.sp * w.model.hidden * 2.0 /
                       (p.tp_seq_parallel ? p.tp : 1);
  const int nodes = p.tp * p.sp * p.dp >= gpus_per_node ? 2 : 1;
  return CollectiveTime(gpu, Collective::kSendRecv, DType::kBf16, bytes, 2, nodes);
}

void Accumulate(TimeBreakdown& into, const TimeBreakdown& t, double scale) {
  into.gpu_busy_s += scale * t.gpu_busy_s;
  into.host_s += scale * t.host_s;
  into.gemm_s += scale * t.gemm_s;
  into.attention_s += scale * t.attention_s;
  into.elementwise_s += scale * t.elementwise_s;
  into.optimizer_s += scale * t.optimizer_s;
  into.recompute_s += scale * t.recompute_s;
  into.comm_s += scale * t.comm_s;
  into.comm_exposed_s += scale * t.comm_exposed_s;
}

// 1F1B over pp stages (Sailor's formula): (m-1)·slowest stage + one pass through all stages +
// the slowest stage's gradient synchronisation and optimizer step.
TimeBreakdown PipelineTime(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu, int gpus_per_node,
                           const GroupLayout& g) {
  const double c = 2.0 * P2pTime(w, p, gpu, gpus_per_node);
  const int m = p.num_micro;
  std::vector<int> stages = {0, p.pp - 1};
  if (p.pp > 2) stages.insert(stages.begin() + 1, 1);
  double slowest = 0, pass = 0, tail = 0;
  TimeBreakdown worst;
  for (int st : stages) {
    const TimeBreakdown one = StageTime(w, p, gpu, st, g, 1, false);
    const TimeBreakdown full = StageTime(w, p, gpu, st, g, 1, true);
    const double t = one.step_s + c;
    const int count = st == 1 ? p.pp - 2 : 1;
    pass += count * t;
    if (t > slowest) slowest = t, worst = one;
    tail = std::max(tail, full.step_s - one.step_s);
  }
  TimeBreakdown out;
  Accumulate(out, worst, m);
  out.step_s = (m - 1) * slowest + pass + tail;
  out.pipeline_bubble_s = std::max(0.0, out.step_s - m * slowest - tail);
  out.comm_s += m * c;
  out.host_bound = worst.host_bound;
  return out;
}

}  // namespace

Status CheckPlan(const Workload& w, const ParallelPlan& p) {
  const GptModel& m = w.model;
  ORR_RETURN_IF_ERROR(Divides(p.tp, m.heads, "model heads", "tp"));
  ORR_RETURN_IF_ERROR(Divides(p.tp, m.ffn, "model ffn width", "tp"));
  if (p.shard_embeddings) ORR_RETURN_IF_ERROR(Divides(p.tp, m.vocab, "model vocabulary", "tp"));
  if (p.pp > m.layers) {
    return MakeError(fmt::format("plan: pp={} exceeds the model's {} layers", p.pp, m.layers));
  }
  ORR_RETURN_IF_ERROR(Divides(p.pp, m.layers, "model layers", "pp"));
  if (w.seq % p.sp != 0) {
    return MakeError(fmt::format("plan: sequence length {} is not divisible by sp={}", w.seq, p.sp));
  }
  if (p.sp > 1 && p.sp_kind == SeqParallel::kUlysses) {
    ORR_RETURN_IF_ERROR(Divides(p.sp, m.heads / p.tp, "heads per tensor-parallel rank", "sp (Ulysses)"));
  }
  if (p.tp_seq_parallel && (w.seq * w.micro_batch) % p.tp != 0) {
    return MakeError(fmt::format("plan: {} tokens per micro-batch are not divisible by tp={} (sequence parallelism)",
                                 w.seq * w.micro_batch, p.tp));
  }
  if (w.micro_batch <= 0 || w.seq <= 0) return MakeError("plan: --seq and --micro-batch must be positive");
  return Status::Ok();
}

Result<StepEstimate> EstimateStep(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu, int gpus_per_node) {
  ORR_RETURN_IF_ERROR(CheckPlan(w, p));
  if (gpu.gemm.empty()) {
    return MakeError("profile " + gpu.source + " has no GEMM table: the op-level model needs one (per-layer profiles are used by `plan search`)");
  }
  const GroupLayout g = Layout(p, gpus_per_node);
  StepEstimate e;
  e.time = p.pp > 1 ? PipelineTime(w, p, gpu, gpus_per_node, g) : StageTime(w, p, gpu, 0, g, p.num_micro, true);
  e.memory = StageMemory(w, p, gpu, 0);
  if (p.pp > 1) {
    MemoryBreakdown last = StageMemory(w, p, gpu, p.pp - 1);
    if (last.peak_bytes > e.memory.peak_bytes) e.memory = last;
  }
  e.device_memory_bytes = gpu.memory_bytes;
  e.fits = e.memory.peak_bytes <= gpu.memory_bytes;
  const double seqs = static_cast<double>(p.dp) * w.micro_batch * p.num_micro;
  e.tokens_per_s = seqs * w.seq / e.time.step_s;
  const double flops = w.model.ModelFlops(w.seq, w.micro_batch) * p.dp * p.num_micro;
  e.mfu = flops / (e.time.step_s * p.Gpus() * gpu.peak_bf16_tflops * 1e12);
  return e;
}

Result<double> StepTime(const Workload& w, const ParallelPlan& p, const Allocation& a) {
  int total = 0;
  for (const AllocationGroup& grp : a.groups) total += grp.gpus;
  if (total != p.Gpus()) {
    return MakeError(fmt::format("plan needs {} GPUs, the allocation has {}", p.Gpus(), total));
  }
  double worst = 0;
  for (const AllocationGroup& grp : a.groups) {
    if (grp.gpu == nullptr || grp.gpus <= 0) return MakeError("allocation: a group without GPU type or GPUs");
    const int per_node = std::max(1, std::min(grp.gpu->gpus_per_node, grp.gpus / std::max(1, grp.nodes)));
    const int layout_node = a.groups.size() > 1 || grp.nodes > 1 ? per_node : std::max(per_node, p.Gpus());
    ORR_ASSIGN_OR_RETURN(StepEstimate e, EstimateStep(w, p, *grp.gpu, layout_node));
    if (!e.fits) {
      return MakeError(fmt::format("plan does not fit on {}: peak {:.1f} GiB > {:.1f} GiB", grp.gpu->gpu,
                                   e.memory.peak_bytes / kGiB, e.device_memory_bytes / kGiB));
    }
    worst = std::max(worst, e.time.step_s);
  }
  return worst;
}

}  // namespace orrery::plan
