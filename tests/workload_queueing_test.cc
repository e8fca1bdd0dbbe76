// Queueing of the generated workloads against the real clusters (docs/workload.md,
// "Queueing: target vs simulated"; docs/validation.md "#16"): each preset (seed 1, open-loop
// arrivals) on the preset's own cluster under easy with walltime estimates (Slurm's queue
// order with backfill, what Helios and Acme ran). Real figures: avg/median queueing delay
// of GPU jobs from helios_cluster_summary.csv and acme-summary/cluster_summary.csv, averages
// over the whole 181/184-day traces, so the target is checked on the preset's whole period:
// the avg queue of one 30-day month varies 3-40x between seeds (Uranus 30 s .. 4,188 s, seeds
// 1-3), a single month cannot confirm or refute a six-month average.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

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

// days <= 0: the preset's whole period.
QueueFigures Measure(const std::string& preset, double days,
                     workload::ArrivalModel arrivals = workload::ArrivalModel::kOpenLoop,
                     workload::BatchModel batches = workload::BatchModel::kSingle) {
  auto spec = workload::GetPreset(preset);
  EXPECT_TRUE(spec.ok());
  if (days > 0) spec->days = days;
  days = spec->days;
  spec->arrivals = arrivals;
  spec->batches = batches;
  Trace trace = workload::GenerateWorkload(*spec, 1);
  Cluster cluster = workload::ClusterOf(*spec);
  SimConfig cfg;
  cfg.policy = "easy:estimator=walltime";
  cfg.sample_interval = 0;
  cfg.explain = false;
  auto r = Simulate(trace, cluster, cfg);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  QueueFigures f;
  const double horizon = days * 86400.0, gpus = static_cast<double>(cluster.total_gpus());
  std::vector<double> waits;
  double last_end = 0, zero_wait = 0, offered = 0, delivered = 0;
  for (size_t i = 0; i < trace.jobs.size(); ++i) {
    const Job& j = trace.jobs[i];
    const JobOutcome& o = r->outcomes[i];
    EXPECT_EQ(o.status, OutcomeStatus::kFinished) << preset << " job " << i;
    waits.push_back(static_cast<double>(o.wait));
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
  std::printf("%-14s %-6s avg queue %8.0f s  median %5.0f s  offered %.3f  util in horizon %.3f  makespan %.1f d "
              "(zero-wait %.1f d)\n",
              preset.c_str(), std::string(workload::BatchModelName(batches)).c_str(), f.avg_queue_s, f.median_queue_s, f.offered_load, f.horizon_util, f.makespan_d,
              f.zero_wait_makespan_d);
  return f;
}

// One preset: the real figures and what the test asserts. Where the generated trace does
// not reproduce the real avg queue (meets_target = false), the assertion is a regression
// band around the measured value and docs/validation.md "#16" says why it misses.
struct Row {
  const char* preset;
  workload::BatchModel batches;
  double real_avg_queue_s, real_median_queue_s;
  bool meets_target;
  double measured_avg_queue_s;  // seed 1, whole period (only checked when !meets_target)
};

// Real avg/median GPU-job queueing delay: helios_cluster_summary.csv avg/med_que_time_gpu,
// acme-summary/cluster_summary.csv avg/med_que_time_gpu. Measured: seed 1, 181 (Helios) /
// 184 (Acme) days.
constexpr auto kSingle = workload::BatchModel::kSingle;
constexpr auto kSweeps = workload::BatchModel::kSweeps;
const Row kRows[] = {
    {"helios-venus", kSingle, 1253.288, 0, false, 19918},
    {"helios-earth", kSingle, 319.483, 0, false, 8080},
    {"helios-saturn", kSingle, 611.561, 0, true, 441},
    {"helios-uranus", kSingle, 1949.182, 0, false, 125},
    {"acme-seren", kSingle, 445.984, 1, false, 163},
    {"acme-kalos", kSingle, 214.179, 17, false, 50},
    // Sweeps (batches of one template, fitted on the Venus bursts) overshoot: 5-11x on the
    // single pools, days on the VC clusters (docs/validation.md "#16").
    {"helios-uranus", kSweeps, 1949.182, 0, false, 1203},
    {"acme-seren", kSweeps, 445.984, 1, false, 3410},
};

void Check(const Row& row) {
  SCOPED_TRACE(std::string(row.preset) + " " + std::string(workload::BatchModelName(row.batches)));
  QueueFigures f = Measure(row.preset, 0, workload::ArrivalModel::kOpenLoop, row.batches);
  if (row.meets_target) {
    EXPECT_NEAR(f.avg_queue_s / row.real_avg_queue_s, 1.0, 0.30);
  } else {
    EXPECT_NEAR(f.avg_queue_s, row.measured_avg_queue_s, 0.25 * row.measured_avg_queue_s + 5);
  }
  EXPECT_LE(std::abs(f.median_queue_s - row.real_median_queue_s), 30.0);
}

// The month the issue names (30 days): the scheduler adds little to the makespan, the tail
// past the zero-wait schedule (which the month-long jobs set) stays within 3 days.
void CheckMonthMakespan(const char* preset) {
  SCOPED_TRACE(preset);
  QueueFigures f = Measure(preset, 30);
  EXPECT_LE(f.makespan_d - f.zero_wait_makespan_d, 3.0);
  EXPECT_EQ(f.median_queue_s, 0);
}

TEST(WorkloadQueueing, HeliosVenus) { Check(kRows[0]); }
TEST(WorkloadQueueing, HeliosEarth) { Check(kRows[1]); }
TEST(WorkloadQueueing, HeliosSaturnSlow) { Check(kRows[2]); }
TEST(WorkloadQueueing, HeliosUranus) { Check(kRows[3]); }
TEST(WorkloadQueueing, AcmeSerenSlow) { Check(kRows[4]); }
TEST(WorkloadQueueing, AcmeKalos) { Check(kRows[5]); }
TEST(WorkloadQueueing, HeliosUranusSweeps) { Check(kRows[6]); }
TEST(WorkloadQueueing, AcmeSerenSweepsSlow) { Check(kRows[7]); }
TEST(WorkloadQueueing, MonthMakespan) {
  for (const char* p : {"helios-venus", "helios-earth", "helios-uranus", "acme-kalos"}) CheckMonthMakespan(p);
}

// Closed-loop arrivals (users hold jobs while their VC is full) cut Venus's simulated queue
// from 13,464 s to 3,909 s (seed 1): still 3x the real 1,253 s (docs/workload.md).
TEST(WorkloadQueueing, HeliosVenusClosedLoop) {
  QueueFigures f = Measure("helios-venus", 30, workload::ArrivalModel::kClosedLoop);
  EXPECT_NEAR(f.avg_queue_s, 3909, 0.25 * 3909);
  EXPECT_EQ(f.median_queue_s, 0);
}

}  // namespace
}  // namespace orrery
