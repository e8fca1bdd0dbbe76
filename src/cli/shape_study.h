// The planner-aware shape study (docs/validation/planner.md, "Planner-aware shapes"): a generated LLM
// pre-training workload (GPT 1.3B-13B, token budgets, requested GPUs) whose phases carry
// their model, and one simulated run per shape rule -- fixed (as requested) and the planner's
// goodput shape -- both under the planner-aware progress model.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "model/cluster.h"
#include "model/trace.h"
#include "sched/plugins/planner_shape.h"
#include "sched/plugins/policies.h"

namespace orrery::cli {

struct LlmWorkloadSpec {
  uint32_t jobs = 64;
  double mean_interarrival_s = 900;  // Poisson arrivals
  uint64_t seed = 1;
  int32_t seq = 2048;
  int32_t global_batch = 256;        // sequences per step (0.5 M tokens at seq 2048)
};

// Jobs drawn (stream "llm/jobs") from four GPT sizes (1.3B, 2.7B, 6.7B, 13B; weights
// 4:3:2:1), each with a requested GPU count (1.3B: 8; 2.7B: 8 or 16; 6.7B: 16 or 32; 13B: 32 or
// 64) and a token budget log-uniform in [0.5, 10] B tokens. One training phase per job:
// steps = tokens / (global_batch × seq), seconds_per_step = the planner's best step on the
// requested GPUs packed on whole nodes of `type`. Error when a model fits no plan there.
Result<Trace> GenerateLlmWorkload(const LlmWorkloadSpec& s, const PlannerCost& cost, GpuTypeId type,
                                  int gpus_per_node);

struct ShapeStudyRow {
  std::string shape;  // "fixed" | "goodput" | "elastic"
  uint64_t finished = 0;
  double avg_jct_h = 0, makespan_h = 0, avg_gpus = 0;
  uint64_t reshaped = 0;  // attempts that ran on another GPU count than their job requested
  uint64_t resized = 0;   // attempts stopped by a resize (checkpoint and restart)
};

// Seconds one restart of a job training `m` costs (the elastic resize cost, charged by the
// simulator's truth as the phase's checkpoint.restore): the checkpoint written at the stop
// and read at the restart, 14 B per parameter each way (bf16 weights, fp32 master weights and
// Adam moments; parameters 12·L·h² + 2·V·h) at 5 GB/s, plus 60 s to relaunch (processes,
// NCCL communicators, data loader). 1.3B: 60 + 8 = 68 s; 13B: 60 + 73 = 133 s.
Duration RestartCost(const TrainModel& m);

// The policy spec of a shape rule: fixed = "fifo"; goodput = fifo with shape=goodput and the
// options; elastic = the same with elastic=true.
std::string ShapePolicySpec(const std::string& shape, const GoodputShapeOptions& o);

// One fifo run per shape rule (fixed, goodput, elastic) on `cluster`, all timed by `cost`.
Result<std::vector<ShapeStudyRow>> RunShapeStudy(const Trace& trace, const Cluster& cluster,
                                                 std::shared_ptr<const PlannerCost> cost, GoodputShapeOptions options);


}  // namespace orrery::cli
