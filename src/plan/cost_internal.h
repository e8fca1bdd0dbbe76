// Internal pieces of the cost model shared by estimate.cc (not part of the planner's API).
#pragma once

#include "plan/estimate.h"
#include "plan/shape.h"

namespace orrery::plan {

// Peak allocated memory of one GPU of pipeline stage `stage` (memory.cc).
MemoryBreakdown StageMemory(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu, int stage);

// FSDP1's gradient division for `world` ranks: the unsharded gradient is divided by `pre`
// before the reduction and the reduced one by `post` after it (pre · post = world; PyTorch's
// _get_gradient_predivide_factor: pre doubles from 1 while it divides world and
// world / pre > pre). A factor of 1 costs no kernel.
struct FsdpDivide {
  double pre = 1, post = 1;
};
FsdpDivide FsdpDivideFactors(int world);

// Forward + backward (+ optimizer when `with_optimizer`) of one pipeline stage for one
// micro-batch, simulated as a host-issued kernel stream with a communication stream
// (timeline.cc). `dp_nodes`/`tp_nodes` are the nodes the data-/tensor-parallel groups span.
struct GroupLayout {
  int dp_nodes = 1;
  int tp_nodes = 1;
  int sp_nodes = 1;
};
// `micro_steps` micro-batches back to back; with_optimizer adds the gradient synchronisation of
// the last one and the optimizer step.
TimeBreakdown StageTime(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu, int stage,
                        const GroupLayout& g, int micro_steps, bool with_optimizer);

}  // namespace orrery::plan
