#include "analysis/characterize.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <unordered_map>

namespace orrery {
namespace {

using json = nlohmann::ordered_json;
using report::CdfPoint;

Duration JobDuration(const Job& j) {
  if (j.duration >= 0) return j.duration;
  if (j.start != kNoTime && j.end != kNoTime) return j.end - j.start;
  return -1;
}

double GpuShare(const Job& j) { return static_cast<double>(j.gpu_milli_total()) / 1000.0; }

int DemandBucketIndex(const Job& j) {
  if (j.gpus == 0) return 0;
  if (j.is_fractional()) return 1;
  if (j.gpus == 1) return 2;
  if (j.gpus == 2) return 3;
  uint64_t hi = 4;
  int idx = 4;
  while (j.gpus > hi && idx < 11) {
    hi *= 2;
    ++idx;
  }
  return idx;  // 4: 3-4, 5: 5-8, ..., 10: 129-256, 11: > 256
}

std::string DemandBucketLabel(int idx) {
  switch (idx) {
    case 0: return "0 (CPU)";
    case 1: return "<1 (shared)";
    case 2: return "1";
    case 3: return "2";
    case 11: return ">256";
    default: {
      const uint64_t hi = 4ull << (idx - 4);
      return std::to_string(hi / 2 + 1) + "-" + std::to_string(hi);
    }
  }
}
constexpr int kNumBuckets = 12;

struct CivilDay {
  int y, m, d;
};

// Days since 1970-01-01 → (year, month, day) (Howard Hinnant's civil_from_days).
CivilDay CivilFromDays(int64_t days) {
  days += 719468;
  const int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const int64_t doe = days - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  const int m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  const int y = static_cast<int>(yoe + era * 400 + (m <= 2 ? 1 : 0));
  return {y, m, d};
}

std::pair<int, int> YearMonth(int64_t days) {
  const CivilDay c = CivilFromDays(days);
  return {c.y, c.m};
}

int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

// Seconds since 1970-01-01 UTC → "YYYY-MM-DD", the one date format of the page (the VC chart's
// axis uses the same).
std::string IsoDate(int64_t unix_seconds) {
  const CivilDay c = CivilFromDays(FloorDiv(unix_seconds, 86400));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", c.y, c.m, c.d);
  return buf;
}

// First and last submission.
void AddSpan(const Trace& trace, Characterization& c) {
  c.first_submit = trace.jobs.front().submit;
  c.last_submit = trace.jobs.front().submit;
  for (const Job& j : trace.jobs) {
    c.first_submit = std::min(c.first_submit, j.submit);
    c.last_submit = std::max(c.last_submit, j.submit);
  }
}

// Durations, GPU time, demand buckets, final states and queueing delays.
void AddDemandAndDelays(const Trace& trace, const CharacterizeOptions& opt, Characterization& c) {
  std::vector<double> dur_gpu, dur_cpu, q_gpu, q_cpu;
  c.demand.resize(kNumBuckets);
  for (int i = 0; i < kNumBuckets; ++i) c.demand[i].label = DemandBucketLabel(i);
  for (const Job& j : trace.jobs) {
    const bool gpu = j.gpus > 0;
    (gpu ? c.gpu_jobs : c.cpu_jobs)++;
    DemandBucket& b = c.demand[DemandBucketIndex(j)];
    b.jobs++;
    b.states[static_cast<int>(j.state)]++;
    if (j.state != JobState::kUnknown) c.has_state = true;
    const Duration d = JobDuration(j);
    if (d >= 0) {
      c.duration_known++;
      (gpu ? dur_gpu : dur_cpu).push_back(static_cast<double>(d));
      const double gs = static_cast<double>(d) * GpuShare(j);
      b.gpu_seconds += gs;
      c.total_gpu_seconds += gs;
    }
    if (j.start != kNoTime) {
      c.start_known++;
      (gpu ? q_gpu : q_cpu).push_back(static_cast<double>(std::max<Time>(0, j.start - j.submit)));
    }
  }
  for (auto& b : c.demand) {
    b.job_share = static_cast<double>(b.jobs) / static_cast<double>(c.jobs);
    b.gpu_time_share = c.total_gpu_seconds > 0 ? b.gpu_seconds / c.total_gpu_seconds : 0;
  }
  c.demand.erase(std::remove_if(c.demand.begin(), c.demand.end(), [](const DemandBucket& b) { return b.jobs == 0; }),
                 c.demand.end());
  if (c.duration_known == 0) c.missing.push_back("job durations and GPU time: the trace records no run times");
  c.duration_gpu = Describe(dur_gpu);
  c.duration_cpu = Describe(dur_cpu);
  c.duration_cdf_gpu = report::Cdf(dur_gpu, opt.max_points);
  c.duration_cdf_cpu = report::Cdf(dur_cpu, opt.max_points);
  c.duration_tail_gpu = report::Tail(dur_gpu);
  c.duration_tail_cpu = report::Tail(dur_cpu);
  if (!c.has_state) c.missing.push_back("final state by demand: the trace records no final job states");
  if (c.start_known == 0) c.missing.push_back("queueing delay: the trace records no start times");
  c.queue_gpu = Describe(q_gpu);
  c.queue_cpu = Describe(q_cpu);
  c.queue_cdf_gpu = report::Cdf(q_gpu, opt.max_points);
  c.queue_cdf_cpu = report::Cdf(q_cpu, opt.max_points);
  c.queue_tail_gpu = report::Tail(q_gpu);
  c.queue_tail_cpu = report::Tail(q_cpu);
}

// Calendar patterns: hour of day, weekday, month (or 30-day period).
void AddCalendar(const Trace& trace, Characterization& c) {
  c.absolute_calendar = trace.epoch_known;
  if (!c.absolute_calendar)
    c.missing.push_back(
        "clock time of submissions: the trace has only relative times, so hours and weekdays are counted from the "
        "first submission and months are 30-day periods");
  std::map<int64_t, PeriodRow> periods;
  for (const Job& j : trace.jobs) {
    int64_t t;
    int64_t period;
    std::string label;
    if (c.absolute_calendar) {
      t = trace.epoch_unix + j.submit;
      const int64_t day = FloorDiv(t, 86400);
      c.weekday[static_cast<size_t>(((day + 3) % 7 + 7) % 7)]++;  // 1970-01-01 was a Thursday
      const auto [y, m] = YearMonth(day);
      period = y * 12 + (m - 1);
      char buf[16];
      std::snprintf(buf, sizeof buf, "%04d-%02d", y, m);
      label = buf;
    } else {
      t = j.submit - c.first_submit;
      const int64_t day = FloorDiv(t, 86400);
      c.weekday[static_cast<size_t>(day % 7)]++;
      period = day / 30;
      label = "days " + std::to_string(period * 30) + "-" + std::to_string(period * 30 + 29);
    }
    c.hourly[static_cast<size_t>(((t % 86400) + 86400) % 86400 / 3600)]++;
    PeriodRow& p = periods[period];
    p.label = label;
    p.jobs++;
    if (j.gpus > 0) p.gpu_jobs++;
    const Duration d = JobDuration(j);
    if (d >= 0) p.gpu_hours += static_cast<double>(d) * GpuShare(j) / 3600.0;
  }
  for (auto& [k, p] : periods) c.monthly.push_back(p);
}

// One GPU job's busy interval (allocation, or demand from submission when the trace has
// no start times) and the VC it counts for (UINT32_MAX = none).
struct GpuInterval {
  uint32_t vc;
  Time s, e;
  double g;
};

std::vector<GpuInterval> GpuIntervals(const Trace& trace, bool alloc) {
  std::vector<GpuInterval> ivs;
  for (const Job& j : trace.jobs) {
    if (j.gpus == 0) continue;
    const Duration d = JobDuration(j);
    Time s, e;
    if (alloc) {
      if (j.start == kNoTime) continue;
      s = j.start;
      e = j.end != kNoTime ? j.end : (d >= 0 ? j.start + d : kNoTime);
    } else {
      if (d < 0) continue;
      s = j.submit;
      e = j.submit + d;
    }
    if (e == kNoTime || e <= s) continue;
    ivs.push_back({j.vc.valid() ? j.vc.value() : UINT32_MAX, s, e, GpuShare(j)});
  }
  return ivs;
}

// One series per VC by GPU time, the largest first; beyond opt.max_vcs the rest are merged
// into "other VCs". Returns the series index of each VC; adds capacities when known.
std::unordered_map<uint32_t, size_t> AssignVcSeries(const Trace& trace, const CharacterizeOptions& opt,
                                                    const std::vector<GpuInterval>& ivs, Characterization& c) {
  std::unordered_map<uint32_t, double> vc_gpu_time;
  for (const GpuInterval& iv : ivs) vc_gpu_time[iv.vc] += static_cast<double>(iv.e - iv.s) * iv.g;
  std::vector<std::pair<double, uint32_t>> order;
  for (auto& [vc, g] : vc_gpu_time) order.push_back({-g, vc});
  std::sort(order.begin(), order.end());
  std::unordered_map<uint32_t, size_t> series_of;
  auto vc_name = [&](uint32_t vc) { return vc == UINT32_MAX ? std::string("(no VC)") : trace.vcs.Get(vc); };
  const bool merge = order.size() > opt.max_vcs;
  const size_t kept = merge ? opt.max_vcs - 1 : order.size();
  for (size_t i = 0; i < order.size(); ++i) {
    const uint32_t vc = order[i].second;
    if (i < kept) {
      series_of[vc] = c.vc_series.size();
      VcSeries s;
      s.vc = vc_name(vc);
      c.vc_series.push_back(s);
    } else {
      if (i == kept) c.vc_series.push_back(VcSeries{"other VCs", 0, {}});
      series_of[vc] = kept;
    }
  }
  if (!opt.vc_gpus.empty()) {
    c.vc_capacity_known = true;
    for (const auto& [neg_g, vc] : order) {
      auto it = opt.vc_gpus.find(vc_name(vc));
      if (it != opt.vc_gpus.end()) c.vc_series[series_of[vc]].capacity += it->second;
    }
  }
  return series_of;
}

// Average GPUs of each series per time bin: bins of whole hours (aligned to the clock when
// the calendar is absolute), at most opt.max_time_bins of them. Partial bins at an
// interval's ends are added directly, the whole bins between them through a difference
// array, so each interval costs O(1).
void BinVcSeries(const Trace& trace, const CharacterizeOptions& opt, const std::vector<GpuInterval>& ivs,
                 const std::unordered_map<uint32_t, size_t>& series_of, Characterization& c) {
  Time lo = INT64_MAX, hi = INT64_MIN;
  for (const GpuInterval& iv : ivs) {
    lo = std::min(lo, iv.s);
    hi = std::max(hi, iv.e);
  }
  const Duration span = std::max<Duration>(1, hi - lo);
  const Duration want = (span + static_cast<Duration>(opt.max_time_bins) - 1) / static_cast<Duration>(opt.max_time_bins);
  c.bin_width = std::max<Duration>(3600, (want + 3599) / 3600 * 3600);
  const int64_t clock = c.absolute_calendar ? trace.epoch_unix : 0;
  c.bin_start = FloorDiv(lo + clock, 3600) * 3600 - clock;
  const size_t nbins = static_cast<size_t>((hi - c.bin_start + c.bin_width - 1) / c.bin_width);
  std::vector<std::vector<double>> direct(c.vc_series.size(), std::vector<double>(nbins + 1, 0.0));
  std::vector<std::vector<double>> diff(c.vc_series.size(), std::vector<double>(nbins + 1, 0.0));
  const double bw = static_cast<double>(c.bin_width);
  for (const GpuInterval& iv : ivs) {
    const size_t si = series_of.at(iv.vc);
    const size_t b0 = static_cast<size_t>((iv.s - c.bin_start) / c.bin_width);
    const size_t b1 = static_cast<size_t>((iv.e - c.bin_start) / c.bin_width);
    if (b0 == b1) {
      direct[si][b0] += iv.g * static_cast<double>(iv.e - iv.s) / bw;
      continue;
    }
    direct[si][b0] += iv.g * static_cast<double>(c.bin_start + static_cast<Time>(b0 + 1) * c.bin_width - iv.s) / bw;
    direct[si][b1] += iv.g * static_cast<double>(iv.e - (c.bin_start + static_cast<Time>(b1) * c.bin_width)) / bw;
    diff[si][b0 + 1] += iv.g;
    diff[si][b1] -= iv.g;
  }
  for (size_t si = 0; si < c.vc_series.size(); ++si) {
    double run = 0;
    c.vc_series[si].gpus.resize(nbins);
    for (size_t b = 0; b < nbins; ++b) {
      run += diff[si][b];
      c.vc_series[si].gpus[b] = run + direct[si][b];
    }
  }
}

// GPUs in use (or demanded) over time per VC.
void AddVcSeries(const Trace& trace, const CharacterizeOptions& opt, Characterization& c) {
  const bool alloc = c.start_known > 0;
  c.vc_series_is_allocation = alloc;
  const std::vector<GpuInterval> ivs = GpuIntervals(trace, alloc);
  if (ivs.empty()) {
    c.missing.push_back("GPUs over time per VC: no GPU job has both a start and an end (or a duration)");
    return;
  }
  BinVcSeries(trace, opt, ivs, AssignVcSeries(trace, opt, ivs, c), c);
  if (!alloc)
    c.missing.push_back(
        "GPUs in use over time: the trace records no start times, so the chart shows GPU demand as if every job "
        "had started on submission");
  if (!c.vc_capacity_known)
    c.missing.push_back("VC utilization: VC sizes unknown (pass --cluster CONFIG); GPUs in use are shown instead");
}

// User concentration and per-user queueing.
void AddUsers(const Trace& trace, Characterization& c) {
  std::unordered_map<uint32_t, UserRow> by_user;
  std::unordered_map<uint32_t, std::vector<double>> queues;
  for (const Job& j : trace.jobs) {
    if (!j.user.valid()) continue;
    UserRow& u = by_user[j.user.value()];
    u.jobs++;
    const Duration d = JobDuration(j);
    if (d >= 0) u.gpu_hours += static_cast<double>(d) * GpuShare(j) / 3600.0;
    if (j.start != kNoTime) queues[j.user.value()].push_back(static_cast<double>(std::max<Time>(0, j.start - j.submit)));
  }
  if (by_user.empty()) {
    c.missing.push_back("user concentration and per-user queueing: the trace has no user column");
  } else {
    std::vector<std::pair<uint32_t, UserRow>> rows(by_user.begin(), by_user.end());
    for (auto& [id, r] : rows) r.user = trace.users.Get(id);
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) {
      if (a.second.gpu_hours != b.second.gpu_hours) return a.second.gpu_hours > b.second.gpu_hours;
      return a.second.user < b.second.user;
    });
    c.users = rows.size();
    double total = 0;
    for (auto& [id, r] : rows) total += r.gpu_hours;
    std::vector<double> cum(rows.size() + 1, 0.0);
    for (size_t i = 0; i < rows.size(); ++i) cum[i + 1] = cum[i] + rows[i].second.gpu_hours;
    auto top = [&](double pct) {
      const size_t k = std::max<size_t>(1, static_cast<size_t>(std::ceil(pct / 100.0 * static_cast<double>(rows.size()) - 1e-9)));
      return total > 0 ? cum[std::min(k, rows.size())] / total : 0.0;
    };
    c.top1_share = top(1);
    c.top5_share = top(5);
    c.top10_share = top(10);
    const size_t pts = std::min<size_t>(rows.size(), 100);
    c.user_lorenz.push_back({0.0, 0.0});
    for (size_t k = 1; k <= pts; ++k) {
      const size_t n = (k * rows.size() + pts - 1) / pts;
      c.user_lorenz.push_back({static_cast<double>(n) / static_cast<double>(rows.size()), total > 0 ? cum[n] / total : 0.0});
    }
    for (size_t i = 0; i < rows.size() && i < 20; ++i) {
      UserRow r = rows[i].second;
      r.gpu_time_share = total > 0 ? r.gpu_hours / total : 0;
      auto qit = queues.find(rows[i].first);
      if (qit != queues.end()) {
        r.queued_jobs = qit->second.size();
        const Distribution d = Describe(qit->second);
        r.avg_queue = d.mean;
        r.median_queue = d.median;
      }
      c.top_users.push_back(r);
    }
    if (c.start_known == 0) c.missing.push_back("per-user queueing: the trace records no start times");
  }
}

// Job types (LLM traces: Acme keeps the job type in the name field).
void AddJobTypes(const Trace& trace, Characterization& c) {
  if (trace.origin == "acme") {
    std::map<std::string, TypeRow> types;
    std::map<std::string, double> qsum, dsum, gsum;
    for (const Job& j : trace.jobs) {
      const std::string t = j.name.valid() ? trace.names.Get(j.name.value()) : std::string("(unknown)");
      TypeRow& r = types[t];
      r.type = t;
      r.jobs++;
      gsum[t] += GpuShare(j);
      const Duration d = JobDuration(j);
      if (d >= 0) {
        r.gpu_hours += static_cast<double>(d) * GpuShare(j) / 3600.0;
        dsum[t] += static_cast<double>(d);
      }
      if (j.start != kNoTime) {
        r.queued_jobs++;
        qsum[t] += static_cast<double>(std::max<Time>(0, j.start - j.submit));
      }
    }
    for (auto& [t, r] : types) {
      r.job_share = static_cast<double>(r.jobs) / static_cast<double>(c.jobs);
      r.gpu_time_share = c.total_gpu_seconds > 0 ? r.gpu_hours * 3600.0 / c.total_gpu_seconds : 0;
      r.avg_duration = dsum[t] / static_cast<double>(r.jobs);
      r.avg_gpus = gsum[t] / static_cast<double>(r.jobs);
      r.avg_queue = r.queued_jobs ? qsum[t] / static_cast<double>(r.queued_jobs) : 0;
      c.job_types.push_back(r);
    }
    std::sort(c.job_types.begin(), c.job_types.end(),
              [](const TypeRow& a, const TypeRow& b) { return a.gpu_hours > b.gpu_hours; });
  } else {
    c.missing.push_back("job types: only LLM traces with a job-type column (Acme) have them");
  }
}

}  // namespace

Characterization Characterize(const Trace& trace, const CharacterizeOptions& opt) {
  Characterization c;
  c.origin = trace.origin;
  c.jobs = trace.jobs.size();
  c.epoch_known = trace.epoch_known;
  c.epoch_unix = trace.epoch_unix;
  if (trace.jobs.empty()) {
    c.missing.push_back("everything: the trace has no jobs");
    return c;
  }
  AddSpan(trace, c);
  AddDemandAndDelays(trace, opt, c);
  AddCalendar(trace, c);
  AddVcSeries(trace, opt, c);
  AddUsers(trace, c);
  AddJobTypes(trace, c);
  return c;
}

// ---------------------------------------------------------------------------------------
namespace {

// The report builders every section below uses.
using report::Chart;
using report::FormatPercent;
using report::FormatSeconds;
using report::Section;
using report::Table;

json Tooltip(std::initializer_list<std::tuple<const char*, const char*, const char*>> fields) {
  json t = json::array();
  for (const auto& [f, title, fmt] : fields) {
    json e = {{"field", f}, {"title", title}};
    if (fmt && *fmt) e["format"] = fmt;
    t.push_back(e);
  }
  return t;
}

// The page's series: one colour each in every chart.
const std::vector<std::string>& JobClasses() {
  static const std::vector<std::string> classes = {"GPU jobs", "CPU jobs"};
  return classes;
}

// Table rows of one statistic of a GPU-jobs and a CPU-jobs distribution ("n/a" where absent),
// each row in one unit named in its label: "mean duration (h)".
void AddDistRows(Table& t, const std::string& what, const Distribution& gpu, bool has_gpu, const Distribution& cpu,
                 bool has_cpu) {
  const std::pair<const char*, double Distribution::*> stats[] = {
      {"mean", &Distribution::mean}, {"median", &Distribution::median}, {"p99", &Distribution::p99}};
  for (const auto& [name, field] : stats) {
    std::vector<double> v;
    if (has_gpu) v.push_back(gpu.*field);
    if (has_cpu) v.push_back(cpu.*field);
    const report::TimeUnit unit = report::PickTimeUnit(v);
    t.rows.push_back({std::string(name) + " " + what + " (" + unit.name + ")",
                      has_gpu ? report::FormatIn(gpu.*field, unit) : "n/a",
                      has_cpu ? report::FormatIn(cpu.*field, unit) : "n/a"});
  }
}

// One unit for a table column of durations (its rows' values where `known`), and its cells.
std::pair<report::TimeUnit, std::vector<std::string>> TimeColumn(const std::vector<double>& seconds,
                                                                 const std::vector<bool>& known) {
  std::vector<double> v;
  for (size_t i = 0; i < seconds.size(); ++i)
    if (known[i]) v.push_back(seconds[i]);
  const report::TimeUnit unit = report::PickTimeUnit(v);
  std::vector<std::string> cells;
  for (size_t i = 0; i < seconds.size(); ++i) cells.push_back(known[i] ? report::FormatIn(seconds[i], unit) : "n/a");
  return {unit, cells};
}

// The colour of the "share of jobs" / "share of GPU time" bars (not series: part colours; the
// captions call them dark and light).
json MeasureColor() {
  json color = report::PartColorEncoding("measure", "share of", {"jobs", "GPU time"});
  color["legend"] = {{"orient", "top-right"}};
  return color;
}

// The lines of c.missing that start with `key`: each section lists what the trace lacks for it.
std::vector<std::string> MissingFor(const Characterization& c, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& m : c.missing)
    if (m.rfind(key, 0) == 0) out.push_back(m);
  return out;
}

void AddFacts(const Characterization& c, const std::string& trace_label, report::Page* page) {
  page->facts.push_back({"trace", trace_label});
  page->facts.push_back({"format", c.origin});
  page->facts.push_back({"jobs", std::to_string(c.jobs) + " (" + std::to_string(c.gpu_jobs) + " GPU, " +
                                     std::to_string(c.cpu_jobs) + " CPU)"});
  page->facts.push_back({"GPU time", report::FormatFixed(c.total_gpu_seconds / 3600.0, 0) + " GPU-hours"});
  page->facts.push_back({"submissions span", FormatSeconds(static_cast<double>(c.last_submit - c.first_submit))});
  if (c.absolute_calendar) {
    page->facts.push_back({"first submission", IsoDate(c.epoch_unix + c.first_submit)});
    page->facts.push_back({"last submission", IsoDate(c.epoch_unix + c.last_submit)});
  }
  page->facts.push_back({"clock", c.absolute_calendar ? "absolute (UTC)" : "relative (no epoch in the trace)"});
}

report::Section OverviewSection(const Characterization& c) {
  Section s;
  s.title = "Overview";
  s.text = "Summary statistics, each row in one unit. Durations are recorded run times; queueing delay is recorded "
           "start minus submit.";
  Table t{"overview", "Summary", {"quantity", "GPU jobs", "CPU jobs"}, {}};
  t.rows.push_back({"jobs", std::to_string(c.gpu_jobs), std::to_string(c.cpu_jobs)});
  const bool dg = !c.duration_cdf_gpu.empty(), dc = !c.duration_cdf_cpu.empty();
  const bool qg = !c.queue_cdf_gpu.empty(), qc = !c.queue_cdf_cpu.empty();
  AddDistRows(t, "duration", c.duration_gpu, dg, c.duration_cpu, dc);
  AddDistRows(t, "queueing delay", c.queue_gpu, qg, c.queue_cpu, qc);
  s.tables.push_back(t);
  for (const auto& m : c.missing)
    if (m.rfind("everything", 0) == 0) s.missing.push_back(m);
  return s;
}

report::Section DurationSection(const Characterization& c) {
  report::Section s;
  s.title = "Job duration";
  s.missing = MissingFor(c, "job durations");
  report::CdfSeries series;
  report::TailSeries tail;
  if (!c.duration_cdf_gpu.empty()) series.push_back({"GPU jobs", c.duration_cdf_gpu});
  if (!c.duration_cdf_cpu.empty()) series.push_back({"CPU jobs", c.duration_cdf_cpu});
  if (!c.duration_tail_gpu.empty()) tail.push_back({"GPU jobs", c.duration_tail_gpu});
  if (!c.duration_tail_cpu.empty()) tail.push_back({"CPU jobs", c.duration_tail_cpu});
  if (!series.empty()) {
    s.charts.push_back(report::CdfChart("duration_cdf", "Job duration CDF", "duration (s, log scale)", true, series,
                                        "jobs",
                                        "Run time of each job. Log scale: durations span seconds to weeks; "
                                        "durations below 1 s are drawn at 1 s.",
                                        JobClasses()));
    s.charts.push_back(report::TailChart("duration_tail", "Job duration tail (p90–p99.9)", "duration (s, log scale)",
                                         tail, "jobs", "1 − CDF of the duration on log-log axes: the longest 10 % of jobs.",
                                         JobClasses()));
  }
  return s;
}

// Share of the jobs of each demand size by final state; `order` lists the demand labels.
report::Chart StateByDemandChart(const Characterization& c, const json& order) {
  report::Chart st;
  st.id = "state_by_demand";
  st.title = "Final state by GPU demand";
  st.caption = "Share of jobs of each demand size by recorded final state.";
  std::array<bool, kNumJobStates> seen{};
  for (const auto& b : c.demand)
    for (int k = 0; k < kNumJobStates; ++k) seen[k] = seen[k] || b.states[k] > 0;
  std::vector<std::string> states;  // the states that occur, in JobState order
  for (int k = 0; k < kNumJobStates; ++k)
    if (seen[k]) states.push_back(std::string(JobStateName(static_cast<JobState>(k))));
  for (const auto& b : c.demand)
    for (int k = 0; k < kNumJobStates; ++k)
      if (b.states[k])
        st.data.push_back(json{{"gpus", b.label},
                               {"state", std::string(JobStateName(static_cast<JobState>(k)))},
                               {"jobs", b.states[k]},
                               {"share", static_cast<double>(b.states[k]) / static_cast<double>(b.jobs)}});
  st.spec = {{"mark", {{"type", "bar"}}},
             {"encoding",
              {{"x", {{"field", "gpus"}, {"type", "ordinal"}, {"sort", order}, {"title", "GPUs requested per job"},
                      {"axis", {{"labelAngle", 0}}}}},
               {"y", {{"field", "jobs"}, {"type", "quantitative"}, {"stack", "normalize"}, {"title", "share of jobs"},
                      {"axis", {{"format", ".0%"}}}}},
               {"color", report::PartColorEncoding("state", "final state", states)},
               {"order", {{"field", "state"}}},
               {"tooltip", Tooltip({{"gpus", "GPUs", ""}, {"state", "state", ""}, {"jobs", "jobs", ","},
                                    {"share", "share", ".1%"}})}}}};
  return st;
}

report::Section GpuDemandSection(const Characterization& c) {
  Section s;
  s.title = "GPU demand";
  s.text = "Jobs and GPU time (duration × GPUs) by the number of GPUs requested.";
  Chart ch;
  ch.id = "gpu_demand";
  ch.title = "Share of jobs and of GPU time by GPU demand";
  ch.caption = "Per bucket of GPUs requested: its share of all jobs (dark bar) and of all GPU time (light bar).";
  json order = json::array();
  for (const auto& b : c.demand) {
    order.push_back(b.label);
    ch.data.push_back(json{{"gpus", b.label}, {"measure", "jobs"}, {"share", b.job_share}, {"count", b.jobs}});
    ch.data.push_back(json{{"gpus", b.label}, {"measure", "GPU time"}, {"share", b.gpu_time_share}, {"count", b.jobs}});
  }
  ch.spec = {{"mark", {{"type", "bar"}}},
             {"encoding",
              {{"x", {{"field", "gpus"}, {"type", "ordinal"}, {"sort", order}, {"title", "GPUs requested per job"},
                      {"axis", {{"labelAngle", 0}}}}},
               {"xOffset", {{"field", "measure"}, {"sort", {"jobs", "GPU time"}}}},
               {"y", {{"field", "share"}, {"type", "quantitative"}, {"title", "share of total"},
                      {"axis", {{"format", ".0%"}}}}},
               {"color", MeasureColor()},
               {"tooltip", Tooltip({{"gpus", "GPUs", ""}, {"measure", "share of", ""}, {"share", "share", ".2%"},
                                    {"count", "jobs", ","}})}}}};
  s.charts.push_back(ch);
  Table t{"gpu_demand_table", "Jobs and GPU time by GPU demand", {"GPUs", "jobs", "share of jobs", "GPU-hours", "share of GPU time"}, {}};
  for (const auto& b : c.demand)
    t.rows.push_back({b.label, std::to_string(b.jobs), FormatPercent(b.job_share, 2),
                      report::FormatFixed(b.gpu_seconds / 3600.0, 1), FormatPercent(b.gpu_time_share, 2)});
  s.tables.push_back(t);

  // Final state by demand.
  s.missing = MissingFor(c, "final state");
  if (c.has_state) s.charts.push_back(StateByDemandChart(c, order));
  return s;
}

report::Section QueueingSection(const Characterization& c) {
  report::Section s;
  s.title = "Queueing delay";
  s.missing = MissingFor(c, "queueing");
  report::CdfSeries series;
  report::TailSeries tail;
  if (!c.queue_cdf_gpu.empty()) series.push_back({"GPU jobs", c.queue_cdf_gpu});
  if (!c.queue_cdf_cpu.empty()) series.push_back({"CPU jobs", c.queue_cdf_cpu});
  if (!c.queue_tail_gpu.empty()) tail.push_back({"GPU jobs", c.queue_tail_gpu});
  if (!c.queue_tail_cpu.empty()) tail.push_back({"CPU jobs", c.queue_tail_cpu});
  if (!series.empty()) {
    s.charts.push_back(report::CdfChart("queue_cdf", "Queueing delay CDF (recorded start − submit)",
                                        "queueing delay (s, log scale)", true, series, "jobs",
                                        "Delays below 1 s (including 0) are drawn at 1 s.", JobClasses()));
    s.charts.push_back(report::TailChart("queue_tail", "Queueing delay tail (p90–p99.9)", "queueing delay (s, log scale)",
                                         tail, "jobs",
                                         "1 − CDF of the queueing delay on log-log axes; delays below 1 s are drawn at 1 s.",
                                         JobClasses()));
  }
  return s;
}

report::Chart SubmissionsByHourChart(const Characterization& c) {
  const std::string hour_title = c.absolute_calendar ? "hour of day (UTC)" : "hour since first submission (mod 24)";
  report::Chart h;
  h.id = "submissions_by_hour";
  h.title = "Submissions by hour of day";
  for (int i = 0; i < 24; ++i) h.data.push_back(json{{"hour", i}, {"jobs", c.hourly[i]}});
  h.spec = {{"mark", {{"type", "bar"}, {"color", report::kPartPalette[0]}}},
            {"encoding",
             {{"x", {{"field", "hour"}, {"type", "ordinal"}, {"title", hour_title}, {"axis", {{"labelAngle", 0}}}}},
              {"y", {{"field", "jobs"}, {"type", "quantitative"}, {"title", "jobs submitted"}}},
              {"tooltip", Tooltip({{"hour", "hour", ""}, {"jobs", "jobs", ","}})}}}};
  h.spec["width"] = 520;
  return h;
}

report::Chart SubmissionsByWeekdayChart(const Characterization& c) {
  report::Chart w;
  w.id = "submissions_by_weekday";
  w.title = "Submissions by day of week";
  static const char* kDays[7] = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  json dorder = json::array();
  for (int i = 0; i < 7; ++i) {
    const std::string label = c.absolute_calendar ? kDays[i] : "day " + std::to_string(i);
    dorder.push_back(label);
    w.data.push_back(json{{"day", label}, {"jobs", c.weekday[i]}});
  }
  w.spec = {{"mark", {{"type", "bar"}, {"color", report::kPartPalette[0]}}},
            {"encoding",
             {{"x", {{"field", "day"}, {"type", "ordinal"}, {"sort", dorder},
                     {"title", c.absolute_calendar ? "day of week (UTC)" : "day since first submission (mod 7)"},
                     {"axis", {{"labelAngle", 0}}}}},
              {"y", {{"field", "jobs"}, {"type", "quantitative"}, {"title", "jobs submitted"}}},
              {"tooltip", Tooltip({{"day", "day", ""}, {"jobs", "jobs", ","}})}}}};
  return w;
}

report::Chart MonthlyTrendChart(const Characterization& c) {
  report::Chart m;
  m.id = "monthly";
  m.title = c.absolute_calendar ? "Monthly trend" : "Trend per 30-day period";
  json morder = json::array();
  for (const auto& p : c.monthly) {
    morder.push_back(p.label);
    m.data.push_back(json{{"period", p.label}, {"metric", "jobs submitted"}, {"value", p.jobs}});
    m.data.push_back(json{{"period", p.label}, {"metric", "GPU jobs submitted"}, {"value", p.gpu_jobs}});
    m.data.push_back(json{{"period", p.label}, {"metric", "GPU-hours (by submit period)"}, {"value", p.gpu_hours}});
  }
  m.spec = {{"mark", {{"type", "bar"}, {"color", report::kPartPalette[0]}}},
            {"encoding",
             {{"x", {{"field", "period"}, {"type", "ordinal"}, {"sort", morder},
                     {"title", c.absolute_calendar ? "month (UTC)" : "period"}}},
              {"y", {{"field", "value"}, {"type", "quantitative"}, {"title", "count / GPU-hours"}}},
              {"row", {{"field", "metric"}, {"type", "nominal"}, {"title", nullptr}}},
              {"tooltip", Tooltip({{"period", "period", ""}, {"metric", "metric", ""}, {"value", "value", ",.0f"}})}}},
            {"resolve", {{"scale", {{"y", "independent"}}}}},
            {"height", 110}};
  return m;
}

report::Section SubmissionSection(const Characterization& c) {
  report::Section s;
  s.title = "Submission patterns";
  s.missing = MissingFor(c, "clock time");
  s.charts.push_back(SubmissionsByHourChart(c));
  s.charts.push_back(SubmissionsByWeekdayChart(c));
  s.charts.push_back(MonthlyTrendChart(c));
  return s;
}

// GPUs in use (or demanded) per VC over time; relative to each VC's size when the sizes are
// known (VCs without one are left out then).
report::Chart VcOverTimeChart(const Characterization& c) {
  const bool util = c.vc_capacity_known;
  report::Chart ch;
  ch.id = "vc_over_time";
  ch.title = util ? (c.vc_series_is_allocation ? "VC utilization over time" : "GPU demand relative to VC size over time")
                  : (c.vc_series_is_allocation ? "GPUs in use over time per VC" : "GPU demand over time per VC");
  ch.caption = "One panel per VC, the largest (by GPU time) first" +
               std::string(c.vc_series.size() > 0 && c.vc_series.back().vc == "other VCs" ? ", the rest merged" : "") +
               "; mean over each " + FormatSeconds(static_cast<double>(c.bin_width)) + " bin" +
               (util ? "; utilization = GPUs in use / VC GPUs, one scale for all panels (VCs without a size in the "
                       "config are left out)."
                     : "; each panel has its own GPU scale.");
  json panels = json::array();  // facet order: vc_series order
  for (const auto& v : c.vc_series) {
    if (util && v.capacity == 0) continue;
    panels.push_back(v.vc);
    for (size_t b = 0; b < v.gpus.size(); ++b) {
      const Time t = c.bin_start + static_cast<Time>(b) * c.bin_width;
      json row = {{"vc", v.vc}};
      if (c.absolute_calendar)
        row["time"] = static_cast<double>(c.epoch_unix + t) * 1000.0;
      else
        row["day"] = static_cast<double>(t - c.first_submit) / 86400.0;
      row["gpus"] = std::round(v.gpus[b] * 1000.0) / 1000.0;
      if (util) row["utilization"] = v.gpus[b] / static_cast<double>(v.capacity);
      ch.data.push_back(row);
    }
  }
  json x = c.absolute_calendar
               ? json{{"field", "time"}, {"type", "temporal"}, {"scale", {{"type", "utc"}}}, {"title", "date (UTC)"},
                      {"axis", {{"format", "%Y-%m-%d"}, {"labelAngle", -30}, {"tickCount", 4}}}}
               : json{{"field", "day"}, {"type", "quantitative"}, {"title", "days since first submission"}};
  // (a utc scale formats its axis in UTC; a tooltip does so through a utc time unit)
  json when = c.absolute_calendar ? json{{"field", "time"}, {"type", "temporal"}, {"timeUnit", "utcyearmonthdatehoursminutes"},
                                         {"title", "bin start (UTC)"}, {"format", "%Y-%m-%d %H:%M"}}
                                  : json{{"field", "day"}, {"title", "day"}, {"format", ".2f"}};
  json tooltip = Tooltip({{"vc", "VC", ""}, {"gpus", "GPUs", ",.1f"}});
  tooltip.insert(tooltip.begin() + 1, when);
  json y = util ? json{{"field", "utilization"}, {"type", "quantitative"}, {"title", c.vc_series_is_allocation ? "GPU utilization" : "GPU demand / VC GPUs"},
                       {"axis", {{"format", ".0%"}}}}
                : json{{"field", "gpus"}, {"type", "quantitative"}, {"title", "GPUs"}};
  ch.spec = {{"mark", {{"type", "area"}, {"color", report::kPartPalette[2]},
                       {"line", {{"color", report::kPartPalette[0]}, {"strokeWidth", 1}}}}},
             {"width", 330},
             {"height", 110},
             {"encoding",
              {{"facet", {{"field", "vc"}, {"type", "nominal"}, {"sort", panels}, {"columns", 3}, {"title", nullptr}}},
               {"x", x},
               {"y", y},
               {"tooltip", tooltip}}},
             {"resolve", {{"scale", {{"y", util ? "shared" : "independent"}}}}}};
  return ch;
}

report::Section VcSection(const Characterization& c) {
  report::Section s;
  s.title = "GPUs over time per virtual cluster";
  for (auto& m : MissingFor(c, "GPUs")) s.missing.push_back(m);
  for (auto& m : MissingFor(c, "VC utilization")) s.missing.push_back(m);
  if (!c.vc_series.empty()) s.charts.push_back(VcOverTimeChart(c));
  return s;
}

Table TopUsersTable(const Characterization& c) {
  std::vector<double> avg, median;
  std::vector<bool> known;
  for (const auto& r : c.top_users) {
    avg.push_back(r.avg_queue);
    median.push_back(r.median_queue);
    known.push_back(r.queued_jobs > 0);
  }
  const auto [avg_unit, avg_cells] = TimeColumn(avg, known);
  const auto [median_unit, median_cells] = TimeColumn(median, known);
  Table u{"top_users", "Top users by GPU time",
          {"user", "jobs", "GPU-hours", "share of GPU time", std::string("avg queueing (") + avg_unit.name + ")",
           std::string("median queueing (") + median_unit.name + ")"},
          {}};
  for (size_t i = 0; i < c.top_users.size(); ++i) {
    const UserRow& r = c.top_users[i];
    u.rows.push_back({r.user, std::to_string(r.jobs), report::FormatFixed(r.gpu_hours, 1),
                      FormatPercent(r.gpu_time_share), avg_cells[i], median_cells[i]});
  }
  return u;
}

Table JobTypesTable(const Characterization& c) {
  std::vector<double> dur, queue;
  std::vector<bool> all, queued;
  for (const auto& r : c.job_types) {
    dur.push_back(r.avg_duration);
    queue.push_back(r.avg_queue);
    all.push_back(true);
    queued.push_back(r.queued_jobs > 0);
  }
  const auto [dur_unit, dur_cells] = TimeColumn(dur, all);
  const auto [queue_unit, queue_cells] = TimeColumn(queue, queued);
  Table t{"job_types_table", "Job types",
          {"type", "jobs", "share of jobs", "GPU-hours", "share of GPU time", "avg GPUs",
           std::string("avg duration (") + dur_unit.name + ")", std::string("avg queueing (") + queue_unit.name + ")"},
          {}};
  for (size_t i = 0; i < c.job_types.size(); ++i) {
    const TypeRow& r = c.job_types[i];
    t.rows.push_back({r.type, std::to_string(r.jobs), FormatPercent(r.job_share, 2), report::FormatFixed(r.gpu_hours, 1),
                      FormatPercent(r.gpu_time_share, 2), report::FormatFixed(r.avg_gpus, 2), dur_cells[i],
                      queue_cells[i]});
  }
  return t;
}

report::Section UsersSection(const Characterization& c) {
  Section s;
  s.title = "Users";
  s.missing = MissingFor(c, "user concentration");
  for (auto& m : MissingFor(c, "per-user")) s.missing.push_back(m);
  if (c.users > 0) {
    Chart l;
    l.id = "user_concentration";
    l.title = "Concentration of GPU time across users";
    l.caption = "Users sorted by GPU time, heaviest first. Top 1 % / 5 % / 10 % of users: " +
                FormatPercent(c.top1_share) + " / " + FormatPercent(c.top5_share) + " / " +
                FormatPercent(c.top10_share) + " of GPU time.";
    for (const auto& [u, g] : c.user_lorenz) l.data.push_back(json{{"users", u}, {"gpu_time", g}});
    l.spec = {{"mark", {{"type", "line"}, {"strokeWidth", 2}, {"point", false}}},
              {"encoding",
               {{"x", {{"field", "users"}, {"type", "quantitative"}, {"title", "fraction of users (heaviest first)"},
                       {"axis", {{"format", ".0%"}}}}},
                {"y", {{"field", "gpu_time"}, {"type", "quantitative"}, {"title", "cumulative share of GPU time"},
                       {"axis", {{"format", ".0%"}}}, {"scale", {{"domain", {0, 1}}}}}},
                {"tooltip", Tooltip({{"users", "users", ".1%"}, {"gpu_time", "GPU time", ".1%"}})}}}};
    s.charts.push_back(l);
    Table t{"user_shares", "Share of GPU time of the top users",
            {"users", "top 1 %", "top 5 %", "top 10 %"},
            {{std::to_string(c.users), FormatPercent(c.top1_share), FormatPercent(c.top5_share),
              FormatPercent(c.top10_share)}}};
    s.tables.push_back(t);
    s.tables.push_back(TopUsersTable(c));
  }
  return s;
}

report::Section JobTypesSection(const Characterization& c) {
  Section s;
  s.title = "Job types";
  s.missing = MissingFor(c, "job types");
  if (!c.job_types.empty()) {
    Chart ch;
    ch.id = "job_types";
    ch.title = "Share of jobs and of GPU time by job type";
    ch.caption = "Per job type: its share of all jobs (dark bar) and of all GPU time (light bar).";
    json order = json::array();
    for (const auto& r : c.job_types) {
      order.push_back(r.type);
      ch.data.push_back(json{{"type", r.type}, {"measure", "jobs"}, {"share", r.job_share}});
      ch.data.push_back(json{{"type", r.type}, {"measure", "GPU time"}, {"share", r.gpu_time_share}});
    }
    ch.spec = {{"mark", {{"type", "bar"}}},
               {"encoding",
                {{"x", {{"field", "type"}, {"type", "nominal"}, {"sort", order}, {"title", "job type"},
                        {"axis", {{"labelAngle", 0}}}}},
                 {"xOffset", {{"field", "measure"}, {"sort", {"jobs", "GPU time"}}}},
                 {"y", {{"field", "share"}, {"type", "quantitative"}, {"title", "share of total"},
                        {"axis", {{"format", ".0%"}}}}},
                 {"color", MeasureColor()},
                 {"tooltip", Tooltip({{"type", "type", ""}, {"measure", "share of", ""}, {"share", "share", ".2%"}})}}}};
    s.charts.push_back(ch);
    s.tables.push_back(JobTypesTable(c));
  }
  return s;
}

}  // namespace

report::Page CharacterizationPage(const Characterization& c, const std::string& trace_label) {
  report::Page page;
  page.title = "Workload characterization: " + trace_label;
  page.series = JobClasses();
  AddFacts(c, trace_label, &page);
  page.sections.push_back(OverviewSection(c));
  page.sections.push_back(DurationSection(c));
  page.sections.push_back(GpuDemandSection(c));
  page.sections.push_back(QueueingSection(c));
  page.sections.push_back(SubmissionSection(c));
  page.sections.push_back(VcSection(c));
  page.sections.push_back(UsersSection(c));
  page.sections.push_back(JobTypesSection(c));
  return page;
}

}  // namespace orrery
