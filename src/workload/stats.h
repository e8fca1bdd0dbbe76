// Aggregate statistics of a trace, in the terms the workload presets are calibrated
// on (docs/workload.md), and a "generated vs target" table for `orrery generate --stats`.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "model/trace.h"
#include "workload/spec.h"

namespace orrery::workload {

struct WorkloadStats {
  uint64_t jobs = 0, gpu_jobs = 0, cpu_jobs = 0;
  double days = 0;                 // (last submit - first submit) / 86400, at least 1 s
  double jobs_per_day = 0, gpu_jobs_per_day = 0;
  double gpu_job_share = 0;        // GPU jobs / jobs
  // GPU jobs only from here on.
  double avg_gpus = 0, median_gpus = 0;
  uint32_t max_gpus = 0;
  double avg_duration_s = 0, median_duration_s = 0, p99_duration_s = 0;
  StateMix state_share{0, 0, 0};     // completed / cancelled / failed by count (others ignored)
  StateMix gpu_time_share{0, 0, 0};  // ... by GPU-seconds
  double gpu_seconds_per_job = 0;
  double offered_load = -1;        // GPU-seconds / (days * 86400 * cluster_gpus); -1 without cluster_gpus
  std::array<double, 24> hour_of_day_share{};  // submissions (all jobs) by hour of day, epoch-relative UTC
  std::array<double, 7> day_of_week_share{};   // Monday = 0
  uint64_t users = 0;              // distinct users with at least one job
  uint64_t names = 0;              // distinct (user, name) pairs
  double name_repetition = 0;      // share of jobs whose (user, name) appeared earlier in the trace
  double walltime_over_duration = 0;  // median walltime / duration (jobs with both)
};

// Hour-of-day and day-of-week use Trace::epoch_unix + submit (UTC). cluster_gpus > 0
// enables offered_load.
WorkloadStats ComputeWorkloadStats(const Trace& trace, uint64_t cluster_gpus = 0);

// Hour-of-day shares implied by kVenusGpuJobsPerHourOfWeek.
std::array<double, 24> VenusHourOfDayShare();
// Pearson correlation of two 24-value profiles.
double ProfileCorrelation(const std::array<double, 24>& a, const std::array<double, 24>& b);

// Fixed-width table: metric, generated, target, deviation.
std::string FormatStatsTable(const WorkloadStats& stats, const WorkloadTargets& targets);

}  // namespace orrery::workload
