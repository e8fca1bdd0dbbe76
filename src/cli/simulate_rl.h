// `orrery simulate` with RL post-training jobs (docs/design/rl.md, "In the simulator"): the
// flags, the jobs added to the workload, and each run's RL report (summary.json "rl").
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "base/result.h"
#include "model/cluster.h"
#include "model/outcome.h"
#include "model/trace.h"
#include "rl/jobs.h"

namespace orrery::cli {

struct RlSimOptions {
  std::string jobs;               // --rl-jobs FILE
  double share = 0;               // --rl-share F
  std::string strategy = "sync";  // --rl-strategy
  bool any() const { return !jobs.empty() || share > 0; }
};

void AddRlSimFlags(CLI::App* cmd, RlSimOptions* o);
// Reads or generates the RL jobs and appends them to `trace`; refuses --rl-strategy without
// RL jobs (exit 2, located errors).
Result<rl::RlExpansion> AddRlSimJobs(const RlSimOptions& o, const CLI::App& cmd, const Cluster& cluster, uint64_t seed,
                                     Trace* trace);
nlohmann::ordered_json RlReportJson(const rl::RlReport& r);
// One line for the run's notes.
std::string RlNote(const std::string& policy, const rl::RlReport& r);

}  // namespace orrery::cli
