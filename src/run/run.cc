#include "run/run.h"

#include <map>

#include "sim/helios_compat.h"

namespace orrery {

Result<SimResult> SimulateChecked(const Trace& trace, const Cluster& cluster, const SimConfig& cfg,
                                  bool helios_compat) {
  Result<SimResult> r = helios_compat ? SimulateHeliosCompat(trace, cluster, cfg) : Simulate(trace, cluster, cfg);
  if (!r.ok()) return r.error().With("policy " + cfg.policy);
  if (Status cons = CheckConservation(trace, *r); !cons.ok()) return cons.error().With("policy " + cfg.policy);
  if (Status any = CheckSomethingRuns(trace, *r, cluster.name); !any.ok()) return any.error();
  return r;
}

RunSummary SummaryOf(const SimResult& r, const Trace& trace) {
  RunData rd{r.policy, r.placer, &r.outcomes, &r.vc_names, &r.reasons, r.total_gpus,
             r.first_submit, r.last_end, r.gpu_seconds_busy, r.oracle,
             r.has_energy ? &r.energy : nullptr, trace.has_accounting() ? &trace.accounting : nullptr};
  return Summarize(rd);
}

// A run in which no job can run is an error, not a table of zeros: names the reasons
// (from the first policy's run) and a hint.
Status CheckSomethingRuns(const Trace& trace, const SimResult& r, const std::string& cluster) {
  if (trace.jobs.empty()) return MakeError("the workload has no jobs");
  std::map<uint8_t, uint64_t> why;
  for (const JobOutcome& o : r.outcomes) {
    if (o.status == OutcomeStatus::kFinished || o.status == OutcomeStatus::kUnfinished ||
        o.status == OutcomeStatus::kWithdrawn || o.status == OutcomeStatus::kPreempted)
      return Status::Ok();
    ++why[o.reject_reason];
  }
  std::string reasons;
  for (const auto& [k, n] : why)
    reasons += (reasons.empty() ? "" : "; ") + (k < r.reasons.size() ? r.reasons[k] : std::string("unknown reason")) +
               ": " + std::to_string(n);
  return MakeError("no job of the " + std::to_string(trace.jobs.size()) + " can run on cluster '" + cluster +
                   "' (" + reasons +
                   "). Hint: pass the cluster the trace ran on (--cluster FILE.toml or --cluster auto), "
                   "--cpu-jobs for jobs without GPUs, or --swf-procs-as-gpus for an HPC (SWF) log");
}

}  // namespace orrery
