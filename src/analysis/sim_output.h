// Writers for the documented outputs of a run (docs/formats/sim-output.md):
//   jobs.csv        one row per trace job
//   timeseries.csv  one row per sample (60 s by default)
//   summary.json    RunSummary of every policy of the invocation
//   attempts.csv    one row per attempt (every run of a job; docs/formats/attempts.md)
// and the readable side-by-side table printed on stdout. All files are written
// atomically; numbers are formatted deterministically (same run → same bytes).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/metrics.h"
#include "base/result.h"
#include "model/attempt.h"
#include "model/cluster.h"

namespace orrery {

Status WriteJobsCsv(const std::string& path, const Trace& trace, const std::vector<JobOutcome>& outcomes,
                    const std::vector<std::string>& vc_names, const std::vector<std::string>& reasons);
// powered_nodes (energy-saving runs, one per sample): adds the powered_nodes column.
Status WriteTimeSeriesCsv(const std::string& path, const std::vector<TimeSample>& samples, uint64_t total_gpus,
                          const std::vector<uint32_t>* powered_nodes = nullptr);
// node names from `cluster` (the cluster the run placed jobs on).
Status WriteAttemptsCsv(const std::string& path, const Trace& trace, const AttemptLog& log, const Cluster& cluster);
// jobs.csv's status column ("finished", "rejected", ...).
std::string_view OutcomeStatusName(OutcomeStatus s);
nlohmann::ordered_json SummaryToJson(const RunSummary& s);
// The "energy" object of an energy-saving run (docs/formats/sim-output.md).
nlohmann::ordered_json EnergyToJson(const EnergyStats& e);
// Side-by-side table of the headline metrics, one column per run.
std::string FormatSummaryTable(const std::vector<RunSummary>& runs);
// Per-VC table of one run.
std::string FormatVcTable(const RunSummary& run);

}  // namespace orrery
