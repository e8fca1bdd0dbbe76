#include "sched/plugins/planner_shape.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include <fmt/format.h>

#include "plan/registry.h"
#include "sched/framework/api/plugin.h"

namespace orrery {
namespace {

plan::Workload WorkloadOf(const TrainModel& m, int micro_batch) {
  plan::Workload w;
  w.model.name = "gpt";
  w.model.layers = m.layers;
  w.model.hidden = m.hidden;
  w.model.heads = m.heads;
  w.model.vocab = m.vocab;
  w.model.ffn = 4 * m.hidden;
  w.seq = m.seq;
  w.micro_batch = micro_batch;
  return w;
}

plan::ParallelPlan MegatronPlan(int dp, int tp, int pp, int num_micro, plan::Recompute rc) {
  plan::ParallelPlan p;
  p.name = "custom";
  p.framework = plan::Framework::kMegatron;
  p.precision = plan::Precision::kMixedBf16;
  p.dp = dp, p.tp = tp, p.pp = pp;
  p.tp_seq_parallel = tp > 1;
  p.shard_embeddings = tp > 1;
  p.shard.s_os = dp;  // ZeRO-1
  p.num_micro = num_micro;
  p.recompute = rc;
  return p;
}

// GPUs per node of the most fragmented group: TP groups must stay inside a node.
int MinGpusPerNode(const std::vector<TypedGroup>& groups) {
  int per = 1 << 30;
  for (const TypedGroup& g : groups) per = std::min(per, g.gpus / std::max(1, g.nodes));
  return per;
}

// Sequences per micro-batch: the smallest power of two that keeps the micro-batches of one
// replica at most max(16, 2·pp) (the cost model simulates every micro-batch; 16 keeps a
// 1F1B bubble small and an estimate near a millisecond).
int MicroBatch(int per_replica, int pp) {
  const int cap = std::max(16, 2 * pp);
  int mb = 1;
  while (per_replica / mb > cap && per_replica % (2 * mb) == 0) mb *= 2;
  return mb;
}

}  // namespace

std::vector<TypedGroup> GroupsOf(const Allocation& alloc, const Cluster& cluster) {
  std::vector<TypedGroup> out;
  std::vector<NodeId> seen;
  LinkClass slowest = LinkClass::kIntraRack;
  for (const Slot& s : alloc) {
    const GpuTypeId t = cluster.nodes[s.node.v].gpu_type;
    auto it = std::find_if(out.begin(), out.end(), [&](const TypedGroup& g) { return g.type == t; });
    if (it == out.end()) it = out.insert(out.end(), TypedGroup{t, 0, 0});
    it->gpus += s.gpus;
    if (std::find(seen.begin(), seen.end(), s.node) != seen.end()) continue;
    for (NodeId other : seen)
      if (cluster.LinkBetween(other, s.node) == LinkClass::kInterRack) slowest = LinkClass::kInterRack;
    seen.push_back(s.node);
    ++it->nodes;
  }
  for (TypedGroup& g : out) g.link = slowest;  // replicas run in lock step: the slowest link paces all
  std::sort(out.begin(), out.end());
  return out;
}

LinkSpec FabricLink(const Topology& topology, LinkClass c) {
  LinkSpec l = topology.link(c);
  const bool inter = c == LinkClass::kInterRack;
  if (l.gbps <= 0) l.gbps = inter ? 25 : 50;
  if (l.latency_us <= 0) l.latency_us = inter ? 6 : 3;
  return l;
}

namespace {

double BusFactor(plan::Collective op, int world) {
  const double w = world;
  switch (op) {
    case plan::Collective::kAllReduce: return 2 * (w - 1) / w;
    case plan::Collective::kAllGather:
    case plan::Collective::kReduceScatter:
    case plan::Collective::kAllToAll: return (w - 1) / w;
    case plan::Collective::kSendRecv:
    case plan::Collective::kBroadcast: return 1;
  }
  return 1;
}

}  // namespace

plan::GpuProfile WithFabric(plan::GpuProfile gpu, const LinkSpec& link) {
  for (const plan::CollectivePoint& c : gpu.collectives)
    if (c.nodes > 1) return gpu;  // measured across nodes: keep the measurement
  using plan::Collective;
  for (Collective op : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                        Collective::kAllToAll, Collective::kSendRecv, Collective::kBroadcast}) {
    for (int nodes = 2; nodes <= 64; nodes *= 2) {
      for (int per = 1; per <= gpu.gpus_per_node; per *= 2) {
        const int world = nodes * per;
        for (double bytes = 1 << 16; bytes <= 16e9; bytes *= 4) {
          const double t = link.latency_us * 1e-6 * 2 * std::log2(world) + bytes * BusFactor(op, world) / (link.gbps * 1e9);
          gpu.collectives.push_back(plan::CollectivePoint{op, plan::DType::kBf16, world, nodes, bytes, t});
        }
      }
    }
  }
  return gpu;
}

PlannerCost::PlannerCost(const std::vector<std::optional<plan::GpuProfile>>& profiles, const Topology& topology) {
  for (const std::optional<plan::GpuProfile>& p : profiles) {
    if (!p) {
      profiles_.emplace_back();
      continue;
    }
    profiles_.push_back(Fabrics{WithFabric(*p, FabricLink(topology, LinkClass::kIntraRack)),
                                WithFabric(*p, FabricLink(topology, LinkClass::kInterRack))});
  }
}

const Phase* DescribedPhase(const WorkSpec& w) {
  for (const Phase& p : w.phases)
    if (p.kind == PhaseKind::kTrain && p.model.described()) return &p;
  return nullptr;
}

Result<PlannedStep> PlannerCost::Best(const TrainModel& m, const std::vector<TypedGroup>& groups) const {
  const Key key{{m.layers, m.hidden, m.heads, m.vocab, m.seq, m.global_batch}, groups};
  if (auto it = memo_.find(key); it != memo_.end()) {
    if (it->second) return *it->second;
    return MakeError(why_.at(key));
  }
  Result<PlannedStep> r = Search(m, groups);
  if (r.ok()) {
    memo_.emplace(key, *r);
  } else {
    memo_.emplace(key, std::nullopt);
    why_.emplace(key, r.error().message);
  }
  return r;
}

Result<PlannedStep> PlannerCost::Search(const TrainModel& m, const std::vector<TypedGroup>& groups) const {
  plan::Allocation alloc;
  int gpus = 0;
  for (const TypedGroup& g : groups) {
    if (!has_profile(g.type)) return MakeError("no planner profile for a GPU type of the allocation");
    alloc.groups.push_back(plan::AllocationGroup{&profile(g.type, g.link), g.gpus, std::max(1, g.nodes)});
    gpus += g.gpus;
  }
  if (gpus <= 0 || m.global_batch <= 0) return MakeError("allocation without GPUs or model without a batch");
  const int per_node = MinGpusPerNode(groups);
  std::optional<PlannedStep> best;
  for (plan::Recompute rc : {plan::Recompute::kNone, plan::Recompute::kFull}) {
    for (int tp = 1; tp <= 8 && tp <= per_node; tp *= 2) {
      for (int pp = 1; pp <= 8; pp *= 2) {
        if (m.heads % tp || m.layers % pp || gpus % (tp * pp)) continue;
        const int dp = gpus / (tp * pp);
        if (m.global_batch % dp) continue;
        const int per_replica = m.global_batch / dp;
        const int mb = MicroBatch(per_replica, pp);
        if (per_replica % mb || per_replica / mb < pp) continue;
        const plan::Workload w = WorkloadOf(m, mb);
        const plan::ParallelPlan p = MegatronPlan(dp, tp, pp, per_replica / mb, rc);
        if (!plan::CheckPlan(w, p).ok()) continue;
        Result<double> s = plan::StepTime(w, p, alloc);
        if (s.ok() && (!best || *s < best->seconds)) best = PlannedStep{*s, p};
      }
    }
    if (best) return *best;  // full recompute only when nothing fits without it
  }
  return MakeError(fmt::format("no plan of {} layers × {} hidden fits {} GPUs", m.layers, m.hidden, gpus));
}

// Choose: for each GPU type of the VC that the job accepts and that has a planner profile,
// among power-of-two GPU counts of that type in [request / shrink, request × grow] that can
// be placed now (one node with that many free GPUs, or that many whole idle nodes), take
//   1. the largest count ≤ the request whose best plan fits (a job that cannot start at its
//      request starts now on fewer GPUs instead of waiting: Pollux/Sia's "start, then adapt");
//   2. then doubling while the doubled count is placeable, ≤ request × grow, and its step is at
//      least `min_gain` times faster (per-GPU throughput after the doubling ≥ min_gain/2 of before);
// then the type whose choice has the highest predicted goodput (shortest step; ties: fewer
// GPUs, then the lower type id). Goodput is throughput here: the global batch is fixed, so
// statistical efficiency is too. The layout is the best plan's (dp, tp, pp). Nothing
// placeable or nothing fits: the request.
Shape GoodputShape::Choose(const SchedJob& j, const ClusterState& state) {
  const JobRequest& job = *j.job;
  const bool crowded = j.vc.v < crowded_.size() && crowded_[j.vc.v];
  std::optional<ShapeChoice> c = ChooseFor(job, j.vc, j.types, state, !crowded);
  return c ? c->shape : RequestedShape(job);
}

ShapeInfoFn TraceShapeInfo(const std::vector<WorkSpec>* work) {
  return [work](const JobRequest& job) {
    ShapeInfo info;
    if (job.id.v >= work->size()) return info;
    const Phase* phase = DescribedPhase((*work)[job.id.v]);
    if (phase != nullptr) info.model = &phase->model;
    return info;
  };
}

const TrainModel* GoodputShape::ModelOf(const JobRequest& job) const { return info_(job).model; }

void GoodputShape::SetCrowded(VcId vc, bool crowded) {
  if (crowded_.size() <= vc.v) crowded_.resize(vc.v + 1, 0);
  crowded_[vc.v] = crowded;
}

std::optional<ShapeChoice> GoodputShape::ChooseFor(const JobRequest& job, VcId vc, GpuTypeMask types,
                                                   const ClusterState& state, bool may_grow) const {
  if (job.gpus == 0 || job.is_fractional()) return std::nullopt;
  const ShapeInfo info = info_(job);
  if (info.model == nullptr) return std::nullopt;
  const Counts counts = CountsFor(job, info, may_grow);
  const Cluster& cluster = state.cluster();
  std::optional<ShapeChoice> best;
  for (uint32_t t = 0; t < cluster.gpu_types.size() && t < 8 * sizeof(GpuTypeMask); ++t) {
    if (types != 0 && !(types & (GpuTypeMask{1} << t))) continue;
    if (!cost_->has_profile(GpuTypeId(t))) continue;
    std::optional<ShapeChoice> c = ChooseOnType(*info.model, counts, info.declared(), vc, GpuTypeId(t), state);
    if (!c) continue;
    if (!best || c->step_s < best->step_s || (c->step_s == best->step_s && c->shape.gpus < best->shape.gpus))
      best = c;
  }
  if (!best) return best;
  // A count other than the request: the placer picks the nodes (a job with declared bounds
  // always gets an explicit node count, its launcher's world is nodes × GPUs per node).
  if (!info.declared() && best->shape.gpus == job.gpus) best->shape.nodes = job.nodes;
  // One GPU type in the VC: the placer needs no type restriction (the shape is the old one).
  if (cluster.gpu_types.size() <= 1) best->shape.type = GpuTypeId();
  return best;
}

// Trace jobs: [request / shrink, request × grow] around the request (the request when it may
// not grow). A job with declared bounds: from its minimum up to its maximum (its minimum when
// it may not grow): it starts as small as it accepts and grows while that pays.
GoodputShape::Counts GoodputShape::CountsFor(const JobRequest& job, const ShapeInfo& info, bool may_grow) const {
  Counts c;
  if (info.declared()) {
    c.start = c.lo = info.min_gpus;
    c.cap = may_grow ? info.max_gpus : info.min_gpus;
    return c;
  }
  c.start = std::bit_floor(job.gpus);
  c.lo = std::max<uint32_t>(1, std::bit_ceil(std::max<uint32_t>(1, job.gpus / o_.shrink)));
  c.cap = may_grow ? job.gpus * o_.grow : job.gpus;
  return c;
}

std::optional<ShapeChoice> GoodputShape::ChooseOnType(const TrainModel& m, const Counts& counts, bool whole_nodes,
                                                      VcId vc, GpuTypeId type, const ClusterState& state) const {
  const Cluster& cluster = state.cluster();
  uint16_t per_node = 0;
  for (NodeId n : state.vc_nodes(vc))
    if (cluster.nodes[n.v].gpu_type == type) per_node = std::max(per_node, state.total_gpus(n));
  if (per_node == 0) return std::nullopt;
  uint32_t max_free = 0, idle = 0;
  for (NodeId n : state.vc_nodes(vc)) {
    if (cluster.nodes[n.v].gpu_type != type || !state.powered(n)) continue;
    max_free = std::max<uint32_t>(max_free, state.free_gpus(n));
    idle += state.free_gpus(n) == state.total_gpus(n) && state.total_gpus(n) == per_node;
  }
  auto placeable = [&](uint32_t g) { return g <= per_node ? g <= max_free : g % per_node == 0 && g / per_node <= idle; };
  auto nodes_of = [&](uint32_t g) { return (g + per_node - 1) / per_node; };
  auto step = [&](uint32_t g) -> std::optional<PlannedStep> {
    Result<PlannedStep> r = cost_->Best(m, {TypedGroup{type, static_cast<int>(g), static_cast<int>(nodes_of(g))}});
    if (!r.ok()) return std::nullopt;
    return *r;
  };
  uint32_t g = counts.start;
  std::optional<PlannedStep> cur;
  for (; g >= counts.lo && g > 0; g /= 2) {
    if (placeable(g) && (cur = step(g))) break;
  }
  if (!cur) return std::nullopt;
  for (uint32_t next = g * 2; next <= counts.cap && placeable(next); next *= 2) {
    std::optional<PlannedStep> s = step(next);
    if (!s || cur->seconds < o_.min_gain * s->seconds) break;
    g = next, cur = s;
  }
  ShapeChoice out;
  out.shape.gpus = g;
  out.shape.nodes = whole_nodes ? static_cast<uint16_t>(nodes_of(g)) : 0;
  out.shape.layout = ParallelLayout{static_cast<uint16_t>(cur->plan.dp), static_cast<uint16_t>(cur->plan.tp),
                                    static_cast<uint16_t>(cur->plan.pp)};
  out.shape.type = type;
  out.step_s = cur->seconds;
  return out;
}

Result<std::shared_ptr<const PlannerCost>> PlannerCostFor(const Cluster& cluster) {
  std::vector<std::optional<plan::GpuProfile>> profiles(cluster.gpu_types.size());
  const plan::ProfilePaths paths = plan::DefaultProfilePaths();
  for (uint32_t t = 0; t < cluster.gpu_types.size(); ++t) {
    const std::string name(cluster.gpu_types.Get(t));
    Result<plan::GpuProfile> p = plan::ResolveGpu(name, paths);
    if (!p.ok()) return p.error().With("planner profile of GPU type '" + name + "'");
    profiles[t] = std::move(*p);
  }
  return std::shared_ptr<const PlannerCost>(std::make_shared<PlannerCost>(profiles, cluster.topology));
}

}  // namespace orrery
