// Queueing of the generated workloads against the real clusters (docs/workload.md,
// "Queueing: target vs simulated"; docs/validation/workload.md): each preset (its default users:
// per-node closed loop and flat long runs for Venus and Earth, open loop elsewhere) on the preset's own cluster under easy with walltime estimates (Slurm's queue
// order with backfill, what Helios and Acme ran). Real figures: avg/median queueing delay
// of GPU jobs from helios_cluster_summary.csv and acme-summary/cluster_summary.csv, averages
// over the whole 181/184-day traces, so the target is checked on the preset's whole period.
// One seed is not a calibration target: even with the template draw conditioned on the real
// GPU-seconds per job (WorkloadSpec::template_gpu_seconds_target), one seed's six-month avg
// queue still moves 2-16x between seeds 1-5, so the asserted statistic is the mean over seeds
// 1-5 of the whole-period avg queue: an estimate of the preset's expected avg queue, which is
// what a preset defines (the median over seeds is printed and recorded in docs/workload.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "sim/simulator.h"
#include "workload/cluster_of.h"
#include "workload/generator.h"
#include "workload/spec.h"

namespace orrery {
namespace {

struct QueueFigures {
  double avg_queue_s = 0, median_queue_s = 0;
  double offered_load = 0;      // GPU-seconds of the jobs / (GPUs x horizon)
  double horizon_util = 0;      // GPU-seconds delivered inside the horizon / (GPUs x horizon)
  double makespan_d = 0;        // last end - first submit
  double zero_wait_makespan_d = 0;  // max(submit + duration): the makespan if nothing waited
};

// How users behave: whether they cancel pending jobs (SimConfig::renege) and how they submit
// (unset: the preset's; Venus and Earth hold jobs per node and submit long runs at a flat rate).
struct Users {
  bool renege = false;
  std::optional<workload::ArrivalModel> arrivals;
  std::optional<workload::BatchModel> batches;
  std::optional<workload::LongRunArrivals> long_runs;
};

// The model before the closed loop per node (open loop, long runs on the weekly profile), kept as options.
Users OpenLoopWeekly(bool renege) {
  Users u;
  u.renege = renege;
  u.arrivals = workload::ArrivalModel::kOpenLoop;
  u.long_runs = workload::LongRunArrivals::kWeekly;
  return u;
}

// days <= 0: the preset's whole period.
QueueFigures Measure(const std::string& preset, double days, uint64_t seed = 1, Users users = {}) {
  auto spec = workload::GetPreset(preset);
  EXPECT_TRUE(spec.ok());
  if (days > 0) spec->days = days;
  days = spec->days;
  if (users.arrivals) spec->arrivals = *users.arrivals;
  if (users.batches) spec->batches = *users.batches;
  if (users.long_runs) spec->long_runs = *users.long_runs;
  Trace trace = workload::GenerateWorkload(*spec, seed);
  Cluster cluster = workload::ClusterOf(*spec);
  SimConfig cfg;
  cfg.policy = "easy:estimator=walltime";
  cfg.sample_interval = 0;
  cfg.explain = false;
  cfg.renege = users.renege;
  auto r = Simulate(trace, cluster, cfg);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  QueueFigures f;
  const double horizon = days * 86400.0, gpus = static_cast<double>(cluster.total_gpus());
  std::vector<double> waits;
  double last_end = 0, zero_wait = 0, offered = 0, delivered = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& j = trace.jobs[i];
    const JobOutcome& o = r->outcomes[i];
    EXPECT_TRUE(o.status == OutcomeStatus::kFinished || o.status == OutcomeStatus::kWithdrawn) << preset << " job " << i;
    waits.push_back(static_cast<double>(o.wait));  // withdrawn jobs wait until their cancel, as in the real summaries
    last_end = std::max(last_end, static_cast<double>(o.end));
    zero_wait = std::max(zero_wait, static_cast<double>(j.submit + j.duration));
    offered += static_cast<double>(j.gpus) * j.duration;
    double in = std::min<double>(o.end, horizon) - std::min<double>(o.start, horizon);
    delivered += j.gpus * in;
  }
  std::sort(waits.begin(), waits.end());
  for (double w : waits) f.avg_queue_s += w / waits.size();
  f.median_queue_s = waits[waits.size() / 2];
  f.offered_load = offered / (gpus * horizon);
  f.horizon_util = delivered / (gpus * horizon);
  f.makespan_d = (last_end - trace.jobs.front().submit) / 86400.0;
  f.zero_wait_makespan_d = (zero_wait - trace.jobs.front().submit) / 86400.0;
  std::printf("%-14s seed %llu %-6s %-17s %-7s avg queue %8.0f s  median %5.0f s  offered %.3f  util in horizon %.3f  makespan %.1f d "
              "(zero-wait %.1f d)\n",
              preset.c_str(), static_cast<unsigned long long>(seed),
              std::string(workload::BatchModelName(spec->batches)).c_str(),
              std::string(workload::ArrivalModelName(spec->arrivals)).c_str(), users.renege ? "renege" : "patient",
              f.avg_queue_s, f.median_queue_s, f.offered_load, f.horizon_util, f.makespan_d, f.zero_wait_makespan_d);
  return f;
}

// Mean and median over seeds 1-5 of the whole-period avg queue.
struct SeedFigures {
  double median_avg_queue_s = 0, mean_avg_queue_s = 0, max_median_queue_s = 0, min_median_queue_s = 1e18;
};

SeedFigures MeasureSeeds(const std::string& preset, Users users) {
  constexpr size_t kSeeds = 5;
  std::vector<QueueFigures> per(kSeeds);
  RunOrdered<QueueFigures>(
      kSeeds, AvailableCpus(), [&](size_t i) { return Measure(preset, 0, i + 1, users); },
      [&](size_t i, QueueFigures& f) {
        per[i] = f;
        return true;
      });
  SeedFigures s;
  std::vector<double> avg;
  for (const auto& f : per) {
    avg.push_back(f.avg_queue_s);
    s.mean_avg_queue_s += f.avg_queue_s / kSeeds;
    s.max_median_queue_s = std::max(s.max_median_queue_s, f.median_queue_s);
    s.min_median_queue_s = std::min(s.min_median_queue_s, f.median_queue_s);
  }
  std::sort(avg.begin(), avg.end());
  s.median_avg_queue_s = avg[kSeeds / 2];
  std::printf("%-14s seeds 1-5: mean of avg queue %.0f s, median %.0f s\n", preset.c_str(), s.mean_avg_queue_s,
              s.median_avg_queue_s);
  return s;
}

// One preset: the real figures and what the test asserts. Where the generated trace does
// not reproduce the real avg queue (meets_target = false), the assertion is a regression
// band around the measured value and docs/validation/workload.md says why it misses.
struct Row {
  const char* preset;
  bool renege;
  double real_avg_queue_s, real_median_queue_s;
  bool meets_target;
  double measured_s;  // mean over seeds 1-5 of the whole-period avg queue (checked when !meets_target)
  double median_tolerance_s = 30;  // every seed's median queue within this of the real median
  bool open_loop_weekly = false;   // the model before the closed loop per node (OpenLoopWeekly) instead of the preset's
};

// Real avg/median GPU-job queueing delay: helios_cluster_summary.csv avg/med_que_time_gpu,
// acme-summary/cluster_summary.csv avg/med_que_time_gpu. Measured: 181 (Helios) / 184 (Acme)
// days, seeds 1-5, with reneging (users cancel pending jobs: the closest model of the real
// accounting, which counts cancelled-while-pending jobs with their wait) and without.
// Venus and Earth: the preset's users (per-node closed loop, flat long runs) meet the target;
// the open-loop rows pin the model before (docs/validation/workload.md).
const Row kRows[] = {
    {"helios-venus", true, 1253.288, 0, true, 1447},
    {"helios-venus", false, 1253.288, 0, false, 3789},
    {"helios-earth", true, 319.483, 0, true, 368},
    {"helios-saturn", true, 611.561, 0, true, 600},
    {"helios-uranus", true, 1949.182, 0, true, 1570},
    {"helios-uranus", false, 1949.182, 0, false, 3099},
    {"acme-seren", true, 445.984, 1, false, 57, 1},
    // acme-kalos: its cluster's start latency (presets.cc, docs/validation/workload.md "Acme") sets the median.
    {"acme-kalos", true, 214.179, 17, false, 34, 3},
    {"helios-venus", true, 1253.288, 0, false, 14359, 30, true},
    {"helios-earth", true, 319.483, 0, false, 3388, 30, true},
};

void Check(const Row& row) {
  SCOPED_TRACE(std::string(row.preset) + (row.renege ? " renege" : " patient"));
  Users users = row.open_loop_weekly ? OpenLoopWeekly(row.renege) : Users{row.renege};
  SeedFigures f = MeasureSeeds(row.preset, users);
  if (row.meets_target) {
    EXPECT_NEAR(f.mean_avg_queue_s / row.real_avg_queue_s, 1.0, 0.30);
  } else {
    EXPECT_NEAR(f.mean_avg_queue_s, row.measured_s, 0.25 * row.measured_s + 5);
  }
  EXPECT_LE(f.max_median_queue_s, row.real_median_queue_s + row.median_tolerance_s);
  EXPECT_GE(f.min_median_queue_s, row.real_median_queue_s - row.median_tolerance_s);
}

// The month the issue names (30 days): the scheduler adds little to the makespan, the tail
// past the zero-wait schedule (which the month-long jobs set) stays within 3 days.
// The median is 0 s except on acme-kalos, whose start latency puts it at 17 s (real 17 s).
void CheckMonthMakespan(const char* preset, double median_s) {
  SCOPED_TRACE(preset);
  QueueFigures f = Measure(preset, 30);
  EXPECT_LE(f.makespan_d - f.zero_wait_makespan_d, 3.0);
  EXPECT_NEAR(f.median_queue_s, median_s, median_s > 0 ? 3 : 0);
}

TEST(WorkloadQueueing, HeliosVenusRenegeSlow) { Check(kRows[0]); }
TEST(WorkloadQueueing, HeliosVenusSlow) { Check(kRows[1]); }
TEST(WorkloadQueueing, HeliosEarthRenegeSlow) { Check(kRows[2]); }
TEST(WorkloadQueueing, HeliosSaturnRenegeSlow) { Check(kRows[3]); }
TEST(WorkloadQueueing, HeliosUranusRenegeSlow) { Check(kRows[4]); }
TEST(WorkloadQueueing, HeliosUranusSlow) { Check(kRows[5]); }
TEST(WorkloadQueueing, AcmeSerenRenegeSlow) { Check(kRows[6]); }
TEST(WorkloadQueueing, AcmeKalosRenege) { Check(kRows[7]); }
TEST(WorkloadQueueing, HeliosVenusOpenLoopRenegeSlow) { Check(kRows[8]); }
TEST(WorkloadQueueing, HeliosEarthOpenLoopRenegeSlow) { Check(kRows[9]); }
// Sweeps (batches of one template, fitted on the Venus bursts) overshoot
// (docs/validation/workload.md); seed 1 only, as a regression check of the option (real 1,949 s).
TEST(WorkloadQueueing, HeliosUranusSweepsSlow) {
  Users u;
  u.batches = workload::BatchModel::kSweeps;
  QueueFigures f = Measure("helios-uranus", 0, 1, u);
  EXPECT_NEAR(f.avg_queue_s, 7302, 0.25 * 7302);
  EXPECT_EQ(f.median_queue_s, 0);
}
TEST(WorkloadQueueing, MonthMakespan) {
  for (const char* p : {"helios-venus", "helios-earth", "helios-uranus"}) CheckMonthMakespan(p, 0);
  CheckMonthMakespan("acme-kalos", 17);
}

// The VC-total closed loop (users hold jobs while their VC's GPU total is full; weekly long
// runs) cut Venus's month queue (seed 1) from 13,464 s (open loop) to 3,909 s: still 3x the real
// 1,253 s, all of it gang scheduling and fragmentation (docs/validation/workload.md), which the
// per-node view of the preset removes.
TEST(WorkloadQueueing, HeliosVenusClosedLoop) {
  Users u;
  u.arrivals = workload::ArrivalModel::kClosedLoop;
  u.long_runs = workload::LongRunArrivals::kWeekly;
  QueueFigures f = Measure("helios-venus", 30, 1, u);
  EXPECT_NEAR(f.avg_queue_s, 3909, 0.25 * 3909);
  EXPECT_EQ(f.median_queue_s, 0);
}

}  // namespace
}  // namespace orrery
