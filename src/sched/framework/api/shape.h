// The Shape extension point: before placement, choose the shape a pending job runs in --
// GPU count, node count and parallel layout -- given the job and the free cluster. Default
// (no ShapePlugin): what the job asked for. The planner plugs in here. A chosen shape is the
// job's demand while it runs (SchedJob::job points at a shaped copy of the request; the
// request comes back when it stops). Greedy cycles visit jobs by their requested size class.
// The simulator runs shaping policies only with its planner-aware progress model
// (SimConfig::planner; the planner's plugin is sched/plugins/planner_shape.h GoodputShape).
#pragma once

#include <cstdint>
#include <memory>

#include "sched/framework/cluster_state.h"

namespace orrery {

struct SchedJob;

// Parallel layout of a data/tensor/pipeline-parallel job (dp × tp × pp = GPUs).
struct ParallelLayout {
  uint16_t dp = 1, tp = 1, pp = 1;
  friend bool operator==(const ParallelLayout&, const ParallelLayout&) = default;
};

struct Shape {
  uint32_t gpus = 0;
  uint16_t nodes = 0;  // 0 = placer decides
  ParallelLayout layout;
  GpuTypeId type;      // invalid = any type the job accepts; else only nodes of this type
  friend bool operator==(const Shape&, const Shape&) = default;
};

// The shape a job asked for (its request; layout = pure data parallel over its GPUs).
Shape RequestedShape(const JobRequest& job);

class ShapePlugin {
 public:
  virtual ~ShapePlugin() = default;
  virtual const char* name() const = 0;
  // The shape to try placing `j` in now. Must not mutate `state`. Returning the requested
  // shape keeps the job as it asked; another shape changes its demand until it stops.
  virtual Shape Choose(const SchedJob& j, const ClusterState& state) = 0;
  // A copy with the same state, or null (no prediction: QueueSortPlugin::Clone).
  virtual std::unique_ptr<ShapePlugin> Clone() const { return nullptr; }
};

}  // namespace orrery
