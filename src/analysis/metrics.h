// Metrics of a run, computed only from the documented per-job records (JobOutcome)
// and samples, so simulated and live runs are measured the same way.
//
// Definitions (docs/formats/sim-output.md):
//   queueing delay = time pending (summed over pending periods; = start − submit
//                    without preemption);   JCT = end − submit;
//   bounded slowdown = max(1, JCT / max(run, τ)) with τ = 10 s;
//   makespan = last end − first submit;
//   GPU utilisation = ∫ allocated GPUs dt / (cluster GPUs × makespan).
// Percentiles use the nearest-rank method on finished jobs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/energy.h"
#include "model/outcome.h"
#include "model/trace.h"

namespace orrery {

struct Distribution {
  double mean = 0, median = 0, p95 = 0, p99 = 0, p999 = 0, max = 0;
};

struct GroupStats {
  std::string name;
  uint64_t jobs = 0;  // finished jobs in the group
  Distribution jct, wait, slowdown;
  double gpu_hours = 0;
};

struct RunSummary {
  std::string policy, placer;
  uint64_t jobs = 0, finished = 0, rejected = 0, skipped = 0, unfinished = 0, failed = 0;
  uint64_t withdrawn = 0;  // cancelled while pending (SimConfig::renege); their waits are in `wait`
  uint64_t preempted = 0;  // ended by a preemption that cancels them (Slurm's PreemptMode=CANCEL)
  uint64_t preemptions = 0;
  Distribution jct, wait, slowdown;
  Time makespan = 0;
  double gpu_utilization = 0;   // 0..1
  double gpu_hours = 0;
  uint64_t total_gpus = 0;
  GroupStats small, large;      // ≤ 8 GPUs, > 8 GPUs
  std::vector<GroupStats> per_vc;
  // Per Slurm account, for traces that record accounts (Trace::accounting), in the order of the
  // accounts' first jobs in the trace (an account none of whose jobs finished has jobs = 0); jobs
  // with no recorded account form the group "(none)". Empty otherwise.
  std::vector<GroupStats> per_account;
  std::vector<std::pair<std::string, uint64_t>> not_run_reasons;  // reason -> jobs
  bool oracle = false;
  bool has_energy = false;      // energy-saving run (docs/energy.md)
  EnergyStats energy;
  // Runs with failures on (`simulate --failures`; docs/design/failures.md): trace jobs recorded
  // as cancelled (they run until their recorded end) plus withdrawn ones, and the capacity
  // cordoned nodes took: node-hours and their GPU-seconds over total_gpus × (last_end − first_submit).
  bool has_failures = false;
  uint64_t cancelled = 0;
  uint64_t cordons = 0;
  double cordoned_node_hours = 0, cordoned_capacity_share = 0;
};

// A run loses more than this share of its GPU capacity to cordoned nodes: warned about.
inline constexpr double kRepairWarnShare = 0.10;
// "warning: ..." when `s` had failures on and its cordoned nodes took more than
// kRepairWarnShare of the capacity; empty otherwise.
std::string RepairCapacityWarning(const RunSummary& s);

inline constexpr Duration kSlowdownTau = 10;

struct RunData {
  std::string policy, placer;
  const std::vector<JobOutcome>* outcomes = nullptr;
  const std::vector<std::string>* vc_names = nullptr;
  const std::vector<std::string>* reasons = nullptr;
  uint64_t total_gpus = 0;
  Time first_submit = 0, last_end = 0;
  double gpu_seconds_busy = 0;
  bool oracle = false;
  const EnergyStats* energy = nullptr;  // energy-saving runs only
  // Per trace job (the outcomes' order), its account; null or empty: no per-account groups.
  const std::vector<JobAccount>* accounting = nullptr;
};

RunSummary Summarize(const RunData& run);
Distribution Describe(std::vector<double>& values);  // sorts `values`

}  // namespace orrery
