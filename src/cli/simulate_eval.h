// `orrery simulate` with evaluation requests (docs/design/eval.md, "In the simulator"): the
// flags, the expansion of the requests into the workload, and each run's evaluation report
// (summary.json "evaluation", eval_requests.csv; docs/formats/sim-output.md).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/result.h"
#include "eval/requests.h"
#include "model/cluster.h"
#include "model/storage.h"
#include "model/trace.h"
#include "sim/simulator.h"

namespace orrery::cli {

struct EvalSimOptions {
  std::string requests;       // --eval-requests FILE
  int64_t every = 0;          // --eval-every SECONDS: requests from the pretraining jobs' checkpoints
  std::string suite;          // --eval-suite CSV (the suite of --eval-every requests)
  uint32_t max_per_job = 0;   // --eval-max-per-job
  std::string model_size = "7B";  // --eval-model-size: when a job's name has no size
  eval::ExpandOptions expand;
  double storage_gbps = 12, node_storage_gbps = 3, cache_gbps = 10;
  uint32_t metric_cpus = 4;
  bool any() const { return !requests.empty() || every > 0; }
};

void AddEvalSimFlags(CLI::App* cmd, EvalSimOptions* o);
// Reads or generates the requests and appends their jobs to `trace` (errors: exit 2, located).
Result<std::vector<eval::ExpandedRequest>> AddEvalRequests(EvalSimOptions& o, const Cluster& cluster, Trace* trace);
// The run's evaluation report: its summary.json object and, when `dir` is set and there are
// requests, eval_requests.csv there.
Result<nlohmann::ordered_json> EvalReportOf(const std::vector<eval::ExpandedRequest>& requests, const Trace& trace,
                                            const SimResult& r, const std::string& dir);

}  // namespace orrery::cli
