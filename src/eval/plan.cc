#include "eval/plan.h"

#include <algorithm>

#include "base/parse.h"

namespace orrery::eval {

std::string_view LoadSourceName(LoadSource s) {
  switch (s) {
    case LoadSource::kSharedStorage: return "shared-storage";
    case LoadSource::kNodeCache: return "node-cache";
  }
  return "?";
}
std::string_view MetricPlacementName(MetricPlacement m) {
  switch (m) {
    case MetricPlacement::kOnGpu: return "on-gpu";
    case MetricPlacement::kCpuJob: return "cpu-job";
  }
  return "?";
}
std::string_view MetricReleaseName(MetricRelease r) {
  switch (r) {
    case MetricRelease::kDatasetDone: return "dataset-done";
    case MetricRelease::kAllInferenceDone: return "all-inference-done";
  }
  return "?";
}
std::string_view PhaseKindName(PhaseKind k) {
  switch (k) {
    case PhaseKind::kStartup: return "startup";
    case PhaseKind::kLoad: return "load";
    case PhaseKind::kInfer: return "infer";
    case PhaseKind::kMetric: return "metric";
    case PhaseKind::kPreload: return "preload";
  }
  return "?";
}

Result<Workload> BuildWorkload(const Suite& sized, const ModelSpec& m, const GpuSpec& g, uint32_t gpus_per_node,
                               const TrialCostModel& cost, const std::vector<Prior>* priors) {
  if (priors && priors->size() != sized.datasets.size())
    return MakeError("internal: priors for " + std::to_string(priors->size()) + " datasets, suite has " +
                     std::to_string(sized.datasets.size()), kExitRuntime);
  Workload w;
  w.model = m;
  w.gpu = g;
  ORR_ASSIGN_OR_RETURN(w.gpus_per_trial, GpusPerTrial(m, g, gpus_per_node));
  w.startup_s = cost.StartupSeconds();
  w.metric_job_startup_s = cost.MetricJobStartupSeconds();
  for (size_t i = 0; i < sized.datasets.size(); ++i) {
    const Dataset& d = sized.datasets[i];
    if (!d.examples || *d.examples == 0)
      return MakeError("internal: dataset " + Quote(d.name) + " has no example count", kExitRuntime);
    DatasetCost c = cost.Estimate(d, m, g, w.gpus_per_trial);
    DatasetWork dw;
    dw.name = d.name;
    dw.examples = *d.examples;
    dw.task = d.task;
    dw.candidates = c.candidates;
    dw.infer_s_per_example = c.infer_s_per_example;
    dw.metric_s = c.metric_s;
    if (priors) {
      const Prior& p = (*priors)[i];
      if (p.infer_s_per_example >= 0) dw.infer_s_per_example = p.infer_s_per_example;
      if (p.metric_s_per_example >= 0) dw.metric_s = p.metric_s_per_example * static_cast<double>(dw.examples);
    }
    w.datasets.push_back(std::move(dw));
  }
  return w;
}

void AddMetricJobs(const Workload& w, Plan* plan) {
  plan->metric_jobs.clear();
  if (plan->metric != MetricPlacement::kCpuJob) return;
  plan->metric_jobs.resize(w.datasets.size());
  for (uint32_t d = 0; d < w.datasets.size(); ++d) plan->metric_jobs[d].dataset = d;
  for (uint32_t j = 0; j < plan->gpu_jobs.size(); ++j)
    for (const Slice& s : plan->gpu_jobs[j].slices) {
      auto& after = plan->metric_jobs[s.dataset].after;
      if (after.empty() || after.back() != j) after.push_back(j);
    }
}

Status CheckCoverage(const Workload& w, const Plan& plan) {
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> cover(w.datasets.size());
  for (const GpuJob& j : plan.gpu_jobs)
    for (const Slice& s : j.slices) {
      if (s.dataset >= w.datasets.size() || s.begin >= s.end)
        return MakeError("plan " + plan.strategy + ": empty or unknown slice", kExitRuntime);
      cover[s.dataset].emplace_back(s.begin, s.end);
    }
  for (size_t d = 0; d < cover.size(); ++d) {
    auto& c = cover[d];
    std::sort(c.begin(), c.end());
    bool exact = !c.empty();
    uint64_t at = 0;
    for (auto [b, e] : c) {
      exact = exact && b == at;  // no gap, no overlap, no duplicate
      at = e;
    }
    if (!exact || at != w.datasets[d].examples)
      return MakeError("plan " + plan.strategy + ": dataset " + w.datasets[d].name +
                       " is not covered exactly once by its slices", kExitRuntime);
  }
  return Status::Ok();
}

double InferSeconds(const Workload& w, const GpuJob& job) {
  double s = 0;
  for (const Slice& sl : job.slices)
    s += w.datasets[sl.dataset].infer_s_per_example * static_cast<double>(sl.examples());
  return s;
}

std::vector<Phase> ExpandGpuJob(const Workload& w, const Plan& plan, const GpuJob& job) {
  std::vector<Phase> out;
  out.push_back(Phase{PhaseKind::kStartup, w.startup_s, 0});
  out.push_back(Phase{PhaseKind::kLoad, 0, w.model.checkpoint_bytes()});
  out.push_back(Phase{PhaseKind::kInfer, InferSeconds(w, job), 0});
  if (plan.metric == MetricPlacement::kOnGpu) {
    double m = 0;
    for (const Slice& sl : job.slices) {
      const DatasetWork& d = w.datasets[sl.dataset];
      m += d.metric_s * static_cast<double>(sl.examples()) / static_cast<double>(d.examples);
    }
    out.push_back(Phase{PhaseKind::kMetric, m, 0});
  }
  return out;
}

Phase MetricPhase(const Workload& w, uint32_t dataset) {
  return Phase{PhaseKind::kMetric, w.metric_job_startup_s + w.datasets[dataset].metric_s, 0};
}

}  // namespace orrery::eval
