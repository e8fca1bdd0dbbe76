// Which policies live mode runs, and the one place that builds them for the daemon.
// Refused, with a message naming the reason: GPU-sharing policies (a share of a GPU is not
// expressible with ReqNodeList/--gres=gpu), and what the core refuses live
// (CheckLiveSupport: oracle policies such as sjf/srtf and oracle estimators, which read
// true durations no live scheduler knows; Lucid's profiler stage, which only the simulator
// models; elastic resizes). shape=goodput runs live for the jobs that opt in
// (flex_shape.h): the daemon gives the plugin their models and bounds (LiveShape).
#pragma once

#include <string>

#include "base/result.h"
#include "model/cluster.h"
#include "sched/framework/internal/scheduler.h"
#include "sched/plugins/planner_shape.h"
#include "semantic/semantic_estimator.h"

namespace orrery::live {

// What shape=goodput reads live: the cluster (its GPU types name the planner profiles) and,
// per job, the model and GPU bounds its batch script declares (unset: every job is fixed).
struct LiveShape {
  const Cluster* cluster = nullptr;
  ShapeInfoFn info;
};

// Builds `spec` as live mode runs it, or the reason live mode refuses it. `launch_schemas` (the
// advisor: each job's batch script as read) is what the `semantic` estimator reads; a policy whose
// estimator is `semantic` needs it, and with it the policy's estimator must be `semantic`
// (one source of the estimate).
Result<PolicyParts> MakeLivePolicy(const std::string& spec, uint64_t seed, semantic::SchemaSource launch_schemas = {},
                                   const LiveShape& shape = {});
// The same check without keeping the policy (config validation); `advisor`: launch files
// will be given; `gpu_type`: the [policy] gpu_type a shaping policy's planner reads.
Status CheckLivePolicy(const std::string& spec, uint64_t seed, bool advisor = false, const std::string& gpu_type = "");

// A cluster as live mode sees it for the planner: every node's GPUs are of type `gpu_type`
// (Slurm's untyped gres names none), or untyped when it is empty.
void SetGpuType(Cluster* cluster, const std::string& gpu_type);

}  // namespace orrery::live
