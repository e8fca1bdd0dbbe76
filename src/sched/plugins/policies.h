// Policy registry: a policy is a named assembly of plugins at the framework's
// extension points, built from a spec "name[:key=value,...]" with validated parameters.
//
//   fifo    QueueSort submit time; blocking (head-of-line)
//   sjf     QueueSort true duration (oracle); blocking
//   srtf    QueueSort true remaining time (oracle); greedy; PostFilter preempts running
//           jobs with longer remaining time; checkpoint overhead 7/30/60 s per preemption;
//           estimator=... (e.g. semantic): the same on believed remaining time (the estimate
//           at submit, then the ETA of progress reports), no oracle
//   qssf    QueueSort estimated GPU-time (estimate × GPUs, ties by GPUs); blocking;
//           estimator=noisy-oracle (default) | oracle | walltime | history | user-stats |
//           xgboost | blend | table:<csv> (see predict/estimator.h)
//   easy    QueueSort submit time; PostFilter EASY backfill: reservation for the head
//           job at its shadow time, backfill jobs that end before it (by estimate) or
//           avoid its reserved nodes; estimator=walltime (default) | oracle | ...;
//           bf_max_job_test=N (default 1000) jobs examined per backfill pass
//           (= fifo with backfill=easy)
//   tiresias  discretized 2D-LAS / 2D-Gittins on attained GPU-service with preemption
//           (see sched/plugins/tiresias.h): preset=original|lucid, thresholds=T0/T1/…,
//           interval=S (periodic decisions; 0 = event-driven), knob=X, gittins=true|false,
//           delta=Δ, service=gpu|time, protect=X
//   lucid   Lucid: QueueSort estimated GPU-time; indolent GPU packing with an interference
//           model, PAS, threshold tuner and profiler (sched/plugins/lucid.h for parameters)
// Common parameters: blocking=true|false (override head-of-line blocking);
// backfill=easy|none (non-preemptive policies: EASY backfill behind the policy's own
// order, with bf_max_job_test; default none, easy for `easy`); eval_share=S (S in [0, 1):
// that share of each VC's GPUs reserved for evaluation jobs, sched/framework/reserve.h; not
// with lucid);
// shape=goodput|none (the planner chooses each described job's GPU count, layout and GPU
// type: sched/plugins/planner_shape.h GoodputShape, with shape_shrink=N (default 4),
// shape_grow=N (2), shape_gain=X (1.6); needs the trace's phases and the cluster, PolicyEnv);
// elastic=true|false (with shape=goodput: running jobs are grown and shrunk by checkpoint
// and restart, sched/plugins/elastic.h; elastic_cooldown=S, default 1800).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "model/cluster.h"
#include "model/trace.h"
#include "sched/framework/scheduler.h"
#include "sched/plugins/planner_shape.h"

namespace orrery {

// What a policy may need from its run beyond the spec. `trace` (may be null): job names and
// users for learning estimators (history, user-stats, xgboost, blend), phases (work) and
// requests for shape=goodput. `cluster` (may be null): the GPU types whose planner profiles
// shape=goodput reads. `planner`: the cost model shared with the simulator's progress model;
// MakePolicy sets it (PlannerCostFor(cluster)) when the spec shapes jobs and it is null.
// `shape_info` (live mode: no trace): each job's model and declared GPU bounds for
// shape=goodput instead of the trace's phases (elastic=true then builds a plugin that
// CheckLiveSupport refuses).
struct PolicyEnv {
  const Trace* trace = nullptr;
  const Cluster* cluster = nullptr;
  std::shared_ptr<const PlannerCost> planner;
  ShapeInfoFn shape_info;
};

Result<PolicyParts> MakePolicyFor(const std::string& spec, uint64_t seed, PolicyEnv* env);
// MakePolicyFor with only a trace (no shaping).
Result<PolicyParts> MakePolicy(const std::string& spec, uint64_t seed, const Trace* trace = nullptr);
std::vector<std::string> PolicyNames();

// A plugin spec "name[:key=value,...]" split into its name and its parameters, in the order
// given (shared by policies, Lucid and the CES energy policy). `what` names the kind of spec
// in errors, e.g. "policy" or "energy policy".
struct PluginSpec {
  std::string name;
  std::vector<std::pair<std::string, std::string>> params;
};
Result<PluginSpec> ParsePluginSpec(const std::string& spec, std::string_view what);

}  // namespace orrery
