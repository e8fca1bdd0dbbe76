// One policy's simulation as `orrery simulate` and the Python module run it: the simulator
// (or its Helios-compatible mode), the conservation check, the check that some job ran, and
// the run's summary (summary.json's entry). The callers add their own outputs.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "analysis/metrics.h"
#include "base/result.h"
#include "model/cluster.h"
#include "model/trace.h"
#include "sim/simulator.h"

namespace orrery {

// A simulation that passed the checks.
Result<SimResult> SimulateChecked(const Trace& trace, const Cluster& cluster, const SimConfig& cfg,
                                  bool helios_compat = false);

// The run's RunSummary (metrics.h) from its result; per-account groups when `trace` records
// accounts.
RunSummary SummaryOf(const SimResult& r, const Trace& trace);

// Every job was rejected: the error that says so (the same for every policy), else Ok.
Status CheckSomethingRuns(const Trace& trace, const SimResult& r, const std::string& cluster);

}  // namespace orrery
