// Whose outputs an `orrery simulate --out-dir` holds. A folder may hold the outputs of the same
// run (same scenario, cluster, seed, job count and policies): they are replaced. It may not
// hold another run's unless --force: summary.json must never sit next to policy folders it does
// not list, nor a folder of one run next to another run's summary. Files that are not a run's
// outputs (anything but summary.json and policy folders holding jobs.csv) are never touched.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/result.h"

namespace orrery::cli {

// Before a run writes into `dir`: `header` is the run's summary.json without its runs
// (scenario, cluster, seed, jobs), `policies` its policy specs and `run_dirs` the folders it
// will write. Clears the earlier outputs when they are this run's, or another run's and `force`
// is set; otherwise an error (exit 2) naming what the folder holds and how to proceed.
Status ClaimOutDir(const std::string& dir, const nlohmann::ordered_json& header, const std::vector<std::string>& policies,
                   const std::vector<std::string>& run_dirs, bool force);

}  // namespace orrery::cli
