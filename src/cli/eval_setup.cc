#include "cli/eval_setup.h"

#include <filesystem>

#include <fmt/format.h>

#include "eval/history.h"
#include "plan/model_names.h"

namespace orrery::cli {

void AddEvalFlags(CLI::App* cmd, EvalArgs* a, bool nodes_required) {
  cmd->add_option("SUITE", a->suite, "suite CSV (columns of ../shared/corpora/eval-suite/datasets.csv)")->required();
  cmd->add_option("--model,--model-size", a->model,
                  "the evaluated model: a parameter count such as 7B or 70e9, or a model at its nominal size: " +
                      plan::CanonicalModelList(plan::ModelUse::kEval))
      ->required();
  auto* nodes = cmd->add_option("--nodes", a->nodes, "GPU nodes the evaluation may use");
  if (nodes_required) nodes->required();
  cmd->add_option("--gpus-per-node", a->gpus_per_node, "GPUs per node (default 8)");
  cmd->add_option("--gpu", a->gpu, "GPU: a100-80 (default, Acme's), h100, h200 (any case; a100-80g, h100-sxm also read)");
  cmd->add_option("--cpu-slots", a->cpu_slots, "CPU slots for metric jobs (default 32)");
  cmd->add_option("--storage-gbps", a->storage_gbps, "aggregate shared-storage read bandwidth, GB/s (default 12)");
  cmd->add_option("--node-storage-gbps", a->node_storage_gbps, "one node's link to shared storage, GB/s (default 3)");
  cmd->add_option("--cache-gbps", a->cache_gbps, "node-local cache to GPU, GB/s (default 10)");
  cmd->add_option("--history", a->history, "per-dataset history (SQLite) whose durations are the priors");
  cmd->add_option("--only", a->only, "evaluate only these datasets (names as in the suite)")->delimiter(',');
  cmd->add_flag("--skip-unsized", a->skip_unsized, "drop datasets without an example count instead of failing");
}

int EvalFail(const char* cmd, const Error& e) {
  fmt::print(stderr, "orrery eval {}: {}\n", cmd, e.message);
  return e.exit_code;
}

eval::ClusterSpec ClusterFor(const EvalArgs& a, uint32_t nodes) {
  eval::ClusterSpec c;
  c.nodes = nodes;
  c.gpus_per_node = a.gpus_per_node;
  c.cpu_slots = a.cpu_slots;
  c.storage_bytes_per_s = a.storage_gbps * 1e9;
  c.node_storage_bytes_per_s = a.node_storage_gbps * 1e9;
  c.cache_bytes_per_s = a.cache_gbps * 1e9;
  return c;
}

Result<EvalSetup> PrepareEval(const EvalArgs& a) {
  EvalSetup s;
  ORR_ASSIGN_OR_RETURN(eval::Suite all, eval::LoadSuite(a.suite));
  ORR_ASSIGN_OR_RETURN(eval::Suite chosen, eval::SelectDatasets(all, a.only));
  ORR_ASSIGN_OR_RETURN(s.suite, eval::RequireSized(chosen, a.skip_unsized, &s.dropped));
  Result<eval::ModelSpec> model = eval::ParseEvalModel(a.model);
  if (!model.ok()) return model.error().With("--model");
  s.model = std::move(*model);
  ORR_ASSIGN_OR_RETURN(s.gpu, eval::GpuByName(a.gpu));
  s.cluster = ClusterFor(a, a.nodes);
  ORR_RETURN_IF_ERROR(eval::ValidateCluster(s.cluster));
  eval::CalibratedCostModel cost;
  ORR_ASSIGN_OR_RETURN(uint32_t gpus, eval::GpusPerTrial(s.model, s.gpu, s.cluster.gpus_per_node));
  std::vector<eval::Prior> priors;
  s.priors = "cost model (" + std::string(cost.name()) + ")";
  const bool use_history = !a.history.empty() && !(a.history_may_be_new && !std::filesystem::exists(a.history));
  if (use_history) {
    ORR_ASSIGN_OR_RETURN(auto h, eval::History::Open(a.history, /*create=*/false));
    ORR_ASSIGN_OR_RETURN(priors, h->Priors(s.suite, s.model, s.gpu, gpus));
    size_t known = 0;
    for (const eval::Prior& p : priors) known += p.infer_s_per_example >= 0;
    s.priors = fmt::format("history {} ({} of {} datasets; the others from the cost model)", a.history, known,
                           priors.size());
  }
  ORR_ASSIGN_OR_RETURN(s.workload, eval::BuildWorkload(s.suite, s.model, s.gpu, s.cluster.gpus_per_node, cost,
                                                       use_history ? &priors : nullptr));
  return s;
}

}  // namespace orrery::cli
