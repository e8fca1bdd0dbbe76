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
struct Acc {
  std::vector<double> jct, wait, slow;
  double gpu_seconds = 0;
  void Add(const JobOutcome& o) {
    double jct_s = static_cast<double>(o.end - o.submit);
    jct.push_back(jct_s);
    wait.push_back(static_cast<double>(o.wait));
    slow.push_back(std::max(1.0, jct_s / static_cast<double>(std::max<Duration>(o.run, kSlowdownTau))));
    gpu_seconds += static_cast<double>(o.run) * o.gpus * o.gpu_milli / 1000.0;
  }
  GroupStats Finish(const std::string& name) {
    GroupStats g;
    g.name = name;
    g.jobs = jct.size();
    g.jct = Describe(jct);
    g.wait = Describe(wait);
    g.slowdown = Describe(slow);
    g.gpu_hours = gpu_seconds / 3600.0;
    return g;
  }
};
}  // namespace

RunSummary Summarize(const RunData& run) {
  RunSummary s;
  s.policy = run.policy;
  s.placer = run.placer;
  s.total_gpus = run.total_gpus;
  s.oracle = run.oracle;
  Acc all, small, large;
  std::vector<Acc> vcs(run.vc_names ? run.vc_names->size() : 0);
  std::map<uint8_t, uint64_t> reasons;
  for (const JobOutcome& o : *run.outcomes) {
    ++s.jobs;
    switch (o.status) {
      case OutcomeStatus::kFinished: break;
      case OutcomeStatus::kRejected: ++s.rejected; ++reasons[o.reject_reason]; continue;
      case OutcomeStatus::kSkipped: ++s.skipped; ++reasons[o.reject_reason]; continue;
      case OutcomeStatus::kUnfinished: ++s.unfinished; continue;
    }
    ++s.finished;
    s.preemptions += o.preemptions;
    all.Add(o);
    (o.gpus <= 8 ? small : large).Add(o);
    if (o.vc.valid() && o.vc.v < vcs.size()) vcs[o.vc.v].Add(o);
  }
  s.gpu_hours = all.gpu_seconds / 3600.0;
  GroupStats a = all.Finish("all");
  s.jct = a.jct;
  s.wait = a.wait;
  s.slowdown = a.slowdown;
  s.small = small.Finish("small (<= 8 GPUs)");
  s.large = large.Finish("large (> 8 GPUs)");
  for (size_t v = 0; v < vcs.size(); ++v) s.per_vc.push_back(vcs[v].Finish((*run.vc_names)[v]));
  s.makespan = std::max<Time>(0, run.last_end - run.first_submit);
  if (s.makespan > 0 && run.total_gpus > 0)
    s.gpu_utilization = run.gpu_seconds_busy / (static_cast<double>(run.total_gpus) * static_cast<double>(s.makespan));
  for (auto [id, n] : reasons)
    s.not_run_reasons.emplace_back(run.reasons && id < run.reasons->size() ? (*run.reasons)[id] : "?", n);
  return s;
}

}  // namespace orrery
