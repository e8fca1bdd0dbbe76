#include "analysis/metrics.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <map>

namespace orrery {

namespace {

// Order-preserving map of a (non-NaN) double to an unsigned integer: flip the sign bit of
// non-negative values and every bit of negative ones.
uint64_t OrderKey(double x) {
  const uint64_t b = std::bit_cast<uint64_t>(x);
  return b >> 63 ? ~b : b | (uint64_t{1} << 63);
}

// Sorts ascending, like std::sort (values that compare equal are indistinguishable except
// -0.0/+0.0, which sum and rank the same): an LSD radix sort on OrderKey, 16 bits per pass,
// passes in which every key has the same digit skipped (durations in seconds share their
// high bits). O(n) instead of O(n log n) for the million-job runs.
void SortValues(std::vector<double>& v) {
  if (v.size() < 4096) {
    std::sort(v.begin(), v.end());
    return;
  }
  const size_t n = v.size();
  std::vector<uint64_t> a(n), b(n);
  for (size_t i = 0; i < n; ++i) a[i] = OrderKey(v[i]);
  std::vector<uint32_t> count(1 << 16);
  for (int shift = 0; shift < 64; shift += 16) {
    std::fill(count.begin(), count.end(), 0);
    for (uint64_t k : a) ++count[(k >> shift) & 0xffff];
    if (count[(a[0] >> shift) & 0xffff] == n) continue;  // one digit for all: nothing moves
    uint32_t sum = 0;
    for (uint32_t& c : count) {
      const uint32_t here = c;
      c = sum;
      sum += here;
    }
    for (uint64_t k : a) b[count[(k >> shift) & 0xffff]++] = k;
    a.swap(b);
  }
  for (size_t i = 0; i < n; ++i) {
    const uint64_t k = a[i];
    v[i] = std::bit_cast<double>(k >> 63 ? k & ~(uint64_t{1} << 63) : ~k);
  }
}

}  // namespace

Distribution Describe(std::vector<double>& v) {
  Distribution d;
  if (v.empty()) return d;
  SortValues(v);
  double sum = 0;
  for (double x : v) sum += x;
  d.mean = sum / static_cast<double>(v.size());
  auto rank = [&](double p) {
    size_t k = static_cast<size_t>(std::ceil(p * static_cast<double>(v.size())));
    return v[std::min(v.size() - 1, k == 0 ? 0 : k - 1)];
  };
  d.median = rank(0.5);
  d.p95 = rank(0.95);
  d.p99 = rank(0.99);
  d.p999 = rank(0.999);
  d.max = v.back();
  return d;
}

namespace {

double Jct(const JobOutcome& o) { return static_cast<double>(o.jct()); }
double Wait(const JobOutcome& o) { return static_cast<double>(o.wait); }
double Slowdown(const JobOutcome& o) {
  return std::max(1.0, Jct(o) / static_cast<double>(std::max<Duration>(o.run, kSlowdownTau)));
}

// Statistics of the finished jobs selected by `in`, computed with one reused buffer
// (8 bytes per job at most, whatever the number of groups).
template <class Pred>
GroupStats Group(const std::vector<JobOutcome>& outcomes, const std::string& name, Pred in, std::vector<double>& buf) {
  GroupStats g;
  g.name = name;
  double gpu_seconds = 0;
  // Waits also count the jobs their users cancelled while pending (until the cancel), as the
  // real clusters' summaries do; JCT and slowdown are of finished jobs.
  auto fill = [&](auto metric, bool withdrawn_too) {
    buf.clear();
    for (const JobOutcome& o : outcomes)
      if ((o.status == OutcomeStatus::kFinished || (withdrawn_too && o.status == OutcomeStatus::kWithdrawn)) && in(o))
        buf.push_back(metric(o));
    return Describe(buf);
  };
  g.jct = fill(Jct, false);
  g.jobs = buf.size();
  g.wait = fill(Wait, true);
  g.slowdown = fill(Slowdown, false);
  for (const JobOutcome& o : outcomes)
    if (o.status == OutcomeStatus::kFinished && in(o)) gpu_seconds += static_cast<double>(o.run) * o.gpus * o.gpu_milli / 1000.0;
  g.gpu_hours = gpu_seconds / 3600.0;
  return g;
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
    }
  }
  std::vector<double> buf;
  buf.reserve(s.finished);
  GroupStats a = Group(outs, "all", [](const JobOutcome&) { return true; }, buf);
  s.gpu_hours = a.gpu_hours;
  s.jct = a.jct;
  s.wait = a.wait;
  s.slowdown = a.slowdown;
  s.small = Group(outs, "small (<= 8 GPUs)", [](const JobOutcome& o) { return o.gpus <= 8; }, buf);
  s.large = Group(outs, "large (> 8 GPUs)", [](const JobOutcome& o) { return o.gpus > 8; }, buf);
  const size_t nvc = run.vc_names ? run.vc_names->size() : 0;
  for (size_t v = 0; v < nvc; ++v)
    s.per_vc.push_back(Group(outs, (*run.vc_names)[v],
                             [v](const JobOutcome& o) { return o.vc.valid() && o.vc.v == v; }, buf));
  s.makespan = std::max<Time>(0, run.last_end - run.first_submit);
  if (s.makespan > 0 && run.total_gpus > 0)
    s.gpu_utilization = run.gpu_seconds_busy / (static_cast<double>(run.total_gpus) * static_cast<double>(s.makespan));
  for (auto [id, n] : reasons)
    s.not_run_reasons.emplace_back(run.reasons && id < run.reasons->size() ? (*run.reasons)[id] : "?", n);
  return s;
}

}  // namespace orrery
