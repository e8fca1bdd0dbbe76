// Synthetic workload specification: a plain struct describing the job population
// the generator draws from, plus named presets calibrated on public summaries
// (docs/workload.md lists every number, its source and the tolerances).
//
// Units: seconds for times and durations, GPUs (whole devices), milli-cores, MiB.
// Shares/probabilities are fractions in [0, 1].
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "model/cluster.h"
#include "model/job.h"

namespace orrery::workload {

// One virtual cluster (Slurm partition) the jobs are spread over.
struct VcSpec {
  std::string name;
  uint32_t gpus = 0;  // capacity in GPUs; jobs are assigned to VCs in proportion to it
};

// One GPU-demand bucket: `weight` is relative (need not sum to 1).
struct SizeWeight {
  uint32_t gpus = 1;
  double weight = 0;
};

// Final-state mix of a class (fractions; normalised when drawn).
struct StateMix {
  double completed = 1, cancelled = 0, failed = 0;
};

// A family of jobs (e.g. "train", "pretrain", "eval"). Every recurring job template
// (user, name) belongs to one class and inherits its size and duration model.
//
// Duration of a template's typical run (seconds): a two-component lognormal mixture,
//   body: median body_median_s, log-sd body_sigma      (short/debug/interactive jobs)
//   tail: median tail_median_s, log-sd tail_sigma      (long training runs)
// The tail is chosen with probability min(0.98, tail_prob * (1 + tail_gpu_slope*log2(gpus))),
// so larger jobs tend to run longer. A job's duration is its template's typical
// duration times lognormal noise exp(N(0, run_noise_sigma)); the template itself gets the
// remaining spread (sqrt(sigma^2 - run_noise_sigma^2)) so the marginal is unchanged.
// Then per final state: completed x1, cancelled x cancelled_factor, failed x a random
// fraction U^failed_shape * failed_scale (failed jobs die early), clipped to [1, max_duration_s].
struct JobClass {
  std::string name;              // "train", "pretrain", ...
  double weight = 1;             // relative share of GPU jobs
  std::vector<SizeWeight> gpus;  // GPU demand mix
  double body_median_s = 200, body_sigma = 1.5;
  double tail_median_s = 20000, tail_sigma = 1.3;
  double tail_prob = 0.2;
  double tail_gpu_slope = 0.0;
  double gpu_duration_exponent = 0.0;  // typical duration also x gpus^exponent (larger jobs run longer)
  StateMix states;
  std::vector<std::string> name_stems;  // model/task stems for job names; empty = generic
  JobKind kind = JobKind::kUnknown;     // Job::kind of its jobs (Acme's job types)
};

// Aggregate targets the presets are calibrated on (for --stats and the tests).
// A negative value means "no target".
struct WorkloadTargets {
  std::string source;               // e.g. "helios_cluster_summary.csv row Venus"
  double gpu_jobs = -1;             // GPU jobs over `days`
  double days = -1;
  double avg_gpus = -1, median_gpus = -1;
  double avg_duration_s = -1, median_duration_s = -1;  // GPU jobs
  StateMix state_share{-1, -1, -1};        // GPU jobs, by count
  StateMix gpu_time_share{-1, -1, -1};     // GPU jobs, by GPU-seconds
  double gpu_seconds_per_job = -1;  // sum of GPU time / GPU jobs
  double cpu_job_share = -1;        // CPU jobs / all jobs (only checked with CPU jobs on)
  double offered_load = -1;         // GPU-seconds / (span * cluster GPUs)
  bool hour_profile = false;        // compare hour-of-day shares with kVenusGpuJobsPerHourOfWeek
};

// How submissions react to the cluster (docs/workload.md, "Queueing").
enum class ArrivalModel : uint8_t {
  // Poisson arrivals regardless of the cluster's state.
  kOpenLoop,
  // User feedback: a GPU job that would not fit into its VC's free GPUs at its Poisson
  // arrival time is held back by its user and submitted at the first time from which it
  // fits for its whole duration. "Free" counts every job already submitted (or booked for a
  // later submission) as running from its submission for its duration: a fragmentation-free
  // view of the VC, so the VC is never over-committed in that view.
  kClosedLoop,
  // kClosedLoop seen per node, as Slurm shows a VC (free GPUs per node): a job of at most one
  // node's GPUs is held until they are free on one node, a larger one until ceil(gpus /
  // gpus_per_node) whole nodes are idle, for its whole duration (first fit; docs/workload.md
  // model item 17). The VC total is then never over-committed either.
  kClosedLoopNodes,
};
std::string_view ArrivalModelName(ArrivalModel m);
Result<ArrivalModel> ParseArrivalModel(std::string_view name);

// How many jobs one arrival event submits (docs/workload.md, "Batches").
enum class BatchModel : uint8_t {
  // One job per event: the arrivals are the Poisson process itself.
  kSingle,
  // A sweep: each event submits B jobs of one (user, template) at the same second, with
  // P(B = k) ~ k^-kVenusBatchZipf for k = 1..kVenusBatchMax (fitted on the Venus 10-minute
  // submission counts, calibration_data.h). The event rate is divided by E[B], so the job rate
  // and every per-job expectation stay those of kSingle; only the arrival variance grows.
  kSweeps,
  // Sweeps of short runs (docs/workload.md model item 15): the jobs come from two streams, a
  // template's stream being its duration component. Short runs (body component) arrive in
  // sweeps of the kSweeps sizes; long runs (tail component) arrive one per event. Each stream
  // picks its user by activity x the user's share of that component and a template of the
  // component by its Zipf popularity, so every template's expected job share, hence every
  // per-job expectation, is that of kSingle.
  kShortSweeps,
};
std::string_view BatchModelName(BatchModel m);
Result<BatchModel> ParseBatchModel(std::string_view name);

// When long runs (templates of their class's tail component) are submitted (docs/workload.md
// model item 15). Anything but kWeekly uses the two streams of BatchModel::kShortSweeps (with
// kSweeps, both streams submit sweeps).
enum class LongRunArrivals : uint8_t {
  // The job-count profile hour_of_week, as every other job.
  kWeekly,
  // A constant rate: the long-run stream ignores the hour of week (its expected job count is
  // unchanged; the job-count profile is then followed by the short runs only).
  kFlat,
};
std::string_view LongRunArrivalsName(LongRunArrivals m);
Result<LongRunArrivals> ParseLongRunArrivals(std::string_view name);

// Where long runs (templates of their class's tail component) take their GPU count from
// (docs/workload.md model item 16).
enum class LongRunSizes : uint8_t {
  // The class's size mix, as every template (the tail probability then grows with the size by
  // tail_gpu_slope).
  kClassMix,
  // The sizes of the Venus jobs submitted alone in their 10-minute bin
  // (kVenusLoneSubmissionGpus); the component is drawn first (tail_prob), the class mix is
  // then the short runs' mix. Changes the per-job statistics: a preset needs its own fit for it
  // (WithLoneLongRuns).
  kLoneSubmissions,
};
std::string_view LongRunSizesName(LongRunSizes m);
Result<LongRunSizes> ParseLongRunSizes(std::string_view name);

struct WorkloadSpec {
  std::string name;         // preset name
  std::string description;
  int64_t epoch_unix = 1585699200;  // absolute time of t = 0 (default 2020-04-01 00:00:00, Venus start)

  // --- arrivals: non-homogeneous Poisson process ---------------------------------
  // Rate at time t = gpu_jobs_per_day/86400 * load * hour_of_week[how(t)] / mean(hour_of_week).
  double gpu_jobs_per_day = 692.3;  // GPU jobs per day at load 1 (Venus: 125,303 / 181 d)
  double load = 1.0;                // scale factor on the arrival rate (--load)
  std::array<double, 168> hour_of_week{};  // relative rate per hour of week (Mon 00:00 = 0); all 0 = flat
  ArrivalModel arrivals = ArrivalModel::kOpenLoop;
  BatchModel batches = BatchModel::kSingle;
  LongRunArrivals long_runs = LongRunArrivals::kWeekly;
  LongRunSizes long_run_sizes = LongRunSizes::kClassMix;
  double days = 181;                // horizon when no job count is given
  uint64_t jobs = 0;                // if > 0: generate exactly this many jobs (overrides days)

  // --- cluster -------------------------------------------------------------------
  std::vector<VcSpec> vcs;          // at least one
  uint32_t gpus_per_node = 8;       // for Job::nodes = ceil(gpus / gpus_per_node)
  // The scheduling system's start latency on the preset's cluster (ClusterOf; model/cluster.h):
  // off except where the real cluster's queueing delays show one (acme-kalos).
  StartLatency start_latency;
  // A job asks for at most this share of its VC's GPUs (sizes above it are redrawn). A job
  // as large as its VC can only start once every job of the VC has ended (docs/workload.md,
  // "Queueing").
  double max_job_vc_share = 1.0;
  // Per-VC offered load follows VC capacity: each VC's users submit at a rate that makes the
  // VC's expected GPU-seconds (given the drawn templates) proportional to its GPUs. Off: job
  // counts per VC follow capacity and the VC loads differ with the templates drawn.
  bool balance_vc_load = false;

  // --- job population ------------------------------------------------------------
  std::vector<JobClass> classes;    // GPU job classes
  double max_duration_s = 30 * 86400.0;  // clip
  double run_noise_sigma = 0.8;     // per-run log-sd around a template's typical duration
  double cancelled_factor = 1.0;    // duration multiplier of cancelled jobs
  double failed_scale = 1.0, failed_shape = 1.0;  // failed: x failed_scale * U^failed_shape

  // CPU jobs (gpus = 0): off by default; when on, a share cpu_job_share of all arrivals.
  bool include_cpu_jobs = false;
  double cpu_job_share = 0.0;
  JobClass cpu_class;               // its `gpus` is ignored (always 0)

  // --- users and names -----------------------------------------------------------
  uint32_t users = 200;             // distinct users
  double user_zipf = 1.0;           // activity of the k-th user ~ 1/k^user_zipf
  uint32_t templates = 15000;       // recurring (user, name) templates over all users
  double template_zipf = 0.6;       // popularity of a user's k-th template ~ 1/k^template_zipf
  // Template draw conditioned on the offered load (docs/workload.md, "Queueing"): the set of
  // templates is redrawn (same stream) until its expected GPU-seconds per GPU job is within
  // template_load_tolerance of template_gpu_seconds_target, at most max_template_draws times
  // (the closest draw is kept). A target <= 0 keeps the first draw. The presets set the target
  // to the real summary's GPU-seconds per GPU job.
  double template_gpu_seconds_target = -1;
  double template_load_tolerance = 0.05;
  uint32_t max_template_draws = 200;  // Uranus seeds 1-3 need 6, 4, 30 (~0.1 s per draw)

  // --- requests --------------------------------------------------------------------
  // walltime = RoundUp(duration * user factor) to the next of 5/10/15/30 min, 1/2/4/6/8/12 h,
  // 1/2/3/5/7/14/30 days, capped at max(max_walltime_s, duration). The user factor is
  // 1 + LogNormal(median walltime_over_median - 1, walltime_over_sigma), fixed per user.
  double walltime_over_median = 3.0, walltime_over_sigma = 0.6;
  double max_walltime_s = 30 * 86400.0;
  uint32_t cpu_milli_per_gpu = 6000;  // CPU request = gpus * this (CPU jobs: cpu_milli_cpu_job)
  uint32_t mem_mib_per_gpu = 48 * 1024;
  uint32_t cpu_milli_cpu_job = 4000, mem_mib_cpu_job = 16 * 1024;

  WorkloadTargets targets;
  uint64_t cluster_gpus() const {
    uint64_t g = 0;
    for (const auto& v : vcs) g += v.gpus;
    return g;
  }
};

// "helios-venus" (default), "helios-earth", "helios-saturn", "helios-uranus",
// "acme-seren", "acme-kalos", "scale".
std::vector<std::string> PresetNames();
Result<WorkloadSpec> GetPreset(std::string_view name);
inline constexpr std::string_view kDefaultPreset = "helios-venus";

// The preset with LongRunSizes::kLoneSubmissions and its own fit of the per-job targets
// (docs/workload.md model item 16); an error for presets without that fit (all but helios-venus).
Result<WorkloadSpec> WithLoneLongRuns(WorkloadSpec s);
// The spec with the given long-run sizes: kClassMix keeps it as it is (every preset's default),
// kLoneSubmissions is WithLoneLongRuns.
Result<WorkloadSpec> WithLongRunSizes(WorkloadSpec s, LongRunSizes sizes);

// Checks ranges and consistency (positive rates, non-empty classes and VCs, ...).
Status ValidateSpec(const WorkloadSpec& spec);

}  // namespace orrery::workload
