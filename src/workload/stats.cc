#include "workload/stats.h"

#include <algorithm>
#include <cmath>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>

#include "workload/calibration_data.h"

namespace orrery::workload {
namespace {

double Median(std::vector<double>& v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double hi = v[mid];
  if (v.size() % 2) return hi;
  double lo = *std::max_element(v.begin(), v.begin() + mid);
  return (lo + hi) / 2;
}

double Quantile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  size_t k = std::min(v.size() - 1, static_cast<size_t>(q * v.size()));
  std::nth_element(v.begin(), v.begin() + k, v.end());
  return v[k];
}

}  // namespace

WorkloadStats ComputeWorkloadStats(const Trace& trace, uint64_t cluster_gpus) {
  WorkloadStats s;
  s.jobs = trace.jobs.size();
  if (s.jobs == 0) return s;
  Time first = trace.jobs.front().submit, last = first;
  std::vector<double> gpus, durs, ratio;
  gpus.reserve(s.jobs);
  durs.reserve(s.jobs);
  double gt[3] = {0, 0, 0}, cnt[3] = {0, 0, 0}, gsum = 0, dsum = 0, gpu_sec = 0;
  std::unordered_set<uint64_t> pairs;
  std::unordered_set<uint32_t> users;
  pairs.reserve(1024);
  uint64_t repeats = 0;
  for (const Job& j : trace.jobs) {
    first = std::min(first, j.submit);
    last = std::max(last, j.submit);
    int64_t abs = trace.epoch_unix + j.submit;
    int64_t day = abs >= 0 ? abs / 86400 : (abs - 86399) / 86400;
    s.hour_of_day_share[(abs - day * 86400) / 3600] += 1;
    s.day_of_week_share[((day + 3) % 7 + 7) % 7] += 1;
    if (j.user.valid()) users.insert(j.user.value());
    uint64_t key = (static_cast<uint64_t>(j.user.value()) << 32) | j.name.value();
    if (!pairs.insert(key).second) ++repeats;
    if (j.duration > 0 && j.walltime > 0) ratio.push_back(static_cast<double>(j.walltime) / j.duration);
    if (j.gpus == 0) {
      ++s.cpu_jobs;
      continue;
    }
    ++s.gpu_jobs;
    double g = j.gpus * (j.gpu_milli / 1000.0);
    double d = std::max<Duration>(0, j.duration);
    gpus.push_back(j.gpus);
    durs.push_back(d);
    gsum += j.gpus;
    dsum += d;
    s.max_gpus = std::max(s.max_gpus, j.gpus);
    gpu_sec += g * d;
    int k = j.state == JobState::kCompleted   ? 0
            : j.state == JobState::kCancelled ? 1
            : (j.state == JobState::kFailed || j.state == JobState::kTimeout || j.state == JobState::kNodeFail) ? 2
                                                                                                                 : -1;
    if (k >= 0) {
      cnt[k] += 1;
      gt[k] += g * d;
    }
  }
  s.days = std::max<double>(1.0, static_cast<double>(last - first)) / 86400.0;
  s.jobs_per_day = s.jobs / s.days;
  s.gpu_jobs_per_day = s.gpu_jobs / s.days;
  s.gpu_job_share = static_cast<double>(s.gpu_jobs) / s.jobs;
  for (auto& v : s.hour_of_day_share) v /= s.jobs;
  for (auto& v : s.day_of_week_share) v /= s.jobs;
  s.users = users.size();
  s.names = pairs.size();
  s.name_repetition = static_cast<double>(repeats) / s.jobs;
  s.walltime_over_duration = Median(ratio);
  if (s.gpu_jobs) {
    s.avg_gpus = gsum / s.gpu_jobs;
    s.avg_duration_s = dsum / s.gpu_jobs;
    s.median_gpus = Median(gpus);
    s.median_duration_s = Median(durs);
    s.p99_duration_s = Quantile(durs, 0.99);
    s.gpu_seconds_per_job = gpu_sec / s.gpu_jobs;
    double c = cnt[0] + cnt[1] + cnt[2], t = gt[0] + gt[1] + gt[2];
    if (c > 0) s.state_share = {cnt[0] / c, cnt[1] / c, cnt[2] / c};
    if (t > 0) s.gpu_time_share = {gt[0] / t, gt[1] / t, gt[2] / t};
    if (cluster_gpus > 0) s.offered_load = gpu_sec / (s.days * 86400.0 * cluster_gpus);
  }
  return s;
}

std::array<double, 24> VenusHourOfDayShare() {
  std::array<double, 24> a{};
  double tot = 0;
  for (int h = 0; h < 168; ++h) {
    a[h % 24] += kVenusGpuJobsPerHourOfWeek[h];
    tot += kVenusGpuJobsPerHourOfWeek[h];
  }
  for (auto& v : a) v /= tot;
  return a;
}

double ProfileCorrelation(const std::array<double, 24>& a, const std::array<double, 24>& b) {
  double ma = 0, mb = 0;
  for (int i = 0; i < 24; ++i) ma += a[i] / 24, mb += b[i] / 24;
  double sab = 0, saa = 0, sbb = 0;
  for (int i = 0; i < 24; ++i) {
    sab += (a[i] - ma) * (b[i] - mb);
    saa += (a[i] - ma) * (a[i] - ma);
    sbb += (b[i] - mb) * (b[i] - mb);
  }
  return (saa > 0 && sbb > 0) ? sab / std::sqrt(saa * sbb) : 0.0;
}

std::string FormatStatsTable(const WorkloadStats& s, const WorkloadTargets& t) {
  std::string out;
  out += fmt::format("{:<34} {:>14} {:>14} {:>9}\n", "metric", "generated", "target", "dev");
  auto row = [&](const std::string& m, double g, double tv, int prec, bool pct_points = false) {
    std::string ts = tv >= 0 ? fmt::format("{:.{}f}", tv, prec) : "-";
    std::string dev = "";
    if (tv > 0) {
      dev = pct_points ? fmt::format("{:+.1f} pt", 100 * (g - tv)) : fmt::format("{:+.1f}%", 100 * (g / tv - 1));
    } else if (tv == 0 && pct_points) {
      dev = fmt::format("{:+.1f} pt", 100 * g);
    }
    out += fmt::format("{:<34} {:>14.{}f} {:>14} {:>9}\n", m, g, prec, ts, dev);
  };
  row("jobs", s.jobs, -1, 0);
  row("GPU jobs", s.gpu_jobs, t.gpu_jobs, 0);
  row("days spanned", s.days, t.days, 1);
  row("GPU jobs / day", s.gpu_jobs_per_day, (t.gpu_jobs > 0 && t.days > 0) ? t.gpu_jobs / t.days : -1, 1);
  row("CPU job share", 1 - s.gpu_job_share, s.cpu_jobs ? t.cpu_job_share : -1, 3, true);
  row("avg GPUs / GPU job", s.avg_gpus, t.avg_gpus, 2);
  row("median GPUs", s.median_gpus, t.median_gpus, 0);
  row("max GPUs", s.max_gpus, -1, 0);
  row("avg duration (s)", s.avg_duration_s, t.avg_duration_s, 0);
  row("median duration (s)", s.median_duration_s, t.median_duration_s, 0);
  row("p99 duration (s)", s.p99_duration_s, -1, 0);
  row("GPU-seconds / GPU job", s.gpu_seconds_per_job, t.gpu_seconds_per_job, 0);
  row("share completed", s.state_share.completed, t.state_share.completed, 3, true);
  row("share cancelled", s.state_share.cancelled, t.state_share.cancelled, 3, true);
  row("share failed", s.state_share.failed, t.state_share.failed, 3, true);
  row("GPU-time share completed", s.gpu_time_share.completed, t.gpu_time_share.completed, 3, true);
  row("GPU-time share cancelled", s.gpu_time_share.cancelled, t.gpu_time_share.cancelled, 3, true);
  row("GPU-time share failed", s.gpu_time_share.failed, t.gpu_time_share.failed, 3, true);
  if (s.offered_load >= 0) row("offered load (GPU-s / capacity)", s.offered_load, t.offered_load, 3);
  row("users", s.users, -1, 0);
  row("(user, name) pairs", s.names, -1, 0);
  row("name repetition rate", s.name_repetition, -1, 3);
  row("median walltime / duration", s.walltime_over_duration, -1, 2);
  if (t.hour_profile)
    row("hour-of-day corr. vs throughput", ProfileCorrelation(s.hour_of_day_share, VenusHourOfDayShare()), 0.9, 3);
  out += "hour-of-day share (%):";
  for (int h = 0; h < 24; ++h) out += fmt::format(" {:.1f}", 100 * s.hour_of_day_share[h]);
  out += "\nday-of-week share (%, Mon..Sun):";
  for (int d = 0; d < 7; ++d) out += fmt::format(" {:.1f}", 100 * s.day_of_week_share[d]);
  out += "\n";
  return out;
}

}  // namespace orrery::workload
