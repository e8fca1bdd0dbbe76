// Evaluation requests inside a simulated workload (`orrery simulate --eval-requests`,
// `--eval-every`): a request (checkpoint C of a model of size S, a suite, a strategy) expands
// into core jobs with phases (model/work.h) -- its trials, GPU jobs whose phases are
// startup -> load (PhaseKind::kLoad: shared storage or the node cache, timed by the simulator's
// storage model) -> inference -> [metric on the GPU] -- and its CPU metric jobs, which depend
// on their trials (Trace::after) and run on CPU capacity (docs/design/eval.md, "In the
// simulator"). The strategies' plans (strategy.h) decide which slices each trial runs.
//
// Requests come from a CSV (docs/formats/eval-requests.md) or from the pretraining jobs of a
// workload (RequestsFromPretraining: one request per checkpoint at an interval).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"
#include "base/time.h"
#include "eval/cost_model.h"
#include "model/outcome.h"
#include "model/storage.h"
#include "model/trace.h"

namespace orrery::eval {

struct EvalRequest {
  std::string name;           // unique within a run
  Time submit = 0;            // seconds since the trace's epoch
  std::string suite;          // suite CSV path
  std::string model_size;     // "7B", ...
  std::string strategy;       // "" = the run's default
  uint32_t gpus = 0;          // GPUs the plan is built for (nodes x GPUs per node); 0 = the default
  std::string partition;      // VC of its trials ("" = the cluster's first VC)
  std::string cpu_partition;  // VC of its metric jobs ("" = the run's default, else `partition`)
  std::vector<std::string> datasets;  // only these datasets of the suite (empty = all)
  std::string where;          // "file:line" (or "generated from job N") for messages
};

// Parses a request CSV held in memory; `name` stands for its path in messages. Suite paths
// are taken relative to `base_dir` unless absolute.
Result<std::vector<EvalRequest>> ParseRequests(std::string_view text, const std::string& name,
                                               const std::string& base_dir);
Result<std::vector<EvalRequest>> LoadRequests(const std::string& path);

// One request per checkpoint of each pretraining job (Job::kind == kPretrain) of the trace:
// at submit + k x interval for k = 1, 2, ... while k x interval <= the job's duration (at most
// max_per_job), on the job's own VC. The model size is the first "<number>b" token of the
// job's name ("llama_7b_pretrain" -> 7B; tokens split at '_', '-', '.', '/'), else
// default_size. Times are on the job's trace clock (its submit), not its simulated start.
struct PretrainEvalOptions {
  Duration interval = 6 * 3600;
  uint32_t max_per_job = 0;  // 0 = no limit
  std::string suite;
  std::string default_size = "7B";
  std::string strategy;
  uint32_t gpus = 0;
  std::string cpu_partition;
};
std::vector<EvalRequest> RequestsFromPretraining(const Trace& trace, const PretrainEvalOptions& o);

// How requests become jobs.
struct ExpandOptions {
  std::string strategy = "acme";   // default strategy
  uint32_t gpus = 8;               // default GPUs of a plan
  std::string cpu_partition;       // default VC of metric jobs ("" = the request's partition)
  std::string gpu = "a100-80g";    // GPU kind of the cost model (cost_model.h)
  uint32_t gpus_per_node = 8;
  StorageSpec storage;
  uint32_t metric_cpu_milli = 4000;  // CPU request of a metric job (4 cores)
  uint32_t trial_cpu_milli_per_gpu = 0;  // CPU request of a trial per GPU (0 = none)
  bool skip_unsized = false;       // drop datasets without an example count (else: an error naming them)
};

// What one request became.
struct ExpandedRequest {
  std::string name, strategy, model, suite;
  Time submit = 0;
  uint32_t gpus = 0, gpus_per_trial = 0, datasets = 0;
  std::vector<uint32_t> gpu_jobs, metric_jobs;  // trace job indices
  std::vector<Duration> infer_s;                // per GPU job: its inference seconds
  double alone_makespan_s = 0;                  // eval::Execute of the plan alone on ceil(gpus / node) nodes
};

// Appends every request's jobs (with trace.work and trace.after) to `trace`; the trace's other
// jobs get empty phases and no dependencies. Errors name the request (its `where`): unknown
// strategy, dataset, model size or partition, an unsized or empty suite.
Result<std::vector<ExpandedRequest>> AddRequests(const std::vector<EvalRequest>& requests, const ExpandOptions& o,
                                                 Trace* trace);

// --- the run's report (summary.json "evaluation", eval_requests.csv)
struct DelayStats {
  uint64_t jobs = 0;
  double mean_s = 0, p50_s = 0, p95_s = 0;
};
struct RequestResult {
  const ExpandedRequest* request = nullptr;
  bool complete = false;           // every job of it finished
  Time first_start = kNoTime, end = kNoTime;
  double makespan_s = 0;           // last end - submit
  double gpu_hours = 0;            // GPUs held by its trials x time
  double gpu_idle_hours = 0;       // of which not inferring (startup, load, cache wait, GPU metric, lost attempts)
  double load_gpu_hours = 0;       // of which in the load phase
  double trial_wait_s = 0, metric_wait_s = 0;  // mean queueing delay of its trials / metric jobs
};
struct EvalReport {
  std::vector<RequestResult> requests;
  DelayStats eval_gpu, eval_cpu, other_gpu;  // queueing delay of finished jobs by kind
  double storage_bytes = 0;
  uint32_t max_concurrent_reads = 0;
};
// `released`: SimResult::released (empty = submit times); `load_seconds`: SimResult::load_seconds.
EvalReport Summarize(const std::vector<ExpandedRequest>& requests, const Trace& trace,
                     const std::vector<JobOutcome>& outcomes, const std::vector<Duration>& load_seconds);
nlohmann::ordered_json ReportJson(const EvalReport& r);
std::string RequestsCsv(const EvalReport& r);
// Whether the trace has evaluation jobs (the report is written then).
bool HasEvaluationJobs(const Trace& trace);

}  // namespace orrery::eval
