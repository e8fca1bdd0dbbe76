// The discrete-event simulator: drives the scheduling core (sched/framework) in
// simulated time. Events are ordered by (time, sequence); at one instant the order is
// completions → arrivals → one scheduling cycle → 60-s samples, so runs are
// deterministic: the same trace, cluster, policy and seed give byte-identical outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "base/rng.h"
#include "config/cluster_config.h"
#include "model/attempt.h"
#include "model/cluster.h"
#include "model/energy.h"
#include "model/harvest.h"
#include "model/outcome.h"
#include "model/storage.h"
#include "model/trace.h"

namespace orrery {

struct ExplainNote;  // sched/framework/api/plugin.h
enum class PredictionKind : uint8_t;  // sched/framework/internal/scheduler.h

// A predicted start made during a run (SimConfig::predict_at): trace job `job`, pending at
// `made_at`, predicted to start at `at` (Scheduler::Forecast; kNoTime unless kind says so).
struct SimPrediction {
  uint32_t job;
  Time made_at, at;
  PredictionKind kind;
};
class JobSignals;    // sim/signals.h
class PlannerCost;   // sched/plugins/planner_shape.h

// A failure the run injects (tests, what-if studies): attempt `attempt` (0-based) of trace job
// `job` faults `after` seconds into its run. `cordon_for` > 0: the failure names one of the
// attempt's nodes (drawn from stream "failures/node"), which leaves placement for that long
// (sim/cordon.h).
struct InjectedFailure {
  uint32_t job = 0;
  uint16_t attempt = 0;
  Duration after = 0;
  FailureKind kind = FailureKind::kHardware;
  bool restartable = true;
  Duration cordon_for = 0;
  // s from the fault until the recovery's decision (RecoveryAction::HeldFor): the attempt makes
  // no progress but keeps its GPUs meanwhile, then fails.
  Duration hold = 0;
};

struct SimConfig {
  std::string policy = "fifo";          // MakePolicy spec
  std::string placer = "consolidate";   // MakePlacer name
  uint64_t seed = 1;
  Duration sample_interval = 60;        // time-series period (s); 0 = no samples
  bool model_cpu_mem = false;           // account CPU/memory where nodes declare them
  bool run_cpu_jobs = false;            // simulate jobs without GPUs (else: skipped)
  // Reneging (docs/workload.md, "Queueing"): a job whose trace state is CANCELLED is cancelled by
  // its user at submit + its recorded run time if it has not started by then (its user's patience
  // is the time after which they cancelled it in the record); it leaves the queue as
  // OutcomeStatus::kWithdrawn, its wait counting until the cancel. Off: cancelled jobs run their
  // recorded time like any other.
  bool renege = false;
  // Optional tie order: seq[job index] orders same-second arrivals and equal keys
  // (e.g. the Helios reference's order). Empty = trace order.
  std::vector<uint32_t> tie_order;
  // Energy saving (docs/energy.md). Empty = off: every node stays on and nothing below runs
  // (outputs are exactly those of a run without it).
  std::string energy;                 // PowerPlugin spec, e.g. "ces:buffer=1"
  Duration wake_latency = 300;        // s a powered-up node boots before it takes jobs
  double resume_failure = 0;          // probability that a boot fails (stream "power/resume")
  std::vector<PowerModel> node_power; // per node id (ClusterSpec::node_power); empty = no energy figures
  // Called every ~1 % of jobs with (jobs done, total) for a progress bar; may be empty.
  std::function<void(uint64_t, uint64_t)> progress;
  // Sharing policies: collect each job's packing explanation (SimResult::explain).
  bool explain = true;
  // Fractional-GPU traces: period (s) of the fragmentation measure (0 = off).
  Duration frag_interval = 3600;
  // Explain (`orrery explain`): watch trace job `watch_job` (-1 = none); the framework's and
  // plugins' notes about it (submit, estimate, queue, blocking reasons when they change,
  // starts, preemptions, completion) are appended to *watch_notes. With stop_after_watch the
  // run ends once that job has finished or been rejected (SimResult::stopped_early).
  int64_t watch_job = -1;
  std::vector<ExplainNote>* watch_notes = nullptr;
  bool stop_after_watch = false;
  // Predicted starts: after the cycle of the first instant at or after `predict_at`, the
  // prediction of every job pending then is appended to *predictions (null = off).
  Time predict_at = 0;
  std::vector<SimPrediction>* predictions = nullptr;
  // Attempts: record every attempt in SimResult::attempts (attempts.csv). Off, nothing is kept.
  bool record_attempts = false;
  // Jobs with phases (Trace::work) report their steps every `progress_report` s while they
  // run (Scheduler::ReportProgress), as a live job's log would; 0 = never.
  Duration progress_report = 0;
  // Semantic signals (sim/signals.h, docs/design/signals.md): when set, every running trace
  // job's log is read every signals->Interval() s and the reading goes to the policy
  // (ReportProgress with its steps, UpdateEstimate with its ETA). Not owned; null = off
  // (outputs are exactly those of a run without it).
  JobSignals* signals = nullptr;
  std::vector<InjectedFailure> failures;
  // Planner-aware progress (sim/planner_progress.h): jobs whose training phase describes its
  // model run at the planner's step time on the allocation they got. Null = off (every job at
  // its seconds_per_step). Required by policies with a ShapePlugin.
  std::shared_ptr<const PlannerCost> planner;
  // Shared storage and node caches that the checkpoint reads of jobs with a kLoad phase
  // (evaluation trials) compete for (sim/storage_sim.h). Read only when the trace has such jobs.
  StorageSpec storage;
  // Harvest (sim/harvest.h, docs/design/rl.md): RL jobs that lend their idle rollout GPUs to
  // queued jobs each step and take them back at the phase boundary. Empty = off (outputs are
  // exactly those of a run without it). Refused with GPU sharing, shapes, fractional GPUs,
  // CPU/memory modelling and energy saving.
  std::vector<HarvestPlan> harvest;
};

// FGD-style fragmentation (Weng et al., ATC'23, GPU dimension only) at one instant: the
// free GPU capacity that a task drawn from the trace's demand mix could not use, averaged
// over that mix: for a whole-GPU task of k GPUs a node's free share on partly used GPUs is a
// fragment (all of its free share if fewer than k GPUs are wholly free); for a fractional task
// of m milli-GPUs the free share of GPUs with less than m free is.
struct FragSample {
  Time t = 0;
  double free_gpus = 0;        // free GPU capacity (GPUs)
  double fragmented_gpus = 0;  // expected unusable part of it (GPUs)
  double ratio() const { return free_gpus > 0 ? fragmented_gpus / free_gpus : 0; }
};

struct SimResult {
  std::string policy, placer;
  std::vector<JobOutcome> outcomes;  // one per trace job, in trace order
  std::vector<TimeSample> samples;
  std::vector<std::string> reasons;  // reject/skip reason table (JobOutcome::reject_reason)
  std::vector<std::string> vc_names;  // cluster VC names (JobOutcome::vc)
  uint64_t total_gpus = 0;
  uint64_t events = 0;
  Time first_submit = 0, last_end = 0;
  double gpu_seconds_busy = 0;       // ∫ busy GPUs dt
  bool oracle = false;               // the policy read true durations
  // GPU sharing (policies with a SharePlugin, e.g. lucid); all empty/zero otherwise.
  std::vector<Duration> shared_run;  // per trace job: seconds it ran sharing its GPUs
  uint64_t packed_starts = 0;        // jobs started on a running partner's GPUs
  uint64_t profiled = 0, done_in_profiler = 0;  // Lucid's profiler: jobs run there / finished there
  std::vector<std::pair<uint32_t, uint32_t>> packs;  // (job, partner job) per packed start, in order
  std::string workload_assignment;   // how jobs got model/batch/utilization attributes
  std::vector<std::pair<uint32_t, std::string>> explain;  // (job, why packed / not packed)
  std::vector<FragSample> fragmentation;  // fractional-GPU traces, every frag_interval seconds
  bool stopped_early = false;        // SimConfig::stop_after_watch ended the run
  bool has_energy = false;           // SimConfig::energy was set
  EnergyStats energy;
  std::vector<uint32_t> powered_samples;  // energy runs: nodes on or booting at each sample
  bool fractional = false;           // the trace has fractional-GPU jobs
  AttemptLog attempts;               // SimConfig::record_attempts: every attempt, in end order
  uint64_t cordoned_nodes = 0;       // injected failures whose node was cordoned (InjectedFailure::cordon_for)
  double cordoned_node_seconds = 0;  // time nodes spent cordoned, up to last_end
  double cordoned_gpu_seconds = 0;   // the same weighted by the nodes' GPUs
  bool shaped = false;               // the policy had a ShapePlugin (GPU-seconds: per attempt)
  // Jobs with dependencies (Trace::after): per trace job, when it was submitted to the
  // scheduler (its last predecessor finished, or its own submit time if later); kNoTime for
  // jobs never released. Empty when the trace has no dependencies. Queueing delay counts from here.
  std::vector<Time> released;
  // Jobs with a kLoad phase: per trace job, wall seconds its attempts spent in the load phase
  // (reading from shared storage, waiting for its node's cache fill, reading the cache). Empty
  // when the trace has none.
  std::vector<Duration> load_seconds;
  HarvestStats harvest;              // SimConfig::harvest: what the RL jobs lent and borrowers used
  double storage_bytes = 0;          // read from shared storage by kLoad phases
  uint32_t max_concurrent_reads = 0;
};

// One job's start latency (Cluster::start_latency, model/cluster.h), in whole seconds; the
// simulator draws one per job, in trace order, from stream "sim/start-latency".
Duration DrawStartLatency(const StartLatency& l, Rng& rng);

Result<SimResult> Simulate(const Trace& trace, const Cluster& cluster, const SimConfig& config);
// Same with a policy assembled by the caller (config.policy is then only its label).
struct PolicyParts;
Result<SimResult> Simulate(const Trace& trace, const Cluster& cluster, const SimConfig& config, PolicyParts policy);

// Checks the conservation laws of a finished run: every job finished, rejected or
// skipped (none lost, none running), times ordered, GPU-seconds ≤ capacity (the GPU-seconds
// RL jobs lent to others counted once, by the borrowers), no job started before a job it
// depends on finished. Returns the first violation.
Status CheckConservation(const Trace& trace, const SimResult& r);

}  // namespace orrery
