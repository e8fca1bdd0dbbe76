#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <sstream>
#include <string>
#include <vector>

#include "workload/calibration_data.h"
#include "workload/generator.h"
#include "workload/spec.h"
#include "workload/stats.h"

namespace orrery::workload {
namespace {

WorkloadSpec Preset(const std::string& name) {
  auto r = GetPreset(name);
  EXPECT_TRUE(r.ok()) << name;
  return r.value();
}

bool SameJobs(const Trace& a, const Trace& b) {
  if (a.jobs.size() != b.jobs.size()) return false;
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    const Job &x = a.jobs[i], &y = b.jobs[i];
    if (x.id != y.id || x.user != y.user || x.vc != y.vc || x.name != y.name || x.submit != y.submit ||
        x.duration != y.duration || x.walltime != y.walltime || x.gpus != y.gpus || x.state != y.state ||
        x.cpu_milli != y.cpu_milli || x.mem_mib != y.mem_mib || x.nodes != y.nodes)
      return false;
  }
  return a.names.all() == b.names.all() && a.users.all() == b.users.all() && a.vcs.all() == b.vcs.all();
}

TEST(Workload, AllPresetsValidate) {
  for (const auto& n : PresetNames()) {
    auto s = Preset(n);
    EXPECT_TRUE(ValidateSpec(s).ok()) << n << ": " << ValidateSpec(s).error().message;
  }
  EXPECT_FALSE(GetPreset("nope").ok());
  EXPECT_NE(GetPreset("nope").error().message.find("helios-venus"), std::string::npos);
}

TEST(Workload, SameSeedSameTraceDifferentSeedDifferentTrace) {
  auto s = Preset("helios-venus");
  s.jobs = 20000;
  Trace a = GenerateWorkload(s, 7), b = GenerateWorkload(s, 7), c = GenerateWorkload(s, 8);
  ASSERT_EQ(a.jobs.size(), 20000u);
  EXPECT_TRUE(SameJobs(a, b));
  EXPECT_FALSE(SameJobs(a, c));
  // The streaming generator yields exactly the in-memory trace.
  WorkloadGenerator g(s, 7);
  Job j;
  size_t i = 0;
  bool same = true;
  while (g.Next(&j)) same = same && i < a.jobs.size() && j.duration == a.jobs[i].duration &&
                             j.submit == a.jobs[i].submit && j.name == a.jobs[i].name, ++i;
  EXPECT_TRUE(same);
  EXPECT_EQ(i, a.jobs.size());
}

TEST(Workload, InvariantsHoldForEveryPreset) {
  for (const auto& n : PresetNames()) {
    auto s = Preset(n);
    s.jobs = 30000;
    s.include_cpu_jobs = true;
    Trace t = GenerateWorkload(s, 3);
    ASSERT_EQ(t.jobs.size(), 30000u) << n;
    Time prev = 0;
    for (size_t i = 0; i < t.jobs.size(); ++i) {
      const Job& j = t.jobs[i];
      ASSERT_EQ(j.id.value(), i);
      ASSERT_GE(j.submit, prev) << n;
      prev = j.submit;
      ASSERT_GE(j.walltime, j.duration) << n << " job " << i;
      ASSERT_GE(j.duration, 1);
      ASSERT_LE(j.duration, static_cast<Duration>(s.max_duration_s));
      ASSERT_LT(j.vc.value(), s.vcs.size());
      ASSERT_LE(j.gpus, s.vcs[j.vc.value()].gpus) << n << ": job asks more GPUs than its VC has";
      ASSERT_LT(j.user.value(), t.users.size());
      ASSERT_LT(j.name.value(), t.names.size());
      ASSERT_TRUE(j.state == JobState::kCompleted || j.state == JobState::kCancelled || j.state == JobState::kFailed);
    }
  }
}

// Offered load per VC follows capacity (balance_vc_load), and no job asks for more than
// half of its VC (max_job_vc_share): over the full period each VC's share of the GPU-seconds
// is within 35 % of its capacity share.
TEST(Workload, VenusVcLoadsFollowCapacity) {
  auto s = Preset("helios-venus");
  ASSERT_TRUE(s.balance_vc_load);
  ASSERT_DOUBLE_EQ(s.max_job_vc_share, 0.5);
  Trace t = GenerateWorkload(s, 1);
  std::vector<double> gpu_s(s.vcs.size());
  double total = 0;
  for (const auto& j : t.jobs) {
    ASSERT_LE(2 * j.gpus, s.vcs[j.vc.value()].gpus) << s.vcs[j.vc.value()].name;
    total += static_cast<double>(j.gpus) * j.duration;
    gpu_s[j.vc.value()] += static_cast<double>(j.gpus) * j.duration;
  }
  ASSERT_EQ(t.vcs.size(), 15u);
  EXPECT_EQ(s.cluster_gpus(), 1080u);
  for (size_t v = 0; v < s.vcs.size(); ++v) {
    double share = gpu_s[v] / total, cap = s.vcs[v].gpus / 1080.0;
    EXPECT_NEAR(share, cap, 0.35 * cap) << s.vcs[v].name;
  }
}

// The rate knobs act on the arrival process: open loop, so that no job is held past the horizon
// (the closed loop of the VC presets moves submissions later, past a short horizon).
TEST(Workload, JobsAndDaysAndLoadKnobs) {
  auto s = Preset("helios-venus");
  s.arrivals = ArrivalModel::kOpenLoop;
  s.days = 14;
  Trace a = GenerateWorkload(s, 1);
  EXPECT_NEAR(a.jobs.size(), 14 * s.gpu_jobs_per_day, 0.1 * 14 * s.gpu_jobs_per_day);
  s.load = 2.0;
  Trace b = GenerateWorkload(s, 1);
  EXPECT_NEAR(static_cast<double>(b.jobs.size()) / a.jobs.size(), 2.0, 0.1);
  s.jobs = 1234;
  EXPECT_EQ(GenerateWorkload(s, 1).jobs.size(), 1234u);
  // CPU jobs at the summary's share.
  s = Preset("helios-venus");
  s.arrivals = ArrivalModel::kOpenLoop;
  s.days = 30;
  s.include_cpu_jobs = true;
  auto st = ComputeWorkloadStats(GenerateWorkload(s, 1));
  EXPECT_NEAR(1 - st.gpu_job_share, s.targets.cpu_job_share, 0.02);
  EXPECT_NEAR(st.gpu_jobs_per_day, s.gpu_jobs_per_day, 0.1 * s.gpu_jobs_per_day);
}

TEST(Workload, UsersAndNamesRepeat) {
  auto s = Preset("helios-venus");
  Trace t = GenerateWorkload(s, 1);
  auto st = ComputeWorkloadStats(t);
  EXPECT_GE(st.users, 100u);
  EXPECT_LE(st.users, 300u);
  EXPECT_GT(st.name_repetition, 0.8);
  EXPECT_GT(st.walltime_over_duration, 1.0);
  // A recurring (user, name) has a typical duration: the spread of log(duration) within
  // a pair is well below the spread over all jobs (history predictors can learn).
  std::map<uint64_t, std::pair<double, double>> acc;
  std::map<uint64_t, int> n;
  double all_s = 0, all_s2 = 0;
  for (const auto& j : t.jobs) {
    if (j.state != JobState::kCompleted) continue;
    double l = std::log(static_cast<double>(j.duration));
    uint64_t k = (static_cast<uint64_t>(j.user.value()) << 32) | j.name.value();
    acc[k].first += l;
    acc[k].second += l * l;
    ++n[k];
    all_s += l;
    all_s2 += l * l;
  }
  double within = 0, cnt = 0;
  for (auto& [k, v] : acc) {
    if (n[k] < 2) continue;
    double m = v.first / n[k];
    within += v.second - n[k] * m * m;
    cnt += n[k];
  }
  double total_n = 0;
  for (auto& [k, c] : n) total_n += c;
  double var_all = all_s2 / total_n - (all_s / total_n) * (all_s / total_n);
  EXPECT_LT(within / cnt, 0.5 * var_all);
}

// Calibration: generated aggregates within the documented tolerances (docs/workload.md).
struct Tol {
  double median = 0.10, mean = 0.15, gpus = 0.10, state_pt = 0.02, gpu_time_pt = 0.05, rate = 0.05;
  double gpu_seconds = 0.20;  // GPU-s per job and offered load (dominated by a few large, long jobs)
};

void CheckSpecCalibration(WorkloadSpec s, uint64_t seed, Tol tol = {}) {
  const auto& t = s.targets;
  if (s.name == "scale") s.jobs = 300000;
  Trace tr = GenerateWorkload(s, seed);
  auto st = ComputeWorkloadStats(tr, s.cluster_gpus());
  if (t.gpu_jobs > 0) { EXPECT_NEAR(st.gpu_jobs_per_day / (t.gpu_jobs / t.days), 1.0, tol.rate); }
  if (t.median_duration_s > 0) { EXPECT_NEAR(st.median_duration_s / t.median_duration_s, 1.0, tol.median); }
  if (t.avg_duration_s > 0) { EXPECT_NEAR(st.avg_duration_s / t.avg_duration_s, 1.0, tol.mean); }
  if (t.avg_gpus > 0) { EXPECT_NEAR(st.avg_gpus / t.avg_gpus, 1.0, tol.gpus); }
  if (t.median_gpus > 0) { EXPECT_EQ(st.median_gpus, t.median_gpus); }
  if (t.state_share.completed >= 0) {
    EXPECT_NEAR(st.state_share.completed, t.state_share.completed, tol.state_pt);
    EXPECT_NEAR(st.state_share.cancelled, t.state_share.cancelled, tol.state_pt);
    EXPECT_NEAR(st.state_share.failed, t.state_share.failed, tol.state_pt);
  }
  if (t.gpu_time_share.completed >= 0) {
    EXPECT_NEAR(st.gpu_time_share.completed, t.gpu_time_share.completed, tol.gpu_time_pt);
    EXPECT_NEAR(st.gpu_time_share.cancelled, t.gpu_time_share.cancelled, tol.gpu_time_pt);
    EXPECT_NEAR(st.gpu_time_share.failed, t.gpu_time_share.failed, tol.gpu_time_pt);
  }
  if (t.gpu_seconds_per_job > 0) { EXPECT_NEAR(st.gpu_seconds_per_job / t.gpu_seconds_per_job, 1.0, tol.gpu_seconds); }
  if (t.offered_load > 0) { EXPECT_NEAR(st.offered_load / t.offered_load, 1.0, tol.gpu_seconds); }
  if (t.hour_profile) { EXPECT_GE(ProfileCorrelation(st.hour_of_day_share, VenusHourOfDayShare()), 0.9); }
}

void CheckCalibration(const std::string& preset, uint64_t seed, Tol tol = {}) {
  SCOPED_TRACE(preset);
  CheckSpecCalibration(Preset(preset), seed, tol);
}

TEST(WorkloadCalibration, HeliosVenus) { CheckCalibration("helios-venus", 1); }
TEST(WorkloadCalibration, HeliosVenusOtherSeeds) {
  CheckCalibration("helios-venus", 2);
  CheckCalibration("helios-venus", 3);
}
TEST(WorkloadCalibration, HeliosEarth) { CheckCalibration("helios-earth", 1); }
TEST(WorkloadCalibration, HeliosSaturn) { CheckCalibration("helios-saturn", 1); }
// Uranus: one seed's GPU-time share by state is decided by which of a few hundred large, long
// runs happen to be cancelled (seeds 1-5, completed: -6.4, -0.5, -5.5, +0.7, -0.7 points): 7 points.
TEST(WorkloadCalibration, HeliosUranus) {
  Tol tol;
  tol.gpu_time_pt = 0.07;
  CheckCalibration("helios-uranus", 1, tol);
}
TEST(WorkloadCalibration, AcmeSeren) { CheckCalibration("acme-seren", 1); }
// Kalos has only 19,907 GPU jobs (637 pretraining jobs carry 94 % of the GPU time), so
// one seed's size and GPU-time aggregates are much noisier: wider tolerances.
TEST(WorkloadCalibration, AcmeKalos) {
  Tol tol;
  tol.gpus = 0.25;
  tol.gpu_time_pt = 0.10;
  tol.gpu_seconds = 0.45;
  CheckCalibration("acme-kalos", 1, tol);
}
TEST(WorkloadCalibration, ScaleSlow) { CheckCalibration("scale", 1); }
// The benchmark preset keeps the open-loop model although it starts from Venus, whose users
// hold jobs per node: every figure of docs/benchmarks.md was measured on that trace, and a
// per-node closed loop on one 1,024-node pool generates ~40x slower (measured: 2.0M -> 49k jobs/s).
TEST(WorkloadCalibration, ScaleKeepsTheOpenLoopOfItsBenchmarks) {
  auto s = Preset("scale");
  EXPECT_EQ(s.arrivals, ArrivalModel::kOpenLoop);
  EXPECT_EQ(s.long_runs, LongRunArrivals::kWeekly);
  EXPECT_EQ(Preset("helios-venus").arrivals, ArrivalModel::kClosedLoopNodes);
}

// The template draw is conditioned on the real GPU-seconds per job: before it, Uranus's
// offered load was 0.648 / 1.144 / 0.600 for seeds 1-3 against the real 0.802 (GPU-s per job
// -19 % / +43 % / -25 %); conditioned (expected value within 5 %), the realised GPU-s per job
// of seeds 1-5 is within 6 % (measured +0.3, +5.7, -5.3, -2.0, +1.4 %): seeds 1-3 within 8 % here.
TEST(WorkloadCalibration, TemplateDrawConditionedOnRealGpuSecondsSlow) {
  auto s = Preset("helios-uranus");
  ASSERT_DOUBLE_EQ(s.template_gpu_seconds_target, s.targets.gpu_seconds_per_job);
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    auto st = ComputeWorkloadStats(GenerateWorkload(s, seed), s.cluster_gpus());
    EXPECT_NEAR(st.gpu_seconds_per_job / s.targets.gpu_seconds_per_job, 1.0, 0.08) << "seed " << seed;
  }
}

// Without a target the first draw is kept; a draw within tolerance is kept as well, so a
// tolerance that accepts everything gives the same trace as no target.
TEST(WorkloadCalibration, UnconditionedDrawIsTheFirstDraw) {
  auto s = Preset("acme-kalos");
  s.days = 5;
  s.template_gpu_seconds_target = -1;
  Trace a = GenerateWorkload(s, 2);
  s.template_gpu_seconds_target = s.targets.gpu_seconds_per_job;
  s.template_load_tolerance = 1e9;
  Trace b = GenerateWorkload(s, 2);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t i = 0; i < a.jobs.size(); ++i) {
    EXPECT_EQ(a.jobs[i].gpus, b.jobs[i].gpus);
    EXPECT_EQ(a.jobs[i].duration, b.jobs[i].duration);
  }
  // Conditioned with the presets' tolerance, seed 2 redraws (its first draw is off by more
  // than 5 %), so the jobs differ.
  s.template_load_tolerance = 0.05;
  Trace c = GenerateWorkload(s, 2);
  bool differs = c.jobs.size() != a.jobs.size();
  for (size_t i = 0; !differs && i < a.jobs.size(); ++i) differs = a.jobs[i].duration != c.jobs[i].duration;
  EXPECT_TRUE(differs);
}

TEST(WorkloadStats, HandComputed) {
  Trace t;
  t.epoch_unix = 1585699200;  // Wednesday 00:00
  auto add = [&](Time submit, uint32_t gpus, Duration d, JobState st, uint32_t user, uint32_t name) {
    Job j;
    j.id = JobId(static_cast<uint32_t>(t.jobs.size()));
    j.submit = submit;
    j.gpus = gpus;
    j.duration = d;
    j.walltime = 2 * d;
    j.state = st;
    j.user = UserId(user);
    j.name = NameId(name);
    t.jobs.push_back(j);
  };
  add(0, 1, 100, JobState::kCompleted, 0, 0);
  add(3600, 4, 300, JobState::kCancelled, 0, 0);
  add(7200, 0, 50, JobState::kCompleted, 1, 1);
  add(86400, 2, 200, JobState::kFailed, 1, 2);
  auto s = ComputeWorkloadStats(t, 10);
  EXPECT_EQ(s.jobs, 4u);
  EXPECT_EQ(s.gpu_jobs, 3u);
  EXPECT_DOUBLE_EQ(s.avg_gpus, 7.0 / 3);
  EXPECT_DOUBLE_EQ(s.median_gpus, 2);
  EXPECT_DOUBLE_EQ(s.avg_duration_s, 200);
  EXPECT_DOUBLE_EQ(s.median_duration_s, 200);
  EXPECT_DOUBLE_EQ(s.gpu_seconds_per_job, (100 + 1200 + 400) / 3.0);
  EXPECT_NEAR(s.state_share.completed, 1.0 / 3, 1e-12);
  EXPECT_NEAR(s.gpu_time_share.cancelled, 1200.0 / 1700, 1e-12);
  EXPECT_DOUBLE_EQ(s.hour_of_day_share[0], 0.5);
  EXPECT_DOUBLE_EQ(s.day_of_week_share[2], 0.75);  // Wednesday
  EXPECT_DOUBLE_EQ(s.day_of_week_share[3], 0.25);
  EXPECT_EQ(s.users, 2u);
  EXPECT_DOUBLE_EQ(s.name_repetition, 0.25);
  EXPECT_DOUBLE_EQ(s.days, 1.0);
  EXPECT_NEAR(s.offered_load, 1700.0 / (86400.0 * 10), 1e-12);
  EXPECT_NE(FormatStatsTable(s, {}).find("avg GPUs"), std::string::npos);
}

// One 10-minute bin of helios-aggregates/cluster_throughput.csv: its hour of week and the
// GPU jobs submitted in it.
struct ThroughputBin {
  int hour_of_week = 0;
  double gpu_jobs = 0;
  double gpus = 0;  // submit_gpu_num: GPUs of the GPU jobs submitted in the bin
};

// The bins of the throughput file, or empty (with a message in *why) where it is absent.
std::vector<ThroughputBin> ReadThroughputBins(std::string* why) {
  std::string path = std::string(ORRERY_SHARED_DIR) + "/traces/helios-aggregates/cluster_throughput.csv";
  std::ifstream in(path);
  std::vector<ThroughputBin> bins;
  if (!in) {
    *why = "shared data not found at " + path + " (set -DORRERY_SHARED_DIR=...)";
    return bins;
  }
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line.rfind("time,submit_job_all,start_job_all,end_job_all,submit_gpu_job", 0), 0u);
  while (std::getline(in, line)) {
    int y, mo, d, h, mi, se;
    EXPECT_EQ(std::sscanf(line.c_str(), "%d-%d-%d %d:%d:%d", &y, &mo, &d, &h, &mi, &se), 6) << line;
    // Day of week via days since 1970-01-01 (Thursday); civil-from-days inverse.
    int yy = mo <= 2 ? y - 1 : y;
    int era = yy / 400, yoe = yy - era * 400, mp = (mo + 9) % 12;
    int doy = (153 * mp + 2) / 5 + d - 1, doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    long days = static_cast<long>(era) * 146097 + doe - 719468;
    int dow = static_cast<int>((days + 3) % 7);
    std::stringstream ss(line);
    std::string f;
    std::string g;
    for (int c = 0; c < 5; ++c) std::getline(ss, f, ',');
    for (int c = 5; c < 8; ++c) std::getline(ss, g, ',');  // start_gpu_job, end_gpu_job, submit_gpu_num
    bins.push_back({dow * 24 + h, std::stod(f), std::stod(g)});
  }
  return bins;
}

// Re-derives kVenusGpuJobsPerHourOfWeek from the shared throughput file.
TEST(WorkloadCalibrationData, ShippedProfileMatchesThroughputFile) {
  std::string why;
  const auto bins = ReadThroughputBins(&why);
  if (bins.empty()) GTEST_SKIP() << why;
  double sum[168] = {}, cnt[168] = {};
  for (const auto& b : bins) {
    sum[b.hour_of_week] += b.gpu_jobs;
    cnt[b.hour_of_week] += 1;
  }
  EXPECT_EQ(bins.size(), 26064u);
  for (int i = 0; i < 168; ++i) {
    ASSERT_GT(cnt[i], 0);
    EXPECT_NEAR(kVenusGpuJobsPerHourOfWeek[i], 6.0 * sum[i] / cnt[i], 0.0005) << "hour of week " << i;
  }
}

// Burstiness of a series of per-10-minute job counts: quantiles and the share of the jobs
// that arrive in crowded bins.
struct BinShape {
  double p50 = 0, p90 = 0, p99 = 0;
  double share_in_20 = 0, share_in_50 = 0;  // jobs in bins of >= 20 / >= 50 jobs
};

BinShape ShapeOf(std::vector<double> counts) {
  BinShape s;
  double total = 0, in20 = 0, in50 = 0;
  for (double c : counts) {
    total += c;
    if (c >= 20) in20 += c;
    if (c >= 50) in50 += c;
  }
  std::sort(counts.begin(), counts.end());
  auto q = [&](double p) { return counts[static_cast<size_t>(p * counts.size())]; };
  s.p50 = q(0.5);
  s.p90 = q(0.9);
  s.p99 = q(0.99);
  s.share_in_20 = in20 / total;
  s.share_in_50 = in50 / total;
  return s;
}

// Open loop with weekly long runs: the process kVenusBatchZipf was fitted with.
std::vector<double> GeneratedBins(BatchModel batches) {
  WorkloadSpec s = Preset("helios-venus");
  s.arrivals = ArrivalModel::kOpenLoop;
  s.long_runs = LongRunArrivals::kWeekly;
  s.batches = batches;
  Trace t = GenerateWorkload(s, 1);
  std::vector<double> counts(static_cast<size_t>(s.days * 144), 0.0);
  for (const Job& j : t.jobs) counts[std::min<size_t>(counts.size() - 1, j.submit / 600)] += 1;
  return counts;
}

// Sweeps reproduce the real bursts (kVenusBatchZipf, fitted by scripts/analyze_queueing.py):
// real p50 / p90 / p99 = 3 / 11 / 26 GPU jobs per bin, 16.3 % / 5.0 % of the jobs in bins of
// >= 20 / >= 50. Single Poisson arrivals do not (p99 15, 0.3 % / 0 %).
TEST(WorkloadCalibration, SweepsMatchThroughputBursts) {
  std::string why;
  const auto bins = ReadThroughputBins(&why);
  if (bins.empty()) GTEST_SKIP() << why;
  std::vector<double> real;
  for (const auto& b : bins) real.push_back(b.gpu_jobs);
  const BinShape r = ShapeOf(real), g = ShapeOf(GeneratedBins(BatchModel::kSweeps));
  EXPECT_EQ(r.p99, 26);
  EXPECT_NEAR(g.p50, r.p50, 1);
  EXPECT_NEAR(g.p90, r.p90, 2);
  EXPECT_NEAR(g.p99, r.p99, 0.2 * r.p99);
  EXPECT_NEAR(g.share_in_20, r.share_in_20, 0.05);
  EXPECT_NEAR(g.share_in_50, r.share_in_50, 0.03);
  const BinShape p = ShapeOf(GeneratedBins(BatchModel::kSingle));
  EXPECT_LT(p.p99, 0.7 * r.p99);
  EXPECT_LT(p.share_in_20, 0.02);
}

TEST(Workload, ParseBatchModel) {
  EXPECT_EQ(ParseBatchModel("single").value(), BatchModel::kSingle);
  EXPECT_EQ(ParseBatchModel("sweeps").value(), BatchModel::kSweeps);
  EXPECT_EQ(BatchModelName(BatchModel::kSweeps), "sweeps");
  auto bad = ParseBatchModel("burst");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "batches: expected single, sweeps or short-sweeps, got \"burst\"");
  EXPECT_EQ(ParseBatchModel("short-sweeps").value(), BatchModel::kShortSweeps);
  EXPECT_EQ(BatchModelName(BatchModel::kShortSweeps), "short-sweeps");
  EXPECT_EQ(ParseLongRunArrivals("flat").value(), LongRunArrivals::kFlat);
  EXPECT_EQ(LongRunArrivalsName(ParseLongRunArrivals("weekly").value()), "weekly");
  auto bad_l = ParseLongRunArrivals("nightly");
  ASSERT_FALSE(bad_l.ok());
  EXPECT_EQ(bad_l.error().message, "long runs: expected weekly or flat, got \"nightly\"");
}

// A sweep is one user's template submitted at one second: same user, name, GPUs and VC.
TEST(Workload, SweepsShareUserNameAndSecond) {
  WorkloadSpec s = Preset("helios-venus");
  s.batches = BatchModel::kSweeps;
  s.days = 30;
  Trace t = GenerateWorkload(s, 1);
  WorkloadSpec single = s;
  single.batches = BatchModel::kSingle;
  const double n_single = static_cast<double>(GenerateWorkload(single, 1).jobs.size());
  // E[B] = 1.66 events -> the same job rate: 30 d x 692.3 jobs/d = 20,769 expected, both within 10 %.
  EXPECT_NEAR(static_cast<double>(t.jobs.size()), n_single, 0.1 * n_single);
  std::map<std::tuple<Time, uint32_t, uint32_t>, int> groups;  // (second, user, name) -> jobs
  for (const Job& j : t.jobs) ++groups[{j.submit, j.user.value(), j.name.value()}];
  int largest = 0;
  size_t in_groups = 0;
  for (const auto& [k, n] : groups) {
    largest = std::max(largest, n);
    if (n > 1) in_groups += n;
  }
  // P(B >= 2) = 1 - 1/zeta(2.65) ~ 0.23 of the events, ~0.5 of the jobs.
  EXPECT_GT(static_cast<double>(in_groups) / t.jobs.size(), 0.3);
  EXPECT_GE(largest, 50);
  EXPECT_LE(largest, static_cast<int>(kVenusBatchMax));
  for (size_t i = 1; i < t.jobs.size(); ++i) ASSERT_LE(t.jobs[i - 1].submit, t.jobs[i].submit);
  EXPECT_TRUE(SameJobs(t, GenerateWorkload(s, 1)));
}

// Share of the jobs in groups of >= 2 at one (second, user, name), the median run time of those
// and of the lone jobs, and the share of the GPU time in the groups.
struct GroupShape {
  double job_share = 0, grouped_median_s = 0, lone_median_s = 0, gpu_time_share = 0;
};
GroupShape GroupsOf(const Trace& t) {
  std::map<std::tuple<Time, uint32_t, uint32_t>, int> n;
  for (const Job& j : t.jobs) ++n[{j.submit, j.user.value(), j.name.value()}];
  std::vector<double> grouped, lone;
  double gt = 0, all_gt = 0;
  for (const Job& j : t.jobs) {
    const double g = static_cast<double>(j.gpus) * static_cast<double>(j.duration);
    all_gt += g;
    if (n[{j.submit, j.user.value(), j.name.value()}] > 1) {
      grouped.push_back(static_cast<double>(j.duration));
      gt += g;
    } else {
      lone.push_back(static_cast<double>(j.duration));
    }
  }
  auto median = [](std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
    return v[v.size() / 2];
  };
  return {static_cast<double>(grouped.size()) / t.jobs.size(), median(grouped), median(lone), gt / all_gt};
}

// The preset with open-loop arrivals and the given streams.
WorkloadSpec Variant(const std::string& preset, BatchModel b, LongRunArrivals l) {
  WorkloadSpec s = Preset(preset);
  s.arrivals = ArrivalModel::kOpenLoop;
  s.batches = b;
  s.long_runs = l;
  return s;
}

// Model item 15: the two streams keep every template's expected job share, so the per-job
// targets hold without a refit (same tolerances as the presets' own calibration tests).
TEST(WorkloadCalibration, RunStreamsKeepThePerJobTargets) {
  for (const char* p : {"helios-venus", "helios-earth"}) {
    SCOPED_TRACE(p);
    CheckSpecCalibration(Variant(p, BatchModel::kShortSweeps, LongRunArrivals::kWeekly), 1);
    CheckSpecCalibration(Variant(p, BatchModel::kSingle, LongRunArrivals::kFlat), 1);
    CheckSpecCalibration(Variant(p, BatchModel::kShortSweeps, LongRunArrivals::kFlat), 1);
  }
}

// Short sweeps are sweeps of body (short-run) templates; long runs come alone. Venus: the body
// component is ~70 % of the jobs (tail_prob 0.3), and a short event's jobs are in a group of >= 2
// with probability 1 - P(B = 1) / E[B] = 1 - 0.745 / 1.66 = 0.55, so ~0.7 x 0.55 = 0.39 of the
// jobs are in groups (seed 1: 0.370), at the body's run times (median 83 s x per-run noise,
// states; seed 1: 76 s) and with < 1 % of the GPU time; the lone jobs are about half long runs
// (seed 1: median 896 s, against 206 s with single batches). kSweeps replicates long runs too.
TEST(WorkloadCalibration, ShortSweepsAreSweepsOfShortRuns) {
  const WorkloadSpec s = Variant("helios-venus", BatchModel::kShortSweeps, LongRunArrivals::kWeekly);
  const Trace t = GenerateWorkload(s, 1);
  const GroupShape g = GroupsOf(t);
  EXPECT_NEAR(g.job_share, 0.39, 0.05);
  EXPECT_LT(g.grouped_median_s, 200);
  EXPECT_GT(g.lone_median_s, 500);
  EXPECT_LT(g.gpu_time_share, 0.02);
  const GroupShape all = GroupsOf(GenerateWorkload(Variant("helios-venus", BatchModel::kSweeps, LongRunArrivals::kWeekly), 1));
  EXPECT_GT(all.gpu_time_share, 0.3);
  EXPECT_TRUE(SameJobs(t, GenerateWorkload(s, 1)));
  for (size_t i = 1; i < t.jobs.size(); ++i) ASSERT_LE(t.jobs[i - 1].submit, t.jobs[i].submit);
}

// Flat long runs: nearly all GPU time is in long runs, so the GPU-seconds submitted in the five
// night hours 03:00-07:59 go from the job-count profile's share (1.6 + 1.0 + 0.8 + 0.8 + 1.1 =
// 5.3 % of the jobs; seed 1: 5.5 % of the GPU time) to 5/24 = 20.8 % (seed 1: 21.5 %), while the
// jobs keep the profile's shape (the short runs follow it: corr. >= 0.9, CheckSpecCalibration).
TEST(WorkloadCalibration, FlatLongRunsIgnoreTheHourOfWeek) {
  auto night_share = [](const Trace& t) {
    double night = 0, all = 0;
    for (const Job& j : t.jobs) {
      const double g = static_cast<double>(j.gpus) * static_cast<double>(j.duration);
      const int64_t hour = (t.epoch_unix + static_cast<int64_t>(j.submit)) / 3600 % 24;
      all += g;
      if (hour >= 3 && hour < 8) night += g;
    }
    return night / all;
  };
  EXPECT_LT(night_share(GenerateWorkload(Variant("helios-venus", BatchModel::kSingle, LongRunArrivals::kWeekly), 1)), 0.08);
  EXPECT_NEAR(night_share(GenerateWorkload(Variant("helios-venus", BatchModel::kSingle, LongRunArrivals::kFlat), 1)),
              5.0 / 24, 0.025);
}

// kVenusLoneSubmissionGpus is the GPU count of every bin with exactly one GPU job submitted.
TEST(WorkloadCalibrationData, LoneSubmissionSizesMatchThroughputFile) {
  std::string why;
  const auto bins = ReadThroughputBins(&why);
  if (bins.empty()) GTEST_SKIP() << why;
  std::map<unsigned, unsigned> real;
  for (const auto& b : bins)
    if (b.gpu_jobs == 1) ++real[static_cast<unsigned>(b.gpus)];
  std::map<unsigned, unsigned> shipped;
  for (const LoneSubmissions& l : kVenusLoneSubmissionGpus) shipped[l.gpus] = l.bins;
  EXPECT_EQ(shipped, real);
}

// Lone long-run sizes (model item 16): the Venus fit keeps the per-job targets; the long runs'
// sizes are the lone submissions', so their GPU-time-weighted size E[g^2 d] / E[g d] falls from
// ~31 (class mix, seed 1: 31.3) towards the lone mix's E[g^2]/E[g] = 20.4 (seed 1: 17.2, the
// duration exponent making the larger long runs longer is fitted, the VC caps cut sizes > 1/2 VC).
TEST(WorkloadCalibration, LoneLongRunsKeepThePerJobTargets) {
  auto lone = WithLoneLongRuns(Preset("helios-venus"));
  ASSERT_TRUE(lone.ok());
  EXPECT_EQ(lone->long_run_sizes, LongRunSizes::kLoneSubmissions);
  // Fitted open-loop with weekly long runs; with the preset's per-node closed loop the same jobs
  // spread over a longer span (seed 1: -5.3 % GPU jobs per day, just outside the 5 % band).
  lone->arrivals = ArrivalModel::kOpenLoop;
  lone->long_runs = LongRunArrivals::kWeekly;
  CheckSpecCalibration(*lone, 1);
  CheckSpecCalibration(*lone, 2);
  auto weighted_size = [](const Trace& t) {
    double gd = 0, g2d = 0;
    for (const Job& j : t.jobs) {
      gd += static_cast<double>(j.gpus) * static_cast<double>(j.duration);
      g2d += static_cast<double>(j.gpus) * j.gpus * static_cast<double>(j.duration);
    }
    return g2d / gd;
  };
  EXPECT_LT(weighted_size(GenerateWorkload(*lone, 1)), 21);
  EXPECT_GT(weighted_size(GenerateWorkload(Preset("helios-venus"), 1)), 27);
  auto earth = WithLoneLongRuns(Preset("helios-earth"));
  ASSERT_FALSE(earth.ok());
  EXPECT_EQ(earth.error().message,
            "long-run sizes lone: fitted for helios-venus only (the lone submissions are Venus's, "
            "cluster_throughput.csv), not for 'helios-earth'");
  EXPECT_EQ(WithLongRunSizes(Preset("helios-earth"), LongRunSizes::kClassMix)->long_run_sizes, LongRunSizes::kClassMix);
  EXPECT_EQ(WithLongRunSizes(*lone, LongRunSizes::kClassMix).error().message,
            "long-run sizes class: 'helios-venus' was fitted for other long-run sizes; start from the preset");
  EXPECT_EQ(WithLongRunSizes(Preset("helios-venus"), LongRunSizes::kLoneSubmissions)->classes[0].tail_median_s,
            lone->classes[0].tail_median_s);
  EXPECT_EQ(ParseLongRunSizes("lone").value(), LongRunSizes::kLoneSubmissions);
  EXPECT_EQ(LongRunSizesName(LongRunSizes::kClassMix), "class");
  EXPECT_EQ(ParseLongRunSizes("big").error().message, "long-run sizes: expected class or lone, got \"big\"");
}

// Calibration harness (not a test): fits the free model parameters of a preset by
// fixed-point iteration and prints them for presets.cc. Run with
//   ORRERY_FIT_PRESET=helios-venus orrery_workload_test --gtest_also_run_disabled_tests
//       --gtest_filter='*DISABLED_FitPreset*'
TEST(WorkloadCalibration, DISABLED_FitPreset) {
  const char* env = std::getenv("ORRERY_FIT_PRESET");
  auto s = Preset(env ? env : "helios-venus");
  // ORRERY_FIT_LONG_RUN_SIZES=lone fits the preset for LongRunSizes::kLoneSubmissions.
  if (const char* l = std::getenv("ORRERY_FIT_LONG_RUN_SIZES")) s.long_run_sizes = ParseLongRunSizes(l).value();
  const auto t = s.targets;
  bool single = s.classes.size() == 1;
  for (int it = 0; it < 25; ++it) {
    WorkloadStats a{};
    const int seeds = 3;
    double med = 0, mean = 0, avg_g = 0, gsp = 0, sc = 0, sx = 0, sf = 0;
    for (int sd = 1; sd <= seeds; ++sd) {
      a = ComputeWorkloadStats(GenerateWorkload(s, sd), s.cluster_gpus());
      med += a.median_duration_s / seeds;
      mean += a.avg_duration_s / seeds;
      avg_g += a.avg_gpus / seeds;
      gsp += a.gpu_seconds_per_job / seeds;
      sc += a.gpu_time_share.completed / seeds;
      sx += a.gpu_time_share.cancelled / seeds;
      sf += a.gpu_time_share.failed / seeds;
    }
    std::printf("it %2d: median %.0f/%.0f mean %.0f/%.0f gpus %.3f/%.3f gs/job %.0f/%.0f share %.3f %.3f %.3f / %.3f %.3f %.3f\n",
                it, med, t.median_duration_s, mean, t.avg_duration_s, avg_g, t.avg_gpus, gsp, t.gpu_seconds_per_job,
                sc, sx, sf, t.gpu_time_share.completed, t.gpu_time_share.cancelled, t.gpu_time_share.failed);
    double body = std::pow(t.median_duration_s / med, 1.0);
    double tail = std::pow(t.avg_duration_s / mean, 1.0);
    // Balanced VC loads shift jobs towards VCs that admit only small jobs, so more weight on
    // large sizes can lower the average: fit it with the 1-GPU weight instead.
    double tilt = s.balance_vc_load ? 0.0 : 0.6 * std::log(t.avg_gpus / avg_g);
    double one = s.balance_vc_load ? std::pow(avg_g / t.avg_gpus, 0.5) : 1.0;
    for (auto& c : s.classes) {
      c.body_median_s *= body;
      // Multi-class presets: the pretrain class carries the GPU time (fit GPU-s/job with it),
      // the other classes the mean duration.
      if (!single && c.name == "pretrain")
        c.tail_median_s *= std::pow(t.gpu_seconds_per_job / gsp, 0.7);
      else
        c.tail_median_s *= tail;
      double multi = 0, multi_new = 0;
      for (auto& b : c.gpus)
        if (b.gpus > 1) multi += b.weight;
      for (auto& b : c.gpus)
        if (b.gpus > 1) multi_new += b.weight *= std::pow(b.gpus, tilt);
      for (auto& b : c.gpus)
        if (b.gpus > 1 && multi_new > 0) b.weight *= multi / multi_new;
      for (auto& b : c.gpus)
        if (b.gpus == 1) b.weight = std::clamp(b.weight * one, 0.3, 0.95);
      if (single) {
        double ct = t.gpu_seconds_per_job / (t.avg_gpus * t.avg_duration_s), cg = gsp / (avg_g * mean);
        c.gpu_duration_exponent = std::max(0.0, c.gpu_duration_exponent + 0.3 * std::log(ct / cg));
      }
    }
    s.cancelled_factor *= std::pow((t.gpu_time_share.cancelled / t.gpu_time_share.completed) / (sx / sc), 0.8);
    s.failed_scale *= std::pow((t.gpu_time_share.failed / t.gpu_time_share.completed) / (sf / sc), 0.8);
  }
  for (const auto& c : s.classes) {
    std::printf("class %s: body_median_s %.2f tail_median_s %.1f gpu_duration_exponent %.4f gpus {",
                c.name.c_str(), c.body_median_s, c.tail_median_s, c.gpu_duration_exponent);
    for (const auto& b : c.gpus) std::printf("{%u, %.4f}, ", b.gpus, b.weight);
    std::printf("}\n");
  }
  std::printf("cancelled_factor %.3f failed_scale %.3f\n", s.cancelled_factor, s.failed_scale);
}

}  // namespace
}  // namespace orrery::workload

namespace orrery::workload {
namespace {

// Closed loop: the same jobs as open loop (drawn identically), each submitted no earlier,
// in submit order, and (the rule itself) the GPUs of a VC's jobs counted as running from
// submit to submit + duration never exceed the VC's capacity.
TEST(WorkloadArrivals, ClosedLoopHoldsJobsUntilTheirVcHasRoom) {
  auto s = GetPreset("helios-venus").value();
  s.days = 10;
  s.arrivals = ArrivalModel::kOpenLoop;
  Trace open = GenerateWorkload(s, 4);
  s.arrivals = ArrivalModel::kClosedLoop;
  Trace closed = GenerateWorkload(s, 4);
  ASSERT_EQ(open.jobs.size(), closed.jobs.size());
  auto key = [](const Job& j) { return std::tuple(j.user.value(), j.name.value(), j.duration, j.gpus, j.walltime); };
  std::multiset<std::tuple<uint32_t, uint32_t, Duration, uint32_t, Duration>> a, b;
  for (const Job& j : open.jobs) a.insert(key(j));
  for (const Job& j : closed.jobs) b.insert(key(j));
  EXPECT_EQ(a, b);
  uint64_t open_submit = 0, closed_submit = 0;
  for (const Job& j : open.jobs) open_submit += j.submit;
  for (size_t i = 0; i < closed.jobs.size(); ++i) {
    ASSERT_EQ(closed.jobs[i].id.value(), i);
    if (i) { ASSERT_LE(closed.jobs[i - 1].submit, closed.jobs[i].submit); }
    closed_submit += closed.jobs[i].submit;
  }
  EXPECT_GT(closed_submit, open_submit);  // some jobs were held back
  // Sweep per VC: +gpus at submit, -gpus at submit + duration (ends before starts at a tie).
  std::vector<std::vector<std::pair<Time, int64_t>>> ev(s.vcs.size());
  for (const Job& j : closed.jobs) {
    ev[j.vc.value()].push_back({j.submit, j.gpus});
    ev[j.vc.value()].push_back({j.submit + j.duration, -static_cast<int64_t>(j.gpus)});
  }
  for (size_t v = 0; v < ev.size(); ++v) {
    std::sort(ev[v].begin(), ev[v].end());
    int64_t held = 0;
    for (const auto& [t, d] : ev[v]) {
      held += d;
      // Exact intervals that do not overlap stay apart when both ends are floored to whole
      // seconds (durations are integers), so the bound holds exactly.
      ASSERT_LE(held, static_cast<int64_t>(s.vcs[v].gpus)) << s.vcs[v].name << " at " << t;
    }
  }
  EXPECT_EQ(ArrivalModelName(ParseArrivalModel("closed-loop").value()), "closed-loop");
  EXPECT_EQ(ArrivalModelName(ParseArrivalModel("open-loop").value()), "open-loop");
  EXPECT_FALSE(ParseArrivalModel("closed").ok());
}

// Closed loop per node: the same jobs as open loop, in submit order, some held, and never
// over-committing a VC's nodes. From the trace alone (no
// placement in it) the checkable bound per VC at every instant is: whole nodes of the multi-node
// jobs + ceil(GPUs of the single-node jobs / 8) <= the VC's nodes.
TEST(WorkloadArrivals, ClosedLoopNodesHoldsJobsUntilTheirNodesHaveRoom) {
  auto s = GetPreset("helios-venus").value();
  s.days = 10;
  s.arrivals = ArrivalModel::kOpenLoop;
  const Trace open = GenerateWorkload(s, 4);
  s.arrivals = ArrivalModel::kClosedLoop;
  const Trace vc_total = GenerateWorkload(s, 4);
  s.arrivals = ArrivalModel::kClosedLoopNodes;
  const Trace nodes = GenerateWorkload(s, 4);
  ASSERT_EQ(open.jobs.size(), nodes.jobs.size());
  auto key = [](const Job& j) { return std::tuple(j.user.value(), j.name.value(), j.duration, j.gpus, j.walltime); };
  std::multiset<std::tuple<uint32_t, uint32_t, Duration, uint32_t, Duration>> a, b;
  for (const Job& j : open.jobs) a.insert(key(j));
  for (const Job& j : nodes.jobs) b.insert(key(j));
  EXPECT_EQ(a, b);
  uint64_t vc_submit = 0, node_submit = 0;
  for (const Job& j : vc_total.jobs) vc_submit += j.submit;
  for (size_t i = 0; i < nodes.jobs.size(); ++i) {
    if (i) { ASSERT_LE(nodes.jobs[i - 1].submit, nodes.jobs[i].submit); }
    node_submit += nodes.jobs[i].submit;
  }
  // The per-node view holds jobs the VC total would not (and its later bookings move with them,
  // so the total hold is not ordered against the VC-total view's): some jobs are held.
  uint64_t open_submit = 0;
  for (const Job& j : open.jobs) open_submit += j.submit;
  EXPECT_GT(node_submit, open_submit);
  EXPECT_GT(vc_submit, open_submit);
  // Per VC: (time, multi-node nodes delta, single-node GPUs delta); ends before starts at a tie.
  std::vector<std::vector<std::tuple<Time, int64_t, int64_t>>> ev(s.vcs.size());
  for (const Job& j : nodes.jobs) {
    const bool multi = j.gpus > s.gpus_per_node;
    const int64_t n = multi ? (j.gpus + s.gpus_per_node - 1) / s.gpus_per_node : 0, g = multi ? 0 : j.gpus;
    ev[j.vc.value()].push_back({j.submit, n, g});
    ev[j.vc.value()].push_back({j.submit + j.duration, -n, -g});
  }
  for (size_t v = 0; v < ev.size(); ++v) {
    std::sort(ev[v].begin(), ev[v].end(), [](const auto& x, const auto& y) {
      return std::get<0>(x) != std::get<0>(y) ? std::get<0>(x) < std::get<0>(y) : std::get<1>(x) + std::get<2>(x) < std::get<1>(y) + std::get<2>(y);
    });
    const int64_t vc_nodes = s.vcs[v].gpus / s.gpus_per_node;
    int64_t multi_nodes = 0, small_gpus = 0;
    for (const auto& [t, n, g] : ev[v]) {
      multi_nodes += n;
      small_gpus += g;
      ASSERT_LE(multi_nodes + (small_gpus + s.gpus_per_node - 1) / s.gpus_per_node, vc_nodes)
          << s.vcs[v].name << " at " << t;
    }
  }
  EXPECT_EQ(ArrivalModelName(ParseArrivalModel("closed-loop-nodes").value()), "closed-loop-nodes");
  EXPECT_EQ(ParseArrivalModel("closed").error().message,
            "arrival model: expected open-loop, closed-loop or closed-loop-nodes, got \"closed\"");
}

}  // namespace
}  // namespace orrery::workload

namespace orrery::workload {
namespace {

// The real Venus queueing figures of docs/workload.md ("What the real trace shows"), from
// cluster_throughput.csv: pending GPU jobs = cumulative (submitted - started), offset to a
// minimum of 0; Little's law gives the avg wait = mean pending / arrival rate, which must
// equal the summary's avg_que_time_gpu (1,253.288 s); the GPU-weighted wait uses GPUs.
TEST(WorkloadCalibrationData, VenusQueueFromThroughputMatchesSummary) {
  std::string path = std::string(ORRERY_SHARED_DIR) + "/traces/helios-aggregates/cluster_throughput.csv";
  std::ifstream in(path);
  if (!in) GTEST_SKIP() << "shared data not found at " << path;
  std::string line;
  std::getline(in, line);
  std::vector<double> pend_jobs, pend_gpus;
  double jobs = 0, gpus = 0, cj = 0, cg = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string f[10];
    for (auto& x : f) std::getline(ss, x, ',');
    // time,submit_job_all,start_job_all,end_job_all,submit_gpu_job,start_gpu_job,end_gpu_job,submit_gpu_num,start_gpu_num,end_gpu_num
    cj += std::stod(f[4]) - std::stod(f[5]);
    cg += std::stod(f[7]) - std::stod(f[8]);
    jobs += std::stod(f[4]);
    gpus += std::stod(f[7]);
    pend_jobs.push_back(cj);
    pend_gpus.push_back(cg);
  }
  ASSERT_EQ(pend_jobs.size(), 26064u);
  auto mean_above_min = [](const std::vector<double>& v) {
    double m = *std::min_element(v.begin(), v.end()), s = 0;
    for (double x : v) s += x - m;
    return s / v.size();
  };
  const double span = 26064 * 600.0;
  double wait = mean_above_min(pend_jobs) / (jobs / span);
  double gpu_wait = mean_above_min(pend_gpus) / (gpus / span);
  EXPECT_NEAR(wait, 1253.288, 5.0);
  EXPECT_NEAR(gpu_wait / wait, 1.14, 0.02);
}

}  // namespace
}  // namespace orrery::workload
