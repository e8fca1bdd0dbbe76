// The generator's model flags (--arrivals, --batches, --long-runs, --long-run-sizes), shared by
// `orrery generate` and `orrery simulate --generate`: one home for their names, their help and
// how they change a preset (docs/workload.md, model items 10-17).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "base/result.h"
#include "workload/spec.h"

namespace orrery::cli {

struct WorkloadModelFlags {
  std::string arrivals;        // "" = the preset's arrival model
  std::string batches;         // "" = the preset's batch model
  std::string long_runs;       // "" = the preset's long-run arrivals
  std::string long_run_sizes;  // "" = the preset's long-run sizes
};

void AddWorkloadModelFlags(CLI::App* cmd, WorkloadModelFlags* f);
// Applies the flags that were given to `spec` (a preset); the first bad value is the error.
Status ApplyWorkloadModelFlags(const WorkloadModelFlags& f, workload::WorkloadSpec* spec);

}  // namespace orrery::cli
