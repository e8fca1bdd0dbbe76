// Shared by the `orrery eval` subcommands: the flags that describe an evaluation request
// (suite, model, GPUs, cluster, priors) and what they resolve to.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "base/result.h"
#include "eval/cost_model.h"
#include "eval/executor.h"
#include "eval/plan.h"
#include "eval/suite.h"

namespace orrery::cli {

struct EvalArgs {
  std::string suite;
  std::string model;  // --model (alias --model-size): a parameter count or a model name
  std::string gpu = "a100-80g";
  uint32_t nodes = 0;
  uint32_t gpus_per_node = 8;
  uint32_t cpu_slots = 32;
  double storage_gbps = 12, node_storage_gbps = 3, cache_gbps = 10;
  std::string history;
  std::vector<std::string> only;
  bool skip_unsized = false;
  bool history_may_be_new = false;  // submit: a missing history is created later, no priors now
};

struct EvalSetup {
  eval::Suite suite;                    // sized (RequireSized)
  eval::ModelSpec model;
  eval::GpuSpec gpu;
  eval::ClusterSpec cluster;
  eval::Workload workload;              // durations the planner believes (priors or cost model)
  std::string priors;                   // where they came from
  std::vector<std::string> dropped;     // unsized datasets skipped
};

// Adds the request flags to a subcommand (nodes_required: --nodes must be given).
void AddEvalFlags(CLI::App* cmd, EvalArgs* a, bool nodes_required);
// Reads the suite, the history (if any) and resolves everything; errors carry exit codes.
Result<EvalSetup> PrepareEval(const EvalArgs& a);
// Prints "orrery eval CMD: message" to stderr and returns the error's exit code.
int EvalFail(const char* cmd, const Error& e);
// Same request on another node count (the figures' sweep).
eval::ClusterSpec ClusterFor(const EvalArgs& a, uint32_t nodes);

}  // namespace orrery::cli
