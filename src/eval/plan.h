// An evaluation request in numbers (Workload), and a strategy's answer to it (Plan): which
// slices of which datasets each GPU job runs, in which order, where the checkpoint is loaded
// from, and where and when metrics are computed.
//
// Mapping onto the core job model (a job is one or more phases, model/work.h): a GpuJob expands
// (ExpandGpuJob) into the phases startup → load → infer → [metric], a CPU job into one phase;
// dependencies (MetricJob::after) are job-level edges. In the simulator each expanded job is one
// core job with these phases (eval/requests.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eval/cost_model.h"
#include "eval/suite.h"

namespace orrery::eval {

// One dataset as the planners and the executor see it.
struct DatasetWork {
  std::string name;
  uint64_t examples = 0;
  TaskType task = TaskType::kGeneration;
  uint32_t candidates = 1;           // scoring tasks: candidates per example (the cost model's count)
  double infer_s_per_example = 0;    // GPU seconds per example (prior or cost model)
  double metric_s = 0;               // CPU seconds of the dataset's metric
  double infer_s() const { return infer_s_per_example * static_cast<double>(examples); }
};

struct Workload {
  std::vector<DatasetWork> datasets;
  ModelSpec model;
  GpuSpec gpu;
  uint32_t gpus_per_trial = 1;
  double startup_s = 0;              // every GPU job, before loading
  double metric_job_startup_s = 0;   // every CPU metric job
};

// Builds the workload from a sized suite (RequireSized) and a cost model. `priors`, when not
// null, overrides infer/metric seconds of the datasets it has (History::Priors).
struct Prior {
  double infer_s_per_example = -1;  // < 0: none
  double metric_s_per_example = -1;
};
Result<Workload> BuildWorkload(const Suite& sized, const ModelSpec& m, const GpuSpec& g, uint32_t gpus_per_node,
                               const TrialCostModel& cost, const std::vector<Prior>* priors);

enum class LoadSource : uint8_t {
  kSharedStorage,  // every GPU job reads the checkpoint from shared storage
  kNodeCache,      // one preload per node copies it to node-local memory/disk; jobs read it there
};
enum class MetricPlacement : uint8_t {
  kOnGpu,   // the GPU job computes the metric before it ends (the GPU idles meanwhile)
  kCpuJob,  // one CPU job per dataset
};
enum class MetricRelease : uint8_t {
  kDatasetDone,       // a dataset's metric job starts when every GPU job with a slice of it ended
  kAllInferenceDone,  // metric jobs start when the whole inference stage ended (OpenCompass)
};
std::string_view LoadSourceName(LoadSource s);
std::string_view MetricPlacementName(MetricPlacement m);
std::string_view MetricReleaseName(MetricRelease r);

// Examples [begin, end) of one dataset.
struct Slice {
  uint32_t dataset = 0;
  uint64_t begin = 0, end = 0;
  uint64_t examples() const { return end - begin; }
};

struct GpuJob {
  std::vector<Slice> slices;  // run in this order
};

struct MetricJob {
  uint32_t dataset = 0;
  std::vector<uint32_t> after;  // GPU job indices it waits for (afterok)
};

struct Plan {
  std::string strategy;              // the spec it was built from
  LoadSource load = LoadSource::kSharedStorage;
  MetricPlacement metric = MetricPlacement::kOnGpu;
  MetricRelease release = MetricRelease::kDatasetDone;
  std::vector<GpuJob> gpu_jobs;      // dispatch order (= job-array index)
  std::vector<MetricJob> metric_jobs;  // empty when metric == kOnGpu
};

// Fills plan->metric_jobs for kCpuJob plans: one per dataset, after every GPU job holding a
// slice of it, in dataset order.
void AddMetricJobs(const Workload& w, Plan* plan);

// Checks that the GPU jobs cover every example of every dataset exactly once.
Status CheckCoverage(const Workload& w, const Plan& plan);

// --- phases (what a job does, in order)
enum class PhaseKind : uint8_t {
  kStartup,  // process start, imports, CUDA context, dataset build (fixed seconds)
  kLoad,     // checkpoint to GPU: bytes from shared storage, or from the node cache
  kInfer,    // GPU inference over the job's slices (fixed seconds)
  kMetric,   // metric computation (fixed seconds; on the GPU job or as a CPU job)
  kPreload,  // shared storage -> node cache (bytes)
};
std::string_view PhaseKindName(PhaseKind k);

struct Phase {
  PhaseKind kind = PhaseKind::kStartup;
  double seconds = 0;  // fixed-duration phases
  double bytes = 0;    // kLoad / kPreload
};

// The phases of GPU job i of `plan` (one home for what a GPU job does).
std::vector<Phase> ExpandGpuJob(const Workload& w, const Plan& plan, const GpuJob& job);
// The single phase of a dataset's CPU metric job.
Phase MetricPhase(const Workload& w, uint32_t dataset);
// Inference seconds of a job (sum over its slices).
double InferSeconds(const Workload& w, const GpuJob& job);

}  // namespace orrery::eval
