// Workload characterization of a trace (orrery analyze; docs/reports.md), in the spirit of
// the Helios (SC'21) and Acme (NSDI'24) studies. Computed from whatever columns the trace
// has; each part that the trace cannot support is listed in Characterization::missing
// with the reason, and its fields stay empty.
//
// Definitions:
//   duration     Job::duration, else end − start when both are recorded (unknown otherwise)
//   GPU time     duration × gpus × gpu_milli / 1000 (GPU-seconds), jobs of known duration
//   GPU job      gpus > 0; CPU job: gpus == 0
//   queueing     recorded start − submit (jobs with a recorded start)
//   CDFs         empirical, F(x) = fraction of values ≤ x, downsampled (report_html.h Cdf)
//   user shares  GPU time of the top ceil(k % × users) users / total GPU time, k = 1, 5, 10
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis/metrics.h"
#include "analysis/report_html.h"
#include "model/job.h"
#include "model/trace.h"

namespace orrery {

struct CharacterizeOptions {
  size_t max_points = 200;     // per CDF
  size_t max_time_bins = 400;  // per-VC time series
  size_t max_vcs = 12;         // VCs drawn separately in the time series (largest by GPU time)
  // GPUs per VC (from a cluster config); empty = unknown, so demand instead of utilization.
  std::map<std::string, uint64_t> vc_gpus;
};

struct DemandBucket {
  std::string label;   // "0 (CPU)", "<1 (fractional)", "1", "2", "3-4", "5-8", "9-16", ...
  uint64_t jobs = 0;
  double job_share = 0;       // of all jobs
  double gpu_seconds = 0;
  double gpu_time_share = 0;  // of all GPU time
  std::array<uint64_t, kNumJobStates> states{};  // jobs by recorded final state
};

struct PeriodRow {
  std::string label;  // "2017-10" (absolute) or "days 0-29" (relative)
  uint64_t jobs = 0, gpu_jobs = 0;
  double gpu_hours = 0;
};

struct VcSeries {
  std::string vc;
  uint64_t capacity = 0;          // GPUs (0 = unknown)
  std::vector<double> gpus;       // mean GPUs busy (or demanded) per bin
};

struct UserRow {
  std::string user;
  uint64_t jobs = 0;
  double gpu_hours = 0, gpu_time_share = 0;
  uint64_t queued_jobs = 0;       // jobs with a recorded start
  double avg_queue = 0, median_queue = 0;
};

struct TypeRow {
  std::string type;
  uint64_t jobs = 0;
  double job_share = 0, gpu_hours = 0, gpu_time_share = 0;
  double avg_duration = 0, avg_gpus = 0, avg_queue = 0;
  uint64_t queued_jobs = 0;
};

struct Characterization {
  std::string origin;
  uint64_t jobs = 0, gpu_jobs = 0, cpu_jobs = 0;
  bool epoch_known = false;
  int64_t epoch_unix = 0;
  Time first_submit = 0, last_submit = 0;
  double total_gpu_seconds = 0;

  std::vector<report::CdfPoint> duration_cdf_gpu, duration_cdf_cpu;
  std::vector<report::TailPoint> duration_tail_gpu, duration_tail_cpu;  // p90–p99.9 (report_html.h Tail)
  Distribution duration_gpu, duration_cpu;
  uint64_t duration_known = 0;

  std::vector<DemandBucket> demand;
  bool has_state = false;

  std::vector<report::CdfPoint> queue_cdf_gpu, queue_cdf_cpu;
  std::vector<report::TailPoint> queue_tail_gpu, queue_tail_cpu;
  Distribution queue_gpu, queue_cpu;
  uint64_t start_known = 0;

  bool absolute_calendar = false;  // hour/weekday are UTC clock times (else relative to the first submit)
  std::array<uint64_t, 24> hourly{};   // submissions by hour of day
  std::array<uint64_t, 7> weekday{};   // Monday = 0 (absolute) or day index mod 7 (relative)
  std::vector<PeriodRow> monthly;

  Time bin_start = 0;
  Duration bin_width = 0;
  bool vc_series_is_allocation = false;  // from recorded start/end (else submit + duration)
  bool vc_capacity_known = false;
  std::vector<VcSeries> vc_series;

  uint64_t users = 0;
  double top1_share = 0, top5_share = 0, top10_share = 0;
  std::vector<std::pair<double, double>> user_lorenz;  // (fraction of users, share of GPU time), top first
  std::vector<UserRow> top_users;  // by GPU time, at most 20

  std::vector<TypeRow> job_types;  // Acme: from the name field

  std::vector<std::string> missing;  // "section: reason"
};

Characterization Characterize(const Trace& trace, const CharacterizeOptions& options = {});
// The HTML report of a characterization (sections, charts, tables). Its series (one colour each
// in every chart) are "GPU jobs" and "CPU jobs".
report::Page CharacterizationPage(const Characterization& c, const std::string& trace_label);

}  // namespace orrery
