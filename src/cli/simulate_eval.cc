#include "cli/simulate_eval.h"

#include "base/io.h"
#include "plan/model_names.h"

namespace orrery::cli {

void AddEvalSimFlags(CLI::App* cmd, EvalSimOptions* o) {
  cmd->add_option("--eval-requests", o->requests,
                  "Evaluation requests (CSV, docs/formats/eval-requests.md): each expands into its trials and CPU metric jobs");
  cmd->add_option("--eval-every", o->every,
                  "Seconds: one evaluation request per checkpoint of every pretraining job at this interval (needs --eval-suite)");
  cmd->add_option("--eval-suite", o->suite, "Suite CSV of the --eval-every requests");
  cmd->add_option("--eval-max-per-job", o->max_per_job, "At most this many --eval-every requests per pretraining job (0 = all)");
  cmd->add_option("--eval-model-size", o->model_size,
                  "Model size of --eval-every requests whose job name has none: a parameter count (default 7B) or a model at its "
                  "nominal size: " + plan::CanonicalModelList(plan::ModelUse::kEval));
  cmd->add_option("--eval-strategy", o->expand.strategy, "Default evaluation strategy (coupled, opencompass-size, opencompass-workers, acme; default acme)");
  cmd->add_option("--eval-gpus", o->expand.gpus, "Default GPUs an evaluation plan is built for (default 8)");
  cmd->add_option("--eval-cpu-partition", o->expand.cpu_partition, "Default VC of the metric jobs (default: the request's partition)");
  cmd->add_option("--eval-gpu", o->expand.gpu, "GPU of the evaluation cost model: a100-80 (default), h100, h200 (any case)");
  cmd->add_flag("--eval-skip-unsized", o->expand.skip_unsized, "Drop suite datasets without an example count instead of failing");
  cmd->add_option("--eval-metric-cpus", o->metric_cpus, "CPU cores a metric job asks for (default 4)");
  cmd->add_option("--storage-gbps", o->storage_gbps, "Aggregate shared-storage read bandwidth for checkpoint loads, GB/s (default 12)");
  cmd->add_option("--node-storage-gbps", o->node_storage_gbps, "One node's link to shared storage, GB/s (default 3)");
  cmd->add_option("--cache-gbps", o->cache_gbps, "Node-local cache to GPU, GB/s (default 10)");
}

namespace {

Status CheckPartitions(const std::vector<eval::EvalRequest>& reqs, const eval::ExpandOptions& x, const Cluster& c) {
  if (c.single_pool || c.vcs.size() == 1) return Status::Ok();
  auto check = [&](const eval::EvalRequest& r, const std::string& part, const char* what) -> Status {
    if (part.empty() || c.FindVc(part)) return Status::Ok();
    return MakeError(r.where + ": request '" + r.name + "': " + what + " '" + part + "' is not a VC of cluster '" +
                     c.name + "'");
  };
  for (const eval::EvalRequest& r : reqs) {
    ORR_RETURN_IF_ERROR(check(r, r.partition, "partition"));
    ORR_RETURN_IF_ERROR(check(r, r.cpu_partition.empty() ? x.cpu_partition : r.cpu_partition, "cpu_partition"));
  }
  return Status::Ok();
}

}  // namespace

Result<std::vector<eval::ExpandedRequest>> AddEvalRequests(EvalSimOptions& o, const Cluster& cluster, Trace* trace) {
  if (!o.any()) return std::vector<eval::ExpandedRequest>{};
  for (double v : {o.storage_gbps, o.node_storage_gbps, o.cache_gbps})
    if (!(v > 0 && v < 1e6)) return MakeError("--storage-gbps, --node-storage-gbps, --cache-gbps: expected a positive bandwidth in GB/s");
  if (o.metric_cpus == 0 || o.metric_cpus > 4096) return MakeError("--eval-metric-cpus: expected 1 to 4096 cores");
  if (o.every < 0) return MakeError("--eval-every: expected a positive number of seconds");
  if (o.every > 0 && o.suite.empty()) return MakeError("--eval-every needs --eval-suite SUITE.csv");
  if (o.every == 0 && !o.suite.empty()) return MakeError("--eval-suite is the suite of --eval-every requests: give --eval-every too");
  o.expand.storage = StorageSpec{o.storage_gbps * 1e9, o.node_storage_gbps * 1e9, o.cache_gbps * 1e9};
  o.expand.metric_cpu_milli = o.metric_cpus * 1000;
  std::vector<eval::EvalRequest> reqs;
  if (!o.requests.empty()) {
    Result<std::vector<eval::EvalRequest>> r = eval::LoadRequests(o.requests);
    if (!r) return r.error().With("--eval-requests");
    reqs = std::move(*r);
  }
  if (o.every > 0) {
    eval::PretrainEvalOptions p;
    p.interval = o.every;
    p.max_per_job = o.max_per_job;
    p.suite = o.suite;
    Result<std::string> size = eval::EvalModelSize(o.model_size);
    if (!size.ok()) return size.error().With("--eval-model-size");
    p.default_size = *size;
    std::vector<eval::EvalRequest> gen = eval::RequestsFromPretraining(*trace, p);
    if (gen.empty()) return MakeError("--eval-every " + std::to_string(o.every) + ": the workload has no pretraining job that runs that long");
    reqs.insert(reqs.end(), gen.begin(), gen.end());
  }
  ORR_RETURN_IF_ERROR(CheckPartitions(reqs, o.expand, cluster));
  return eval::AddRequests(reqs, o.expand, trace);
}

Result<nlohmann::ordered_json> EvalReportOf(const std::vector<eval::ExpandedRequest>& requests, const Trace& trace,
                                            const SimResult& r, const std::string& dir) {
  const eval::EvalReport rep = eval::Summarize(requests, trace, r.outcomes, r.load_seconds);
  nlohmann::ordered_json j = eval::ReportJson(rep);
  if (!requests.empty()) {
    j["storage"] = {{"shared_bytes", r.storage_bytes}, {"max_concurrent_reads", r.max_concurrent_reads}};
    if (!dir.empty()) ORR_RETURN_IF_ERROR(WriteFileAtomic(dir + "/eval_requests.csv", eval::RequestsCsv(rep)));
  }
  return j;
}

}  // namespace orrery::cli
