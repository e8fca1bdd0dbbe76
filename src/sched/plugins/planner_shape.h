// The planner in the scheduler (docs/design/planner.md, "Scheduler integration"):
//   * PlannerCost: the step time of a described training job (model/work.h TrainModel) on an
//     allocation -- GPU type, GPU count and node count per type -- with the best plan its
//     launcher would pick there (plan::StepTime over a fixed plan family, memoized);
//   * GoodputShape: the ShapePlugin that picks a job's GPU count and layout from that cost
//     and the free cluster (the rule is in Choose's comment).
// Both read the same PlannerCost, so the shape a job is given is timed by the same model
// that the simulator's progress model (sim/planner_progress.h) charges it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/cluster.h"
#include "model/work.h"
#include "plan/estimate.h"
#include "plan/plan.h"
#include "sched/framework/cluster_state.h"
#include "sched/framework/api/plugin.h"
#include "sched/framework/api/shape.h"

namespace orrery {

// GPUs of one type on `nodes` nodes; `link`: the slowest link between them (intra-node when
// nodes == 1, else intra-rack or inter-rack).
struct TypedGroup {
  GpuTypeId type;
  int gpus = 0;
  int nodes = 0;
  LinkClass link = LinkClass::kIntraRack;
  friend auto operator<=>(const TypedGroup&, const TypedGroup&) = default;
};

// An allocation as groups per GPU type (distinct nodes counted per type, the slowest link
// between them from Cluster::LinkBetween), in type order.
std::vector<TypedGroup> GroupsOf(const Allocation& alloc, const Cluster& cluster);

// The cross-node fabric the planner charges (per-GPU GB/s and one-hop latency) for each link
// class of `topology`; links the config leaves at 0 take the defaults of an 8-GPU H200/A100
// node with one 400 Gb/s NIC per GPU: intra-rack 50 GB/s, 3 µs; inter-rack 25 GB/s (2:1
// oversubscribed spine), 6 µs.
LinkSpec FabricLink(const Topology& topology, LinkClass c);

// `gpu` with collective tables for groups spanning 2..64 nodes derived from `link` (added only
// when the profile has no multi-node table of its own): time = latency · 2·log2(world) +
// bytes · BusFactor(op, world) / link bandwidth, the nccl-tests bus-bandwidth convention.
plan::GpuProfile WithFabric(plan::GpuProfile gpu, const LinkSpec& link);

struct PlannedStep {
  double seconds = 0;  // per optimizer step
  plan::ParallelPlan plan;
};

// The first training phase of a job's work that describes its model (null: none).
const Phase* DescribedPhase(const WorkSpec& w);

class PlannerCost {
 public:
  // profiles[t]: the planner profile of the cluster's GPU type id t (nullopt: none); each gets
  // cross-node tables from the topology's intra-rack and inter-rack links (WithFabric).
  PlannerCost(const std::vector<std::optional<plan::GpuProfile>>& profiles, const Topology& topology);

  // The fastest plan of `m` on `groups`: Megatron-style bf16 mixed precision with ZeRO-1
  // over the data-parallel group, micro-batches of the smallest power of two that keeps a
  // replica at ≤ max(16, 2·PP) of them, TP ∈ {1,2,4,8} inside a node (and dividing
  // the heads), PP ∈ {1,2,4,8} dividing the layers (at least PP micro-batches), DP the rest
  // (dividing the global batch); recompute none, else full when nothing else fits. Error
  // when no plan of the family fits or a group's GPU type has no profile.
  Result<PlannedStep> Best(const TrainModel& m, const std::vector<TypedGroup>& groups) const;

  bool has_profile(GpuTypeId t) const { return t.valid() && t.v < profiles_.size() && profiles_[t.v].has_value(); }
  // The profile of type t whose cross-node tables are those of link class `link`.
  const plan::GpuProfile& profile(GpuTypeId t, LinkClass link) const {
    return link == LinkClass::kInterRack ? profiles_[t.v]->inter_rack : profiles_[t.v]->intra_rack;
  }
  size_t memo_size() const { return memo_.size(); }

 private:
  Result<PlannedStep> Search(const TrainModel& m, const std::vector<TypedGroup>& groups) const;
  struct Fabrics {
    plan::GpuProfile intra_rack, inter_rack;
  };
  std::vector<std::optional<Fabrics>> profiles_;
  using Key = std::pair<std::vector<int32_t>, std::vector<TypedGroup>>;
  mutable std::map<Key, std::optional<PlannedStep>> memo_;  // nullopt: no plan fits
  mutable std::map<Key, std::string> why_;                 // error of a nullopt entry
};

struct GoodputShapeOptions {
  uint32_t shrink = 4;      // smallest count tried: request / shrink
  uint32_t grow = 2;        // largest count tried: request × grow
  double min_gain = 1.6;    // a doubling is taken only if it speeds the step up this much
};

// A shape and what the planner predicts for it.
struct ShapeChoice {
  Shape shape;
  double step_s = 0;  // the best plan's step on that many GPUs of shape.type
};

// What the shape rule knows of a job: the model it trains (null: not described, the job keeps
// its requested shape) and, for a job that declares the GPU counts its launcher accepts (the
// live opt-in, docs/formats/flex-shape.md), those bounds (max_gpus == 0: none declared; the
// options' shrink and grow around the request apply).
struct ShapeInfo {
  const TrainModel* model = nullptr;
  uint32_t min_gpus = 0, max_gpus = 0;  // powers of two when declared
  bool declared() const { return max_gpus > 0; }
};
using ShapeInfoFn = std::function<ShapeInfo(const JobRequest&)>;
// The simulator's source: the first described training phase of the trace job (by Job::id).
ShapeInfoFn TraceShapeInfo(const std::vector<WorkSpec>* work);

class GoodputShape final : public ShapePlugin {
 public:
  // info: per job, its model and declared bounds; jobs without a described model keep
  // their requested shape.
  GoodputShape(std::shared_ptr<const PlannerCost> cost, ShapeInfoFn info, GoodputShapeOptions o)
      : cost_(std::move(cost)), info_(std::move(info)), o_(o) {}
  const char* name() const override { return "goodput"; }
  Shape Choose(const SchedJob& j, const ClusterState& state) override;

  // The rule of Choose for the request `job` (its GPU count, its id for the model) in `vc`
  // on `state`, over the GPU types of `types` (0 = any); may_grow = false caps the count at
  // the request (a job with declared bounds: at its minimum). nullopt: the job is not
  // described, or nothing placeable fits.
  std::optional<ShapeChoice> ChooseFor(const JobRequest& job, VcId vc, GpuTypeMask types, const ClusterState& state,
                                       bool may_grow) const;
  // Elastic runs (ElasticResize): while `crowded` jobs wait in `vc`, a start never grows
  // past its request (the free GPUs are theirs); a later cycle may grow it when they are gone.
  void SetCrowded(VcId vc, bool crowded);
  // The model of a described job (by Job::id), else null.
  const TrainModel* ModelOf(const JobRequest& job) const;
  const GoodputShapeOptions& options() const { return o_; }
  const PlannerCost& cost() const { return *cost_; }

 private:
  // Power-of-two GPU counts the rule may give a job: it starts at the largest placeable count
  // ≤ `start` (and ≥ `lo`) and doubles up to `cap`.
  struct Counts {
    uint32_t start = 0, lo = 0, cap = 0;
  };
  Counts CountsFor(const JobRequest& job, const ShapeInfo& info, bool may_grow) const;
  std::optional<ShapeChoice> ChooseOnType(const TrainModel& m, const Counts& counts, bool whole_nodes, VcId vc,
                                          GpuTypeId type, const ClusterState& state) const;
  std::shared_ptr<const PlannerCost> cost_;
  ShapeInfoFn info_;
  GoodputShapeOptions o_;
  std::vector<uint8_t> crowded_;  // per VC
};

// PlannerCost for a cluster: each GPU type's profile by name (plan::ResolveGpu: the project's
// data/profiles, then the shared H200 micro-profiles). Error naming the first type without one.
Result<std::shared_ptr<const PlannerCost>> PlannerCostFor(const Cluster& cluster);

}  // namespace orrery
