#include "analysis/metrics.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <map>

namespace orrery {

namespace {

// Order-preserving map of a (non-NaN) double to an unsigned integer: flip the sign bit of
// non-negative values and every bit of negative ones.
uint64_t OrderKey(double x) {
  const uint64_t b = std::bit_cast<uint64_t>(x);
  return b >> 63 ? ~b : b | (uint64_t{1} << 63);
}

uint64_t KeyOf(uint64_t k) { return k; }

double ValueOf(uint64_t k) { return std::bit_cast<double>(k >> 63 ? k & ~(uint64_t{1} << 63) : ~k); }

// Sorts ascending by KeyOf: an LSD radix sort, 16 bits per pass, passes in which every key
// has the same digit skipped (durations in seconds share their high bits). The four digit
// histograms come from one counting pass. O(n) instead of O(n log n) for the million-job runs;
// small inputs use std::sort. Equal keys are equal values, so the order among them never shows.
// `tmp` is the scatter buffer, kept by the caller across sorts (the summary's three metrics
// share one: 16 MB fewer pages to fault in per metric at 1M jobs).
template <class T>
void SortByKey(std::vector<T>& a, std::vector<T>& tmp) {
  if (a.size() < 4096) {
    std::sort(a.begin(), a.end(), [](const T& x, const T& y) { return KeyOf(x) < KeyOf(y); });
    return;
  }
  const size_t n = a.size();
  constexpr size_t kDigits = 4, kBuckets = size_t{1} << 16;
  std::vector<uint32_t> count(kDigits * kBuckets, 0);
  for (const T& x : a) {
    const uint64_t k = KeyOf(x);
    for (size_t d = 0; d < kDigits; ++d) ++count[d * kBuckets + ((k >> (16 * d)) & 0xffff)];
  }
  for (size_t d = 0; d < kDigits; ++d) {
    const int shift = static_cast<int>(16 * d);
    uint32_t* c = count.data() + d * kBuckets;
    if (c[(KeyOf(a[0]) >> shift) & 0xffff] == n) continue;  // one digit for all: nothing moves
    uint32_t sum = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      const uint32_t here = c[i];
      c[i] = sum;
      sum += here;
    }
    tmp.resize(n);  // its old contents are overwritten
    for (const T& x : a) tmp[c[(KeyOf(x) >> shift) & 0xffff]++] = x;
    a.swap(tmp);
  }
}

// The nearest-rank percentile p of n sorted values: the index of the value to report.
size_t RankIndex(double p, size_t n) {
  const size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(n)));
  return std::min(n - 1, k == 0 ? 0 : k - 1);
}

constexpr double kQuantiles[] = {0.5, 0.95, 0.99, 0.999};

// Builds one group's Distribution from its values fed in ascending order; the mean is summed
// in that order (so a group's figures do not depend on how its jobs were listed).
class DistributionBuilder {
 public:
  void Expect(size_t n) {
    n_ = n;
    if (n == 0) return;
    for (size_t q = 0; q < 4; ++q) rank_[q] = RankIndex(kQuantiles[q], n);
  }
  void Add(double x) {
    sum_ += x;
    while (next_ < 4 && seen_ == rank_[next_]) at_[next_++] = x;  // ranks ascend with the quantiles
    ++seen_;
    max_ = x;
  }
  Distribution Get() const {
    Distribution d;
    if (n_ == 0) return d;
    d.mean = sum_ / static_cast<double>(n_);
    d.median = at_[0];
    d.p95 = at_[1];
    d.p99 = at_[2];
    d.p999 = at_[3];
    d.max = max_;
    return d;
  }

 private:
  size_t n_ = 0, seen_ = 0, next_ = 0;  // next_: the first quantile not reached yet
  size_t rank_[4] = {};
  double at_[4] = {}, sum_ = 0, max_ = 0;
};

}  // namespace

Distribution Describe(std::vector<double>& v) {
  std::vector<uint64_t> keys(v.size());
  for (size_t i = 0; i < v.size(); ++i) keys[i] = OrderKey(v[i]);
  std::vector<uint64_t> tmp;
  SortByKey(keys, tmp);
  DistributionBuilder b;
  b.Expect(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) b.Add(v[i] = ValueOf(keys[i]));
  return b.Get();
}

namespace {

// The summary's metrics. JCT and wait are whole seconds: their keys are the integers
// themselves (sign bit flipped), whose high digits are constant, so the radix sort makes
// fewer passes than over a double's bits; the values, and hence their sorted sequence, are
// the same doubles.
struct IntegerMetric {
  static uint64_t Key(int64_t v) { return static_cast<uint64_t>(v) ^ (uint64_t{1} << 63); }
  static double Value(uint64_t k) { return static_cast<double>(static_cast<int64_t>(k ^ (uint64_t{1} << 63))); }
};
struct Jct : IntegerMetric {
  static uint64_t KeyOf(const JobOutcome& o) { return Key(o.jct()); }
};
struct Wait : IntegerMetric {
  static uint64_t KeyOf(const JobOutcome& o) { return Key(o.wait); }
};
struct Slowdown {
  static uint64_t KeyOf(const JobOutcome& o) {
    const double jct = static_cast<double>(o.jct());
    return OrderKey(std::max(1.0, jct / static_cast<double>(std::max<Duration>(o.run, kSlowdownTau))));
  }
  static double Value(uint64_t k) { return ValueOf(k); }
};

// The groups of a summary: all jobs, small and large (by GPUs), and one per VC. A job is in
// "all", in one size group and in at most one VC group.
struct Groups {
  static constexpr uint32_t kAll = 0, kSmall = 1, kLarge = 2, kFirstVc = 3;
  size_t nvc = 0;
  size_t size() const { return kFirstVc + nvc; }
  static uint32_t SizeOf(const JobOutcome& o) { return o.gpus <= 8 ? kSmall : kLarge; }
  uint32_t VcOf(const JobOutcome& o) const {  // kAll when the job is in no VC group
    return o.vc.valid() && o.vc.v < nvc ? kFirstVc + o.vc.v : kAll;
  }
};

// A value with the job's size and VC groups, sorted by the metric's key.
struct Keyed {
  uint64_t key;
  uint32_t size_group, vc_group;
};
uint64_t KeyOf(const Keyed& k) { return k.key; }

// One metric for every group from ONE sort: the jobs of a group, taken in the order of the
// sorted whole, are that group's own values in ascending order, so each group's figures are
// exactly those of sorting it alone.
template <class Metric>
std::vector<Distribution> DescribeGroups(const std::vector<JobOutcome>& outcomes, const Groups& g, bool withdrawn_too,
                                         std::vector<Keyed>& buf, std::vector<Keyed>& tmp) {
  buf.clear();
  std::vector<size_t> n(g.size(), 0);
  for (const JobOutcome& o : outcomes) {
    if (o.status != OutcomeStatus::kFinished && !(withdrawn_too && o.status == OutcomeStatus::kWithdrawn)) continue;
    buf.push_back({Metric::KeyOf(o), Groups::SizeOf(o), g.VcOf(o)});
    ++n[buf.back().size_group];
    ++n[buf.back().vc_group];  // kAll when in no VC group: counted once more below instead
  }
  SortByKey(buf, tmp);
  // A group holding every value (a one-VC cluster's VC) is "all": the same values in the
  // same order, so its figures are all's without building them again.
  std::vector<uint8_t> whole(g.size(), 0);
  for (size_t i = Groups::kAll + 1; i < g.size(); ++i) whole[i] = n[i] == buf.size();
  std::vector<DistributionBuilder> b(g.size());
  for (size_t i = 0; i < g.size(); ++i) b[i].Expect(i == Groups::kAll ? buf.size() : n[i]);
  for (const Keyed& k : buf) {
    const double x = Metric::Value(k.key);
    b[Groups::kAll].Add(x);
    if (!whole[k.size_group]) b[k.size_group].Add(x);
    if (k.vc_group != Groups::kAll && !whole[k.vc_group]) b[k.vc_group].Add(x);
  }
  std::vector<Distribution> d(g.size());
  for (size_t i = 0; i < g.size(); ++i) d[i] = b[whole[i] ? Groups::kAll : i].Get();
  return d;
}

// Finished jobs and GPU-hours per group, summed in the order of the outcomes.
void CountGroups(const std::vector<JobOutcome>& outcomes, const Groups& g, std::vector<GroupStats>& out) {
  std::vector<double> gpu_seconds(g.size(), 0);
  auto add = [&](uint32_t i, const JobOutcome& o) {
    ++out[i].jobs;
    gpu_seconds[i] += static_cast<double>(o.run) * o.gpus * o.gpu_milli / 1000.0;
  };
  for (const JobOutcome& o : outcomes) {
    if (o.status != OutcomeStatus::kFinished) continue;
    add(Groups::kAll, o);
    add(Groups::SizeOf(o), o);
    if (const uint32_t v = g.VcOf(o); v != Groups::kAll) add(v, o);
  }
  for (size_t i = 0; i < g.size(); ++i) out[i].gpu_hours = gpu_seconds[i] / 3600.0;
}

// Waits also count the jobs their users cancelled while pending (until the cancel), as the
// real clusters' summaries do; JCT and slowdown are of finished jobs.
std::vector<GroupStats> GroupStatistics(const std::vector<JobOutcome>& outcomes, const Groups& g) {
  std::vector<GroupStats> out(g.size());
  CountGroups(outcomes, g, out);
  std::vector<Keyed> buf, tmp;
  buf.reserve(outcomes.size());
  const std::vector<Distribution> jct = DescribeGroups<Jct>(outcomes, g, false, buf, tmp);
  const std::vector<Distribution> wait = DescribeGroups<Wait>(outcomes, g, true, buf, tmp);
  const std::vector<Distribution> slowdown = DescribeGroups<Slowdown>(outcomes, g, false, buf, tmp);
  for (size_t i = 0; i < g.size(); ++i) {
    out[i].jct = jct[i];
    out[i].wait = wait[i];
    out[i].slowdown = slowdown[i];
  }
  return out;
}

// The per-account groups (RunSummary::per_account), one per account of the trace in the order of
// its first job: finished jobs and GPU-hours, and JCT, wait (withdrawn jobs too, as for every
// group) and slowdown, each sorted per account.
std::vector<GroupStats> AccountGroups(const std::vector<JobOutcome>& outcomes, const std::vector<JobAccount>& acc) {
  std::map<std::string, size_t> index;
  std::vector<GroupStats> out;
  std::vector<std::vector<double>> jct, wait, slowdown;
  std::vector<double> gpu_seconds;
  for (size_t i = 0; i < outcomes.size() && i < acc.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    const std::string& name = acc[i].account.empty() ? std::string("(none)") : acc[i].account;
    auto [it, fresh] = index.emplace(name, out.size());
    if (fresh) {
      out.emplace_back().name = name;
      jct.emplace_back(), wait.emplace_back(), slowdown.emplace_back(), gpu_seconds.push_back(0);
    }
    const bool finished = o.status == OutcomeStatus::kFinished;
    if (!finished && o.status != OutcomeStatus::kWithdrawn) continue;
    const size_t g = it->second;
    wait[g].push_back(static_cast<double>(o.wait));
    if (!finished) continue;
    ++out[g].jobs;
    gpu_seconds[g] += static_cast<double>(o.run) * o.gpus * o.gpu_milli / 1000.0;
    jct[g].push_back(static_cast<double>(o.jct()));
    slowdown[g].push_back(Slowdown::Value(Slowdown::KeyOf(o)));
  }
  for (size_t g = 0; g < out.size(); ++g) {
    out[g].jct = Describe(jct[g]);
    out[g].wait = Describe(wait[g]);
    out[g].slowdown = Describe(slowdown[g]);
    out[g].gpu_hours = gpu_seconds[g] / 3600.0;
  }
  return out;
}

}  // namespace

RunSummary Summarize(const RunData& run) {
  RunSummary s;
  s.policy = run.policy;
  s.placer = run.placer;
  s.total_gpus = run.total_gpus;
  s.oracle = run.oracle;
  if (run.energy) {
    s.has_energy = true;
    s.energy = *run.energy;
  }
  const auto& outs = *run.outcomes;
  std::map<uint8_t, uint64_t> reasons;
  for (const JobOutcome& o : outs) {
    ++s.jobs;
    switch (o.status) {
      case OutcomeStatus::kFinished: ++s.finished; s.preemptions += o.preemptions; break;
      case OutcomeStatus::kRejected: ++s.rejected; ++reasons[o.reject_reason]; break;
      case OutcomeStatus::kSkipped: ++s.skipped; ++reasons[o.reject_reason]; break;
      case OutcomeStatus::kUnfinished: ++s.unfinished; break;
      case OutcomeStatus::kFailed: ++s.failed; break;
      case OutcomeStatus::kWithdrawn: ++s.withdrawn; break;
      case OutcomeStatus::kPreempted: ++s.preempted; s.preemptions += o.preemptions; break;
    }
  }
  Groups g;
  g.nvc = run.vc_names ? run.vc_names->size() : 0;
  std::vector<GroupStats> groups = GroupStatistics(outs, g);
  groups[Groups::kAll].name = "all";
  groups[Groups::kSmall].name = "small (<= 8 GPUs)";
  groups[Groups::kLarge].name = "large (> 8 GPUs)";
  for (size_t v = 0; v < g.nvc; ++v) groups[Groups::kFirstVc + v].name = (*run.vc_names)[v];
  const GroupStats& a = groups[Groups::kAll];
  s.gpu_hours = a.gpu_hours;
  s.jct = a.jct;
  s.wait = a.wait;
  s.slowdown = a.slowdown;
  s.small = std::move(groups[Groups::kSmall]);
  s.large = std::move(groups[Groups::kLarge]);
  s.per_vc.assign(std::make_move_iterator(groups.begin() + Groups::kFirstVc), std::make_move_iterator(groups.end()));
  if (run.accounting && !run.accounting->empty()) s.per_account = AccountGroups(outs, *run.accounting);
  s.makespan = std::max<Time>(0, run.last_end - run.first_submit);
  if (s.makespan > 0 && run.total_gpus > 0)
    s.gpu_utilization = run.gpu_seconds_busy / (static_cast<double>(run.total_gpus) * static_cast<double>(s.makespan));
  for (auto [id, n] : reasons)
    s.not_run_reasons.emplace_back(run.reasons && id < run.reasons->size() ? (*run.reasons)[id] : "?", n);
  return s;
}

std::string RepairCapacityWarning(const RunSummary& s) {
  if (!s.has_failures || !(s.cordoned_capacity_share > kRepairWarnShare)) return "";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "warning: %s: cordoned nodes took %.1f %% of the GPU capacity (%.0f node-hours, %llu cordons; over "
                "%.0f %%): check the failure model's repair, repair_share and reboot",
                s.policy.c_str(), 100 * s.cordoned_capacity_share, s.cordoned_node_hours,
                static_cast<unsigned long long>(s.cordons), 100 * kRepairWarnShare);
  return buf;
}

}  // namespace orrery
