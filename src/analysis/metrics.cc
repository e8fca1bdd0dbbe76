#include "analysis/metrics.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace orrery {

Distribution Describe(std::vector<double>& v) {
  Distribution d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
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
  auto fill = [&](auto metric) {
    buf.clear();
    for (const JobOutcome& o : outcomes)
      if (o.status == OutcomeStatus::kFinished && in(o)) buf.push_back(metric(o));
    return Describe(buf);
  };
  g.jct = fill(Jct);
  g.jobs = buf.size();
  g.wait = fill(Wait);
  g.slowdown = fill(Slowdown);
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
