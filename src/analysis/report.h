// Comparison report of simulation runs (orrery report; docs/reports.md).
//
// Reads only the documented outputs of `orrery simulate --out-dir` (docs/formats/sim-output.md):
// <dir>/summary.json and, per run, <dir>/<policy-slug>/{jobs,timeseries}.csv. Every run of
// every directory becomes one series, labelled by its policy (prefixed by the directory name
// when several directories are given).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/report_html.h"
#include "base/result.h"

namespace orrery {

struct RunReportOptions {
  size_t max_points = 200;       // per CDF
  size_t max_time_points = 500;  // per time series (bins averaged)
};

struct RunTimePoint {
  double time = 0;  // s, trace clock (bin start)
  double utilization = 0, busy_gpus = 0, pending_gpus = 0, pending_jobs = 0;
};

struct LoadedRun {
  std::string label;     // series name
  std::string dir;       // <out-dir>/<slug>
  nlohmann::ordered_json summary;  // the run object of summary.json
  std::string scenario, cluster;
  std::vector<double> jct, queue;              // finished jobs, sorted ascending
  std::vector<double> jct_small, jct_large;    // <= 8 GPUs, > 8 GPUs
  std::vector<RunTimePoint> series;            // downsampled timeseries.csv
  // Energy-saving runs (summary has "energy"): (time, mean powered nodes), same bins as series.
  std::vector<std::pair<double, double>> powered;
};

// The folder name of a policy spec (sim-output.md "Policy slug").
std::string PolicySlug(const std::string& policy);

Result<std::vector<LoadedRun>> LoadRuns(const std::vector<std::string>& dirs, const RunReportOptions& opt = {});
report::Page RunReportPage(const std::vector<LoadedRun>& runs, const RunReportOptions& opt = {});

}  // namespace orrery
