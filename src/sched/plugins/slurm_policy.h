// `slurm`: Slurm's own decisions for a site's slurm.conf and sacctmgr listings
// (docs/design/slurm-model.md): jobs ordered by partition PriorityTier, then multifactor
// priority (recomputed every PriorityCalcPeriod, fair share by Fair Tree over the usage the
// running jobs charge), then submission; association and QOS limits keep jobs pending under
// Slurm's reason names; the main pass starts jobs in that order, over default_queue_depth
// jobs (every sched_interval over the whole queue), until one of a partition cannot start even
// by preempting (PreemptType partition_prio or qos; PreemptMode REQUEUE or CANCEL); with
// SchedulerType=sched/backfill a backfill pass over at most bf_max_job_test jobs
// (bf_max_job_user per user) reserves the earliest start of each within bf_window (times
// rounded up to bf_resolution) and starts those that delay no reservation. At submission (PolicyParts::admit) submission limits, an unknown account or QOS
// refuse a job, and a per-job limit that would hold it forever counts it as not run.
//
// A cluster VC is the partition of the same name (others: the default partition); in a cluster
// of one pool a job whose trace VC names a partition is in that partition. What a job
// is charged to: the account and QOS the trace records (Trace::accounting), else the first
// association of its user (its default account) and that association's default QOS. Its
// CPUs: its request, else its GPUs' share of a node's CPUs. Its time limit: its walltime, else
// the partition's MaxTime.
#pragma once

#include <span>

#include "base/result.h"
#include "sched/framework/api/policy_parts.h"
#include "sched/plugins/spec_args.h"

namespace orrery {

struct Trace;
struct Cluster;

// conf=FILE (required), accounts=FILE.
OptionSchema SlurmOptionSchema();

// Reads the files named by `args` and sets parts.sort, parts.reschedule. Needs the trace (its
// user names); a configuration whose semantics the simulator cannot reproduce yet
// (PreemptMode=SUSPEND, a PreemptType without a PreemptMode) is an error at its file:line.
Status BuildSlurmPolicy(const SpecArgs& args, const Trace* trace, const Cluster* cluster, PolicyParts* parts);

}  // namespace orrery
