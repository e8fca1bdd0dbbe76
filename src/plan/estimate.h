// The planner's cost model of one training step: `EstimateStep` predicts step time and peak
// allocated memory of a model under a parallel plan on a GPU type; `StepTime` is the entry point
// for callers that hold an allocation (the scheduler's progress model, the search).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/profile.h"

namespace orrery::plan {

// What one step processes: `micro_batch` sequences of `seq` tokens per model replica and
// micro-step (the plan's num_micro micro-steps make one optimizer step).
struct Workload {
  GptModel model;
  int64_t seq = 2048;
  int micro_batch = 1;
};

struct TimeBreakdown {
  double step_s = 0;
  double gpu_busy_s = 0;      // sum of compute-stream kernel time
  double host_s = 0;          // host (CPU) time to issue the step
  double gemm_s = 0;
  double attention_s = 0;
  double elementwise_s = 0;   // normalisation, activation, casts, residual adds, loss
  double optimizer_s = 0;
  double recompute_s = 0;     // part of the above spent re-running forward blocks
  double comm_s = 0;          // total collective time (both streams)
  double comm_exposed_s = 0;  // collective time not hidden behind compute
  double pipeline_bubble_s = 0;
  bool host_bound = false;    // the host, not the GPU, sets the pace
};

// The moment of a step at which memory peaks (docs/design/planner.md, "Memory").
enum class MemoryPhase { kForwardEnd, kLossBackward, kBlockBackward, kOptimizer };
std::string_view MemoryPhaseName(MemoryPhase p);  // forward_end, loss_backward, block_backward, optimizer

struct MemoryBreakdown {
  double params_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double buffers_bytes = 0;      // DDP buckets, FSDP gathered units, bf16 weight copies
  double activations_bytes = 0;  // saved for backward, in flight (1F1B) at the peak
  double logits_bytes = 0;       // logits and loss buffers at the peak
  double transient_bytes = 0;
  double peak_bytes = 0;
  MemoryPhase peak_phase = MemoryPhase::kForwardEnd;
};

struct StepEstimate {
  TimeBreakdown time;
  MemoryBreakdown memory;
  double device_memory_bytes = 0;
  bool fits = true;
  double tokens_per_s = 0;  // global
  double mfu = 0;           // model FLOPs per GPU per second / peak
};

// Checks that the plan can run the model (divisibility, sequence split) and fits in memory;
// returns a message naming the violated constraint otherwise.
Status CheckPlan(const Workload& w, const ParallelPlan& p);

// Step time and memory on GPUs of `gpu`, `gpus_per_node` per node (collectives of groups larger
// than a node use the inter-node tables). Does not fail on memory: see `fits`.
Result<StepEstimate> EstimateStep(const Workload& w, const ParallelPlan& p, const GpuProfile& gpu,
                                  int gpus_per_node);

// An allocation as the scheduler hands it out: GPUs of one or more types on some nodes.
struct AllocationGroup {
  const GpuProfile* gpu = nullptr;
  int gpus = 0;
  int nodes = 1;
};
struct Allocation {
  std::vector<AllocationGroup> groups;
};

// Seconds per optimizer step of the model under the plan on the allocation. Data-parallel
// replicas run in lock step, so a mixed allocation runs at the pace of its slowest group.
// Errors when the plan does not match the allocation's GPU count or does not fit in memory.
Result<double> StepTime(const Workload& w, const ParallelPlan& p, const Allocation& a);

}  // namespace orrery::plan
