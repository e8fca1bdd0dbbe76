#include "eval/report.h"

#include <cmath>

#include <fmt/format.h>

namespace orrery::eval {

namespace {

double R3(double x) { return std::round(x * 1000.0) / 1000.0; }

std::string Hms(double s) {
  const int64_t t = static_cast<int64_t>(std::llround(s));
  return fmt::format("{}h{:02}m{:02}s", t / 3600, t / 60 % 60, t % 60);
}

nlohmann::json PhasesJson(const JobRun& r) {
  nlohmann::json a = nlohmann::json::array();
  for (const PhaseRun& p : r.phases) {
    nlohmann::json ph = {{"kind", PhaseKindName(p.kind)}, {"start_s", R3(p.start)}, {"end_s", R3(p.end)}};
    if (p.wait_s > 0) ph["cache_wait_s"] = R3(p.wait_s);
    a.push_back(std::move(ph));
  }
  return a;
}

nlohmann::json GpuJobsJson(const PlanReport& r) {
  const Workload& w = *r.workload;
  nlohmann::json jobs = nlohmann::json::array();
  for (size_t i = 0; i < r.plan->gpu_jobs.size(); ++i) {
    const JobRun& run = r.schedule->gpu_jobs[i];
    nlohmann::json slices = nlohmann::json::array();
    for (const Slice& s : r.plan->gpu_jobs[i].slices)
      slices.push_back({{"dataset", w.datasets[s.dataset].name}, {"begin", s.begin}, {"end", s.end},
                        {"infer_s", R3(w.datasets[s.dataset].infer_s_per_example * static_cast<double>(s.examples()))}});
    jobs.push_back({{"index", i}, {"node", run.node}, {"gpu", run.slot}, {"gpus", w.gpus_per_trial},
                    {"start_s", R3(run.start)}, {"end_s", R3(run.end)}, {"slices", std::move(slices)},
                    {"phases", PhasesJson(run)}});
  }
  return jobs;
}

nlohmann::json CpuJobsJson(const PlanReport& r) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const JobRun& p : r.schedule->preloads)
    jobs.push_back({{"kind", "preload"}, {"node", p.node}, {"start_s", R3(p.start)}, {"end_s", R3(p.end)}});
  for (size_t m = 0; m < r.plan->metric_jobs.size(); ++m) {
    const MetricJob& mj = r.plan->metric_jobs[m];
    const JobRun& run = r.schedule->metric_jobs[m];
    jobs.push_back({{"kind", "metric"}, {"dataset", r.workload->datasets[mj.dataset].name}, {"after", mj.after},
                    {"slot", run.slot}, {"release_s", R3(run.release)}, {"start_s", R3(run.start)},
                    {"end_s", R3(run.end)}});
  }
  return jobs;
}

}  // namespace

std::string SliceLabel(const Workload& w, const Slice& s) {
  const DatasetWork& d = w.datasets[s.dataset];
  if (s.begin == 0 && s.end == d.examples) return d.name;
  return fmt::format("{}[{}:{}]", d.name, s.begin, s.end);
}

nlohmann::json PlanJson(const PlanReport& r) {
  const Workload& w = *r.workload;
  const Schedule& s = *r.schedule;
  nlohmann::json datasets = nlohmann::json::array();
  for (const DatasetWork& d : w.datasets)
    datasets.push_back({{"name", d.name}, {"examples", d.examples}, {"task_type", TaskTypeName(d.task)},
                        {"infer_s", R3(d.infer_s())}, {"metric_s", R3(d.metric_s)}});
  const auto hours = [&](PhaseKind k) { return R3(s.gpu_phase_hours[static_cast<size_t>(k)]); };
  return {
      {"format", "orrery-eval-plan"},
      {"version", 1},
      {"suite", r.suite},
      {"strategy", r.plan->strategy},
      {"priors", r.priors},
      {"model", {{"size", w.model.label}, {"params", w.model.params}, {"checkpoint_bytes", w.model.checkpoint_bytes()},
                 {"gpus_per_trial", w.gpus_per_trial}}},
      {"gpu", w.gpu.name},
      {"cluster", {{"nodes", r.cluster.nodes}, {"gpus_per_node", r.cluster.gpus_per_node},
                   {"cpu_slots", r.cluster.cpu_slots}, {"storage_bytes_per_s", r.cluster.storage_bytes_per_s},
                   {"node_storage_bytes_per_s", r.cluster.node_storage_bytes_per_s},
                   {"cache_bytes_per_s", r.cluster.cache_bytes_per_s}}},
      {"load", LoadSourceName(r.plan->load)},
      {"metric", MetricPlacementName(r.plan->metric)},
      {"metric_release", MetricReleaseName(r.plan->release)},
      {"makespan_s", R3(s.makespan_s)},
      {"inference_end_s", R3(s.inference_end_s)},
      {"gpu_hours", R3(s.gpu_hours)},
      {"gpu_infer_hours", R3(s.gpu_infer_hours)},
      {"gpu_idle_hours", R3(s.gpu_idle_hours)},
      {"gpu_idle_breakdown_hours", {{"startup", hours(PhaseKind::kStartup)}, {"load", R3(hours(PhaseKind::kLoad) - s.gpu_cache_wait_hours)},
                                    {"cache_wait", R3(s.gpu_cache_wait_hours)}, {"metric", hours(PhaseKind::kMetric)}}},
      {"storage_bytes_read", s.storage_bytes},
      {"datasets", std::move(datasets)},
      {"gpu_jobs", GpuJobsJson(r)},
      {"cpu_jobs", CpuJobsJson(r)},
  };
}

std::string PlanText(const PlanReport& r) {
  const Workload& w = *r.workload;
  const Schedule& s = *r.schedule;
  uint64_t examples = 0;
  for (const DatasetWork& d : w.datasets) examples += d.examples;
  std::string out = fmt::format(
      "eval plan: {} ({} datasets, {} examples), model {} ({:.1f} GB, {} GPU(s) per trial) on {} node(s) x {} {}\n"
      "strategy {}: load from {}, metrics {} ({}); durations from {}\n"
      "predicted makespan {} ({:.0f} s); GPU-hours {:.2f} (inferring {:.2f}, idle inside trials {:.2f} = {:.1f} %)\n",
      r.suite, w.datasets.size(), examples, w.model.label, w.model.checkpoint_bytes() / 1e9, w.gpus_per_trial,
      r.cluster.nodes, r.cluster.gpus_per_node, w.gpu.name, r.plan->strategy, LoadSourceName(r.plan->load),
      MetricPlacementName(r.plan->metric), MetricReleaseName(r.plan->release), r.priors, Hms(s.makespan_s),
      s.makespan_s, s.gpu_hours, s.gpu_infer_hours, s.gpu_idle_hours,
      s.gpu_hours > 0 ? 100.0 * s.gpu_idle_hours / s.gpu_hours : 0.0);
  out += fmt::format("GPU jobs ({}, array order):\n", r.plan->gpu_jobs.size());
  for (size_t i = 0; i < r.plan->gpu_jobs.size(); ++i) {
    const JobRun& run = s.gpu_jobs[i];
    std::string items;
    for (const Slice& sl : r.plan->gpu_jobs[i].slices) items += (items.empty() ? "" : " ") + SliceLabel(w, sl);
    out += fmt::format("  #{:<4} node{} gpu{}  {:>8.0f} - {:>8.0f} s  {}\n", i, run.node, run.slot, run.start, run.end,
                       items);
  }
  out += fmt::format("CPU jobs ({}):\n", s.preloads.size() + r.plan->metric_jobs.size());
  for (const JobRun& p : s.preloads)
    out += fmt::format("  preload node{}  {:>8.0f} - {:>8.0f} s\n", p.node, p.start, p.end);
  for (size_t m = 0; m < r.plan->metric_jobs.size(); ++m) {
    const MetricJob& mj = r.plan->metric_jobs[m];
    const JobRun& run = s.metric_jobs[m];
    std::string after;
    for (uint32_t a : mj.after) after += (after.empty() ? "#" : ",#") + std::to_string(a);
    out += fmt::format("  metric {} after {}  {:>8.0f} - {:>8.0f} s\n", w.datasets[mj.dataset].name, after, run.start,
                       run.end);
  }
  return out;
}

}  // namespace orrery::eval
